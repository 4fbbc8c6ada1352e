"""`recon import payouts FILE.csv` against SQLite, PostgreSQL and MariaDB: all rows or none."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import Engine, select

from recon.errors import InputError
from recon.ingest.payouts import import_payouts_csv
from recon.store.payouts import UpsertCounts
from recon.store.tables import payouts

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
HEADER = "transaction_id,merchant_reference,amount,currency,bank_account_id,created,eta\n"
GOOD = (
    HEADER
    + "tx-1,ref-1,100.10,EUR,ba-1,2025-03-01T13:00:00+01:00,1740834000\n"
    + "TX-1,ref-2,0.10,eur,,1740830400.5,\n"
    + "tx-3,ref-3,1500,JPY,ba-3,,\n"
    + "tx-4,ref-4,12.345,KWD,,,\n"
)


def write(tmp_path: Path, text: str, name: str = "payouts.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def table(engine: Engine) -> dict[str, Any]:
    with engine.connect() as conn:
        return {row.transaction_id: row for row in conn.execute(select(payouts))}


def problems_of(engine: Engine, path: Path, **kwargs: Any) -> list[str]:
    with pytest.raises(InputError) as caught:
        import_payouts_csv(engine, path, **kwargs)
    return caught.value.problems


def test_a_good_file_is_imported(engine: Engine, tmp_path: Path) -> None:
    """Every row is stored with exact minor units, UTC timestamps and case-sensitive ids."""
    result = import_payouts_csv(engine, write(tmp_path, GOOD), now=T0)
    assert (result.rows, result.counts) == (4, UpsertCounts(inserted=4))
    assert "4 rows, 4 inserted, 0 updated, 0 unchanged" in result.summary()
    rows = table(engine)
    assert {tid: (r.amount_minor, r.currency) for tid, r in rows.items()} == {
        "tx-1": (10010, "EUR"),
        "TX-1": (10, "EUR"),
        "tx-3": (1500, "JPY"),
        "tx-4": (12345, "KWD"),
    }
    assert rows["tx-1"].created == T0
    assert rows["tx-1"].eta == T0 + timedelta(hours=1)
    assert rows["TX-1"].created == T0 + timedelta(milliseconds=500)
    assert rows["TX-1"].bank_account_id is None
    assert rows["tx-1"].outcome is None  # never reconciled


def test_importing_the_same_file_twice_changes_nothing(engine: Engine, tmp_path: Path) -> None:
    """The second import counts every row unchanged and does not even touch imported_at."""
    path = write(tmp_path, GOOD)
    import_payouts_csv(engine, path, now=T0)
    before = table(engine)
    again = import_payouts_csv(engine, path, now=T0 + timedelta(days=1))
    assert again.counts == UpsertCounts(unchanged=4)
    assert table(engine) == before


def test_a_changed_file_updates_only_the_changed_rows(engine: Engine, tmp_path: Path) -> None:
    """Re-importing with one amount changed and one row added updates one and inserts one."""
    import_payouts_csv(engine, write(tmp_path, GOOD), now=T0)
    changed = GOOD.replace("tx-3,ref-3,1500,JPY", "tx-3,ref-3,1600,JPY") + "tx-5,ref-5,1,EUR,,,\n"
    result = import_payouts_csv(engine, write(tmp_path, changed, "v2.csv"), now=T0)
    assert result.counts == UpsertCounts(inserted=1, updated=1, unchanged=3)
    assert table(engine)["tx-3"].amount_minor == 1600


def test_columns_may_come_in_any_order_and_extra_ones_are_named(
    engine: Engine, tmp_path: Path
) -> None:
    """Header order does not matter; columns recon does not use are ignored and reported."""
    text = "Currency,note,amount,transaction_id,merchant_reference\nEUR,hi,5.00,a,r\n"
    result = import_payouts_csv(engine, write(tmp_path, text))
    assert result.ignored_columns == ("note",)
    assert table(engine)["a"].amount_minor == 500


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (",,1.00,EUR,,,\n", "line 3: merchant_reference is missing"),
        ("b,ref,1.0.0,EUR,,,\n", "line 3: amount '1.0.0' is not a plain decimal number"),
        ("b,ref,-1.00,EUR,,,\n", "line 3: amount -1.00 is not positive"),
        ("b,ref,1.001,EUR,,,\n", "line 3: amount 1.001 has more than 2 decimals for EUR"),
        ("b,ref,1.5,JPY,,,\n", "line 3: amount 1.5 has more than 0 decimals for JPY"),
        ("b,ref,1.00,EU,,,\n", "line 3: malformed currency code 'EU'"),
        ("b,ref,1.00,XYZ,,,\n", "line 3: unknown currency code 'XYZ' (not an ISO 4217"),
        (
            "b,ref,100000000000000.010000000000000001,EUR,,,\n",
            "line 3: amount 100000000000000.010000000000000001 has more than 2 decimals for EUR",
        ),
        ("b,ref,1.00,EUR,,31/12/2024,\n", "line 3: created: not an ISO 8601 time"),
        ("b,ref,1.00,EUR,,,soon\n", "line 3: eta: not an ISO 8601 time"),
        ("a,ref-a,2.00,EUR,,,\n", "line 3: transaction_id 'a' is also on line 2 with another"),
        ("b,ref,1.00,EUR\n", "line 3: has 4 fields, the header has 7"),
    ],
)
def test_a_bad_row_is_reported_with_its_line_and_nothing_is_written(
    engine: Engine, tmp_path: Path, body: str, expected: str
) -> None:
    """Each kind of problem names its line, and the good row before it is not imported either."""
    text = HEADER + "a,ref-a,1.00,EUR,,,\n" + body
    found = problems_of(engine, write(tmp_path, text))
    assert any(p.strip().startswith(expected) for p in found), found
    assert table(engine) == {}


def test_an_identical_duplicate_is_accepted_once(engine: Engine, tmp_path: Path) -> None:
    """The same id with the same data twice in a file is one payout, not an error."""
    text = HEADER + "a,r,1.00,EUR,,,\nb,r,2,EUR,,,\na,r,1.0,eur,,,\n"
    result = import_payouts_csv(engine, write(tmp_path, text))
    assert result.rows == 3
    assert result.counts == UpsertCounts(inserted=2)
    assert result.merged == 1


def test_one_payout_recorded_twice_is_merged_into_its_first_row(
    engine: Engine, tmp_path: Path
) -> None:
    """Two rows of one id that differ only in the retry's created (and eta) are one payout: the
    first row's, counted merged, across batches too; the other rows are imported."""
    text = (
        HEADER
        + "tx-9,INV-9,100.00,SEK,ba-9,2025-03-01T12:00:00Z,\n"
        + "tx-8,INV-8,5.00,SEK,,,\n"
        + "tx-9,INV-9,100.0,sek,ba-9,2025-03-01T12:10:00Z,2025-03-02T00:00:00Z\n"
    )
    result = import_payouts_csv(engine, write(tmp_path, text), batch_rows=2)
    assert (result.rows, result.counts, result.merged) == (3, UpsertCounts(inserted=2), 1)
    assert "3 rows, 2 inserted, 0 updated, 0 unchanged, 1 merged in" in result.summary()
    stored = table(engine)["tx-9"]
    assert (stored.created, stored.eta) == (T0, None)


