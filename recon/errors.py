"""The project's own exceptions. No httpx, SQLAlchemy or pydantic exception leaks past a layer.

    ReconError
    ├── ConfigError                    a setting is missing or wrong
    ├── InputError                     a file, option or body is malformed (carries where)
    ├── ProviderError                  anything the provider client could not do
    │   ├── ProviderTransportError     no usable HTTP answer
    │   │   ├── ProviderTimeout        connect/read/pool timeout
    │   │   └── ProviderConnectionError connection refused or reset
    │   ├── ProviderHTTPError          an answer with status >= 400
    │   │   ├── ProviderAuthError      401/403, after one re-authorisation (for one id: that
    │   │   │   │                      id is refused to this merchant account)
    │   │   │   └── KeysRefused        merchant.authorize answered 401/403: no token at all
    │   │   ├── ProviderRateLimited    429 (retry_after seconds, if given)
    │   │   ├── ProviderServerError    5xx
    │   │   └── ProviderClientError    other 4xx: the request must be fixed
    │   │       ├── TransactionNotFound the provider does not know the id
    │   │       │   └── SessionIdGiven  the id is a session's (read its transaction_id)
    │   │       ├── ReferenceConflict  merchant_reference reused with another amount (4.6.1)
    │   │       └── ArtifactExpired    an export's file was deleted (410): ask for the export again
    │   ├── MalformedResponse          a 2xx whose body is not the documented shape (or too deep,
    │   │   │                          too large, a number of absurd magnitude)
    │   │   └── WrongTransaction       an answer about another id than the one asked for
    │   ├── AuthorizeFailed            merchant.authorize gave no token (any failure but 401/403)
    │   ├── TooManyRefusals            refused ids passed RECON_REFUSED_LIMIT: the key looks revoked
    │   └── UnknownOutcome             a create call left unanswered: look it up, don't retry
    ├── StoreError                     the database could not be used
    │   └── SchemaConflict             something not recon's is in the way of a schema upgrade
    ├── LockHeld                       another run holds the run lock
    │   └── LockLost                   another run took it from this one, which stopped
    ├── ImportFailed                   the import a night runs first failed; nothing was imported
    ├── MailError                      the report could not be sent
    ├── JournalUnbalanced              a journal batch failed its checks: nothing was exported
    ├── JournalMismatch                a batch written again would differ from the one exported
    └── ReportWriteError               the report files could not be written (disk full, I/O)
        └── ReportDirError             the report directory cannot be written (also InputError)

Messages never contain credentials or tokens: the client builds them from status, operation and the
provider's error text only.
"""

from __future__ import annotations

from recon.constants import ExitCode


class ReconError(Exception):
    """Base of every error recon raises on purpose."""


class ConfigError(ReconError):
    """A setting is missing or invalid."""


class InputError(ReconError):
    """Bad input: says what is wrong and where (file, line, field)."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        self.problems = problems or []
        text = "\n".join([message, *("  " + problem for problem in self.problems)])
        super().__init__(text)


class ProviderError(ReconError):
    """The provider could not be asked, or its answer could not be used."""

    def __init__(self, message: str, *, operation: str = "") -> None:
        self.operation = operation
        super().__init__(f"{operation}: {message}" if operation else message)


class ProviderTransportError(ProviderError):
    """No usable HTTP answer arrived."""


class ProviderTimeout(ProviderTransportError):
    """Connect, read or pool timeout."""


class ProviderConnectionError(ProviderTransportError):
    """Connection refused, reset or closed mid-answer."""


class ProviderHTTPError(ProviderError):
    """The provider answered with a status of 400 or above.

    ``retry_after`` is the wait its ``Retry-After`` header asked for, in seconds (429 and 503 may
    carry one), or ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        operation: str = "",
        status: int,
        error_name: str | None = None,
        raw: str = "",
        retry_after: float | None = None,
    ) -> None:
        self.status = status
        self.error_name = error_name
        self.raw = raw
        self.retry_after = retry_after
        super().__init__(f"HTTP {status}: {message}", operation=operation)


class ProviderAuthError(ProviderHTTPError):
    """401/403 even after re-authorising.

    For a call other than ``merchant.authorize`` this is the provider refusing that request (the
    id asked about) to this merchant account: a run makes it that payout's ``fetch_failed``.
    """


class KeysRefused(ProviderAuthError):
    """``merchant.authorize`` answered 401/403: the keys are refused, no call can be made."""


class ProviderRateLimited(ProviderHTTPError):
    """429; ``retry_after`` is the wait the provider asked for, in seconds."""


