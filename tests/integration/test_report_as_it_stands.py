"""`recon report` of the latest run shows its findings as they stand now, after people acted: the
counts are those of `recon exceptions list`; `recon report --run N` still rewrites the night's own
pack byte for byte."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from recon.cli import main
from recon.night.run import RunOptions, run_reconciliation
from recon.store.db import ensure_schema, make_engine
from tests.integration.scripted_provider import START, Provider, night_settings
from tests.integration.test_night_report_rebuilt import _files, _import


def _recon(env: dict[str, str], *args: str) -> str:
    result = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_a_rebuilt_report_counts_what_exceptions_list_counts_after_people_acted(
    no_retry_waits: None, tmp_path: Path
) -> None:
    """One acknowledged, one resolved, one snoozed after the night: the rebuilt report shows each
    as it stands and counts as the list does; --run N is still the night's own pack."""
    engine = make_engine(f"sqlite:///{tmp_path / 'recon.db'}")
    ensure_schema(engine)
    provider = Provider(states={"p0": 3, "p1": 6})  # p2, p3, p4 unknown to the provider
    settings = night_settings(engine, tmp_path)
    _import(engine, tmp_path, {f"p{n}": "10.00" for n in range(5)})
    night = tmp_path / "night"
    try:
        result = run_reconciliation(
            settings, RunOptions(out_dir=night, as_of=START, email=False),
            transport=provider.transport(), engine=engine,
        )  # fmt: skip
    finally:
        engine.dispose()
    env = {"RECON_DATABASE_URL": str(engine.url), "RECON_REPORT_WORKBOOK": "off"}
    listed = json.loads(_recon(env, "exceptions", "list", "--format", "json"))
    assert len(listed) >= 3
    first, second = listed[0]["exception_id"], listed[1]["exception_id"]
    _recon(env, "exceptions", "ack", first, "--note", "mine", "--by", "anna")
    _recon(env, "exceptions", "resolve", second, "--note", "paid again", "--by", "anna")
    third = listed[2]["exception_id"]
    _recon(env, "exceptions", "snooze", third, "--until", "2099-01-15", "--note", "later",
           "--by", "anna")  # fmt: skip

    _recon(env, "report", "--out", str(tmp_path / "now"))
    rows = list(csv.DictReader(io.StringIO((tmp_path / "now" / "exceptions.csv").read_text())))
    status = {r["exception_id"]: r["status"] for r in rows}
    assert status[first] == "acknowledged"
    assert status[second] == "resolved"
    assert status[third] == "snoozed"
    assert {r["exception_id"]: r["until"] for r in rows}[third].startswith("2099-01-15")
    shown = Counter(
        "open" if s in ("new", "persisting") else s for s in status.values() if s != "resolved"
    )
    now = Counter(c["state"] for c in json.loads(_recon(env, "exceptions", "list", "--format",
                                                         "json")))  # fmt: skip
    assert shown == now
    html = (tmp_path / "now" / "report.html").read_text("utf-8")
    assert f"Findings as they stand now: as of run {result.run_id}; 3 actions since." in html

    _recon(env, "report", "--run", str(result.run_id), "--out", str(tmp_path / "again"))
    assert _files(tmp_path / "again") == _files(night)
