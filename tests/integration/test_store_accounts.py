"""Several provider accounts in one store: every key holding a provider id is the account's, the
run lock is per account, and a store of the previous release upgrades with every row in the
default account. On SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import Connection, Engine, select, text

from recon.constants import DEFAULT_ACCOUNT, NotificationKind, NotificationSource
from recon.decision import CaseDecision, PayoutScope, ProviderSide
from recon.errors import LockHeld
from recon.ops.status import recent_runs
from recon.run_frames import ProviderItems
from recon.store.cases import live_cases, write_case_decision
from recon.store.db import make_engine, write_transaction
from recon.store.lock import RunLock
from recon.store.migrate import current_revision, head_revision
from recon.store.notifications import NotificationRecord, insert_notifications
from recon.store.payouts import UpsertCounts, upsert_payouts
from recon.store.provider_items import absent_ids, item_record, live_items, write_provider_side
from recon.store.run_inputs import load_failure_callbacks, load_payouts
from recon.store.runs import latest_runs, start_run
from recon.store.tables import payouts
from tests.integration.test_upgrade_resume import (
    insert_finished_run,
    schema_differences,
    upgrade_stopped_at_every_change,
    upgrade_to,
)

T0 = datetime(2026, 3, 1, 6, tzinfo=UTC)
ACCOUNTS = ("brand_a", "brand_b")

# One row in every table of a store at 0017 (written in SQL: the tables of the previous release).
_OLD_ROWS: dict[str, str] = {
    "payouts": "INSERT INTO payouts (transaction_id, merchant_reference, amount_minor, currency,"
    " imported_at, outcome, ever_failed, last_run_id) VALUES"
    " ('tx-1', 'ref-1', 1000, 'EUR', '2026-03-01 05:00:00', 'settled', false, 1),"
    " ('tx-2', 'ref-2', 2000, 'EUR', '2026-03-01 05:00:00', NULL, false, NULL)",
    "observations": "INSERT INTO observations (run_id, transaction_id, fetched_at, status,"
    " state, raw) VALUES (1, 'tx-1', '2026-03-01 06:00:00', 'ok', 6, '{{}}')",
    "notifications": "INSERT INTO notifications (dedupe_key, kind, transaction_id, state, body,"
    " query, source, received_at) VALUES ('" + "a" * 64 + "', 'transaction', 'tx-1', 6, '{{}}',"
    " '', 'receiver', '2026-03-01 04:00:00')",
    "outcome_history": "INSERT INTO outcome_history (transaction_id, run_id, outcome,"
    " changed_at, amount_minor, currency) VALUES ('tx-1', 1, 'settled', '2026-03-01 06:00:00',"
    " 1000, 'EUR')",
    "record_changes": "INSERT INTO record_changes (transaction_id, field, {before}, {after},"
    " imported_at) VALUES ('tx-1', 'amount', '9.00', '10.00', '2026-03-01 05:00:00')",
    "run_exceptions": "INSERT INTO run_exceptions (run_id, item_kind, item_id, flag, status,"
    " facts, exception_id) VALUES (1, 'payout', 'tx-1', 'stale', 'new', '{{}}', 'E1-1')",
    "exception_cases": "INSERT INTO exception_cases (exception_id, item_kind, item_id, flag,"
    " state, facts, opened_run_id, opened_at, last_seen_run_id, version) VALUES ('E1-1',"
    " 'payout', 'tx-1', 'stale', 'open', '{{}}', 1, '2026-03-01 06:00:00', 1, 1)",
    "exception_actions": "INSERT INTO exception_actions (exception_id, at, {by}, action,"
    " previous_state, state, source) VALUES ('E1-1', '2026-03-01 07:00:00', 'anna',"
    " 'acknowledge', 'open', 'acknowledged', 'command line')",
    "run_returns": "INSERT INTO run_returns (run_id, return_id, original_id, amount_minor,"
    " currency, confirmed, matched, notified) VALUES (1, 'rt-1', 'tx-1', 1000, 'EUR', true,"
    " true, false)",
    "provider_items": "INSERT INTO provider_items (transaction_id, first_named_at, named_by,"
    " status) VALUES ('px-1', '2026-03-01 04:00:00', 'callback', 'unasked')",
    "creation_attempts": "INSERT INTO creation_attempts (merchant_reference, amount_minor,"
    " currency, imported_at) VALUES ('ref-9', 900, 'EUR', '2026-03-01 05:00:00')",
    "rollforward_runs": "INSERT INTO rollforward_runs (run_id, started, actions_after,"
    " actions_through) VALUES (1, true, 0, 0)",
    "rollforward_lines": "INSERT INTO rollforward_lines (run_id, currency, outcome, line, count,"
    " amount_minor) VALUES (1, 'EUR', 'settled', 'now', 1, 1000)",
    "run_lock": "INSERT INTO run_lock (name, holder, acquired_at, heartbeat_at) VALUES"
    " ('report', 'h:1:x', '2026-03-01 06:00:00', '2026-03-01 06:00:00')",
}
_WITH_ACCOUNT = (
    "runs",
    "payouts",
    "observations",
    "notifications",
    "outcome_history",
    "record_changes",
    "run_exceptions",
    "exception_cases",
    "run_returns",
    "provider_items",
    "creation_attempts",
)


def _rows(conn: Connection, table: str) -> list[dict[str, Any]]:
    """Every row by column name, but its account (SQLite's copy of a table may order the columns
    as recon.store.tables does)."""
    rows = conn.execute(text(f"SELECT * FROM {table}")).mappings()
    return sorted(({k: v for k, v in r.items() if k != "provider_account"} for r in rows), key=repr)


def test_a_store_of_the_previous_release_upgrades_with_every_row_in_the_default_account(
    empty_db_url: str,
) -> None:
    """A store at 0017 with rows in every table, upgraded with a stop after each change: every
    row is there as it was, in the default account, and reads back through the store."""
    engine = make_engine(empty_db_url)
    try:
        upgrade_to(engine, "0017")
        with engine.begin() as conn:
            insert_finished_run(conn)
            quote = conn.dialect.identifier_preparer.quote  # words some databases reserve
            for statement in _OLD_ROWS.values():
                names = {w: quote(w) for w in ("before", "after", "by")}
                conn.execute(text(statement.format(**names)))
        with engine.connect() as conn:
            before = {t: _rows(conn, t) for t in ("runs", *_OLD_ROWS)}
        upgrade_stopped_at_every_change(empty_db_url)
        assert current_revision(engine) == head_revision()
        assert schema_differences(engine) == []
        with engine.connect() as conn:
            upgraded = {t: _rows(conn, t) for t in before}
            accounts = {
                t: {a for (a,) in conn.execute(text(f"SELECT provider_account FROM {t}"))}
                for t in _WITH_ACCOUNT
            }
            cases = live_cases(conn)
            item = item_record(conn, "px-1")
            runs = latest_runs(conn, 5)
        with write_transaction(engine) as conn:
            again = upsert_payouts(
                conn,
                [{"transaction_id": "tx-2", "merchant_reference": "ref-2", "amount_minor": 2000,
                  "currency": "EUR"}],
            )  # fmt: skip
    finally:
        engine.dispose()
    # Every row as it was; a column a later revision added is empty in the rows from before it.
    for table, rows in upgraded.items():
        kept = set(before[table][0]) if before[table] else set()
        same = sorted(({k: v for k, v in r.items() if k in kept} for r in rows), key=repr)
        assert same == before[table], table
        assert all(v is None for r in rows for k, v in r.items() if k not in kept), table
    assert accounts == {t: {DEFAULT_ACCOUNT} for t in _WITH_ACCOUNT}
    assert list(cases["exception_id"]) == ["E1-1"]
    assert item is not None
    assert item["status"] == "unasked"
    assert [(r.id, r.account) for r in runs] == [(1, DEFAULT_ACCOUNT)]
    assert again == UpsertCounts(unchanged=1)


def _payout(tid: str, amount_minor: int) -> dict[str, Any]:
    return {
        "transaction_id": tid,
        "merchant_reference": f"ref-{amount_minor}",
        "amount_minor": amount_minor,
        "currency": "EUR",
        "created": T0,
    }


def _note(account: str, tid: str) -> NotificationRecord:
    return NotificationRecord(
        dedupe_key="b" * 64,  # the same body under both accounts
        kind=NotificationKind.TRANSACTION,
        merchant_id="m",
        transaction_id=tid,
        original_transaction_id=None,
        session_id=None,
        state=3,
        amount=None,
        country_id=None,
        body="{}",
        query="",
        source=NotificationSource.RECEIVER,
        received_at=T0,
        provider_account=account,
    )


def _scope(*ids: str) -> PayoutScope:
    return PayoutScope(ids=frozenset(ids), unscheduled=())


def test_one_transaction_id_under_two_accounts_is_two_payouts(engine: Engine) -> None:
    """Each account's payout is its own row, read back by its account alone; a re-import under
    one account changes only that account's."""
    with write_transaction(engine) as conn:
        first = upsert_payouts(conn, [_payout("tx-1", 100)], account="brand_a")
        second = upsert_payouts(conn, [_payout("tx-1", 200)], account="brand_b")
        third = upsert_payouts(conn, [_payout("tx-1", 300)], account="brand_b")
    assert (first, second, third) == (
        UpsertCounts(inserted=1),
        UpsertCounts(inserted=1),
        UpsertCounts(updated=1),
    )
    with engine.connect() as conn:
        stored = sorted(
            conn.execute(
                select(payouts.c.provider_account, payouts.c.transaction_id, payouts.c.amount_minor)
            ).all()
        )
        read = {a: load_payouts(conn, _scope("tx-1"), account=a) for a in ACCOUNTS}
        default = load_payouts(conn, _scope("tx-1"))
    assert [tuple(r) for r in stored] == [("brand_a", "tx-1", 100), ("brand_b", "tx-1", 300)]
    assert {a: list(f["amount_minor"]) for a, f in read.items()} == {
        "brand_a": [100],
        "brand_b": [300],
    }
    assert default.empty


