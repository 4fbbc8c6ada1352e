"""Notifications recon could not read: kept with their reason, listed for a run to report."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from alembic import command
from sqlalchemy import Engine, select, text

from recon.constants import NotificationSource, ParseStatus
from recon.ingest.notifications import parse_body
from recon.store.db import make_engine, upgrade, write_transaction
from recon.store.migrate import alembic_config
from recon.store.notifications import (
    EXCERPT_CHARS,
    store_notifications,
    unparsed_notifications,
)
from recon.store.tables import notifications

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def store(engine: Engine, raw: str, when: datetime) -> None:
    store_notifications(
        engine, [parse_body(raw, source=NotificationSource.RECEIVER, received_at=when)]
    )


def test_unparsed_notifications_lists_what_could_not_be_read_with_reason_and_excerpt(
    engine: Engine,
) -> None:
    """Partial and unparsed rows are listed oldest first; fully read ones are not."""
    long_text = "x" * 500
    store(engine, '{"merchant_id": "m", "transaction_id": "t-1", "transaction_state": 6}', T0)
    store(engine, '{"transaction_id": "t-2", "transaction_state": "six"}', T0 + timedelta(hours=1))
    store(engine, '{"hello": "' + long_text + '"}', T0 + timedelta(hours=2))
    with engine.connect() as conn:
        found = unparsed_notifications(conn)
        later = unparsed_notifications(conn, since=T0 + timedelta(hours=2))
        one = unparsed_notifications(conn, limit=1)
    assert [(row.status, row.reason) for row in found] == [
        (ParseStatus.PARTIAL, "transaction_state: unknown state 'six'"),
        (
            ParseStatus.UNPARSED,
            "body: not a notification (no session_id, transaction_id or notification_type)",
        ),
    ]
    assert [row.received_at for row in found] == [T0 + timedelta(hours=1), T0 + timedelta(hours=2)]
    assert found[0].excerpt == '{"transaction_id": "t-2", "transaction_state": "six"}'
    assert found[1].excerpt == ('{"hello": "' + long_text)[:EXCERPT_CHARS] + "…"
    assert [row.id for row in later] == [found[1].id]
    assert [row.id for row in one] == [found[0].id]


def test_an_excerpt_shows_control_characters_as_question_marks(engine: Engine) -> None:
    """Body text from the internet is shown without its line breaks or control characters."""
    store(engine, '{\n"a":\t"b"}', T0)
    with engine.connect() as conn:
        [row] = unparsed_notifications(conn)
    assert row.excerpt == '{?"a":?"b"}'


def test_rows_stored_before_the_parse_columns_existed_count_as_parsed(empty_db_url: str) -> None:
    """Upgrading a store at revision 0001 keeps its notifications, marked parsed."""
    engine = make_engine(empty_db_url)
    try:
        with write_transaction(engine) as conn:
            config = alembic_config()
            config.attributes["connection"] = conn
            command.upgrade(config, "0001")
            conn.execute(
                text(
                    "INSERT INTO notifications (dedupe_key, kind, merchant_id, transaction_id, "
                    "state, body, query, source, received_at) VALUES "
                    "(:key, 'transaction', 'm', 't-old', 6, '{}', '', 'receiver', :at)"
                ),
                {"key": "a" * 64, "at": T0.replace(tzinfo=None)},
            )
        upgrade(engine)
        with engine.connect() as conn:
            row = conn.execute(
                select(notifications.c.parse_status, notifications.c.parse_problem).where(
                    notifications.c.transaction_id == "t-old"
                )
            ).one()
            assert tuple(row) == ("parsed", None)
            assert unparsed_notifications(conn) == []
    finally:
        engine.dispose()
