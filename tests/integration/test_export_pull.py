"""Pulling the provider's export over real HTTP from the sandbox served on loopback: a day's file,
the cap split, an expired artifact, a failed task, and a late state change in a later file."""

from __future__ import annotations

import asyncio
import csv
import io
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, select

from recon.errors import MalformedResponse
from recon.night.export_pull import PulledFile, Waits, days_to_pull, default_days, pull, pull_with
from recon.provider.client import ProviderClient
from recon.sandbox.app import create_app
from recon.sandbox.config import SandboxConfig, default_merchant
from recon.serving import serve_in_thread
from recon.settings import Settings
from recon.store.export_tables import provider_export_files, provider_export_rows
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


# --- pulled and stored: the files and their rows in the store -------------------------------------


def _stored(engine: Engine) -> tuple[list[Any], list[Any]]:
    with engine.connect() as conn:
        files = list(
            conn.execute(select(provider_export_files).order_by(provider_export_files.c.id))
        )
        rows_ = list(conn.execute(select(provider_export_rows)))
    return files, rows_


def store_settings(world: World) -> Settings:
    return Settings(
        api_base_url=world.sandbox_url, retry_initial_wait=0, retry_attempts=2, export_row_cap=3
    )


def test_a_pull_stores_the_days_file_and_its_rows(world: World, engine: Engine) -> None:
    """The day's file is stored once for the account, as pulled (source api, the day's window,
    not capped), with its payout and fee rows; pulling it again unchanged adds nothing."""
    payouts, day = settled_payouts(world, 1)
    settings = store_settings(world)
    (account,) = settings.provider_accounts
    result = pull(settings, engine, account, [day], waits=QUICK)
    assert result.missing == []
    files, rows_ = _stored(engine)
    assert [(f.source, f.rows, f.capped) for f in files] == [("api", 2, False)]
    assert files[0].settled_from == datetime(day.year, day.month, day.day, tzinfo=UTC)
    assert {(r.kind, r.transaction_id) for r in rows_} >= {("payout", payouts[0].transaction_id)}
    pull(settings, engine, account, [day], waits=QUICK)
    assert len(_stored(engine)[1]) == 2  # the same rows again: no new version


def test_the_cap_split_stores_every_row_of_the_day_once(world: World, engine: Engine) -> None:
    """Cap 3 and fourteen rows in the day: the capped files are kept marked capped, and every
    payout and fee of the day is stored, each as one version."""
    payouts, day = settled_payouts(world, 7)
    settings = store_settings(world)
    (account,) = settings.provider_accounts
    result = pull(settings, engine, account, [day], waits=QUICK)
    assert result.missing == []
    files, rows_ = _stored(engine)
    assert any(f.capped for f in files)
    assert any(not f.capped for f in files)
    assert sorted(r.transaction_id for r in rows_ if r.kind == "payout") == sorted(
        p.transaction_id for p in payouts
    )
    assert len(rows_) == 14
    assert {r.version for r in rows_} == {1}


def test_a_late_state_change_is_stored_as_a_new_version(world: World, engine: Engine) -> None:
    """A payout reversed at the provider after the first pull: the second pull stores its row
    as version 2 with the new state, and the history keeps version 1."""
    payouts, day = settled_payouts(world, 1)
    settings = store_settings(world)
    (account,) = settings.provider_accounts
    pull(settings, engine, account, [day], waits=QUICK)
    world.post(f"/sandbox/transactions/{payouts[0].transaction_id}/reverse", {"state": 3})
    pull(settings, engine, account, [day], waits=QUICK)
    _, rows_ = _stored(engine)
    versions = sorted(
        (r.version, r.state) for r in rows_ if r.transaction_id == payouts[0].transaction_id
    )
    assert versions == [(1, 6), (2, 3)]


def test_without_days_the_pull_takes_the_days_since_the_last_with_the_lookback(
    world: World, engine: Engine
) -> None:
    """Nothing pulled yet: yesterday and the lookback days before it; once a day is pulled, the
    days after it, with the lookback before them, through yesterday."""
    settings = store_settings(world).model_copy(update={"export_lookback_days": 2})
    today = date(2026, 3, 10)
    assert default_days(settings, engine, "default", today) == [
        date(2026, 3, 7), date(2026, 3, 8), date(2026, 3, 9)
    ]  # fmt: skip
    assert days_to_pull(date(2026, 3, 5), date(2026, 3, 9), 2) == [
        date(2026, 3, d) for d in range(4, 10)
    ]


def test_the_artifact_is_fetched_without_a_token_and_bounded_in_size() -> None:
    """The download is a plain GET with no Authorization header; a file over the client's limit
    is refused as malformed, and the url's token appears in no message."""
    seen: list[httpx.Request] = []
    token = "t" * 43

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=b"x" * 2048)

    async def fetch(limit: int) -> bytes:
        async with ProviderClient(
            "http://provider.test",
            "pk",
            "secret-secret",
            max_artifact_bytes=limit,
            retry_initial_wait=0,
            transport=httpx.MockTransport(answer),
        ) as client:
            return await client.download_artifact(f"http://files.test/artifacts/{token}")

    assert asyncio.run(fetch(4096)) == b"x" * 2048
    assert seen[0].method == "GET"
    assert "authorization" not in seen[0].headers
    with pytest.raises(MalformedResponse) as refused:
        asyncio.run(fetch(1024))
    assert token not in str(refused.value)
