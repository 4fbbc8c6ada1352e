"""The operator's side of `recon run`: the heartbeat pings, `recon runs`,
`recon status`, the report's path, JSON logs and the report files' mode, all through the CLI."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.monitor_support import Monitor
from tests.e2e.run_support import (
    Spec,
    World,
    create_payouts,
    explain,
    recon,
    recon_env,
    served_world,
    write_payouts_csv,
)


@dataclass
class Shop:
    """A served sandbox and a store holding a few imported payouts."""

    tmp: Path
    world: World
    database_url: str

    def env(self, **settings: str) -> dict[str, str]:
        database_url = settings.pop("database_url", self.database_url)
        return recon_env(database_url, self.world.sandbox_url, **settings)

    def recon(self, *args: str, **settings: str) -> Any:
        return recon(self.env(**settings), *args, cwd=self.tmp)


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[Shop]:
    database_url = f"sqlite:///{tmp_path / 'recon.db'}"
    with served_world(database_url, receiver=False) as world:
        shop = Shop(tmp_path, world, database_url)
        payouts = create_payouts(world, [Spec("12.01"), Spec("25.00"), Spec("31.50")])
        export = write_payouts_csv(tmp_path / "payouts.csv", [p.csv_row() for p in payouts])
        imported = shop.recon("import", "payouts", str(export))
        assert imported.returncode == 0, explain(imported)
        yield shop


def test_a_run_pings_the_heartbeat_at_its_start_and_on_success(
    shop: Shop, monitor: Monitor
) -> None:
    """RECON_HEARTBEAT_URL gets URL/start, then URL itself when the run exits 0."""
    done = shop.recon("run", "--no-email", heartbeat_url=monitor.url)
    assert done.returncode == 0, explain(done)
    assert monitor.paths == ["/ping/3f0e-check/start", "/ping/3f0e-check"]
    body = monitor.pings[-1][1]
    assert body.startswith("recon: run 1 as of ")  # the summary line, shown in the monitor's log
    assert body.endswith("recon: exit code 0")
    assert "3f0e-check" not in done.stdout + done.stderr  # the check's id is a secret


def test_a_failed_run_pings_the_heartbeat_fail_url_with_the_error(
    shop: Shop, monitor: Monitor, tmp_path: Path
) -> None:
    """A run that cannot open its database exits 1 and pings URL/start, then URL/fail."""
    missing = tmp_path / "no-such-dir" / "recon.db"
    done = shop.recon("run", database_url=f"sqlite:///{missing}", heartbeat_url=monitor.url)
    assert done.returncode == 1, explain(done)
    assert monitor.paths == ["/ping/3f0e-check/start", "/ping/3f0e-check/fail"]
    assert "recon: error:" in monitor.pings[-1][1]


def test_a_dry_run_sends_no_heartbeat(shop: Shop, monitor: Monitor) -> None:
    """A dry run is not the nightly job: the monitor hears nothing from it."""
    done = shop.recon("run", "--dry-run", heartbeat_url=monitor.url)
    assert done.returncode == 0, explain(done)
    assert monitor.paths == []


def test_an_unreachable_heartbeat_does_not_change_the_run(shop: Shop, monitor: Monitor) -> None:
    """A monitor that refuses every ping is a warning in the log; the run still exits 0."""
    dead = "http://127.0.0.1:9/ping/gone"  # the discard port: nothing listens
    done = shop.recon("run", "--no-email", heartbeat_url=dead)
    assert done.returncode == 0, explain(done)
    assert "heartbeat start ping was not delivered" in done.stderr


def test_recon_run_prints_the_path_of_report_html(shop: Shop) -> None:
    """The last line names the report file itself, as an absolute path one can open."""
    done = shop.recon("run", "--no-email", "--out", "nightly")
    assert done.returncode == 0, explain(done)
    report = (shop.tmp / "nightly" / "report.html").resolve()
    assert done.stdout.splitlines()[-1] == f"recon: report {report}"
    assert report.is_file()


def test_a_dry_run_writes_marked_files_in_its_own_directory(shop: Shop) -> None:
    """Without --out a dry run writes out/dry-run/dry-run-*; the real report is left alone."""
    real = shop.recon("run", "--no-email")
    assert real.returncode == 0, explain(real)
    before = {p.name: p.read_bytes() for p in (shop.tmp / "out").iterdir() if p.is_file()}
    dry = shop.recon("run", "--dry-run")
    assert dry.returncode == 0, explain(dry)
    after = {p.name: p.read_bytes() for p in (shop.tmp / "out").iterdir() if p.is_file()}
    assert after == before
    written = sorted(p.name for p in (shop.tmp / "out" / "dry-run").iterdir())
    assert written == [
        "dry-run-chart.png", "dry-run-exceptions.csv", "dry-run-fees.csv", "dry-run-payouts.csv",
        "dry-run-report.html", "dry-run-report.xlsx", "dry-run-returns.csv",
        "dry-run-rollforward.csv", "dry-run-summary.csv",
    ]  # fmt: skip
    html = (shop.tmp / "out" / "dry-run" / "dry-run-report.html").read_text(encoding="utf-8")
    assert "A dry run: nothing was stored" in html
    # The columns are the real run's: a dry run changes names, never the CSV contract.
    for name in ("payouts.csv", "exceptions.csv", "summary.csv", "returns.csv", "rollforward.csv"):
        real_header = (shop.tmp / "out" / name).read_text(encoding="utf-8").splitlines()[0]
        dry_text = (shop.tmp / "out" / "dry-run" / f"dry-run-{name}").read_text(encoding="utf-8")
        assert dry_text.splitlines()[0] == real_header


def test_recon_runs_lists_recent_runs_with_status_counts_and_duration(shop: Shop) -> None:
    """Two runs: newest first, each with its status, payouts, exceptions and a duration."""
    for _ in range(2):
        done = shop.recon("run", "--no-email")
        assert done.returncode == 0, explain(done)
    listed = shop.recon("runs")
    assert listed.returncode == 0, explain(listed)
    header, *rows = listed.stdout.splitlines()
    assert header.split() == ["run", "status", "started", "as", "of", "duration", "payouts",
                              "exceptions", "not", "fetched", "cause"]  # fmt: skip
    assert [row.split()[:2] for row in rows] == [["2", "complete"], ["1", "complete"]]
    for row in rows:
        cells = row.split()
        assert cells[-3:] == ["3", "0", "0"], row  # 3 payouts, no exception, all fetched
        assert cells[-4].endswith("s"), row  # a duration such as "1s"


def test_recon_runs_on_an_empty_store_says_there_are_none(shop: Shop, tmp_path: Path) -> None:
    """No run yet is a sentence, not an empty table."""
    empty = shop.recon("runs", database_url=f"sqlite:///{tmp_path / 'empty.db'}")
    assert empty.returncode == 0, explain(empty)
    assert "no runs yet" in empty.stdout


def test_recon_status_is_ok_after_a_recent_complete_run(shop: Shop) -> None:
    """Exit 0 and a Nagios line with the age as performance data."""
    done = shop.recon("run", "--no-email")
    assert done.returncode == 0, explain(done)
    status = shop.recon("status")
    assert status.returncode == 0, explain(status)
    assert status.stdout.startswith("RECON OK - last complete run 1 finished")
    assert "| age=" in status.stdout


def test_recon_status_is_critical_when_the_last_complete_run_is_too_old(shop: Shop) -> None:
    """RECON_MAX_RUN_AGE=0: any finished run is older than that, so exit 2 (CRITICAL)."""
    done = shop.recon("run", "--no-email")
    assert done.returncode == 0, explain(done)
    status = shop.recon("status", max_run_age="0")
    assert status.returncode == 2, explain(status)
    assert status.stdout.startswith("RECON CRITICAL - last complete run 1")


def test_recon_status_is_critical_when_no_run_ever_completed(shop: Shop) -> None:
    """A store without a complete run: the job never ran, which is what the check is for."""
    status = shop.recon("status")
    assert status.returncode == 2, explain(status)
    assert status.stdout.startswith("RECON CRITICAL - no complete run yet")


def test_recon_status_is_unknown_when_the_configuration_is_wrong(shop: Shop) -> None:
    """Exit 3 (UNKNOWN), not a usage error's 2, which a monitor would read as CRITICAL."""
    status = shop.recon("status", max_run_age="soon")
    assert status.returncode == 3, explain(status)
    assert status.stdout.startswith("RECON UNKNOWN - invalid configuration")