def test_one_notification_under_two_accounts_is_two_and_each_names_its_own_payout(
    engine: Engine,
) -> None:
    """The same body received for two accounts is stored twice, and each account's failure
    callback is about its own payout only."""
    with write_transaction(engine) as conn:
        upsert_payouts(conn, [_payout("tx-1", 100)], account="brand_a")
        stored = insert_notifications(conn, [_note("brand_a", "tx-1"), _note("brand_b", "tx-1")])
        again = insert_notifications(conn, [_note("brand_b", "tx-1")])
    with engine.connect() as conn:
        callbacks = {a: load_failure_callbacks(conn, [3], account=a) for a in ACCOUNTS}
    assert (stored, again) == (2, 0)
    assert list(callbacks["brand_a"]["transaction_id"]) == ["tx-1"]
    assert callbacks["brand_b"].empty  # brand_b has no payout tx-1


def _items(tid: str, status: str) -> pd.DataFrame:
    row: dict[str, Any] = dict.fromkeys(ProviderItems.names())
    row |= {"transaction_id": tid, "first_named_at": T0, "named_by": "callback", "status": status}
    return pd.DataFrame([row], columns=ProviderItems.names())


def test_one_provider_item_under_two_accounts_is_two_items(engine: Engine) -> None:
    """An id the provider named under two accounts is an item of each, written and read by its
    account; a payout recorded under one account does not make the other's id known."""
    with write_transaction(engine) as conn:
        for account, status in (("brand_a", "unasked"), ("brand_b", "payout")):
            side = ProviderSide(items=_items("px-1", status), matches=pd.DataFrame(), counts={})
            write_provider_side(conn, side, as_of=T0, account=account)
        upsert_payouts(conn, [_payout("tx-1", 100)], account="brand_a")
    with engine.connect() as conn:
        items = {a: item_record(conn, "px-1", account=a) for a in ACCOUNTS}
        live = {a: list(live_items(conn, account=a)["status"]) for a in ACCOUNTS}
        absent = {a: absent_ids(conn, ["tx-1", "px-1", "px-2"], account=a) for a in ACCOUNTS}
    assert {a: i["status"] if i else None for a, i in items.items()} == {
        "brand_a": "unasked",
        "brand_b": "payout",
    }
    assert live == {"brand_a": ["unasked"], "brand_b": ["payout"]}
    assert absent == {"brand_a": ["px-2"], "brand_b": ["px-2", "tx-1"]}


