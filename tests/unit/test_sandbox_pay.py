"""Reading the file of ``recon sandbox pay``: the import's columns, every problem by line."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from recon.errors import InputError
from recon.sandbox.pay import default_out, read_pay_file, render_csv


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "payouts.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_file_in_the_import_columns_is_read_without_transaction_ids(tmp_path: Path) -> None:
    """transaction_id is optional; amounts stay exact; the country follows the currency."""
    path = _file(
        tmp_path,
        "merchant_reference,amount,currency,customer_id\n"
        "order-1,12.01,eur,c1\n"
        "order-2,100.10,SEK,c1\n"
        "order-3,1000,JPY,\n",
    )
    rows = read_pay_file(path)
    assert [(r.merchant_reference, r.amount, r.currency) for r in rows] == [
        ("order-1", Decimal("12.01"), "EUR"),
        ("order-2", Decimal("100.10"), "SEK"),
        ("order-3", Decimal("1000"), "JPY"),
    ]
    assert [r.country_id for r in rows] == ["DE", "SE", "DE"]
    assert rows[0].account_key == rows[1].account_key == "customer:c1"
    assert rows[2].account_key == "line:4"


def test_every_bad_row_is_named_by_its_line(tmp_path: Path) -> None:
    """Bad amounts, currencies, countries, repeated references and short rows, all at once."""
    path = _file(
        tmp_path,
        "transaction_id,merchant_reference,amount,currency,country_id\n"
        "t1,ok-1,10.00,EUR,FI\n"
        "t2,bad-amount,ten,EUR,\n"
        "t3,bad-decimals,10.001,EUR,\n"
        "t4,,10.00,EUR,\n"
        "t5,ok-1,10.00,EUR,\n"
        "t6,bad-country,10.00,EUR,Finland\n"
        "t7,short\n",
    )
    with pytest.raises(InputError) as caught:
        read_pay_file(path)
    text = str(caught.value)
    assert "nothing was created, 6 problems:" in text
    for line in (3, 4, 5, 6, 7, 8):
        assert f"line {line}:" in text
    assert "line 2:" not in text
    assert "repeats line 2" in text


def test_a_file_without_the_required_columns_is_refused(tmp_path: Path) -> None:
    """Missing merchant_reference/amount/currency is named, as the import names it."""
    path = _file(tmp_path, "transaction_id;amount;currency\nt1;1.00;EUR\n")
    with pytest.raises(InputError, match="missing required column"):
        read_pay_file(path)


def test_a_semicolon_separated_file_gets_the_import_s_separator_hint(tmp_path: Path) -> None:
    """Excel's `;` export is refused with the hint `recon import payouts` gives for it."""
    path = _file(tmp_path, "merchant_reference;amount;currency\nr1;1,00;EUR\n")
    with pytest.raises(InputError, match="missing required column") as caught:
        read_pay_file(path)
    assert "the file seems to be separated by semicolon (;)" in str(caught.value)


def test_a_column_that_appears_twice_is_refused_as_the_import_refuses_it(tmp_path: Path) -> None:
    """Two `amount` columns are ambiguous: refused, not read as the last one."""
    path = _file(tmp_path, "merchant_reference,amount,currency,amount\nr1,1.00,EUR,2.00\n")
    with pytest.raises(InputError, match="column 'amount' appears twice"):
        read_pay_file(path)


def test_an_unclosed_quote_names_the_lines_of_its_record(tmp_path: Path) -> None:
    """A quoted field left open runs to the end: the message names where the record starts."""
    text = 'merchant_reference,amount,currency\nr1,1.00,EUR\n"r2,2.00,EUR\nr3,3.00,EUR\n'
    path = _file(tmp_path, text)
    with pytest.raises(InputError, match="lines 3-4: malformed CSV"):
        read_pay_file(path)


def test_more_than_fifty_problems_are_counted_and_the_rest_summed_up(tmp_path: Path) -> None:
    """Every problem is counted, the first fifty listed, the others summed up as the import does."""
    text = "merchant_reference,amount,currency\n" + "".join(f"r{i},x,EUR\n" for i in range(52))
    with pytest.raises(InputError, match="nothing was created, 52 problems:") as caught:
        read_pay_file(_file(tmp_path, text))
    assert len(caught.value.problems) == 51
    assert caught.value.problems[-1] == "... and 2 more problems"


def test_a_header_alone_is_refused(tmp_path: Path) -> None:
    """A file with no payouts creates nothing and says so."""
    with pytest.raises(InputError, match="no payouts"):
        read_pay_file(_file(tmp_path, "merchant_reference,amount,currency\n"))


def test_the_output_is_written_in_the_import_columns() -> None:
    """The written CSV's header is exactly the columns recon import payouts reads."""
    header = render_csv([]).decode().splitlines()[0]
    assert header == (
        "transaction_id,merchant_reference,amount,currency,bank_account_id,customer_id,"
        "country_id,created,eta"
    )
    assert default_out(Path("/x/payouts.csv")) == Path("/x/payouts.sandbox.csv")
