"""Pulling the provider's export over real HTTP from the sandbox served on loopback: a day's file,
the cap split, an expired artifact, a failed task, and a late state change in a later file."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import UTC, date, datetime

import httpx
import pytest

from recon.night.export_pull import PulledFile, Waits, pull_with
from recon.sandbox.app import create_app
from recon.sandbox.config import SandboxConfig, default_merchant
from recon.serving import serve_in_thread
from recon.settings import Settings
from tests.e2e.run_support import Payout, Spec, World, create_payouts

QUICK = Waits(first=0.01, most=0.05, deadline=30)


@pytest.fixture
def world() -> Iterator[World]:
    """The sandbox on loopback with an export cap of 3 rows, payouts settling after 300 s."""
    config = SandboxConfig(merchants=[default_merchant()], settle_after_seconds=300.0, export_cap=3)
    with (
        serve_in_thread(create_app(config)) as url,
        httpx.Client(base_url=url, timeout=30) as admin,
    ):
        yield World(url, None, admin)


def settled_payouts(world: World, count: int) -> tuple[list[Payout], date]:
    """``count`` payouts created a minute apart from 01:00 UTC, all settled by 02:00: one
    settlement day, each payout at a second of its own."""
    world.advance_to_hour(1)
    payouts = []
    for n in range(count):
        payouts += create_payouts(world, [Spec(f"{10 + n}.00")], prefix=f"p{n}")
        world.advance(60)
    world.advance(600)
    return payouts, datetime.fromtimestamp(float(world.now()), UTC).date()


def settings_for(world: World) -> Settings:
    return Settings(api_base_url=world.sandbox_url, retry_initial_wait=0, retry_attempts=2)


def rows(pulled: PulledFile) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(pulled.data.decode("utf-8"))))


def test_a_pull_gets_the_days_file(world: World) -> None:
    """One day with two settled payouts: one task, one file holding both payouts and their fees,
    for the window of that calendar day, not capped."""
    payouts, day = settled_payouts(world, 1)
    files: list[PulledFile] = []
    result = pull_with(settings_for(world), "default", [day], cap=3, sink=files.append, waits=QUICK)
    assert result.missing == []
    assert len(files) == 1
    (pulled,) = files
    assert pulled.settled_from == datetime(day.year, day.month, day.day, tzinfo=UTC)
    assert (pulled.settled_to - pulled.settled_from).days == 1
    assert not pulled.capped
    assert {r["id"] for r in rows(pulled) if r["type"] == "1"} == {payouts[0].transaction_id}
    assert pulled.rows == 2  # the payout and its fee row
    assert "artifacts" not in pulled.name  # the url is a credential: never kept


def test_a_window_at_the_cap_is_split_until_every_part_is_below_it(world: World) -> None:
    """Seven payouts (fourteen rows with fees) in a day, cap 3: every file at the cap is split in
    two and pulled again, until the files below the cap hold every row of the day once."""
    payouts, day = settled_payouts(world, 7)
    files: list[PulledFile] = []
    result = pull_with(settings_for(world), "default", [day], cap=3, sink=files.append, waits=QUICK)
    assert result.missing == []
    complete = [f for f in files if not f.capped]
    assert any(f.capped for f in files)
    ids = [r["id"] for f in complete for r in rows(f) if r["type"] == "1"]
    assert sorted(ids) == sorted(p.transaction_id for p in payouts)
    assert result.days[0].rows == 14


class _ExpireBeforeDownload(httpx.AsyncBaseTransport):
    """Real HTTP, but the sandbox clock moves 25 h on just before each artifact is fetched."""

    def __init__(self, world: World) -> None:
        self._world = world
        self._http = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and "/artifacts/" in request.url.path:
            self._world.advance(25 * 3600)
        return await self._http.handle_async_request(request)

    async def aclose(self) -> None:
        await self._http.aclose()


def test_an_artifact_expired_before_its_download_leaves_the_day_missing(world: World) -> None:
    """The file expires (410) between the task and the download: nothing is stored, the pull
    goes on to the next day and names the missing one."""
    _, day = settled_payouts(world, 1)
    files: list[PulledFile] = []
    other = date.fromordinal(day.toordinal() - 1)
    result = pull_with(
        settings_for(world),
        "default",
        [day, other],
        cap=3,
        sink=files.append,
        transport=_ExpireBeforeDownload(world),
        waits=QUICK,
    )
    assert files == []
    assert [d.day for d in result.missing] == [day, other]
    assert "expired" in (result.missing[0].missing or "")
    assert any(f"{day}: missing" in line for line in result.lines())


def test_a_failed_task_leaves_its_day_missing_and_the_pull_goes_on(world: World) -> None:
    """Every task fails (export_failure_rate 1): each day is named missing, and nothing raises."""
    _, day = settled_payouts(world, 1)
    world.faults(export_failure_rate=1.0)
    files: list[PulledFile] = []
    result = pull_with(settings_for(world), "default", [day], cap=3, sink=files.append, waits=QUICK)
    assert files == []
    assert [d.day for d in result.missing] == [day]
    assert "export_failed" in (result.missing[0].missing or "")


def test_a_later_pull_shows_a_payouts_late_state_change(world: World) -> None:
    """A payout reversed after the first pull is in the second file with its new state."""
    payouts, day = settled_payouts(world, 1)
    files: list[PulledFile] = []
    pull_with(settings_for(world), "default", [day], cap=3, sink=files.append, waits=QUICK)
    world.post(f"/sandbox/transactions/{payouts[0].transaction_id}/reverse", {"state": 3})
    pull_with(settings_for(world), "default", [day], cap=3, sink=files.append, waits=QUICK)
    states = [
        next(r["state"] for r in rows(f) if r["id"] == payouts[0].transaction_id) for f in files
    ]
    assert states == ["6", "3"]
