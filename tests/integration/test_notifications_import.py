"""``recon import notifications FILE.jsonl`` against real databases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, select

from recon.cli import main
from recon.errors import InputError
from recon.ingest.notification_file import import_notifications
from recon.store.tables import notifications

SESSION = {"merchant_id": "m", "session_id": "s-1", "session_state": 12}
TRANSACTION = {"merchant_id": "m", "transaction_id": "t-1", "transaction_state": 6}
RETURNED = {
    "transaction_id": "r-1",
    "original_transaction_id": "t-1",
    "notification_type": "RETURNED_TRANSACTION",
    "merchant_id": "m",
    "country_id": "SE",
    "amount": "__AMOUNT__",
}


def jsonl(path: Path, *lines: object) -> Path:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text(text.replace('"__AMOUNT__"', "250.10") + "\n", encoding="utf-8")
    return path


def stored(engine: Engine) -> list[tuple[str, str | None, str | None, str]]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                notifications.c.kind,
                notifications.c.transaction_id,
                notifications.c.amount,
                notifications.c.source,
            ).order_by(notifications.c.id)
        )
        return [tuple(row) for row in rows]  # type: ignore[misc]


def test_a_good_file_is_imported_with_every_kind(engine: Engine, tmp_path: Path) -> None:
    """Every body is stored with source file; blank lines are ignored; amounts stay exact."""
    path = jsonl(tmp_path / "n.jsonl", SESSION, "", "   ", TRANSACTION, RETURNED)
    counts = import_notifications(engine, path)
    assert (counts.bodies, counts.new, counts.duplicates) == (3, 3, 0)
    assert stored(engine) == [
        ("session", None, None, "file"),
        ("transaction", "t-1", None, "file"),
        ("returned_funds", "r-1", "250.10", "file"),
    ]


def test_duplicates_in_the_file_and_in_the_store_are_stored_once(
    engine: Engine, tmp_path: Path
) -> None:
    """A body repeated in the file, or imported again, is counted as a duplicate."""
    path = jsonl(tmp_path / "n.jsonl", TRANSACTION, json.dumps(TRANSACTION, indent=None), SESSION)
    first = import_notifications(engine, path)
    again = import_notifications(engine, path)
    assert (first.new, first.duplicates) == (2, 1)
    assert (again.new, again.duplicates) == (0, 3)
    assert len(stored(engine)) == 2


def test_a_line_that_is_not_a_json_object_rejects_the_whole_file_naming_it(
    engine: Engine, tmp_path: Path
) -> None:
    """Nothing is written when a line is not JSON or not an object; each problem names its line."""
    path = jsonl(tmp_path / "n.jsonl", TRANSACTION, "{oops", SESSION, "[1, 2]")
    with pytest.raises(InputError) as caught:
        import_notifications(engine, path)
    problems = caught.value.problems
    assert problems[0].startswith("line 2: body: malformed JSON")
    assert problems[1].startswith("line 4: body: a notification is a JSON object")
    assert len(problems) == 2
    assert stored(engine) == []


def test_lines_recon_cannot_read_are_imported_with_their_reason_as_the_receiver_would(
    engine: Engine, tmp_path: Path
) -> None:
    """The import reads bodies as the receiver does: odd claims are kept, numeric strings read."""
    path = jsonl(
        tmp_path / "n.jsonl",
        {"merchant_id": 17, "transaction_id": "t-2", "transaction_state": "3"},
        {"merchant_id": "m", "transaction_id": "t-3", "transaction_state": "six"},
        {"merchant_id": "m", "notification_type": "REFUND", "transaction_id": "t"},
    )
    counts = import_notifications(engine, path)
    assert (counts.bodies, counts.new) == (3, 3)
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                notifications.c.kind,
                notifications.c.transaction_id,
                notifications.c.state,
                notifications.c.parse_status,
                notifications.c.parse_problem,
            )
        ).all()
    assert {tuple(row) for row in rows} == {
        ("transaction", "t-2", 3, "parsed", None),
        ("transaction", "t-3", None, "partial", "transaction_state: unknown state 'six'"),
        ("unknown", None, None, "unparsed", "notification_type: unknown value 'REFUND'"),
    }


def test_a_line_that_is_not_utf8_is_reported(engine: Engine, tmp_path: Path) -> None:
    """Bytes that are not UTF-8 are a bad line, not a crash."""
    path = tmp_path / "n.jsonl"
    path.write_bytes(json.dumps(TRANSACTION).encode() + b"\n\xff\xfe\n")
    with pytest.raises(InputError, match="line 2: body: not UTF-8"):
        import_notifications(engine, path)
    assert stored(engine) == []


def test_the_cli_prints_counts_and_exits_0(db_url: str, engine: Engine, tmp_path: Path) -> None:
    """``recon import notifications`` prints new and duplicate counts."""
    path = jsonl(tmp_path / "n.jsonl", TRANSACTION, TRANSACTION, RETURNED)
    result = CliRunner().invoke(
        main, ["import", "notifications", str(path)], env={"RECON_DATABASE_URL": db_url}
    )
    assert result.exit_code == 0, result.output
    assert f"{path}: 2 new, 1 duplicate\n" in result.output
    assert len(stored(engine)) == 2


def test_the_cli_exits_2_on_bad_input_and_stores_nothing(
    db_url: str, engine: Engine, tmp_path: Path
) -> None:
    """A malformed file is exit code 2 with its problems on stderr."""
    path = jsonl(tmp_path / "n.jsonl", TRANSACTION, '"not an object"')
    result = CliRunner().invoke(
        main, ["import", "notifications", str(path)], env={"RECON_DATABASE_URL": db_url}
    )
    assert result.exit_code == 2
    assert "line 2: body: a notification is a JSON object" in result.output
    assert "nothing was imported" in result.output
    assert stored(engine) == []
