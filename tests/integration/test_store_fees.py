"""The provider's fee is part of the answer: every answer's fee is stored, the payout keeps the
latest, a fee that changes is a change its history shows, and `recon show` says both. A negative
or non-numeric fee is the payout's malformed answer. SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from sqlalchemy import Engine, select

from recon.ingest.payouts import import_payouts_csv
from recon.night.run import RunOptions, run_reconciliation
from recon.ops.fees import fees_text
from recon.ops.show import show_text
from recon.settings import Settings
from recon.store.payouts import upsert_payouts
from recon.store.tables import observations, outcome_history, payouts
from tests.e2e.run_support import by_id, read_csv

NIGHT_1 = datetime(2026, 11, 10, 2, 0, tzinfo=UTC)


def _night(
    engine: Engine,
    workdir: Path,
    answers: dict[str, dict[str, Any]],
    as_of: datetime,
    **settings: Any,
) -> Path:
    """One run as of ``as_of`` against a provider giving ``answers`` (per id, the body's fields)."""

    def provider(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("merchant.authorize"):
            return httpx.Response(200, json={"access_token": "t", "expires": 4102444800})
        tid = json.loads(request.content)["id"]
        body = {"id": tid, "type": 1, "amount": "100.00", "currency_id": "EUR", **answers[tid]}
        return httpx.Response(200, content=json.dumps(body).encode())

    url = engine.url.render_as_string(hide_password=False)
    out = workdir / f"out-{as_of:%d}"
    options: dict[str, Any] = {"database_url": url, "api_base_url": "http://p.test",
                               "retry_attempts": 1, **settings}  # fmt: skip
    run_reconciliation(
        Settings(**options),
        RunOptions(out_dir=out, as_of=as_of, email=False),
        transport=httpx.MockTransport(provider),
        engine=engine,
    )
    return out


@pytest.fixture
def store(engine: Engine, tmp_path: Path) -> Engine:
    csv = tmp_path / "payouts.csv"
    csv.write_text(
        "transaction_id,merchant_reference,amount,currency\n"
        "fx-1,ref-1,100.00,EUR\nfx-2,ref-2,100.00,EUR\nfx-3,ref-3,100.00,EUR\n",
        encoding="utf-8",
    )
    import_payouts_csv(engine, csv)
    return engine


def test_a_fee_that_changes_is_stored_per_answer_kept_on_the_payout_and_shown(
    store: Engine, tmp_path: Path
) -> None:
    """0.75 on the first night, 1.50 on the next: both answers keep theirs, the payout the latest,
    each history row the fee its run saw, and `recon show` lists both."""
    pending = {"state": 1}
    _night(store, tmp_path, {"fx-1": {**pending, "fee_amount": "0.75", "fee_id": "F-1"},
                             "fx-2": pending, "fx-3": pending}, NIGHT_1)  # fmt: skip
    later = NIGHT_1 + timedelta(days=3)
    _night(store, tmp_path, {"fx-1": {"state": 6, "fee_amount": "1.50", "fee_id": "F-2"},
                             "fx-2": pending, "fx-3": pending}, later)  # fmt: skip
    o, h, p = observations.c, outcome_history.c, payouts.c
    with store.connect() as conn:
        answered = conn.execute(
            select(o.fee_amount_minor, o.fee_id).where(o.transaction_id == "fx-1").order_by(o.id)
        ).all()
        history = conn.execute(
            select(h.fee_minor, h.fee_id).where(h.transaction_id == "fx-1").order_by(h.id)
        ).all()
        kept = conn.execute(select(p.fee_minor, p.fee_id).where(p.transaction_id == "fx-1")).one()
        none = conn.execute(select(p.fee_minor).where(p.transaction_id == "fx-2")).scalar_one()
    assert [tuple(r) for r in answered] == [(75, "F-1"), (150, "F-2")]
    assert [tuple(r) for r in history] == [(75, "F-1"), (150, "F-2")]
    assert tuple(kept) == (150, "F-2")
    assert none is None
    shown = show_text(store.url.render_as_string(hide_password=False), "fx-1", zone=ZoneInfo("UTC"))
    assert "provider's fee: 1.50 EUR (fee id F-2)" in shown
    assert "fee 0.75 EUR (fee id F-1)" in shown
    assert "fee 1.50 EUR (fee id F-2)" in shown


@pytest.mark.parametrize("fee", ["-0.25", '"abc"', '"0.255"'])
def test_a_negative_or_non_numeric_fee_is_a_malformed_answer(
    store: Engine, tmp_path: Path, fee: str
) -> None:
    """The payout with such a fee is fetch_failed; the others are reconciled as usual."""
    settled = {"state": 6}
    out = _night(store, tmp_path, {"fx-1": {**settled, "fee_amount": json.loads(fee)},
                                   "fx-2": settled, "fx-3": settled}, NIGHT_1)  # fmt: skip
    rows = by_id(read_csv(out / "payouts.csv"))
    assert "fetch_failed" in rows["fx-1"]["exceptions"]
    assert rows["fx-2"]["outcome"] == "settled"


CREATED = int(datetime(2026, 11, 9, 10, 0, tzinfo=UTC).timestamp())
PRICE = [{"currency": "EUR", "valid_from": "2026-11-01", "fixed": "0.25", "percent": "0.50"}]


def test_recon_fees_gives_the_months_fees_and_open_findings(store: Engine, tmp_path: Path) -> None:
    """0.25 + 0.50 % agreed on three 100.00 EUR payouts: one overcharged (1.50), one aborted yet
    charged (0.75), one at the price. Two findings, and the month's figures per currency."""
    answers = {
        "fx-1": {"state": 6, "fee_amount": "1.50", "fee_id": "F-1", "created": CREATED},
        "fx-2": {"state": 2, "fee_amount": "0.75", "fee_id": "F-2", "created": CREATED},
        "fx-3": {"state": 6, "fee_amount": "0.75", "fee_id": "F-3", "created": CREATED},
    }
    out = _night(store, tmp_path, answers, NIGHT_1, fees=PRICE)
    flagged = {r["transaction_id"]: r["exceptions"] for r in read_csv(out / "payouts.csv")}
    assert (flagged["fx-1"], flagged["fx-2"], flagged["fx-3"]) == (
        "fee_mismatch", "fee_on_unpaid", "")  # fmt: skip
    fees = {r["transaction_id"]: r for r in read_csv(out / "fees.csv")}
    assert (fees["fx-1"]["fee_charged"], fees["fx-1"]["fee_expected"]) == ("1.50", "0.75")
    assert fees["fx-2"]["fee_expected"] == "0.00"
    url = store.url.render_as_string(hide_password=False)
    text = fees_text(url, "2026-11", accounts=["default"], zone=ZoneInfo("UTC"))
    assert "EUR: 3 payouts, 2 settled for 200.00 EUR" in text
    assert "fees charged 3.00 EUR, agreed 1.50 EUR, difference 1.50 EUR" in text
    assert "settled with fees 203.00 EUR; effective rate 150.00 bp; open fee findings 2" in text
    assert "no payouts created" in fees_text(
        url, "2026-10", accounts=["default"], zone=ZoneInfo("UTC")
    )


def test_recon_fees_difference_counts_only_the_payouts_an_entry_prices(
    store: Engine, tmp_path: Path
) -> None:
    """The price starts on 10 November: fx-1, created the day before, is charged 0.90 unpriced;
    fx-2 and fx-3 are at the price. Charged 2.40, agreed 1.50, and no difference."""
    day_before = int(datetime(2026, 11, 9, 10, 0, tzinfo=UTC).timestamp())
    priced_day = int(datetime(2026, 11, 10, 1, 0, tzinfo=UTC).timestamp())
    answers = {
        "fx-1": {"state": 6, "fee_amount": "0.90", "fee_id": "F-1", "created": day_before},
        "fx-2": {"state": 6, "fee_amount": "0.75", "fee_id": "F-2", "created": priced_day},
        "fx-3": {"state": 6, "fee_amount": "0.75", "fee_id": "F-3", "created": priced_day},
    }
    price = [{**PRICE[0], "valid_from": "2026-11-10"}]
    out = _night(store, tmp_path, answers, NIGHT_1, fees=price)
    assert {r["exceptions"] for r in read_csv(out / "payouts.csv")} == {""}
    url = store.url.render_as_string(hide_password=False)
    text = fees_text(url, "2026-11", accounts=["default"], zone=ZoneInfo("UTC"))
    assert "fees charged 2.40 EUR, agreed 1.50 EUR, difference 0.00 EUR" in text


def test_recon_fees_gives_a_block_per_account_each_of_its_own_payouts(
    store: Engine, tmp_path: Path
) -> None:
    """fx-1 under brand_b too, created in the month: only brand_b's block counts it."""
    created = datetime(2026, 11, 9, 10, 0, tzinfo=UTC)
    with store.begin() as conn:
        row = {"transaction_id": "fx-1", "merchant_reference": "b-1", "amount_minor": 4200,
               "currency": "SEK", "created": created}  # fmt: skip
        upsert_payouts(conn, [row], account="brand_b")
    url = store.url.render_as_string(hide_password=False)
    text = fees_text(url, "2026-11", accounts=["brand_b", "default"], zone=ZoneInfo("UTC"))
    b_block, default_block = text.split("account default")
    assert "account brand_b" in b_block
    assert "SEK: 1 payouts, 0 settled" in b_block
    assert "EUR" not in b_block
    assert "no payouts created in that month" in default_block  # its fx-1 has no created yet
    assert "SEK" not in default_block