def test_json_logs_make_every_line_of_a_run_one_json_object(shop: Shop, tmp_path: Path) -> None:
    """RECON_LOG_FORMAT=json: progress, the summary, the report line and errors parse as JSON."""
    done = recon(shop.env(log_format="json"), "-v", "run", "--no-email", cwd=shop.tmp)
    assert done.returncode == 0, explain(done)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]
    assert all({"time", "level", "logger", "message"} <= r.keys() for r in records)
    messages = [r["message"] for r in records]
    assert any(m.startswith("recon: run 1 as of") for m in messages)
    assert any(m.startswith("recon: report ") for m in messages)
    assert any(r["logger"] == "recon.progress" for r in records)

    missing = tmp_path / "no-such-dir" / "recon.db"
    failed = recon(shop.env(log_format="json", database_url=f"sqlite:///{missing}"), "run",
                   cwd=shop.tmp)  # fmt: skip
    assert failed.returncode == 1, explain(failed)
    errors = [json.loads(line) for line in failed.stderr.splitlines() if line.strip()]
    assert errors[-1]["level"] == "ERROR"
    assert errors[-1]["message"].startswith("recon: error:")


def test_report_files_take_recon_report_mode(shop: Shop) -> None:
    """RECON_REPORT_MODE=640 gives every report file rw-r----- (default 600)."""
    done = shop.recon("run", "--no-email", "--out", "shared", report_mode="640")
    assert done.returncode == 0, explain(done)
    files = [p for p in (shop.tmp / "shared").iterdir() if p.is_file()]
    assert len(files) == 9  # report.html, chart.png, six CSVs (rollforward.csv, fees.csv), xlsx
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {
        p.name: "0o640" for p in files
    }