class ProviderServerError(ProviderHTTPError):
    """5xx."""


class ProviderClientError(ProviderHTTPError):
    """A 4xx other than 401/403/429: the request itself is wrong."""


class TransactionNotFound(ProviderClientError):
    """The provider does not know the transaction id."""


class SessionIdGiven(TransactionNotFound):
    """The id asked about is a session's, not a transaction's (a common mix-up: provider notes).

    Its transaction is read with ``session.get``; the finding is ``session_id_recorded``.
    """


class ReferenceConflict(ProviderClientError):
    """A merchant_reference was reused with a different amount (interface 4.6.1 rule 2)."""


class ArtifactExpired(ProviderClientError):
    """The export's file at ``artifact_url`` is gone (410): the provider deletes it after its
    lifetime, so the export must be asked for again."""


class MalformedResponse(ProviderError):
    """A 2xx answer whose body is not JSON or lacks required fields."""


class WrongTransaction(MalformedResponse):
    """The answer is about another id than the one asked for: never an outcome of the asked id.

    ``kind`` starts the error text a run stores for the payout (``wrong_transaction: ...``).
    """

    kind = "wrong_transaction"

    def __init__(self, asked: str, answered: str, message: str, *, operation: str = "") -> None:
        self.asked = asked
        self.answered = answered
        super().__init__(message, operation=operation)


class AuthorizeFailed(ProviderError):
    """merchant.authorize gave no token: a 404 (wrong base URL), a 5xx after retries, no
    connection, a malformed answer. Nothing can be asked, so a run stops (exit 1). Refused keys
    (401/403) stay :class:`ProviderAuthError`."""


class TooManyRefusals(ProviderError):
    """The provider refused more ids than ``RECON_REFUSED_LIMIT``, and more than half of those
    asked so far: what a revoked key (or one stripped of access) looks like, so the run stops."""


class UnknownOutcome(ProviderError):
    """A create call sent but unanswered: the payout may exist. Look it up before creating again."""


class StoreError(ReconError):
    """The database is unavailable or refused a write."""


class SchemaConflict(StoreError):
    """The schema upgrade found a table or index it did not make where it would create its own;
    the message (one paragraph) names it and what to do. The upgrade stopped there and left it as
    it was; the steps before it stay done, and run again they change nothing."""


class LockHeld(ReconError):
    """Another run holds the run lock."""


class LockLost(LockHeld):
    """Another run took the run lock over from this one (it stalled past the stale limit): this
    run stopped at its next write, and that write was rolled back."""


class ImportFailed(ReconError):
    """The payouts import a nightly run starts with failed (all or nothing: the store is as it
    was); the message says why, the import's own error is its cause."""


class MailError(ReconError):
    """The report email could not be sent after retries."""


class JournalUnbalanced(ReconError):
    """A journal export refused its batch: an entry does not balance per currency, or books a
    fee on the wrong side of the provider balance. Each line of the message starts
    ``journal_unbalanced:`` and names one entry; no file was written and no line marked."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        lines = [f"journal_unbalanced: {problem}" for problem in problems]
        super().__init__("\n".join([*lines, "nothing was exported: no file, no batch"]))


class JournalMismatch(ReconError):
    """``--batch N`` rendered batch N otherwise than it was exported (a file's sha256 differs
    from the one recorded): a stored line or the batch's options changed since, or this version
    of recon writes the format otherwise. Nothing was written."""


class ReportWriteError(ReconError):
    """The report files could not be written (a full disk, an I/O error)."""


class ReportDirError(ReportWriteError, InputError):
    """The report directory cannot be written (missing rights, not a directory): a bad --out."""


# Each error's documented exit code (docs/operations.md), the first that matches.
EXIT_FOR: list[tuple[type[ReconError], ExitCode]] = [
    (ConfigError, ExitCode.USAGE),
    (InputError, ExitCode.USAGE),
    (LockLost, ExitCode.LOCKED),  # a LockHeld too: named for the reader
    (LockHeld, ExitCode.LOCKED),
    (MailError, ExitCode.MAIL_FAILED),
    (JournalUnbalanced, ExitCode.INCOMPLETE),
    (StoreError, ExitCode.FAILURE),
    (ProviderError, ExitCode.FAILURE),
    (ReconError, ExitCode.FAILURE),
]


def exit_code_of(exc: ReconError) -> int:
    """The documented exit code of one of recon's errors."""
    return int(next(code for kind, code in EXIT_FOR if isinstance(exc, kind)))
