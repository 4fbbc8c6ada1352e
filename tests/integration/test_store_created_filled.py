"""A run fills in the created and eta a record lacks from the provider's answer and keeps them;
a record's own are never replaced by an answer's. SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Engine, select

from recon.ingest.payouts import import_payouts_csv
from recon.night.run import RunOptions, run_reconciliation
from recon.settings import Settings
from recon.store.tables import payouts

NIGHT_1 = datetime(2026, 11, 10, 2, 0, tzinfo=UTC)
RECORDED = datetime(2026, 11, 8, 9, 30, tzinfo=UTC)


def _night(
    engine: Engine, workdir: Path, created: datetime, eta: datetime, as_of: datetime
) -> None:
    """One run as of ``as_of``; the provider answers every id pending, with ``created`` and
    ``eta``."""

    def provider(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("merchant.authorize"):
            return httpx.Response(200, json={"access_token": "t", "expires": 4102444800})
        tid = json.loads(request.content)["id"]
        body = {"id": tid, "type": 1, "amount": "100.00", "currency_id": "EUR", "state": 1,
                "created": int(created.timestamp()), "eta": int(eta.timestamp())}  # fmt: skip
        return httpx.Response(200, content=json.dumps(body).encode())

    url = engine.url.render_as_string(hide_password=False)
    options: dict[str, Any] = {"database_url": url, "api_base_url": "http://p.test",
                               "retry_attempts": 1}  # fmt: skip
    run_reconciliation(
        Settings(**options),
        RunOptions(out_dir=workdir / f"out-{as_of:%d}", as_of=as_of, email=False),
        transport=httpx.MockTransport(provider),
        engine=engine,
    )


def _stored(engine: Engine) -> dict[str, tuple[datetime | None, datetime | None]]:
    with engine.connect() as conn:
        rows = conn.execute(select(payouts.c.transaction_id, payouts.c.created, payouts.c.eta))
        return {r.transaction_id: (r.created, r.eta) for r in rows}


def test_a_run_fills_in_a_missing_created_and_eta_and_never_replaces_the_records(
    engine: Engine, tmp_path: Path
) -> None:
    """The payout without a created gets the first answer's and keeps it when a later answer
    says otherwise; the payout with one keeps its own; both keep the first answer's eta."""
    csv = tmp_path / "payouts.csv"
    csv.write_text(
        "transaction_id,merchant_reference,amount,currency,created\n"
        f"cf-1,ref-1,100.00,EUR,{RECORDED.isoformat()}\ncf-2,ref-2,100.00,EUR,\n",
        encoding="utf-8",
    )
    import_payouts_csv(engine, csv)
    first, eta = NIGHT_1 - timedelta(hours=5), NIGHT_1 + timedelta(days=2)
    _night(engine, tmp_path, first, eta, NIGHT_1)
    assert _stored(engine) == {"cf-1": (RECORDED, eta), "cf-2": (first, eta)}
    later = NIGHT_1 + timedelta(days=1)
    _night(engine, tmp_path, first + timedelta(hours=1), eta + timedelta(days=1), later)
    assert _stored(engine) == {"cf-1": (RECORDED, eta), "cf-2": (first, eta)}
