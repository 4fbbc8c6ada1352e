"""The async client of the provider's API (interface section 4), over aiohttp or an httpx transport.

One client holds one token for a whole run: it authorizes on first use (once, however many requests
start together; :meth:`ProviderClient.ensure_token` is that first use up front), again when the
token is within ``token_refresh_margin`` of expiry, and again when a call is answered 401 (that
call is then retried once); :mod:`recon.provider.tokens` keeps it.

Every answer is bounded: its body is read only up to ``max_answer_bytes``
(``RECON_MAX_ANSWER_BYTES``), one exchange (connect to last byte) gets ``request_deadline`` seconds
(``RECON_REQUEST_DEADLINE``) on top of the per-read timeout, and JSON is parsed with a depth
limit and number-magnitude checks (:mod:`recon.jsonparse`). An answer breaking a limit is
a :class:`~recon.errors.MalformedResponse` (the deadline a :class:`~recon.errors.ProviderTimeout`)
for that call only. An answer about another id than the one asked for is a
:class:`~recon.errors.WrongTransaction`. Keys refused by ``merchant.authorize`` (401/403) are
:class:`~recon.errors.KeysRefused`; any other failure of it is
:class:`~recon.errors.AuthorizeFailed`: no call can be made without a token. A 401/403 for any other
call, with a token just issued (a 401 is asked again once with a new one) or one the provider
accepts (a 403), is :class:`~recon.errors.ProviderAuthError`: the provider refuses that request to
this merchant account, which for ``transaction.get`` is one id's problem (the poller decides).

Reads and ``merchant.authorize`` are retried on connect errors, timeouts, 429 and 5xx with
exponential backoff and full jitter. Create calls are not retried blindly (provider notes: every
create call creates a new transaction): they are retried only when the request provably did not
reach the provider (no connection could be made) or was refused with 429. Any other failure after
the request may have been sent raises :class:`~recon.errors.UnknownOutcome`.

The transaction export is three steps: ``transaction.csv_export`` (a task id; retried as a read, as
a second task for the same window is harmless), ``export_task.get`` (the task; an error answer means
the task failed) and a plain GET of the task's ``artifact_url`` with no token (the url is the
credential), bounded by ``max_artifact_bytes`` and retried like a read; 410 is
:class:`~recon.errors.ArtifactExpired`.

Callers only ever see :mod:`recon.errors` exceptions; secrets and tokens never appear in their
messages or in the log.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Self

import httpx
from pydantic import BaseModel, SecretStr

from recon import jsonparse, retry
from recon.constants import SESSION_FOUND_ERROR_NAMES
from recon.errors import (
    ArtifactExpired,
    AuthorizeFailed,
    KeysRefused,
    MalformedResponse,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderHTTPError,
    ProviderRateLimited,
    ProviderServerError,
    ProviderTimeout,
    ProviderTransportError,
    UnknownOutcome,
)
from recon.provider.answers import error_for, parse_answer, read_error_body, same_id
from recon.provider.models import (
    AuthorizeRequest,
    AuthorizeResponse,
    BankAccountCreated,
    BankAccountCreateRequest,
    BankAccountSelectionRequest,
    ExportRequest,
    ExportTask,
    ExportTaskCreated,
    IdRequest,
    Session,
    SessionCreated,
    Transaction,
    WithdrawalCreated,
    WithdrawalRequest,
)
from recon.provider.ratelimit import Pacer
from recon.provider.tokens import Token, Tokens
from recon.provider.wire import AiohttpWire, Answer, AnswerTooLarge, HttpxWire, Timeouts, Wire
from recon.redact import Scrubber
from recon.settings import Settings

log = logging.getLogger(__name__)

AUTHORIZE = "merchant.authorize"
EXPORT = "transaction.csv_export"
EXPORT_TASK = "export_task.get"
ARTIFACT = "export artifact"
# Failures that happen before a byte of the request left: safe to repeat even for a create call.
_NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
# Worth another attempt (creates excepted: those become UnknownOutcome before this is asked).
_RETRYABLE = (ProviderTransportError, ProviderServerError, ProviderRateLimited)
_JSON_HEADERS = {"content-type": "application/json", "accept": "application/json"}
_UNKNOWN_OUTCOME_HINT = (
    "the outcome is unknown: look the payout up (transaction.get, or the provider's back office) "
    "before creating it again; a deliberate retry with the same merchant_reference and amount is "
    "safe (interface 4.6.1: the provider returns the original transaction)"
)


@dataclass(slots=True)
class ClientStats:
    """Counters for the run's summary line."""

    requests: int = 0
    retries: int = 0
    rate_limited: int = 0
    server_errors: int = 0
    authorizations: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0