def test_one_item_under_two_accounts_has_a_case_in_each(engine: Engine) -> None:
    """Two runs, one per account, each open a case on the same id: each account's live cases
    are its own."""
    with write_transaction(engine) as conn:
        run_ids = {
            a: start_run(conn, as_of=T0, started_at=T0, host="h", pid=1, account=a)
            for a in ACCOUNTS
        }
        for account, run_id in run_ids.items():
            opened = [
                {"exception_id": f"E{run_id}-1", "item_kind": "payout", "item_id": "tx-1",
                 "flag": "stale", "state": "open", "facts": "{}", "opened_run_id": run_id,
                 "opened_at": T0, "last_seen_run_id": run_id, "version": 1}
            ]  # fmt: skip
            decision = CaseDecision(exceptions=pd.DataFrame(), opened=opened)
            write_case_decision(conn, decision, account=account)
    with engine.connect() as conn:
        cases = {a: list(live_cases(conn, account=a)["exception_id"]) for a in ACCOUNTS}
        runs = {a: [r.id for r in latest_runs(conn, 5, account=a)] for a in ACCOUNTS}
    assert cases == {a: [f"E{run_ids[a]}-1"] for a in ACCOUNTS}
    assert runs == {a: [run_ids[a]] for a in ACCOUNTS}


