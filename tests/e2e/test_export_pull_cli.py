"""`recon provider-export pull` and the night's pull (RECON_PROVIDER_EXPORT=api) as processes,
against the sandbox served on loopback."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.e2e.run_support import (
    Spec,
    count,
    create_payouts,
    explain,
    import_payouts,
    recon,
    recon_env,
    run_night,
    served_world,
)


def _db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'recon.db'}"


def test_pull_stores_the_asked_days_file_and_says_so(tmp_path: Path) -> None:
    """--settled-from/--settled-to: one file stored for the day the payouts settled; exit 0."""
    database_url = _db(tmp_path)
    with served_world(database_url, receiver=False) as world:
        world.advance_to_hour(1)
        create_payouts(world, [Spec("12.00"), Spec("13.00")])
        world.advance(600)
        day = datetime.fromtimestamp(float(world.now()), UTC).date().isoformat()
        env = recon_env(database_url, world.sandbox_url)
        args = ("provider-export", "pull", "--settled-from", day, "--settled-to", day)
        result = recon(env, *args, cwd=tmp_path)
        assert result.returncode == 0, explain(result)
        assert "1 file(s), 4 row(s)" in result.stdout, explain(result)
        assert count(database_url, "SELECT COUNT(*) FROM provider_export_files") == 1
        assert count(database_url, "SELECT COUNT(*) FROM provider_export_rows") == 4


def test_a_failed_task_names_the_missing_day_and_exits_3(tmp_path: Path) -> None:
    """Every export task fails: nothing is stored, the day is named missing, exit 3."""
    database_url = _db(tmp_path)
    with served_world(database_url, receiver=False) as world:
        world.faults(export_failure_rate=1.0)
        day = datetime.fromtimestamp(float(world.now()), UTC).date().isoformat()
        env = recon_env(database_url, world.sandbox_url)
        args = ("provider-export", "pull", "--settled-from", day, "--settled-to", day)
        result = recon(env, *args, cwd=tmp_path)
        assert result.returncode == 3, explain(result)
        assert f"{day}: missing" in result.stdout, explain(result)
        assert count(database_url, "SELECT COUNT(*) FROM provider_export_files") == 0


def test_the_night_pulls_yesterdays_export_before_it_polls(tmp_path: Path) -> None:
    """RECON_PROVIDER_EXPORT=api: the night after the payouts settled stores the export of the
    day they settled on (and the lookback days before it); without it, nothing is pulled."""
    database_url = _db(tmp_path)
    with served_world(database_url, receiver=False) as world:
        world.advance_to_hour(1)
        payouts = create_payouts(world, [Spec("12.00"), Spec("13.00")])
        world.advance(600)
        import_payouts(
            recon_env(database_url, world.sandbox_url), tmp_path, [p.csv_row() for p in payouts]
        )
        world.advance(86400)
        off = recon_env(database_url, world.sandbox_url)
        run_night(off, tmp_path, "night-off", world.now())
        assert count(database_url, "SELECT COUNT(*) FROM provider_export_files") == 0
        world.advance(60)
        on = recon_env(database_url, world.sandbox_url, provider_export="api")
        settled = payouts[0].created.date().isoformat()
        run_night(on, tmp_path, "night-on", world.now())
        # The day the payouts settled on: one file of its 4 rows (the lookback's empty days are
        # files of their own).
        files = "SELECT COUNT(*) FROM provider_export_files WHERE rows = ? AND settled_from LIKE ?"
        assert count(database_url, files, 4, f"{settled}%") == 1
        assert count(database_url, "SELECT COUNT(*) FROM provider_export_rows") == 4


def test_a_night_whose_pull_fails_still_finishes(tmp_path: Path) -> None:
    """Every export task fails: the night still exits 0, and its log names the missing days."""
    database_url = _db(tmp_path)
    with served_world(database_url, receiver=False) as world:
        world.faults(export_failure_rate=1.0)
        env = recon_env(database_url, world.sandbox_url, provider_export="api")
        out = tmp_path / "night"
        as_of = world.now()
        result = recon(env, "run", "--as-of", as_of, "--no-email", "--out", str(out), cwd=tmp_path)
        assert result.returncode == 0, explain(result)
        yesterday = (datetime.fromtimestamp(float(as_of), UTC) - timedelta(days=1)).date()
        assert f"{yesterday}: missing" in result.stderr, explain(result)
        assert count(database_url, "SELECT COUNT(*) FROM provider_export_files") == 0
