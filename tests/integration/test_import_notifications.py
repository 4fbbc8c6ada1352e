"""Every importer shares one all-or-nothing strategy and one entry-point shape."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, func, select

from recon.cli import main
from recon.errors import InputError
from recon.ingest import notification_file as notification_import
from recon.ingest import payouts as payout_import
from recon.store.tables import notifications

TRANSACTION = {"merchant_id": "m", "transaction_id": "t-1", "transaction_state": 6}


def stored(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.scalar(select(func.count()).select_from(notifications)) or 0)


def test_a_long_list_of_bad_lines_is_capped_like_the_payout_import(
    engine: Engine, tmp_path: Path
) -> None:
    """80 bad lines: every one counted, the first fifty listed, the rest summed up, none stored."""
    path = tmp_path / "n.jsonl"
    path.write_text(json.dumps(TRANSACTION) + "\n" + "{oops\n" * 80, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        notification_import.import_notifications(engine, path)
    assert str(caught.value).startswith(f"{path}: nothing was imported, 80 problems:\n")
    problems = caught.value.problems
    assert len(problems) == 51
    assert problems[0].startswith("line 2: body: malformed JSON")
    assert problems[-1] == "... and 30 more problems"
    assert stored(engine) == 0


def test_one_bad_line_is_one_problem(engine: Engine, tmp_path: Path) -> None:
    """The count is singular for one problem."""
    path = tmp_path / "n.jsonl"
    path.write_text(json.dumps(TRANSACTION) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"nothing was imported, 1 problem:\n"):
        notification_import.import_notifications(engine, path)
    assert stored(engine) == 0


ENTRY_POINTS: list[Callable[..., Any]] = [
    payout_import.import_payouts_csv,
    payout_import.import_payouts_sql,
    notification_import.import_notifications,
]


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda f: f.__name__)
def test_every_import_entry_point_takes_recons_engine_first(entry: Callable[..., Any]) -> None:
    """One shape: ``import_x(engine, input, *, options)``; none opens recon's database itself."""
    parameters = list(inspect.signature(entry, eval_str=True).parameters.values())
    assert parameters[0].name == "engine"
    assert parameters[0].annotation is Engine
    assert all(p.kind is p.KEYWORD_ONLY for p in parameters if p.default is not p.empty)


def test_the_notification_module_has_no_second_entry_point() -> None:
    """`import_notifications_file(database_url, ...)` is gone: the CLI builds the engine."""
    assert not hasattr(notification_import, "import_notifications_file")


@pytest.mark.parametrize(("copies", "line"), [(2, "1 new, 1 duplicate\n"), (3, "2 duplicates")])
def test_the_cli_counts_duplicates_in_the_singular_and_plural(
    db_url: str, engine: Engine, tmp_path: Path, copies: int, line: str
) -> None:
    """`1 duplicate`, `2 duplicates`."""
    path = tmp_path / "n.jsonl"
    path.write_text((json.dumps(TRANSACTION) + "\n") * copies, encoding="utf-8")
    result = CliRunner().invoke(
        main, ["import", "notifications", str(path)], env={"RECON_DATABASE_URL": db_url}
    )
    assert result.exit_code == 0, result.output
    assert line in result.output