def test_recon_runs_lists_every_accounts_nights_or_those_asked_for(engine: Engine) -> None:
    """`recon runs`: the runs of every account, newest first; `--account` keeps its own."""
    with engine.begin() as conn:
        ids = [
            start_run(conn, as_of=T0, started_at=T0, host="h", pid=1, account=a)
            for a in (DEFAULT_ACCOUNT, "brand_b", DEFAULT_ACCOUNT)
        ]
    url = engine.url.render_as_string(hide_password=False)
    assert [(r.id, r.account) for r in recent_runs(url, 10)] == [
        (ids[2], DEFAULT_ACCOUNT), (ids[1], "brand_b"), (ids[0], DEFAULT_ACCOUNT)]  # fmt: skip
    assert [r.id for r in recent_runs(url, 10, accounts=["brand_b"])] == [ids[1]]
    assert [r.id for r in recent_runs(url, 2)] == [ids[2], ids[1]]


@pytest.mark.parametrize("other", ["brand_b", DEFAULT_ACCOUNT])
def test_the_run_lock_of_one_account_leaves_another_free(engine: Engine, other: str) -> None:
    """A run of brand_a holds its lock; a run of another account takes its own at once; a second
    run of brand_a is refused, naming the holder."""
    with RunLock(engine, account="brand_a") as held:
        with RunLock(engine, account=other) as beside:
            assert beside.held
        with pytest.raises(LockHeld) as caught:
            RunLock(engine, account="brand_a").acquire()
        assert held.holder in str(caught.value)
        assert "run:brand_a" in str(caught.value)
    with engine.connect() as conn:  # both released
        assert conn.execute(text("SELECT COUNT(*) FROM run_lock")).scalar_one() == 0
