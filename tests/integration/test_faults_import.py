"""Hostile payout files: the importer refuses them with a clear error naming the line and writes
nothing, or imports them exactly; no other exception ever escapes."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, delete, func, select

from recon.errors import InputError
from recon.ingest.payouts import import_payouts_csv
from recon.store.db import ensure_schema, make_engine
from recon.store.tables import payouts

HEADER = "transaction_id,merchant_reference,amount,currency\n"
GOOD = ["t-1,ref-1,10.10,EUR", "t-2,ref-2,1500,JPY", "t-3,ref-3,0.01,SEK"]
cells = st.text(max_size=12) | st.sampled_from(["", "1e5", "NaN", "-0", "1.001", "eur", '"', "\r"])
hostile_rows = st.lists(cells, min_size=0, max_size=6).map(",".join)


@pytest.fixture(scope="module")
def store() -> Iterator[tuple[Engine, Path]]:
    """One SQLite store (emptied after each example) and a directory for the files."""
    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{Path(tmp) / 'import.db'}")
        ensure_schema(engine)
        yield engine, Path(tmp)
        engine.dispose()


def stored(engine: Engine) -> dict[str, tuple[str, int, str]]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                payouts.c.transaction_id,
                payouts.c.merchant_reference,
                payouts.c.amount_minor,
                payouts.c.currency,
            )
        )
        return {r[0]: (r[1], r[2], r[3]) for r in rows}


def attempt(engine: Engine, path: Path, content: bytes) -> InputError | None:
    """Import ``content``; the InputError if refused (any other exception fails the test)."""
    path.write_bytes(content)
    try:
        import_payouts_csv(engine, path)
    except InputError as exc:
        return exc
    return None


def empty(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(delete(payouts))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300) | st.text(max_size=300).map(lambda t: (HEADER + t).encode()))
def test_random_bytes_are_refused_cleanly_or_imported(
    store: tuple[Engine, Path], content: bytes
) -> None:
    """Random files either import or raise InputError, and a refused one writes nothing."""
    engine, tmp = store
    empty(engine)
    error = attempt(engine, tmp / "random.csv", content)
    if error is not None:
        assert str(error).strip()
        assert stored(engine) == {}
    empty(engine)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_rows, st.integers(min_value=0, max_value=len(GOOD)))
def test_one_hostile_row_among_good_ones_names_its_line_or_all_rows_are_imported(
    store: tuple[Engine, Path], row: str, position: int
) -> None:
    """A bad row anywhere rejects the whole file naming its line; otherwise every row is stored."""
    engine, tmp = store
    empty(engine)
    lines = [*GOOD[:position], row, *GOOD[position:]]
    error = attempt(engine, tmp / "rows.csv", (HEADER + "\n".join(lines) + "\n").encode())
    if error is not None:
        assert stored(engine) == {}
        assert "line" in str(error) or "header" in str(error) or "column" in str(error), error
    else:
        found = stored(engine)
        assert {"t-1", "t-2", "t-3"} <= found.keys()
        assert found["t-1"] == ("ref-1", 1010, "EUR")
        assert found["t-2"] == ("ref-2", 1500, "JPY")
        with engine.connect() as conn:
            assert conn.scalar(select(func.count()).select_from(payouts)) == len(found)
    empty(engine)
