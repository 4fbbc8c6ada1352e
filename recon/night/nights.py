"""``recon run`` over the provider accounts: each account's night in turn, then one pack of all.

One run is one account's night: :func:`recon.night.run.run_reconciliation` with the account's
URL, keys, rate limit and concurrency (:meth:`recon.settings.Settings.for_account`), its own run
row, lock, token, resume and fencing. The nights of one invocation run one after the other
(docs/decisions.md, "Accounts' nights one after the other"); to run them at the same time, run
``recon run --account NAME`` in several processes or on several hosts: the lock is per account
(docs/scaling.md).

Without ``[accounts.…]`` tables the one account ``default`` runs exactly as before: its pack in
OUT_DIR, mailed to RECON_MAIL_TO. With tables, each account's night writes its own pack to
``OUT_DIR/NAME/`` (mailed to the account's ``mail_to`` when it has one), and the invocation writes
one pack over every account's night to OUT_DIR (:func:`recon.report.accounts.combine`), mailed to
RECON_MAIL_TO. A night that did not finish (its provider refused the keys or could not be
reached) stands in that pack as failed, with no rows, and operations get its failure line; the
other nights stand, and the command exits 3 naming it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import httpx
from sqlalchemy import Engine

from recon.accounts import Account
from recon.constants import ExitCode, RunStatus
from recon.errors import MailError
from recon.night.end import Hook, NightEnd, Outcome
from recon.night.failed import failure_mail
from recon.night.lifecycle import RunOptions
from recon.night.progress import Progress
from recon.night.run import run_reconciliation
from recon.report.accounts import combine
from recon.report.mail import send_report
from recon.report.model import ReportInput, RunInfo
from recon.report.pack import ReportFiles, write_configured
from recon.settings import Settings
from recon.signals import Terminated
from recon.words import counted

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Nights:
    """How an invocation's nights ended: each account's (in name order), the pack over them all
    (None: no night finished, or the one account of a setup without accounts), its exit code."""

    ends: tuple[NightEnd, ...]
    files: ReportFiles | None
    exit_code: int
    lines: tuple[str, ...] = ()  # what the command says at the end, after each night's lines

    @property
    def unfinished(self) -> list[NightEnd]:
        return [e for e in self.ends if e.outcome is not Outcome.FINISHED]


def night_settings(settings: Settings, account: Account) -> Settings:
    """The settings of ``account``'s night: its client's (``Settings.for_account``), and its own
    recipients (its ``mail_to``; none: its pack is not mailed) in place of RECON_MAIL_TO."""
    return settings.for_account(account).model_copy(
        update={"mail_to": list(account.mail_to), "mail_cc": []}
    )


def run_nights(
    settings: Settings,
    options: RunOptions,
    accounts: Sequence[Account],
    *,
    hooks: Sequence[Hook] = (),
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
    engine: Engine | None = None,
) -> Nights:
    """Run each account's night, then write (and mail) the pack over them; see the module
    docstring. ``hooks`` see each night's end. Of several accounts, an error ends its night and
    the next runs; a signal or an interrupt stops every night (the one running ends as failed, as
    a lone night does) and goes on. Without accounts, the night's error goes on, as before."""
    if not settings.accounts:  # no tables: the one account, exactly as before (errors go on)
        end = run_reconciliation(
            settings, options, hooks=hooks, transport=transport, progress=progress, engine=engine
        )
        return Nights((end,), None, end.exit_code)
    ends = []
    for account in accounts:
        own = replace(options, out_dir=options.out_dir / account.name, account=account.name)
        mine = night_settings(settings, account)
        ends.append(_one(mine, own, hooks, transport, progress, engine))
    return _together(settings, options, tuple(ends))


def _one(
    settings: Settings,
    options: RunOptions,
    hooks: Sequence[Hook],
    transport: httpx.AsyncBaseTransport | None,
    progress: Progress | None,
    engine: Engine | None,
) -> NightEnd:
    """One account's night, however it ended (an error ends it, not the invocation)."""
    seen: list[NightEnd] = []
    try:
        return run_reconciliation(
            settings,
            options,
            hooks=[*hooks, seen.append],
            transport=transport,
            progress=progress,
            engine=engine,
        )
    except (Terminated, KeyboardInterrupt):
        raise
    except Exception:
        if not seen:  # the hooks run however a night ends: this is a bug
            raise
        return seen[-1]