class ProviderClient:
    """Async client for every operation of interface section 4. Use as ``async with``."""

    def __init__(
        self,
        base_url: str,
        public_key: str,
        secret: str | SecretStr,
        *,
        concurrency: int = 32,
        rate_limit: float | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 65.0,
        request_deadline: float = 90.0,
        max_answer_bytes: int = 512 * 1024,
        max_artifact_bytes: int = 256 * 1024 * 1024,
        retry_attempts: int = 4,
        retry_initial_wait: float = 0.5,
        retry_max_wait: float = 30.0,
        token_refresh_margin: float = 300.0,
        not_found_error_names: Iterable[str] = (),
        session_found_error_names: Iterable[str] = SESSION_FOUND_ERROR_NAMES,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._public_key = public_key
        self._secret = secret if isinstance(secret, SecretStr) else SecretStr(secret)
        self._backoff = retry.Backoff(retry_attempts, retry_initial_wait, retry_max_wait)
        self._not_found = tuple(not_found_error_names)
        self._session_found = tuple(session_found_error_names)
        self._deadline = request_deadline
        self._max_artifact_bytes = max_artifact_bytes
        self._redact = Scrubber([self._secret])
        self._semaphore = asyncio.Semaphore(concurrency)
        self._pacer = Pacer(rate_limit)
        self._tokens = Tokens(
            self._issue_token, refresh_margin=token_refresh_margin, clock=clock, redact=self._redact
        )
        self.stats = ClientStats()
        timeouts = Timeouts(connect=connect_timeout, read=read_timeout)
        self._wire: Wire = (
            AiohttpWire(
                base_url,
                max_connections=concurrency,
                timeouts=timeouts,
                max_bytes=max_answer_bytes,
            )
            if transport is None
            else HttpxWire(base_url, transport, timeouts=timeouts, max_bytes=max_answer_bytes)
        )

    @classmethod
    def from_settings(
        cls, settings: Settings, transport: httpx.AsyncBaseTransport | None = None
    ) -> ProviderClient:
        """A client configured from recon's settings (``transport`` for tests and the sandbox)."""
        return cls(
            settings.api_base_url,
            settings.api_public_key,
            settings.api_secret,
            concurrency=settings.concurrency,
            rate_limit=settings.rate_limit,
            connect_timeout=settings.connect_timeout,
            read_timeout=settings.read_timeout,
            request_deadline=settings.request_deadline,
            max_answer_bytes=settings.max_answer_bytes,
            retry_attempts=settings.retry_attempts,
            retry_initial_wait=settings.retry_initial_wait,
            retry_max_wait=settings.retry_max_wait,
            token_refresh_margin=settings.token_refresh_margin,
            not_found_error_names=settings.not_found_error_names,
            session_found_error_names=settings.session_found_error_names,
            transport=transport,
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections."""
        await self._wire.aclose()

    # --- operations (interface 4.1, 4.3-4.7) ----------------------------------------------------

    async def authorize(self) -> None:
        """Obtain a new access token now (normally done lazily; see the module docstring)."""
        await self._tokens.renew()

    async def ensure_token(self) -> None:
        """Hold a usable token: ask ``merchant.authorize`` only when none is held or it is near
        expiry, as every call does first; so asking up front costs no extra request."""
        await self._tokens.current()

    async def create_bank_account_selection(
        self, request: BankAccountSelectionRequest
    ) -> SessionCreated:
        """``session.create_bank_account_selection``: start a session (not retried blindly)."""
        content = await self._call("session.create_bank_account_selection", request, create=True)
        return parse_answer(
            SessionCreated, content, self._redact, "session.create_bank_account_selection"
        )

    async def get_session(self, session_id: str) -> Session:
        """``session.get``: the session record."""
        content = await self._call("session.get", IdRequest(id=session_id))
        session = parse_answer(Session, content, self._redact, "session.get")
        same_id(session_id, session.id, "session.get", self._redact)
        return session

    async def create_bank_account(self, request: BankAccountCreateRequest) -> BankAccountCreated:
        """``bank_account.create``: a bank account id (not retried blindly)."""
        content = await self._call("bank_account.create", request, create=True)
        return parse_answer(BankAccountCreated, content, self._redact, "bank_account.create")

    async def create_withdrawal(self, request: WithdrawalRequest) -> WithdrawalCreated:
        """``transaction.create_withdrawal``: start a payout (not retried blindly)."""
        content = await self._call("transaction.create_withdrawal", request, create=True)
        return parse_answer(
            WithdrawalCreated, content, self._redact, "transaction.create_withdrawal"
        )

    async def get_transaction(self, transaction_id: str) -> Transaction:
        """``transaction.get``: the transaction record."""
        transaction, _ = await self.get_transaction_raw(transaction_id)
        return transaction

    async def get_transaction_raw(self, transaction_id: str) -> tuple[Transaction, bytes]:
        """``transaction.get``: the record, and the answer's body exactly as it was sent."""
        content = await self._call("transaction.get", IdRequest(id=transaction_id))
        transaction = parse_answer(Transaction, content, self._redact, "transaction.get")
        same_id(transaction_id, transaction.id, "transaction.get", self._redact)
        return transaction, content

    async def request_export(
        self, settled_from: int, settled_to: int, types: list[int | str] | None = None
    ) -> str:
        """``transaction.csv_export``: ask for the rows settled in ``[settled_from, settled_to)``
        (epoch seconds); the task's id."""
        request = ExportRequest(settled_from=settled_from, settled_to=settled_to, types=types)
        content = await self._call(EXPORT, request)
        return parse_answer(ExportTaskCreated, content, self._redact, EXPORT).id

    async def get_export_task(self, task_id: str) -> ExportTask:
        """``export_task.get``: the task as the provider answers it (an error answer, such as a
        failed task's, raises)."""
        content = await self._call(EXPORT_TASK, IdRequest(id=task_id))
        task = parse_answer(ExportTask, content, self._redact, EXPORT_TASK)
        same_id(task_id, task.id, EXPORT_TASK, self._redact)
        return task

    async def download_artifact(self, url: str) -> bytes:
        """The export's file at ``url``: a plain GET, no token (the url is the credential), at
        most ``max_artifact_bytes``; :class:`~recon.errors.ArtifactExpired` once it is gone."""
        # The url is a credential: its last segment and secret parameters never reach a message.
        self._redact.add(url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1])
        self._redact.add_url(url)

        async def once() -> bytes:
            async with self._semaphore:
                await self._pacer.acquire()
                self.stats.requests += 1
                try:
                    async with asyncio.timeout(self._deadline):
                        answer = await self._wire.get(url, {}, self._max_artifact_bytes)
                except AnswerTooLarge as exc:
                    raise MalformedResponse(
                        f"the export's file is over {exc.limit} bytes", operation=ARTIFACT
                    ) from None
                except TimeoutError:
                    raise ProviderTimeout(
                        f"no whole file within {self._deadline:g} s (RECON_REQUEST_DEADLINE)",
                        operation=ARTIFACT,
                    ) from None
                except httpx.HTTPError as exc:
                    raise self._transport_error(ARTIFACT, exc) from None
            self.stats.bytes_received += len(answer.content)
            if answer.status == 410:
                raise ArtifactExpired(
                    "the export's file has expired; ask for the export again",
                    operation=ARTIFACT,
                    status=410,
                )
            return self._body(ARTIFACT, answer, create=False)

        def retryable(exc: Exception) -> bool:
            return isinstance(exc, _RETRYABLE)

        def log_retry(exc: Exception, attempt: int, seconds: float) -> None:
            self.stats.retries += 1
            log.warning(
                "%s: %s; retry %d in %.2f s", ARTIFACT, self._redact(str(exc)), attempt, seconds
            )

        return await retry.acall(once, self._attempts(retryable, log_retry))

    def _attempts(self, retryable: retry.RetryOn, on_retry: retry.OnRetry) -> retry.Attempts:
        """One call's attempts on the client's backoff, waiting as long as the provider asks."""
        return retry.Attempts(
            self._backoff,
            retryable,
            retry_after=lambda exc: getattr(exc, "retry_after", None),
            on_retry=on_retry,
        )

    # --- tokens (kept by recon.provider.tokens) -------------------------------------------------

    async def _issue_token(self) -> AuthorizeResponse:
        """Call merchant.authorize for :class:`~recon.provider.tokens.Tokens`.

        Refused keys are ``KeysRefused``; any other failure is ``AuthorizeFailed``, so
        that a 404 (a wrong base URL or path prefix) is never read as "transaction not found".
        """
        request = AuthorizeRequest(public_key=self._public_key, secret=self._secret)
        try:
            content = await self._call(AUTHORIZE, request, authorized=False)
            answer = parse_answer(AuthorizeResponse, content, self._redact, AUTHORIZE)
        except ProviderAuthError:
            raise
        except ProviderError as exc:
            detail = " ".join(str(exc).removeprefix(f"{AUTHORIZE}: ").split())
            hint = ""
            if isinstance(exc, ProviderHTTPError) and exc.status == 404:
                hint = "; check RECON_API_BASE_URL (a wrong base URL or path prefix answers 404)"
            raise AuthorizeFailed(
                f"no access token, so no payout can be checked ({detail}){hint}",
                operation=AUTHORIZE,
            ) from None
        self.stats.authorizations += 1
        log.info("authorized with the provider (authorization %d)", self.stats.authorizations)
        return answer

    # --- one call, with retries -----------------------------------------------------------------

    async def _call(
        self, operation: str, request: BaseModel, *, create: bool = False, authorized: bool = True
    ) -> bytes:
        """POST ``request`` to ``/api/<operation>``; the body of the 2xx answer."""
        to_json = getattr(request, "to_json_dict", None)
        payload = to_json() if to_json is not None else request.model_dump(exclude_none=True)
        content = jsonparse.dumpb(payload)
        reauthorized = False

        async def once() -> bytes:
            nonlocal reauthorized
            token = await self._tokens.current() if authorized else None
            response = await self._exchange(operation, content, token, create)
            if response.status == 401 and token is not None and not reauthorized:
                reauthorized = True  # a rejected token is not the provider failing: no attempt
                await self._tokens.replace_rejected(token)
                token = await self._tokens.current()
                response = await self._exchange(operation, content, token, create)
            return self._body(operation, response, create)

        def retryable(exc: Exception) -> bool:
            # Only this request's own failures: an authorize that failed on the way has already
            # had its retries, and it names its own operation.
            return isinstance(exc, _RETRYABLE) and exc.operation == operation

        def log_retry(exc: Exception, attempt: int, seconds: float) -> None:
            self.stats.retries += 1
            reason = f"HTTP {exc.status}" if isinstance(exc, ProviderHTTPError) else str(exc)
            log.warning(
                "%s: %s; retry %d of %d in %.2f s",
                operation,
                self._redact(reason),
                attempt,
                self._backoff.attempts - 1,
                seconds,
            )

        return await retry.acall(once, self._attempts(retryable, log_retry))

    async def _exchange(
        self, operation: str, content: bytes, token: Token | None, create: bool
    ) -> Answer:
        """One request and its answer; a transport failure as the project's exception."""
        try:
            return await self._send(operation, content, token)
        except AnswerTooLarge as exc:
            raise MalformedResponse(str(exc), operation=operation) from None
        except httpx.HTTPError as exc:
            failure = self._transport_error(operation, exc)
            may_have_arrived = not isinstance(exc, _NEVER_SENT)
            if create and may_have_arrived:
                raise UnknownOutcome(
                    f"{failure}; {_UNKNOWN_OUTCOME_HINT}", operation=operation
                ) from None
            raise failure from None

    def _body(self, operation: str, response: Answer, create: bool) -> bytes:
        """The body of a 2xx answer; any other answer as the project's exception."""
        status = response.status
        if 200 <= status < 300:
            return response.content
        if status < 400:
            raise MalformedResponse(f"unexpected HTTP status {status}", operation=operation)
        retry_after = retry.parse_retry_after(response.headers.get("retry-after"))
        error = error_for(
            status,
            read_error_body(response.content, self._redact),
            operation=operation,
            retry_after=retry_after,
            not_found_names=self._not_found,
            session_names=self._session_found,
            refused=KeysRefused if operation == AUTHORIZE else ProviderAuthError,
        )
        if status == 429:
            self.stats.rate_limited += 1
            if retry_after is not None:
                # A pause longer than retry_max_wait would stall the whole run: cap it (the retry
                # helper then lets this call fail, so the caller can report it).
                self._pacer.pause_for(min(retry_after, self._backoff.maximum))
        elif status >= 500:
            self.stats.server_errors += 1
            if create:
                raise UnknownOutcome(
                    f"{error}; {_UNKNOWN_OUTCOME_HINT}", operation=operation
                ) from error
        raise error

    async def _send(self, operation: str, content: bytes, token: Token | None) -> Answer:
        headers = _JSON_HEADERS
        if token is not None:
            headers = {**headers, "authorization": f"Bearer {token.value.get_secret_value()}"}
        async with self._semaphore:
            await self._pacer.acquire()
            self.stats.requests += 1
            self.stats.bytes_sent += len(content)
            # The read timeout bounds each wait for bytes; a provider dripping a byte at a time
            # never trips it. The deadline bounds the whole exchange.
            try:
                async with asyncio.timeout(self._deadline):
                    response = await self._wire.post(f"/api/{operation}", content, headers)
            except TimeoutError:
                raise httpx.ReadTimeout(
                    f"no whole answer within {self._deadline:g} s (RECON_REQUEST_DEADLINE)"
                ) from None
        self.stats.bytes_received += len(response.content)
        return response

    def _transport_error(self, operation: str, exc: httpx.HTTPError) -> ProviderTransportError:
        detail = self._redact(f"{type(exc).__name__}: {exc}".rstrip(": "))
        if isinstance(exc, httpx.TimeoutException):
            return ProviderTimeout(f"no answer in time ({detail})", operation=operation)
        return ProviderConnectionError(f"connection failed ({detail})", operation=operation)
