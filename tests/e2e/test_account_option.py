"""`--account` on every command that takes it: an account that is not configured is refused with
exit 2 naming the option and the accounts, before the store is opened (no database is made); the
configured one (here the default account of RECON_API_*) is accepted."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.run_support import RECON


def recon(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env["RECON_DATABASE_URL"] = f"sqlite:///{tmp_path / 'recon.db'}"
    return subprocess.run(
        [RECON, *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )


DAY = ("--settled-from", "2026-01-01", "--settled-to", "2026-01-01")


@pytest.mark.parametrize(
    "command",
    [
        ("run", "--no-email"),
        ("report", "--out", "out"),
        ("exceptions", "list"),
        ("export", "payouts", "--since", "2026-01-01", "--out", "p.csv"),
        ("import", "payouts", "p.csv"),
        ("import", "notifications", "p.csv"),
        ("import", "provider-export", "p.csv", *DAY),
        ("provider-export", "pull", *DAY),
        ("journal", "export", "--out", "j.csv"),
        ("balance", "record", "--date", "2026-01-01", "--currency", "EUR", "--closing", "1.00"),
        ("balance", "show"),
        ("fees", "--month", "2026-01"),
        ("runs",),
    ],
)
def test_an_account_not_configured_exits_2_naming_it_and_opens_no_store(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """An account not configured exits 2 naming it, before the store is opened or made."""
    (tmp_path / "p.csv").write_text("transaction_id,amount,currency\n", encoding="utf-8")
    result = recon(tmp_path, *command, "--account", "brand_x")
    assert result.returncode == 2, result.stderr
    assert (
        "--account: 'brand_x' is not a configured account (the accounts: default)" in result.stderr
    )
    assert not (tmp_path / "recon.db").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.csv"]


def test_the_default_account_lists_and_exports_with_its_column(tmp_path: Path) -> None:
    """The default account lists and exports with its column."""
    listed = recon(tmp_path, "exceptions", "list", "--format", "csv", "--account", "default")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("exception_id,provider_account,state,")
    exported = recon(
        tmp_path, "export", "payouts", "--since", "2026-01-01", "--out", "p.csv",
        "--account", "default",
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    assert (tmp_path / "p.csv").read_text().startswith("transaction_id,provider_account,")


def test_balance_record_without_an_account_among_several_opens_no_store(tmp_path: Path) -> None:
    """With several accounts configured, `balance record` without --account exits 2 naming them,
    before the store is made."""
    config = tmp_path / "recon.toml"
    config.write_text(
        "".join(
            f'[accounts.{name}]\nlabel = "{name}"\napi_base_url = "http://127.0.0.1:9"\n'
            f'public_key = "pk_{name}"\n'
            for name in ("brand_a", "brand_b")
        ),
        encoding="utf-8",
    )
    result = subprocess.run(
        [RECON, "balance", "record", "--date", "2026-01-01", "--currency", "EUR", "--closing", "1"],
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("RECON_")},
            "RECON_DATABASE_URL": f"sqlite:///{tmp_path / 'recon.db'}",
            "RECON_CONFIG": str(config),
            "RECON_ACCOUNT_BRAND_A_SECRET": "sk-a",
            "RECON_ACCOUNT_BRAND_B_SECRET": "sk-b",
        },
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert "--account NAME is needed: there are several accounts (brand_a, brand_b)" in (
        result.stderr
    )
    assert not (tmp_path / "recon.db").exists()


@pytest.mark.parametrize(
    ("days", "says"),
    [
        (("--settled-from", "2026-01-05"), "--settled-from and --settled-to go together"),
        (("--settled-to", "2026-01-05"), "--settled-from and --settled-to go together"),
        (
            ("--settled-from", "2026-01-05", "--settled-to", "2026-01-01"),
            "--settled-from 2026-01-05 is after --settled-to 2026-01-01",
        ),
    ],
)
def test_pull_days_half_given_or_out_of_order_exit_2_and_open_no_store(
    tmp_path: Path, days: tuple[str, ...], says: str
) -> None:
    """`provider-export pull` with one day of the two, or the two out of order, is a usage error
    before the settings and the store."""
    result = recon(tmp_path, "provider-export", "pull", *days)
    assert result.returncode == 2, result.stderr
    assert says in result.stderr
    assert not (tmp_path / "recon.db").exists()
