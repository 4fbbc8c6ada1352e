"""The metrics file's text from literal data, read back with prometheus_client's parser."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from recon.ops.metrics import RunMetrics, write_metrics

OPENED = datetime(2026, 11, 20, 2, 30, tzinfo=UTC)


def test_every_metric_the_issue_names_is_written_and_parses(tmp_path: Path) -> None:
    """Gauges and the two _total counters, with their labels and values, no _created samples."""
    path = tmp_path / "collector" / "recon.prom"
    write_metrics(
        path,
        RunMetrics(
            exit_code=3,
            duration_seconds=12.5,
            last_success=datetime(2026, 11, 22, 2, 31, tzinfo=UTC),
            payouts={("EUR", "settled"): 40, ("SEK", "failed"): 2},
            findings_open={"late_settlement": 3},
            findings_oldest={"late_settlement": OPENED},
            requests={"open": 42, "returns": 5},
            retries=7,
        ),
    )
    families = {f.name: f for f in text_string_to_metric_families(path.read_text())}
    got = {(s.name, tuple(sorted(s.labels.items()))): s.value
           for f in families.values() for s in f.samples}  # fmt: skip
    assert got == {
        ("recon_run_last_success_timestamp_seconds", ()): 1795314660.0,
        ("recon_run_exit_code", ()): 3.0,
        ("recon_run_duration_seconds", ()): 12.5,
        ("recon_payouts", (("currency", "EUR"), ("outcome", "settled"))): 40.0,
        ("recon_payouts", (("currency", "SEK"), ("outcome", "failed"))): 2.0,
        ("recon_findings_open", (("exception", "late_settlement"),)): 3.0,
        ("recon_findings_oldest_open_timestamp_seconds", (("exception", "late_settlement"),)): (
            OPENED.timestamp()
        ),
        ("recon_provider_requests_total", (("reason", "open"),)): 42.0,
        ("recon_provider_requests_total", (("reason", "returns"),)): 5.0,
        ("recon_provider_retries_total", ()): 7.0,
    }
    assert families["recon_provider_retries"].type == "counter"
    assert [p.name for p in path.parent.iterdir()] == ["recon.prom"]  # no temporary file left


def test_no_success_yet_leaves_the_timestamp_out(tmp_path: Path) -> None:
    """A first night that failed: no last-success series (absent() alerts), the exit code is 1."""
    path = tmp_path / "recon.prom"
    write_metrics(path, RunMetrics(exit_code=1, duration_seconds=0.5, last_success=None))
    names = {f.name for f in text_string_to_metric_families(path.read_text())}
    assert "recon_run_last_success_timestamp_seconds" not in names
    assert "recon_run_exit_code" in names
