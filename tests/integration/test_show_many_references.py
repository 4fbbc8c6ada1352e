"""`recon show` in a store whose ids and references share a prefix (``order-…``): the exact id or
reference is asked for first, so no payout is ever lost behind its neighbours; near ones are only
looked for when nothing matches, in order, the closest first. SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import Engine

from recon.errors import InputError
from recon.ingest.payouts import import_payouts_csv
from recon.ops.show import find_payout, show_text

N = 1000
UTC = ZoneInfo("UTC")


@pytest.fixture
def store(engine: Engine, tmp_path: Path) -> Engine:
    """1,000 payouts, ids ``tx-00000``… and references ``order-00000``…"""
    rows = "".join(f"tx-{i:05d},order-{i:05d},{i + 1}.00,EUR\n" for i in range(N))
    csv = tmp_path / "payouts.csv"
    csv.write_text("transaction_id,merchant_reference,amount,currency\n" + rows, encoding="utf-8")
    import_payouts_csv(engine, csv)
    return engine


def test_show_finds_payouts_past_the_first_two_hundred(store: Engine) -> None:
    """The 201st, 501st and last payout, by reference and by id, through the whole command."""
    url = store.url.render_as_string(hide_password=False)
    for i in (200, 500, N - 1):
        by_reference = show_text(url, f"order-{i:05d}", zone=UTC)
        assert by_reference.splitlines()[:2] == [
            f"(merchant_reference order-{i:05d})",
            f"Payout tx-{i:05d}",
        ]
        assert show_text(url, f"tx-{i:05d}", zone=UTC).startswith(f"Payout tx-{i:05d}\n")


def test_every_payout_is_found_by_its_id_and_by_its_reference(store: Engine) -> None:
    """All 1,000, each way."""
    with store.connect() as conn:
        for i in range(N):
            by_id = find_payout(conn, f"tx-{i:05d}")
            by_reference = find_payout(conn, f" order-{i:05d}")
            assert (by_id.found, by_reference.found) == (f"tx-{i:05d}", f"tx-{i:05d}"), i


def test_a_near_miss_past_the_first_two_hundred_suggests_its_closest_neighbours(
    store: Engine,
) -> None:
    """One character too many, or another case: the payouts next to it are offered first."""
    with store.connect() as conn:
        extra = find_payout(conn, "order-00987x")
        other_case = find_payout(conn, "ORDER-00750")
    assert extra.found is None
    assert extra.suggestions[0] == "order-00987"
    assert other_case.found is None
    assert other_case.suggestions[0] == "order-00750"


def test_nothing_near_says_so(store: Engine) -> None:
    """A text sharing no first characters with anything: the plain answer, nothing offered."""
    url = store.url.render_as_string(hide_password=False)
    with pytest.raises(InputError, match=r"^no payout, reference or return id 'zzz-1' in the"):
        show_text(url, "zzz-1", zone=UTC)


def test_an_id_that_starts_with_a_dash_is_an_id_not_an_option(tmp_path: Path) -> None:
    """Ids are opaque (the sandbox makes ``-iBN2…``): `recon show -iBN2…` looks it up."""
    from click.testing import CliRunner

    from recon.cli import main

    env = {"RECON_DATABASE_URL": f"sqlite:///{tmp_path / 'recon.db'}"}
    result = CliRunner().invoke(main, ["show", "-iBN2TYHx5LN5"], env=env)
    assert "no payout, reference or return id '-iBN2TYHx5LN5'" in result.output, result.output
