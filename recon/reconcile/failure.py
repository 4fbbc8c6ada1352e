"""A failed night in words: its cause in one line, and the line people see ("recon: night of
2026-11-22 failed: cannot reach the provider (merchant.authorize)").

Pure: an exception (and the night's as-of and zone) in, text out. The run stores the cause in the
run log, ``recon runs`` and ``recon status`` show it, the heartbeat's ``/fail`` ping and the
operations email carry the line, and the cron wrapper prints it.
"""

from __future__ import annotations

import signal
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from recon.errors import (
    KeysRefused,
    LockLost,
    MailError,
    ProviderError,
    ProviderTransportError,
    ReconError,
    ReportWriteError,
    StoreError,
    TooManyRefusals,
)
from recon.signals import Terminated

MAX_CAUSE_CHARS = 300
# A night's date is the evening it began: a run at 02:30 on the 23rd is the night of the 22nd.
NIGHT_STARTS_BEFORE = timedelta(hours=12)


def night_of(as_of: datetime, zone: ZoneInfo) -> date:
    """The night a run belongs to: the local date twelve hours before its as-of."""
    return (as_of.astimezone(zone) - NIGHT_STARTS_BEFORE).date()


def failure_line(night: date, cause: str, account: str | None = None) -> str:
    """The one line naming a failed night (mail subject, wrapper, heartbeat); ``account``: the
    provider account whose night it was, named (None: the one account, unnamed)."""
    whose = f" of account {account}" if account is not None else ""
    return f"recon: night of {night.isoformat()}{whose} failed: {cause}"


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it was raised from or during (``from None`` keeps the context)."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def cause_of(exc: BaseException) -> str:
    """Why a run ended without finishing, in one line (no secret: messages never hold one, and
    the caller scrubs what it stores)."""
    operation = getattr(exc, "operation", "") or ""
    where = f" ({operation})" if operation else ""
    if isinstance(exc, Terminated):
        return f"stopped by {signal.Signals(exc.signum).name} before it finished"
    if isinstance(exc, KeyboardInterrupt):
        return "stopped by SIGINT before it finished"
    if isinstance(exc, KeysRefused):
        return f"the provider refused the API keys{where}"
    if isinstance(exc, TooManyRefusals):
        return "the provider refused too many ids: the API key looks revoked"
    if any(isinstance(e, ProviderTransportError) for e in _chain(exc)):
        return f"cannot reach the provider{where}"
    if isinstance(exc, ProviderError):
        return _one_line(f"the provider failed: {_message(exc, operation)}{where}")
    if isinstance(exc, LockLost):
        return "another run took the run lock over"
    if isinstance(exc, StoreError) or type(exc).__module__.startswith("sqlalchemy"):
        reason = getattr(exc, "orig", None) or exc
        text = str(reason)
        return _one_line(
            text if text.startswith("the database") else f"the database failed: {text}"
        )
    if isinstance(exc, ReportWriteError):
        return _one_line(f"the reports could not be written: {exc}")
    if isinstance(exc, MailError):
        return _one_line(f"the report email could not be sent: {exc}")
    if isinstance(exc, ReconError):
        return _one_line(str(exc))
    return _one_line(f"unexpected error: {type(exc).__name__}: {exc}")


def abandoned_cause(host: str, pid: int) -> str:
    """The cause of a run the next run found unfinished and did not resume."""
    return (
        f"stopped without finishing (killed, or its host went down: pid {pid} on {host}); "
        "not resumed"
    )


def _message(exc: BaseException, operation: str) -> str:
    text = str(exc)
    return text.removeprefix(f"{operation}: ") if operation else text


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_CAUSE_CHARS else line[: MAX_CAUSE_CHARS - 1] + "…"
