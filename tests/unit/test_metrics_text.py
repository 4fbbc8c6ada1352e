"""The metrics file's text from literal data, read back with prometheus_client's parser."""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from recon.constants import Outcome
from recon.ops.metrics import RunMetrics, write_metrics
from recon.store.metrics_reads import NOT_RECONCILED_YET

OPENED = datetime(2026, 11, 20, 2, 30, tzinfo=UTC)


def test_every_metric_is_written_and_parses(tmp_path: Path) -> None:
    """Every figure, with its labels and value; all gauges (the run's figures are the last
    run's, not counters that would reset every night), no _created samples."""
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
        ("recon_run_last_success_timestamp_seconds", (("account", "default"),)): 1795314660.0,
        ("recon_run_exit_code", (("account", "default"),)): 3.0,
        ("recon_run_duration_seconds", (("account", "default"),)): 12.5,
        (
            "recon_payouts",
            (("account", "default"), ("currency", "EUR"), ("outcome", "settled")),
        ): 40.0,
        (
            "recon_payouts",
            (("account", "default"), ("currency", "SEK"), ("outcome", "failed")),
        ): 2.0,
        (
            "recon_findings_open",
            (
                ("account", "default"),
                ("exception", "late_settlement"),
            ),
        ): 3.0,
        (
            "recon_findings_oldest_open_timestamp_seconds",
            (
                ("account", "default"),
                ("exception", "late_settlement"),
            ),
        ): (OPENED.timestamp()),
        (
            "recon_run_ids_asked",
            (
                ("account", "default"),
                ("reason", "open"),
            ),
        ): 42.0,
        (
            "recon_run_ids_asked",
            (
                ("account", "default"),
                ("reason", "returns"),
            ),
        ): 5.0,
        ("recon_run_provider_retries", (("account", "default"),)): 7.0,
    }
    assert {f.type for f in families.values()} == {"gauge"}
    assert [p.name for p in path.parent.iterdir()] == ["recon.prom"]  # no temporary file left


def test_no_success_yet_leaves_the_timestamp_out(tmp_path: Path) -> None:
    """A first night that failed: no last-success series (absent() alerts), the exit code is 1."""
    path = tmp_path / "recon.prom"
    write_metrics(path, RunMetrics(exit_code=1, duration_seconds=0.5, last_success=None))
    families = list(text_string_to_metric_families(path.read_text()))
    names = {f.name for f in families if f.samples}
    assert "recon_run_last_success_timestamp_seconds" not in names
    assert "recon_run_exit_code" in names


def test_the_file_is_readable_by_everyone_whatever_the_umask(tmp_path: Path) -> None:
    """node_exporter runs as another user: 0644 under the wrapper's and the units' umask 077."""
    path = tmp_path / "recon.prom"
    previous = os.umask(0o077)
    try:
        write_metrics(path, RunMetrics(exit_code=0, duration_seconds=1.0, last_success=None))
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_missing_directory_is_made_readable_too(tmp_path: Path) -> None:
    """The collector's directory, if recon makes it, lets node_exporter in (0755)."""
    path = tmp_path / "textfile" / "collector" / "recon.prom"
    previous = os.umask(0o077)
    try:
        write_metrics(path, RunMetrics(exit_code=0, duration_seconds=1.0, last_success=None))
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o755
    assert stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o755


def test_every_outcome_label_the_file_can_carry_is_documented() -> None:
    """Each payout outcome, and the label of payouts no run has reconciled yet, is named in
    docs/operations.md's metrics section."""
    guide = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()
    section = guide.split("## Metrics for Prometheus", 1)[1].split("\n## ", 1)[0]
    for value in [*(o.value for o in Outcome), NOT_RECONCILED_YET]:
        assert f"`{value}`" in section, value
