"""How a night ended: one frozen record, built once where it ends, handed to small hooks.

As stamina hands each retry's details to its instrumentation hooks, a night hands its
:class:`NightEnd` to hooks that each do one thing: the run's row closed as failed, the failure
logged and mailed (:mod:`recon.night.failed`), and what the command adds: its closing lines, the
metrics file (:mod:`recon.ops.metrics`), the heartbeat's ping (:mod:`recon.ops.heartbeat`). The
exit code is the record's, mapped in one place (:func:`exit_code`); the command returns it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from recon.constants import DEFAULT_ACCOUNT, ExitCode, RunStatus
from recon.counts import RunCounts
from recon.errors import ReconError, exit_code_of
from recon.reconcile.rollforward import ROLLFORWARD_BREAK
from recon.signals import Terminated

if TYPE_CHECKING:
    from recon.report.model import ReportInput
    from recon.report.pack import ReportFiles


class Outcome(StrEnum):
    """How a night ended."""

    FINISHED = "finished"  # its reports are written: complete, incomplete, or a dry run's
    FAILED = "failed"  # an error stopped it
    STOPPED = "stopped"  # a signal or an interrupt stopped it
    # It did not run its night: another run holds the run lock (or took it over), or its options
    # were refused before its row was opened. Nobody is told but the caller.
    REFUSED = "refused"


@dataclass(frozen=True)
class NightEnd:
    """How one night ended, for every hook (and what ``recon run`` returns when it finished).

    ``seconds``: from the night's start to its end. ``status``, ``files``, ``summary``: a finished
    night's. ``cause`` (scrubbed, one line), ``line`` ("recon: night of … failed: …") and
    ``error`` (as it leaves the night): a night that did not finish.
    """

    outcome: Outcome
    exit_code: int
    run_id: int | None
    as_of: datetime
    seconds: float
    counts: RunCounts = field(default_factory=RunCounts)
    dry: bool = False
    status: RunStatus | None = None
    files: ReportFiles | None = None
    summary: str = ""
    cause: str = ""
    line: str = ""
    error: BaseException | None = None
    account: str = DEFAULT_ACCOUNT  # the provider account whose night it was
    # A finished night's report as written (the pack over several accounts combines them).
    report: ReportInput | None = field(default=None, repr=False, compare=False)

    @property
    def announced(self) -> bool:
        """A failure operations hear of: a nightly run that ran and did not finish."""
        return self.outcome in (Outcome.FAILED, Outcome.STOPPED) and not self.dry


# What run_reconciliation returns: the end of a night that finished.
RunResult = NightEnd

Hook = Callable[[NightEnd], None]


def exit_code(
    *,
    error: BaseException | None = None,
    status: RunStatus | None = None,
    counts: RunCounts | None = None,
    mail_failed: bool = False,
) -> int:
    """The exit code of a night: an error's documented code (a signal's 128 + its number, an
    interrupt's 130, anything else 1); a finished night's 3 when payouts could not be fetched or
    the roll-forward broke (never silent), else 5 when the email failed, else 0."""
    if isinstance(error, ReconError):
        return exit_code_of(error)
    if isinstance(error, Terminated):
        return 128 + error.signum
    if isinstance(error, KeyboardInterrupt):
        return 130
    if error is not None:
        return int(ExitCode.FAILURE)
    broken = counts.flags.get(ROLLFORWARD_BREAK.name, 0) if counts is not None else 0
    if status is RunStatus.INCOMPLETE or broken:
        return int(ExitCode.INCOMPLETE)
    return int(ExitCode.MAIL_FAILED if mail_failed else ExitCode.OK)


def run_hooks(end: NightEnd, hooks: list[Hook]) -> None:
    """Hand ``end`` to each hook, in order."""
    for hook in hooks:
        hook(end)
