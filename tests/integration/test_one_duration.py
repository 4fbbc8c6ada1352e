"""One duration per run, from its row's start to its end: the summary line's total, `recon runs`
(the stored row), the report and the metrics say the same figure."""

from __future__ import annotations

import re
from pathlib import Path

from recon.night.run import RunOptions, run_reconciliation
from recon.ops.metrics import metrics_file
from recon.report.build import from_store
from recon.store.db import ensure_schema, make_engine
from recon.store.runs import run_record
from tests.integration.scripted_provider import START, Provider, night_settings
from tests.integration.test_night_report_rebuilt import _import


def test_the_summary_the_stored_run_the_report_and_the_metrics_give_one_duration(
    no_retry_waits: None, tmp_path: Path
) -> None:
    """A night with the metrics hook: four places, one figure."""
    engine = make_engine(f"sqlite:///{tmp_path / 'recon.db'}")
    ensure_schema(engine)
    metrics = tmp_path / "recon.prom"
    settings = night_settings(engine, tmp_path)
    _import(engine, tmp_path, {"p0": "10.00", "p1": "12.00"})
    try:
        end = run_reconciliation(
            settings, RunOptions(out_dir=tmp_path / "out", as_of=START, email=False),
            transport=Provider(states={"p0": 6, "p1": 1}).transport(), engine=engine,
            hooks=[metrics_file(metrics, str(engine.url))],
        )  # fmt: skip
        with engine.connect() as conn:
            row = run_record(conn, end.run_id)
        report = from_store(engine, timezone="UTC", run_id=end.run_id)
    finally:
        engine.dispose()
    assert row is not None
    assert row.finished_at is not None
    stored = (row.finished_at - row.started_at).total_seconds()
    assert end.seconds == stored
    assert report.run.duration_seconds == stored
    total = re.search(r"total (\d+\.\d)s", end.summary)
    assert total is not None
    assert total.group(1) == f"{stored:.1f}"
    line = r'^recon_run_duration_seconds\{account="default"\} (\S+)$'
    gauge = re.search(line, metrics.read_text(), re.M)
    assert gauge is not None
    assert float(gauge.group(1)) == stored
