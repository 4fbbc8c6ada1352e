"""``recon sandbox pay`` against a sandbox on a loopback socket, then ``recon import payouts``."""

from __future__ import annotations

import csv
import socket
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from sqlalchemy import select

from recon.cli import main
from recon.sandbox.app import create_app
from recon.sandbox.config import SandboxConfig
from recon.sandbox.engine import Sandbox
from recon.serving import serve_in_thread
from recon.store.db import make_engine
from recon.store.tables import payouts
from tests.integration.sandbox_support import Receiver

SAMPLE = (
    "transaction_id,merchant_reference,amount,currency,customer_id,country_id,created\n"
    "mine-1,order-1,25.50,EUR,cust-1,FI,2026-11-01T10:00:00+01:00\n"
    "mine-2,order-2,12.01,EUR,cust-1,FI,\n"
    'mine-3,order-3,"1,000.00",SEK,cust-2,,\n'
)


@pytest.fixture
def receiver() -> Receiver:
    return Receiver()


@pytest.fixture
def sandbox(receiver: Receiver) -> Iterator[tuple[str, Sandbox]]:
    """A sandbox on 127.0.0.1 and a free port, its callbacks going to ``receiver``."""
    app = create_app(SandboxConfig(callback_transport=httpx.ASGITransport(app=receiver.app())))
    with serve_in_thread(app) as url:
        yield url, app.state.sandbox


def _pay(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["sandbox", "pay", *args], catch_exceptions=False)
    return result.exit_code, result.output


def test_pay_creates_the_payouts_and_writes_a_file_recon_imports(
    sandbox: tuple[str, Sandbox], tmp_path: Path
) -> None:
    """Every row becomes a sandbox payout; importing the written CSV matches the sandbox's ids."""
    url, engine_of_sandbox = sandbox
    source = tmp_path / "payouts.csv"
    source.write_text(SAMPLE.replace('"1,000.00"', "1000.00"), encoding="utf-8")
    code, output = _pay(str(source), "--url", url)
    assert code == 0, output
    out = tmp_path / "payouts.sandbox.csv"
    assert f"recon import payouts {out}" in output
    written = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
    created = engine_of_sandbox.transactions
    assert {r["transaction_id"] for r in written} == set(created)
    for row in written:
        tx = created[row["transaction_id"]]
        assert (tx.merchant_reference, tx.amount, tx.currency) == (
            row["merchant_reference"],
            Decimal(row["amount"]),
            row["currency"],
        )
        assert tx.account is not None
        assert tx.account.id == row["bank_account_id"]
    assert written[0]["created"] == "2026-11-01T10:00:00+01:00"
    assert [created[r["transaction_id"]].state for r in written] == [4, 3, 4]
    assert written[0]["bank_account_id"] == written[1]["bank_account_id"]  # one customer

    db = make_engine(f"sqlite:///{tmp_path / 'recon.db'}")
    imported = CliRunner().invoke(
        main, ["import", "payouts", str(out)], env={"RECON_DATABASE_URL": str(db.url)}
    )
    assert imported.exit_code == 0, imported.output
    with db.connect() as conn:
        stored = set(conn.scalars(select(payouts.c.transaction_id)))
    assert stored == set(created)

    again_code, _ = _pay(str(source), "--url", url)  # a second run creates nothing twice
    assert again_code == 0
    assert len([t for t in engine_of_sandbox.transactions.values() if t.type == 1]) == 3


def test_pay_subscribes_the_callback_url_it_is_given(
    sandbox: tuple[str, Sandbox], receiver: Receiver, tmp_path: Path
) -> None:
    """--callback-url: the payouts call back states 2, 3, 4 and 6 there (12.01 says 3)."""
    url, _ = sandbox
    source = tmp_path / "p.csv"
    source.write_text("merchant_reference,amount,currency\nr-1,12.01,EUR\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    code, output = _pay(str(source), "--url", url, "--out", str(out), "--callback-url",
                        "http://merchant.test/callbacks")  # fmt: skip
    assert code == 0, output
    # Processing due events takes the sandbox's lock: the background task's sends are done after.
    httpx.post(f"{url}/sandbox/clock/advance", json={"seconds": 0}).raise_for_status()
    [note] = receiver.received
    [row] = csv.DictReader(out.read_text(encoding="utf-8").splitlines())
    assert note.body["transaction_id"] == row["transaction_id"]
    assert note.body["transaction_state"] == 3


def test_a_bad_file_creates_nothing_and_exits_2_naming_the_line(
    sandbox: tuple[str, Sandbox], tmp_path: Path
) -> None:
    """One bad amount (line 4) and nothing is created: every row is checked before any call."""
    url, engine_of_sandbox = sandbox
    source = tmp_path / "payouts.csv"
    source.write_text(SAMPLE, encoding="utf-8")
    code, output = _pay(str(source), "--url", url)
    assert code == 2
    assert "line 4: amount '1,000.00' is not a plain decimal number" in output
    assert engine_of_sandbox.transactions == {}
    assert engine_of_sandbox.accounts == {}
    assert not (tmp_path / "payouts.sandbox.csv").exists()


def test_pay_refuses_to_write_over_its_input(tmp_path: Path) -> None:
    """--out equal to FILE is a usage error (exit 2) before anything is read or created."""
    source = tmp_path / "payouts.csv"
    source.write_text(SAMPLE, encoding="utf-8")
    code, output = _pay(str(source), "--out", str(source), "--url", "http://127.0.0.1:9")
    assert code == 2
    assert "is the input file" in output


def test_a_run_after_pay_and_import_finds_every_payout(
    sandbox: tuple[str, Sandbox], tmp_path: Path
) -> None:
    """The walkthrough with your own data: no unknown_transaction, 12.01 is failed."""
    url, _ = sandbox
    source = tmp_path / "payouts.csv"
    source.write_text(SAMPLE.replace('"1,000.00"', "1000.00"), encoding="utf-8")
    env = {"RECON_DATABASE_URL": f"sqlite:///{tmp_path / 'recon.db'}", "RECON_API_BASE_URL": url}
    assert _pay(str(source), "--url", url)[0] == 0
    runner = CliRunner()
    imported = runner.invoke(main, ["import", "payouts", str(tmp_path / "payouts.sandbox.csv")],
                             env=env)  # fmt: skip
    assert imported.exit_code == 0, imported.output
    ran = runner.invoke(main, ["run", "--out", str(tmp_path / "out"), "--no-email"], env=env)
    assert ran.exit_code == 0, ran.output
    report = (tmp_path / "out" / "payouts.csv").read_text(encoding="utf-8")
    rows = {r["merchant_reference"]: r for r in csv.DictReader(report.splitlines())}
    assert {ref: r["outcome"] for ref, r in rows.items()} == {
        "order-1": "pending",
        "order-2": "failed",
        "order-3": "pending",
    }
    assert "unknown_transaction" not in report


@pytest.mark.usefixtures("no_retry_waits")
def test_pay_without_a_running_sandbox_says_where_it_looked(tmp_path: Path) -> None:
    """A refused connection exits 1 with a hint to start the sandbox; no file is written."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    source = tmp_path / "payouts.csv"
    source.write_text("merchant_reference,amount,currency\nr-1,10.00,EUR\n", encoding="utf-8")
    code, output = _pay(str(source), "--url", f"http://127.0.0.1:{port}")
    assert code == 1
    assert f"is the sandbox running at http://127.0.0.1:{port}?" in output
    assert not (tmp_path / "payouts.sandbox.csv").exists()
