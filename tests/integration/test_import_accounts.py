"""Imports know the provider account: a `provider_account` column or `--account`, on SQLite,
PostgreSQL and MariaDB; every bad input refused naming its line or option, nothing written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from recon.errors import InputError
from recon.ingest.accounts import ImportAccounts
from recon.ingest.notification_file import import_notifications
from recon.ingest.payouts import import_payouts_csv, import_payouts_sql
from recon.settings import Settings
from recon.store.tables import creation_attempts, notifications, payouts


def table(name: str) -> dict[str, Any]:
    return {
        "label": name.title(),
        "api_base_url": "https://api.provider.example",
        "public_key": f"pk_{name}",
        "secret": f"sk_{name}",
    }


TWO = Settings(accounts={"brand_a": table("brand_a"), "brand_b": table("brand_b")})
HEADER = "transaction_id,merchant_reference,amount,currency,provider_account\n"


def write(tmp_path: Path, text: str, name: str = "payouts.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def stored(engine: Engine) -> list[tuple[str, str, int, str]]:
    p = payouts.c
    with engine.connect() as conn:
        query = select(p.provider_account, p.transaction_id, p.amount_minor, p.merchant_reference)
        return sorted(tuple(row) for row in conn.execute(query))  # type: ignore[misc]


def nothing_stored(engine: Engine) -> bool:
    with engine.connect() as conn:
        counts = [
            conn.execute(select(func.count()).select_from(t)).scalar_one()
            for t in (payouts, creation_attempts, notifications)
        ]
    return counts == [0, 0, 0]


def refusal(engine: Engine, path: Path, accounts: ImportAccounts) -> InputError:
    with pytest.raises(InputError) as caught:
        import_payouts_csv(engine, path, accounts=accounts)
    assert nothing_stored(engine)
    return caught.value


def test_one_transaction_id_under_two_accounts_is_two_payouts(
    engine: Engine, tmp_path: Path
) -> None:
    """One transaction id under two accounts is two payouts."""
    path = write(
        tmp_path,
        HEADER + "tx-1,ref-a,10.00,EUR,brand_a\ntx-1,ref-b,20.00,EUR,brand_b\n"
        # a create without its id, in one account
        ",ref-c,5.00,EUR,brand_b\n",
    )
    result = import_payouts_csv(engine, path, accounts=ImportAccounts.of(TWO))
    assert (result.rows, result.counts.inserted, result.attempts) == (3, 2, 1)
    assert stored(engine) == [
        ("brand_a", "tx-1", 1000, "ref-a"),
        ("brand_b", "tx-1", 2000, "ref-b"),
    ]
    with engine.connect() as conn:
        owners = conn.execute(select(creation_attempts.c.provider_account)).scalars().all()
    assert owners == ["brand_b"]
    # Imported again: each account's payout is found under its own account, unchanged.
    again = import_payouts_csv(engine, path, accounts=ImportAccounts.of(TWO))
    assert (again.counts.inserted, again.counts.unchanged) == (0, 2)


def test_account_option_gives_a_file_without_the_column_its_account(
    engine: Engine, tmp_path: Path
) -> None:
    """Account option gives a file without the column its account."""
    path = write(tmp_path, "transaction_id,merchant_reference,amount,currency\ntx-1,r,1,EUR\n")
    import_payouts_csv(engine, path, accounts=ImportAccounts.of(TWO, "brand_b"))
    import_payouts_csv(engine, path, accounts=ImportAccounts.of(TWO, "brand_a"))
    assert [row[:2] for row in stored(engine)] == [("brand_a", "tx-1"), ("brand_b", "tx-1")]


def test_with_only_the_default_account_a_file_imports_as_before(
    engine: Engine, tmp_path: Path
) -> None:
    """With only the default account a file imports as before."""
    path = write(tmp_path, "transaction_id,merchant_reference,amount,currency\ntx-1,r,1,EUR\n")
    import_payouts_csv(engine, path, accounts=ImportAccounts.of(Settings()))
    assert [row[:2] for row in stored(engine)] == [("default", "tx-1")]


def test_a_row_naming_the_one_account_imports_without_the_option(
    engine: Engine, tmp_path: Path
) -> None:
    """A row naming the one account imports without the option."""
    path = write(tmp_path, HEADER + "tx-1,r,1,EUR,default\ntx-2,r,1,EUR,\n")
    import_payouts_csv(engine, path, accounts=ImportAccounts.of(Settings()))
    assert [row[:2] for row in stored(engine)] == [("default", "tx-1"), ("default", "tx-2")]


def test_several_accounts_and_no_column_refuse_the_file(engine: Engine, tmp_path: Path) -> None:
    """Several accounts and no column refuse the file."""
    path = write(tmp_path, "transaction_id,merchant_reference,amount,currency\ntx-1,r,1,EUR\n")
    refused = refusal(engine, path, ImportAccounts.of(TWO))
    assert "several accounts are configured (brand_a, brand_b)" in str(refused)
    assert "provider_account column" in str(refused)
    assert "--account NAME" in str(refused)


def test_a_row_naming_no_account_or_one_not_configured_is_refused_with_its_line(
    engine: Engine, tmp_path: Path
) -> None:
    """A row naming no account or one not configured is refused with its line."""
    path = write(
        tmp_path,
        HEADER
        + "tx-1,r,1,EUR,brand_a\n"
        + "tx-2,r,1,EUR,\n"
        + "tx-3,r,1,EUR,brand_c\n"
        + "tx-4,r,1,EUR,../../etc/passwd\n"
        + "tx-5,r,1,EUR,BRAND_A\n",
    )
    problems = refusal(engine, path, ImportAccounts.of(TWO)).problems
    assert problems == [
        "line 3: provider_account is missing: several accounts are configured (brand_a, brand_b)",
        "line 4: provider_account 'brand_c' is not a configured account "
        "(the accounts: brand_a, brand_b)",
        "line 5: provider_account '../../etc/passwd' is not a configured account "
        "(the accounts: brand_a, brand_b)",
        "line 6: provider_account 'BRAND_A' is not a configured account "
        "(the accounts: brand_a, brand_b)",
    ]


def test_a_row_naming_another_account_than_the_option_is_refused(
    engine: Engine, tmp_path: Path
) -> None:
    """A row naming another account than the option is refused."""
    path = write(tmp_path, HEADER + "tx-1,r,1,EUR,brand_a\ntx-2,r,1,EUR,brand_b\ntx-3,r,1,EUR,\n")
    problems = refusal(engine, path, ImportAccounts.of(TWO, "brand_a")).problems
    assert problems == [
        "line 3: provider_account 'brand_b' is not the account --account names ('brand_a')"
    ]


def test_an_account_option_not_configured_is_refused_naming_the_option() -> None:
    """An account option not configured is refused naming the option."""
    with pytest.raises(InputError, match=r"--account: 'brand_c' is not a configured account"):
        ImportAccounts.of(TWO, "brand_c")


def test_a_long_or_foreign_account_cell_is_quoted_short(engine: Engine, tmp_path: Path) -> None:
    """A long or foreign account cell is quoted short."""
    path = write(tmp_path, HEADER + f"tx-1,r,1,EUR,{'é' * 500}\n")
    (problem,) = refusal(engine, path, ImportAccounts.of(TWO)).problems
    assert problem.startswith("line 2: provider_account '" + "é" * 40 + "'... (500 characters)")


def test_a_query_with_a_provider_account_column_stores_each_row_under_it(
    engine: Engine, tmp_path: Path
) -> None:
    """A query with a provider account column stores each row under it."""
    source = f"sqlite:///{tmp_path / 'merchant.db'}"
    from sqlalchemy import create_engine, text

    merchant = create_engine(source)
    with merchant.begin() as conn:
        conn.execute(text("CREATE TABLE p (id TEXT, ref TEXT, amount TEXT, cur TEXT, acc TEXT)"))
        conn.execute(
            text(
                "INSERT INTO p VALUES ('tx-1','r','1','EUR','brand_a'), "
                "('tx-1','r','2','EUR','brand_b')"
            )
        )
    merchant.dispose()
    query = (
        "SELECT id AS transaction_id, ref AS merchant_reference, amount, cur AS currency, "
        "acc AS provider_account FROM p"
    )
    import_payouts_sql(engine, query, source, accounts=ImportAccounts.of(TWO))
    assert [row[:3] for row in stored(engine)] == [
        ("brand_a", "tx-1", 100),
        ("brand_b", "tx-1", 200),
    ]
    with pytest.raises(InputError, match="several accounts are configured"):
        import_payouts_sql(
            engine,
            "SELECT id AS transaction_id, ref AS merchant_reference, amount, "
            "cur AS currency FROM p",
            source,
            accounts=ImportAccounts.of(TWO),
        )


def test_notifications_import_stores_bodies_under_the_account_option(
    engine: Engine, tmp_path: Path
) -> None:
    """Notifications import stores bodies under the account option."""
    body = json.dumps({"transaction_id": "tx-1", "transaction_state": 6})
    path = write(tmp_path, body + "\n", "bodies.jsonl")
    for name in ("brand_a", "brand_b"):
        owner = ImportAccounts.of(TWO, name).of_file(str(path))
        assert import_notifications(engine, path, account=owner).new == 1
    with engine.connect() as conn:
        owners = conn.execute(select(notifications.c.provider_account)).scalars().all()
    assert sorted(owners) == ["brand_a", "brand_b"]  # one body, two accounts: two notifications


def test_notifications_import_with_several_accounts_needs_the_option(tmp_path: Path) -> None:
    """Notifications import with several accounts needs the option."""
    with pytest.raises(InputError, match=r"several accounts are configured.*--account NAME"):
        ImportAccounts.of(TWO).of_file("bodies.jsonl")
