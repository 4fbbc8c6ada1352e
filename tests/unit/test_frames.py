"""Frame declarations: each column once per frame, an output holding its input's columns as they
were declared, and the store's reads and the classifier's entry typed by the same declarations."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import pytest

import recon.run_frames
from recon import frames as fr
from recon.conform import conform
from recon.errors import InputError
from recon.frames import Column, Frame
from recon.report.model import Totals
from recon.store.typed_read import typed_frame


def _all_frames() -> list[type[Frame]]:
    found: list[type[Frame]] = []
    todo = list(Frame.__subclasses__())
    while todo:
        frame = todo.pop()
        found.append(frame)
        todo.extend(frame.__subclasses__())
    return found


def test_every_frame_names_each_column_once() -> None:
    """Every declared frame, the report's too; each attribute holds the column it names."""
    frames = _all_frames()
    assert Totals in frames
    for frame in frames:
        names = frame.names()
        assert len(names) == len(set(names)), frame.__name__
        for column in frame:
            assert getattr(frame, column.upper()) is column, (frame.__name__, column)


@pytest.mark.parametrize(
    ("extended", "extension"),
    [
        (fr.PayoutsIn, fr.PayoutsOut),
        (fr.PayoutsOut, fr.PayoutsDecided),
        (fr.ReturnsIn, fr.ReturnsJudged),
        (fr.Finding, fr.Findings),
        (fr.Finding, fr.Compared),
    ],
)
def test_an_output_frame_starts_with_its_inputs_columns_as_declared(
    extended: type[Frame], extension: type[Frame]
) -> None:
    """The same column objects, so the same dtypes, first and in order."""
    ours = list(extension)[: len(extended)]
    assert ours == list(extended)
    assert all(a is b for a, b in zip(ours, extended, strict=True))


@pytest.mark.parametrize(
    ("shown", "source"),
    [
        (fr.ReturnsOut, fr.ReturnsJudged),
        (recon.run_frames.Recorded, fr.PayoutsIn),
        (recon.run_frames.CaseReport, recon.run_frames.Cases),
    ],
)
def test_a_frame_showing_anothers_columns_shares_their_declaration(
    shown: type[Frame], source: type[Frame]
) -> None:
    """Every column both frames name is one object."""
    declared = {str(c): c for c in source}
    shared = [c for c in shown if c in declared]
    assert shared
    assert all(column is declared[column] for column in shared)


def test_a_frame_declaring_a_column_twice_is_refused() -> None:
    """Redeclaring an inherited column, or naming an attribute after another column, fails."""
    with pytest.raises(TypeError, match="twice"):

        class Twice(fr.PayoutsIn):
            TRANSACTION_ID = Column("transaction_id", fr.TEXT)

    with pytest.raises(TypeError, match="declares column"):

        class Misnamed(Frame):
            ID = Column("transaction_id", fr.TEXT)


def test_a_column_is_a_frozen_string() -> None:
    """It equals its name, gives a plain str, and its dtype cannot be changed."""
    column = fr.PayoutsIn.TRANSACTION_ID
    assert column == "transaction_id"
    assert type(str(column)) is str
    with pytest.raises(AttributeError):
        column.dtype = fr.INT


def test_conform_fills_optional_columns_and_refuses_a_missing_required_one() -> None:
    """Optionality comes from the declaration; the result has its columns and dtypes."""
    frame = pd.DataFrame({"return_id": ["r1"], "claimed_original_id": [None], "notified": [True]})
    with pytest.raises(InputError, match="obs_status"):
        conform(frame, fr.ReturnsIn, name="returns")
    required = {str(c): [None] for c in fr.ReturnsIn if not c.optional}
    whole = pd.DataFrame(required | {"return_id": ["r1"], "notified": [True]})
    out = conform(whole, fr.ReturnsIn, name="returns")
    assert list(out.columns) == fr.ReturnsIn.names()
    assert dict(out.dtypes) == fr.ReturnsIn.dtypes()


def test_the_stores_typed_read_follows_the_declaration() -> None:
    """Text, money and times as declared; codes as categoricals, or as text when asked."""
    at = datetime(2024, 3, 1, 12, tzinfo=UTC)
    part: dict[str, Sequence[Any]] = {
        "transaction_id": ["a", "b"],
        "previous_outcome": ["pending", None],
        "outcome": ["settled", "failed"],
        "amount_minor": [100, None],
        "currency": ["EUR", "EUR"],
    }
    frame = typed_frame([part, part], recon.run_frames.OutcomeChanges)
    assert list(frame.columns) == recon.run_frames.OutcomeChanges.names()
    assert frame["transaction_id"].dtype == fr.TEXT
    assert frame["amount_minor"].dtype == fr.MONEY
    assert isinstance(frame["currency"].dtype, pd.CategoricalDtype)
    as_text = typed_frame([part], recon.run_frames.OutcomeChanges, codes=False)
    assert as_text["currency"].dtype == fr.TEXT
    notified: dict[str, Sequence[Any]] = {"return_id": ["r"], "last_notified_at": [at]}
    times = typed_frame([notified], recon.run_frames.Notified)
    assert times["last_notified_at"].dtype == fr.TIME