def test_rows_of_one_id_for_another_account_refuse_the_file_naming_both_lines(
    engine: Engine, tmp_path: Path
) -> None:
    """Same id, another bank account: not one payout; nothing is written."""
    text = HEADER + "tx-9,INV-9,100.00,SEK,ba-9,,\ntx-9,INV-9,100.00,SEK,ba-X,,\n"
    found = problems_of(engine, write(tmp_path, text))
    assert found == [
        "line 3: transaction_id 'tx-9' is also on line 2 with another amount, currency, "
        "merchant_reference or bank_account_id"
    ]
    assert table(engine) == {}


def test_a_bad_row_in_a_later_batch_rolls_back_the_batches_already_written(
    engine: Engine, tmp_path: Path
) -> None:
    """All or nothing across batches: the old data stays when the last batch has a problem."""
    import_payouts_csv(engine, write(tmp_path, HEADER + "p1,old,9.99,EUR,,,\n", "old.csv"))
    lines = [f"p{i},new,{i}.00,EUR,,," for i in range(1, 11)]
    lines.append("p1,new,7.00,EUR,,,")  # line 12: conflicts with line 2, in the fourth batch
    found = problems_of(engine, write(tmp_path, HEADER + "\n".join(lines) + "\n"), batch_rows=3)
    assert found == [
        "line 12: transaction_id 'p1' is also on line 2 with another amount, currency, "
        "merchant_reference or bank_account_id"
    ]
    assert {tid: (r.merchant_reference, r.amount_minor) for tid, r in table(engine).items()} == {
        "p1": ("old", 999)
    }


def test_line_numbers_are_physical_lines_of_the_file(engine: Engine, tmp_path: Path) -> None:
    """A quoted field spanning two lines shifts the line numbers of the rows after it."""
    text = HEADER + 'a,"two\nlines",1.00,EUR,,,\n\nb,r,oops,EUR,,,\n'
    assert problems_of(engine, write(tmp_path, text)) == [
        "line 5: amount 'oops' is not a plain decimal number (e.g. 100.10)"
    ]


