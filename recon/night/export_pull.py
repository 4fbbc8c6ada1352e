"""Pulling the provider's transaction export: per account and settlement day, a task, then a file.

For each settlement day (a calendar day in ``RECON_TIMEZONE``) :func:`pull_days` asks
``transaction.csv_export`` for the day's window, asks ``export_task.get`` until the answer carries
an ``artifact_url`` (the provider publishes no state names: an error answer is a failed task, any
other answer a task still running), and downloads the file at once, well inside its lifetime. Each
file goes to a :class:`Sink` (the store, in :func:`pull`), whole and as it came.

:func:`pull` is the command's and the night's entry: it reads each file through the ``[export]``
mapping and stores it with its rows, as ``recon import provider-export`` does
(:func:`recon.ingest.export_import.import_export`); without days given, it pulls the days since
the last one pulled with ``RECON_EXPORT_LOOKBACK_DAYS`` before it, through yesterday.
:func:`pull_for_night` is the night's: a pull that fails is a warning, never the night's failure.

A file of exactly the row cap is never complete: it is kept (marked capped) and its window is split
in two and each half pulled again, down to one second; a one-second window still at the cap is kept
capped and said so. A task that fails, an artifact that expired or a provider error leaves the day
missing: the others go on, and the result names the missing days and why.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Final, Protocol
from zoneinfo import ZoneInfo

import httpx
from sqlalchemy import Engine

from recon.accounts import Account
from recon.errors import ArtifactExpired, KeysRefused, ProviderError, ReconError
from recon.export_rows import days
from recon.provider.client import ProviderClient
from recon.settings import Settings

# The night's progress logger: its lines are always shown, so the cron log says what came in.
log = logging.getLogger("recon.progress")
SOURCE: Final = "api"


@dataclass(frozen=True, slots=True)
class Waits:
    """How the pull waits for a task: ``first`` seconds before the second ask, doubling to
    ``most``; a task not done within ``deadline`` seconds is given up (its day missing)."""

    first: float = 0.25
    most: float = 30.0
    deadline: float = 3600.0


@dataclass(frozen=True, slots=True)
class PulledFile:
    """One export file as the provider gave it, for the window ``[settled_from, settled_to)``."""

    account: str
    day: date
    settled_from: datetime  # UTC
    settled_to: datetime  # UTC, exclusive
    data: bytes
    rows: int
    capped: bool
    name: str  # where it came from, without the url's credential


class Sink(Protocol):
    """Where a pulled file goes (the store, or a test's list)."""

    def __call__(self, pulled: PulledFile) -> None: ...


@dataclass(slots=True)
class DayPull:
    """What the pull of one settlement day came to."""

    day: date
    files: int = 0
    rows: int = 0
    capped: list[tuple[datetime, datetime]] = field(default_factory=list)  # kept at the cap
    missing: str | None = None  # why the day is (partly) missing


@dataclass(slots=True)
class PullResult:
    """One account's pull: a :class:`DayPull` per settlement day asked for."""

    account: str
    days: list[DayPull] = field(default_factory=list)

    @property
    def missing(self) -> list[DayPull]:
        """The days whose export could not be had whole."""
        return [d for d in self.days if d.missing is not None]

    def lines(self) -> list[str]:
        """What the pull says: the files, and each missing or capped day with its reason."""
        files = sum(d.files for d in self.days)
        rows = sum(d.rows for d in self.days)
        out = [
            f"provider export {self.account}: {len(self.days)} day(s), {files} file(s), "
            f"{rows} row(s)"
        ]
        for day in self.days:
            for start, end in day.capped:
                out.append(
                    f"  {day.day}: the window {start:%H:%M:%S}-{end:%H:%M:%S} UTC still has the "
                    "row cap's count of rows in one second: kept, marked capped (not complete)"
                )
            if day.missing is not None:
                out.append(f"  {day.day}: missing: {day.missing}")
        return out


def day_window(day: date, zone: ZoneInfo) -> tuple[int, int]:
    """The settlement day ``day`` in ``zone`` as epoch seconds ``[start, end)`` (the store's
    window of that one day, :func:`recon.store.export_rows.day_window`)."""
    from recon.store.export_rows import day_window as days_window

    start, end = days_window(day, day, zone)
    return int(start.timestamp()), int(end.timestamp())


def days_to_pull(last_pulled: date | None, yesterday: date, lookback: int) -> list[date]:
    """The days since ``last_pulled`` (none: from ``yesterday``), with ``lookback`` days before
    the first of them, through ``yesterday``."""
    first_new = yesterday if last_pulled is None else last_pulled + timedelta(days=1)
    start = min(first_new, yesterday) - timedelta(days=lookback)
    return days(start, yesterday)


def _utc(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


class _Puller:
    """One account's pull over one client."""

    def __init__(
        self,
        client: ProviderClient,
        account: str,
        *,
        cap: int,
        sink: Sink,
        waits: Waits,
        monotonic: Callable[[], float],
    ) -> None:
        self.client = client
        self.account = account
        self.cap = cap
        self.sink = sink
        self.waits = waits
        self.monotonic = monotonic

    async def day(self, day: date, zone: ZoneInfo) -> DayPull:
        done = DayPull(day)
        start, end = day_window(day, zone)
        try:
            await self.window(done, start, end)
        except KeysRefused:
            raise  # no token: nothing at all can be pulled
        except ReconError as exc:  # a failed task, an expired file, a file that cannot be read
            done.missing = str(exc)
            log.warning("provider export %s %s: missing: %s", self.account, day, exc)
        return done

    async def window(self, done: DayPull, start: int, end: int) -> None:
        """Pull ``[start, end)``; at the cap, split it and pull each half again."""
        span = f"{_utc(start):%H:%M:%S}-{_utc(end):%H:%M:%S} UTC"
        label = f"provider export {self.account} {done.day} {span}"
        task_id = await self.client.request_export(start, end)
        url, rows = await self.wait(task_id, label)
        try:
            data = await self.client.download_artifact(url)
        except ArtifactExpired:
            raise ArtifactExpired(
                "the export's file expired before it was downloaded",
                operation="export artifact",
                status=410,
            ) from None
        capped = rows >= self.cap
        self.sink(
            PulledFile(
                self.account,
                done.day,
                _utc(start),
                _utc(end),
                data,
                rows,
                capped,
                f"transaction.csv_export task {task_id}",
            )
        )
        done.files += 1
        log.info("%s: %d row(s)%s", label, rows, " (the row cap: splitting)" if capped else "")
        if not capped:
            done.rows += rows
            return
        if end - start <= 1:
            done.rows += rows
            done.capped.append((_utc(start), _utc(end)))
            return
        middle = (start + end) // 2
        await self.window(done, start, middle)
        await self.window(done, middle, end)

    async def wait(self, task_id: str, label: str) -> tuple[str, int]:
        """Ask about the task until it is done; its artifact url and row count."""
        began = self.monotonic()
        pause = self.waits.first
        asks = 0
        while True:
            task = await self.client.get_export_task(task_id)
            asks += 1
            if task.artifact_url is not None:
                return task.artifact_url, task.rows if task.rows is not None else 0
            waited = self.monotonic() - began
            log.info(
                "%s: waiting for the provider's task (state %s, ask %d)", label, task.state, asks
            )
            if waited + pause > self.waits.deadline:
                raise ProviderError(
                    f"the export task was not done within {self.waits.deadline:g} s",
                    operation="export_task.get",
                )
            await asyncio.sleep(pause)
            pause = min(pause * 2, self.waits.most)


async def pull_days(
    client: ProviderClient,
    account: str,
    days: Sequence[date],
    *,
    zone: ZoneInfo,
    cap: int,
    sink: Sink,
    waits: Waits = Waits(),
    monotonic: Callable[[], float] = time.monotonic,
) -> PullResult:
    """Pull ``account``'s export for each of ``days`` through ``client``; each file to ``sink``."""
    puller = _Puller(client, account, cap=cap, sink=sink, waits=waits, monotonic=monotonic)
    result = PullResult(account)
    for day in days:
        result.days.append(await puller.day(day, zone))
    return result


def pull_with(
    settings: Settings,
    account: str,
    days: Sequence[date],
    *,
    cap: int,
    sink: Sink,
    transport: httpx.AsyncBaseTransport | None = None,
    waits: Waits = Waits(),
) -> PullResult:
    """:func:`pull_days` with a client from ``settings`` (one account's: ``for_account``)."""

    async def go() -> PullResult:
        async with ProviderClient.from_settings(settings, transport=transport) as client:
            return await pull_days(
                client, account, days, zone=settings.zone, cap=cap, sink=sink, waits=waits
            )

    return asyncio.run(go())


def _storing(settings: Settings, engine: Engine, account: str) -> Sink:
    """The sink that reads each file through the mapping and stores it with its rows."""
    from recon.ingest.export_import import import_export

    def store(pulled: PulledFile) -> None:
        stored = import_export(
            engine,
            pulled.data,
            settings.export,
            account=account,
            settled_from=pulled.settled_from,
            settled_to=pulled.settled_to,
            source=SOURCE,
            name=pulled.name,
            row_cap=settings.export_row_cap,
        )
        log.info("%s", stored.summary(account))

    return store


def default_days(settings: Settings, engine: Engine, account: str, today: date) -> list[date]:
    """The days to pull for ``account`` on ``today``: since the last one pulled, with
    ``RECON_EXPORT_LOOKBACK_DAYS`` before it, through yesterday."""
    from recon.store.export_rows import covered_days

    with engine.connect() as conn:
        last = covered_days(conn, account, settings.zone).last_pulled
    yesterday = today - timedelta(days=1)
    return days_to_pull(last, yesterday, settings.export_lookback_days)


def pull(
    settings: Settings,
    engine: Engine,
    account: Account,
    days: Sequence[date] | None = None,
    *,
    today: date | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    waits: Waits = Waits(),
) -> PullResult:
    """Pull and store ``account``'s export for ``days`` (None: :func:`default_days`)."""
    if days is None:
        today = today or datetime.now(settings.zone).date()
        days = default_days(settings, engine, account.name, today)
    return pull_with(
        settings.for_account(account),
        account.name,
        days,
        cap=settings.export_row_cap,
        sink=_storing(settings, engine, account.name),
        transport=transport,
        waits=waits,
    )


def pull_for_night(
    settings: Settings,
    engine: Engine,
    account: str,
    as_of: datetime,
    transport: httpx.AsyncBaseTransport | None = None,
) -> PullResult | None:
    """The night's pull (``RECON_PROVIDER_EXPORT=api``) before it polls; None when it is off or
    failed: a failed pull is a warning, and the night goes on with its polls."""
    if settings.provider_export != "api":
        return None
    try:
        (chosen,) = settings.select_accounts([account])
        result = pull(
            settings,
            engine,
            chosen,
            today=as_of.astimezone(settings.zone).date(),
            transport=transport,
        )
    except Exception as exc:  # the export only saves polls: never the night's failure
        log.warning("provider export %s: not pulled tonight: %s", account, exc)
        return None
    for line in result.lines():
        (log.warning if line.startswith("  ") else log.info)("%s", line)
    return result