def _together(settings: Settings, options: RunOptions, ends: tuple[NightEnd, ...]) -> Nights:
    """The pack over every account's night, mailed to RECON_MAIL_TO, and the failures told."""
    finished = [e.report for e in ends if e.report is not None]
    lines: list[str] = []
    files, mail_failed = None, False
    if finished:
        # A night another run holds is that run's to report; one that failed stands, empty.
        ran = [e for e in ends if not _locked(e)]
        inputs = [e.report if e.report is not None else _failed(e, finished[0]) for e in ran]
        data = combine(inputs)  # each night's report names the accounts as finance reads them
        files = write_configured(settings, options.out_dir, data)
        lines.append(f"recon: report of {counted(len(ran), 'account')}: {files.html.resolve()}")
        if options.email and not options.dry_run and settings.smtp_host and settings.mail_to:
            try:
                send_report(settings, files, data)
                lines.append(f"recon: mailed to {', '.join(settings.mail_to + settings.mail_cc)}")
            except MailError as exc:
                log.error("%s", exc)
                mail_failed = True
    for end in ends:
        if end.outcome is not Outcome.FINISHED:
            lines.append(f"recon: account {end.account}: {_why(end)}")
            _tell(settings, options, end)
    nights = Nights(ends, files, 0, tuple(lines))
    return replace(nights, exit_code=exit_code_of(nights, mail_failed=mail_failed))


def _why(end: NightEnd) -> str:
    if end.outcome is Outcome.REFUSED:
        return f"did not run: {end.cause}"
    return f"night failed: {end.cause}"


def _tell(settings: Settings, options: RunOptions, end: NightEnd) -> None:
    """Operations (RECON_MAIL_TO) hear of every night that failed, whoever else did."""
    failure_mail(settings, options)(end)


def _failed(end: NightEnd, like: ReportInput) -> ReportInput:
    """A night that did not finish, as the pack over the accounts shows it: failed, no rows."""
    info = RunInfo(
        run_id=end.run_id,
        started_at=None,
        finished_at=datetime.now(UTC),
        as_of=end.as_of,
        status=RunStatus.FAILED,
        duration_seconds=end.seconds,
        requests=0,
        requests_per_second=None,
        previous_run_id=None,
        provider_account=end.account,
    )
    frames = ("payouts", "exceptions", "returns", "changes", "totals", "rollforward")
    empty = {name: getattr(like, name).iloc[0:0] for name in frames}
    return ReportInput(
        run=info,
        timezone=like.timezone,
        window_days=like.window_days,
        **empty,
        labels=like.labels,
    )


def exit_code_of(nights: Nights, *, mail_failed: bool = False) -> int:
    """The invocation's exit code: a lone night's own; of several, that of the first when none
    finished, else 3 when one did not finish or is incomplete, else 4 when another run held an
    account's lock, else 5 when an email failed, else 0."""
    ends = nights.ends
    if len(ends) == 1 and nights.files is None:
        return ends[0].exit_code
    if not any(e.outcome is Outcome.FINISHED for e in ends):
        return ends[0].exit_code
    codes = [e.exit_code for e in ends]
    if any(e.outcome is not Outcome.FINISHED and not _locked(e) for e in ends):
        return int(ExitCode.INCOMPLETE)
    if ExitCode.INCOMPLETE in codes:
        return int(ExitCode.INCOMPLETE)
    if any(_locked(e) for e in ends):
        return int(ExitCode.LOCKED)
    if mail_failed or ExitCode.MAIL_FAILED in codes:
        return int(ExitCode.MAIL_FAILED)
    return int(ExitCode.OK)


def _locked(end: NightEnd) -> bool:
    return end.outcome is Outcome.REFUSED and end.exit_code == ExitCode.LOCKED


__all__ = ["Nights", "night_settings", "run_nights"]
