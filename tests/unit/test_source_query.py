"""The source query check: one SELECT, read with the quoting rules of the database it goes to."""

from __future__ import annotations

import pytest

from recon.errors import InputError
from recon.store.source_query import check_single_select


@pytest.mark.parametrize(
    ("query", "sent"),
    [
        ("SELECT * FROM payouts;\n", "SELECT * FROM payouts"),
        ("with p as (select 1 as x) select x from p", "with p as (select 1 as x) select x from p"),
        ("select ';' as semi; -- trailing comment\n", "select ';' as semi"),
        ("/* nightly */ select 'it''s' as x", "/* nightly */ select 'it''s' as x"),
        ("(select 1)", "(select 1)"),
        ("select '/*!50000 drop*/' as text", "select '/*!50000 drop*/' as text"),
        ("select $q$a;b$q$ as text", "select $q$a;b$q$ as text"),
    ],
)
def test_a_single_select_is_accepted(query: str, sent: str) -> None:
    """One SELECT or WITH statement passes, without its trailing semicolons and comments."""
    assert check_single_select(query, "postgresql") == sent


@pytest.mark.parametrize(
    "query",
    [
        "DELETE FROM payouts",
        "select 1; drop table payouts",
        "update payouts set amount = 0",
        "",
        "-- only a comment",
        "select 'unterminated",
        "with d as (delete from payouts returning *) select * from d",
        "select * into copy from payouts",
        "/*!CREATE OR REPLACE TABLE victim AS*/ select 1",
        "select 1 /*M!100100 , 2 */",
    ],
)
@pytest.mark.parametrize("backend", ["postgresql", "mysql", "sqlite"])
def test_anything_but_one_select_is_refused(query: str, backend: str) -> None:
    """Writes, several statements, INTO, executable comments, empty or broken SQL are refused."""
    with pytest.raises(InputError):
        check_single_select(query, backend)


def test_a_backslash_does_not_escape_a_quote_on_postgresql() -> None:
    """'\\' is a whole string on PostgreSQL, so the DROP after it is a second statement."""
    query = "select '\\' as a; drop table payouts; -- '"
    with pytest.raises(InputError, match="single statement"):
        check_single_select(query, "postgresql")


def test_a_backslash_escapes_a_quote_on_mysql_unless_the_session_says_otherwise() -> None:
    """MySQL's default reads 'a\\'b' as one string; NO_BACKSLASH_ESCAPES makes INTO code."""
    assert check_single_select("select 'a\\'b' as x", "mysql") == "select 'a\\'b' as x"
    hidden = "select '\\' as a into outfile 'x' -- '"
    with pytest.raises(InputError, match="INTO"):
        check_single_select(hidden, "mysql", "STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES")


def test_a_double_quote_names_a_column_under_ansi_quotes() -> None:
    """With ANSI_QUOTES "a\\" is a name, so what follows it is code and is checked as code."""
    query = 'select "a\\" ; drop table payouts -- "'
    with pytest.raises(InputError, match="single statement"):
        check_single_select(query, "mysql", "ANSI_QUOTES")
