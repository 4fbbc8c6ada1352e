"""Revision 0016 keeps findings' facts as values: the cases of a store written before it keep what
their old text recorded (a payout's state and returned amount, a group's members), so a person's
acknowledgement survives the upgrade and is reopened only by a real change."""

from __future__ import annotations

import json

import pandas as pd
from sqlalchemy import select, text

from recon.store.cases import live_cases
from recon.store.db import make_engine
from recon.store.migrate import current_revision, head_revision
from recon.store.tables import exception_cases
from tests.integration.test_upgrade_resume import (
    insert_finished_run,
    upgrade_stopped_at_every_change,
    upgrade_to,
)
from tests.unit.decide_support import AS_OF, decide_at, inputs, ok, payout, statuses

OLD = {
    # (flag, old facts text, words)
    "p1": (
        "amount_mismatch",
        "local 1000 minor units, provider 1001|state=4|returned=0",
        "local 1000 minor units, provider 1001",
    ),
    "p2": (
        "possible_duplicate",
        "also settled or in flight: p3;p4 (the same merchant_reference, or ...)",
        "also settled or in flight: p3;p4 (the same merchant_reference, or ...)",
    ),
}


def test_old_facts_become_the_values_they_recorded_and_keep_their_words(
    empty_db_url: str,
) -> None:
    """Each acknowledged case's facts are its values after the upgrade; its words stay."""
    engine = make_engine(empty_db_url)
    try:
        upgrade_to(engine, "0015")
        with engine.begin() as conn:
            insert_finished_run(conn)
            for n, (item, (flag, facts, words)) in enumerate(OLD.items(), start=1):
                conn.execute(
                    text(
                        "INSERT INTO exception_cases (exception_id, item_kind, item_id, flag,"
                        " state, facts, detail, opened_run_id, opened_at, last_seen_run_id,"
                        " owner, version) VALUES (:eid, 'payout', :item, :flag, 'acknowledged',"
                        " :facts, :words, 1, '2026-03-01 06:00:00', 1, 'anna', 1)"
                    ),
                    {"eid": f"E1-{n}", "item": item, "flag": flag, "facts": facts, "words": words},
                )
        upgrade_stopped_at_every_change(empty_db_url)
        assert current_revision(engine) == head_revision()
        with engine.connect() as conn:
            rows = conn.execute(
                select(
                    exception_cases.c.item_id, exception_cases.c.facts, exception_cases.c.detail
                ).order_by(exception_cases.c.item_id)
            ).all()
            live = live_cases(conn)
    finally:
        engine.dispose()
    assert [(r[0], json.loads(r[1]), r[2]) for r in rows] == [
        ("p1", {"returned_minor": 0, "state": 4}, OLD["p1"][2]),
        ("p2", {"members": ["p3", "p4"]}, OLD["p2"][2]),
    ]
    _the_next_night_reopens_only_on_a_real_change(live)


def _the_next_night_reopens_only_on_a_real_change(live: pd.DataFrame) -> None:
    """Same state after the upgrade: still acknowledged. Another state: reopened."""
    mismatch = payout("p1", prev_outcome="pending", prev_state=4, prev_exceptions="amount_mismatch",
                      prev_outcome_since=AS_OF)  # fmt: skip
    cases = live[live["item_id"] == "p1"]
    same = decide_at(inputs(mismatch, answered=[ok("p1", 4, amount_minor=1001)], live=cases))
    assert statuses(same)[("p1", "amount_mismatch")] == "acknowledged"
    moved = decide_at(inputs(mismatch, answered=[ok("p1", 6, amount_minor=1001)], live=cases))
    assert statuses(moved)[("p1", "amount_mismatch")] == "new"