def test_the_list_of_problems_is_capped(engine: Engine, tmp_path: Path) -> None:
    """Every problem is counted, but only the first fifty are listed."""
    text = HEADER + "".join(f"id{i},r,x,EUR,,,\n" for i in range(80))
    found = problems_of(engine, write(tmp_path, text))
    assert len(found) == 51
    assert found[0] == "line 2: amount 'x' is not a plain decimal number (e.g. 100.10)"
    assert found[-1] == "... and 30 more problems"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "the file is empty"),
        ("transaction_id,amount,currency\n", "missing required column(s) merchant_reference"),
        (
            "transaction_id,merchant_reference,amount,currency,amount\n",
            "column 'amount' appears twice",
        ),
        ('transaction_id,merchant_reference,amount,currency\n"a,r,1,EUR\n', "malformed CSV"),
        (
            'transaction_id,merchant_reference,amount,currency\n"a,r,1,EUR\nb,r,1,EUR\n',
            "lines 2-3: malformed CSV",
        ),
    ],
)
def test_a_file_without_a_usable_header_or_structure_is_refused(
    engine: Engine, tmp_path: Path, text: str, expected: str
) -> None:
    """Empty files, missing or repeated columns and broken quoting are refused with a reason."""
    with pytest.raises(InputError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        import_payouts_csv(engine, write(tmp_path, text))
    assert table(engine) == {}


def test_messages_count_in_the_singular_and_plural(engine: Engine, tmp_path: Path) -> None:
    """One problem is "1 problem", one more hidden is "1 more problem", one row is "1 row"."""
    with pytest.raises(InputError, match=r"nothing was imported, 1 problem:\n"):
        import_payouts_csv(engine, write(tmp_path, HEADER + "a,r,x,EUR,,,\n"))
    text = HEADER + "".join(f"id{i},r,x,EUR,,,\n" for i in range(51))
    with pytest.raises(InputError, match=r"51 problems:") as caught:
        import_payouts_csv(engine, write(tmp_path, text))
    assert caught.value.problems[-1] == "... and 1 more problem"
    result = import_payouts_csv(engine, write(tmp_path, HEADER + "a,r,1,EUR,,,\n"))
    assert "from " + str(tmp_path / "payouts.csv") + ": 1 row, 1 inserted," in result.summary()


@pytest.mark.parametrize(
    ("separator", "name"), [(";", "semicolon (;)"), ("\t", "tab"), ("|", "vertical bar (|)")]
)
def test_a_file_with_another_separator_gets_a_hint(
    engine: Engine, tmp_path: Path, separator: str, name: str
) -> None:
    """A `;`-separated export (Excel in much of Europe) fails with a hint naming its separator."""
    header = separator.join(["transaction_id", "merchant_reference", "amount", "currency"])
    text = header + "\n" + separator.join(["a", "r", "1,00", "EUR"]) + "\n"
    with pytest.raises(InputError) as caught:
        import_payouts_csv(engine, write(tmp_path, text))
    message = str(caught.value)
    assert "missing required column(s)" in message
    assert f"the file seems to be separated by {name}" in message
    assert "comma-separated" in message


def test_a_missing_column_in_a_comma_separated_file_gets_no_separator_hint(
    engine: Engine, tmp_path: Path
) -> None:
    """The hint appears only when another separator is likely, not for a merely missing column."""
    with pytest.raises(InputError) as caught:
        import_payouts_csv(engine, write(tmp_path, "transaction_id,amount,currency\n"))
    assert "separated by" not in str(caught.value)


def test_naive_times_are_read_in_the_zone_given(engine: Engine, tmp_path: Path) -> None:
    """`created`/`eta` without an offset are wall-clock times in the zone (RECON_TIMEZONE)."""
    text = HEADER + "a,r,1.00,EUR,,2025-03-01T14:00:00,2025-03-01T15:00:00+02:00\n"
    import_payouts_csv(engine, write(tmp_path, text), zone=ZoneInfo("Europe/Helsinki"))
    row = table(engine)["a"]
    assert row.created == T0
    assert row.eta == T0 + timedelta(hours=1)


def test_a_file_that_is_not_utf8_is_refused(engine: Engine, tmp_path: Path) -> None:
    """Bytes that are not UTF-8 are an input error, not a crash."""
    path = tmp_path / "latin1.csv"
    path.write_bytes((HEADER + "a,caf\xe9,1.00,EUR,,,\n").encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        import_payouts_csv(engine, path)
