"""`recon import payouts` and `recon import notifications` with several provider accounts, as the
user runs them: each refusal exits 2 naming the option or the line, and writes nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.e2e.test_import_cli import run

TWO_BRANDS = """\
[accounts.brand_a]
label = "Brand A"
api_base_url = "https://api.provider.example"
public_key = "pk_a"

[accounts.brand_b]
label = "Brand B"
api_base_url = "https://api.provider.example"
public_key = "pk_b"
"""
SECRETS = {"RECON_ACCOUNT_BRAND_A_SECRET": "sk-a", "RECON_ACCOUNT_BRAND_B_SECRET": "sk-b"}
PLAIN = "transaction_id,merchant_reference,amount,currency\ntx-1,r-1,10.00,EUR\n"


def settings(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "recon.toml"
    config.write_text(TWO_BRANDS, encoding="utf-8")
    return {"RECON_CONFIG": str(config), **SECRETS}


def stored(db: Path) -> list[tuple[str, str, int]]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT provider_account, transaction_id, amount_minor FROM payouts ORDER BY 1, 2"
        ).fetchall()


def test_one_id_in_two_brands_files_is_two_payouts(tmp_path: Path) -> None:
    """One id in two brands files is two payouts."""
    db, env = tmp_path / "recon.db", settings(tmp_path)
    csv = tmp_path / "payouts.csv"
    csv.write_text(PLAIN, encoding="utf-8")
    for account in ("brand_a", "brand_b"):
        done = run(db, "import", "payouts", str(csv), "--account", account, **env)
        assert done.returncode == 0, done.stderr
    assert stored(db) == [("brand_a", "tx-1", 1000), ("brand_b", "tx-1", 1000)]


def test_an_account_option_not_configured_exits_2_naming_it(tmp_path: Path) -> None:
    """An account option not configured exits 2 naming it."""
    db, env = tmp_path / "recon.db", settings(tmp_path)
    csv = tmp_path / "payouts.csv"
    csv.write_text(PLAIN, encoding="utf-8")
    refused = run(db, "import", "payouts", str(csv), "--account", "brand_c", **env)
    assert refused.returncode == 2
    assert "--account: 'brand_c' is not a configured account" in refused.stderr
    assert stored(db) == []


def test_a_file_without_accounts_exits_2_and_a_bad_row_names_its_line(tmp_path: Path) -> None:
    """A file without accounts exits 2 and a bad row names its line."""
    db, env = tmp_path / "recon.db", settings(tmp_path)
    plain = tmp_path / "plain.csv"
    plain.write_text(PLAIN, encoding="utf-8")
    refused = run(db, "import", "payouts", str(plain), **env)
    assert refused.returncode == 2
    assert "several accounts are configured (brand_a, brand_b)" in refused.stderr
    named = tmp_path / "named.csv"
    named.write_text(
        "transaction_id,merchant_reference,amount,currency,provider_account\n"
        "tx-1,r-1,10.00,EUR,brand_a\ntx-2,r-2,10.00,EUR,brand_z\n",
        encoding="utf-8",
    )
    refused = run(db, "import", "payouts", str(named), **env)
    assert refused.returncode == 2
    assert "line 3: provider_account 'brand_z' is not a configured account" in refused.stderr
    mismatched = run(db, "import", "payouts", str(named), "--account", "brand_b", **env)
    assert mismatched.returncode == 2
    assert "line 2: provider_account 'brand_a' is not the account --account names" in (
        mismatched.stderr
    )
    assert stored(db) == []


def test_notifications_import_needs_the_account_with_several(tmp_path: Path) -> None:
    """Notifications import needs the account with several."""
    db, env = tmp_path / "recon.db", settings(tmp_path)
    bodies = tmp_path / "bodies.jsonl"
    bodies.write_text('{"transaction_id": "tx-1", "transaction_state": 6}\n', encoding="utf-8")
    refused = run(db, "import", "notifications", str(bodies), **env)
    assert refused.returncode == 2
    assert "name the file's account with --account NAME" in refused.stderr
    done = run(db, "import", "notifications", str(bodies), "--account", "brand_b", **env)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT provider_account, transaction_id FROM notifications").fetchall()
    assert rows == [("brand_b", "tx-1")]
