"""RECON_METRICS_FILE: the Prometheus text a real `recon run` writes, parsed with
prometheus_client's own parser; a failed night keeps the last success (read from the store)."""

from __future__ import annotations

import socket
import stat
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.run_support import (
    Spec,
    create_payouts,
    explain,
    recon,
    recon_env,
    served_world,
    write_payouts_csv,
)
from tests.integration.provider_standin import serve_standin, token_answer

pytestmark = pytest.mark.timeout(180)


def samples(path: Path) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the file: (name, sorted labels) -> value."""
    families = text_string_to_metric_families(path.read_text(encoding="utf-8"))
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families for s in f.samples}


def refused_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_the_metrics_file_after_a_good_night_and_after_a_failed_one(tmp_path: Path) -> None:
    """Exit code, duration, payouts by currency and outcome, requests; a failed run keeps the
    last success timestamp and says exit code 1."""
    database_url = f"sqlite:///{tmp_path / 'recon.db'}"
    metrics = tmp_path / "textfile" / "recon.prom"
    with served_world(database_url, receiver=False, settle_after=60) as world:
        payouts = create_payouts(world, [Spec("10.00"), Spec("12.01"), Spec("20.00", "SE")])
        world.advance(900)
        env = recon_env(database_url, world.sandbox_url, metrics_file=str(metrics))
        csv_file = write_payouts_csv(tmp_path / "payouts.csv", [p.csv_row() for p in payouts])
        assert recon(env, "import", "payouts", str(csv_file), cwd=tmp_path).returncode == 0
        as_of = world.now()
        done = recon(env, "run", "--as-of", as_of, "--no-email", "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, explain(done)
    first = samples(metrics)
    assert first[("recon_run_exit_code", (("account", "default"),))] == 0
    assert first[("recon_run_duration_seconds", (("account", "default"),))] > 0
    success = first[("recon_run_last_success_timestamp_seconds", (("account", "default"),))]
    assert success > 1.7e9
    assert (
        first[
            ("recon_payouts", (("account", "default"), ("currency", "EUR"), ("outcome", "settled")))
        ]
        == 1
    )
    assert (
        first[
            ("recon_payouts", (("account", "default"), ("currency", "EUR"), ("outcome", "failed")))
        ]
        == 1
    )
    assert (
        first[
            ("recon_payouts", (("account", "default"), ("currency", "SEK"), ("outcome", "settled")))
        ]
        == 1
    )
    assert (
        first[
            (
                "recon_run_ids_asked",
                (
                    ("account", "default"),
                    ("reason", "open"),
                ),
            )
        ]
        >= 1
    )
    assert ("recon_run_provider_retries", (("account", "default"),)) in first
    assert not list(metrics.parent.glob("*.tmp*")), "the temporary file was left behind"
    assert stat.S_IMODE(metrics.stat().st_mode) == 0o644  # node_exporter is another user

    late_row = {"transaction_id": "late-1", "merchant_reference": "late-1", "amount": "30.00"}
    late = write_payouts_csv(tmp_path / "late.csv", [{**late_row, "currency": "EUR"}])
    assert recon(env, "import", "payouts", str(late), cwd=tmp_path).returncode == 0
    env["RECON_API_BASE_URL"] = refused_url()
    env["RECON_RETRY_ATTEMPTS"] = "1"
    later = str(float(as_of) + 86400)
    failed = recon(env, "run", "--as-of", later, "--no-email", "--out", "out", cwd=tmp_path)
    assert failed.returncode == 1, explain(failed)
    second = samples(metrics)
    assert second[("recon_run_exit_code", (("account", "default"),))] == 1
    assert (
        second[("recon_run_last_success_timestamp_seconds", (("account", "default"),))] == success
    )
    # Imported after the first run, never asked about: not an outcome, and said so.
    assert (
        second[
            (
                "recon_payouts",
                (("account", "default"), ("currency", "EUR"), ("outcome", "not_reconciled_yet")),
            )
        ]
        == 1
    )


def test_an_unwritable_metrics_path_makes_status_a_warning(tmp_path: Path) -> None:
    """The run logs that it cannot write the file; `recon status` says WARNING (exit 1) naming it,
    and OK again once a run writes it."""
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the collector's directory should be\n")
    with serve_standin(lambda operation, body: token_answer()) as standin:
        env = recon_env(
            f"sqlite:///{tmp_path / 'recon.db'}", standin.url, metrics_file=str(blocked / "r.prom")
        )
        ran = recon(env, "run", "--no-email", "--out", "out", cwd=tmp_path)
        assert ran.returncode == 0, explain(ran)
        assert "metrics: cannot write" in ran.stderr
        status = recon(env, "status", cwd=tmp_path)
        assert status.returncode == 1, explain(status)
        assert status.stdout.startswith("RECON WARNING - last complete run 1 finished")
        assert f"did not write the metrics file {blocked / 'r.prom'}" in status.stdout

        env["RECON_METRICS_FILE"] = str(tmp_path / "collector" / "r.prom")
        assert recon(env, "run", "--no-email", "--out", "out", cwd=tmp_path).returncode == 0
        again = recon(env, "status", cwd=tmp_path)
    assert again.returncode == 0, explain(again)
    assert again.stdout.startswith("RECON OK - ")