def test_report_refuses_an_as_of_before_the_latest_runs_answers(shop: Shop) -> None:
    """`recon report --as-of` three days before the run: exit 2 naming --run; named, it is done."""
    now = shop.world.now()
    done = shop.recon("run", "--no-email", "--as-of", now)
    assert done.returncode == 0, explain(done)
    earlier = f"{float(now) - 3 * 86400:.0f}"
    refused = shop.recon("report", "--out", "old", "--as-of", earlier)
    assert refused.returncode == 2, explain(refused)
    assert "is before the latest run (1, as of" in refused.stderr
    assert "--run" in refused.stderr
    assert not (shop.tmp / "old").exists()

    named = shop.recon("report", "--out", "old", "--as-of", earlier, "--run", "1")
    assert named.returncode == 0, explain(named)
    later = f"{float(now) + 86400:.0f}"  # aging a night's answers a day on is what --as-of is for
    aged = shop.recon("report", "--out", "aged", "--as-of", later)
    assert aged.returncode == 0, explain(aged)
    report = (shop.tmp / "aged" / "report.html").resolve()
    assert aged.stdout.strip() == f"recon: report of run 1: {report}"


def test_a_report_after_a_missed_night_says_a_run_is_missing(shop: Shop) -> None:
    """Runs three days apart (RECON_MAX_RUN_AGE 26 h): the second report warns at the top."""
    now = shop.world.now()
    first = shop.recon("run", "--no-email", "--as-of", now, "--out", "first")
    assert first.returncode == 0, explain(first)
    assert "A run is missing" not in (shop.tmp / "first" / "report.html").read_text("utf-8")
    later = f"{float(now) + 3 * 86400:.0f}"
    second = shop.recon("run", "--no-email", "--as-of", later, "--out", "second")
    assert second.returncode == 0, explain(second)
    html = (shop.tmp / "second" / "report.html").read_text("utf-8")
    assert "A run is missing." in html
    assert "The previous complete run, run 1, was as of" in html


def test_recon_status_is_unknown_when_the_run_log_cannot_be_read(
    shop: Shop, tmp_path: Path
) -> None:
    """A database without recon's tables: exit 3 and the reason, not a traceback."""
    status = shop.recon("status", database_url=f"sqlite:///{tmp_path / 'not-recon.db'}")
    assert status.returncode == 3, explain(status)
    assert status.stdout.startswith("RECON UNKNOWN - cannot read the run log")
    assert "Traceback" not in status.stderr


def test_recon_csv_dialect_excel_eu_reaches_the_files_of_run_and_report(shop: Shop) -> None:
    """RECON_CSV_DIALECT=excel-eu: `recon run` and `recon report` write `;`, decimal commas, a
    BOM and CRLF; without it the files are the standard dialect."""
    done = shop.recon("run", "--no-email", "--out", "eu", csv_dialect="excel-eu")
    assert done.returncode == 0, explain(done)
    again = shop.recon("report", "--out", "eu-again", csv_dialect="excel-eu")
    assert again.returncode == 0, explain(again)
    for folder in ("eu", "eu-again"):
        content = (shop.tmp / folder / "payouts.csv").read_bytes()
        assert content.startswith(
            "\ufefftransaction_id;provider_account;merchant_reference;".encode()
        )
        assert b";25,00;" in content
        assert b"\r\n" in content
    plain = shop.recon("report", "--out", "plain")
    assert plain.returncode == 0, explain(plain)
    content = (shop.tmp / "plain" / "payouts.csv").read_bytes()
    assert content.startswith(b"transaction_id,provider_account,merchant_reference,amount,")
    assert b",25.00," in content


def test_recon_report_workbook_off_leaves_report_xlsx_out_of_run_and_report(shop: Shop) -> None:
    """RECON_REPORT_WORKBOOK=off: `recon run` and `recon report` write every file but
    report.xlsx; by default both write it."""
    done = shop.recon("run", "--no-email", "--out", "csv-only", report_workbook="off")
    assert done.returncode == 0, explain(done)
    again = shop.recon("report", "--out", "csv-only-again", report_workbook="off")
    assert again.returncode == 0, explain(again)
    for folder in ("csv-only", "csv-only-again"):
        assert (shop.tmp / folder / "payouts.csv").is_file()
        assert not (shop.tmp / folder / "report.xlsx").exists()
    default = shop.recon("report", "--out", "with-workbook")
    assert default.returncode == 0, explain(default)
    assert (shop.tmp / "with-workbook" / "report.xlsx").is_file()
