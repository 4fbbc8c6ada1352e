"""The check of a merchant's source query: one ``SELECT`` (or ``WITH ... SELECT``), nothing else.

The query text comes from the merchant's file and is sent to the merchant's database, so it is read
with sqlglot's tokenizer for the database it goes to (docs/decisions.md says why sqlglot): strings,
quoted names and comments end where that server ends them. On PostgreSQL ``'\\'`` is a whole string
(``standard_conforming_strings``); on MySQL/MariaDB a backslash escapes a quote unless the session's
``sql_mode`` has ``NO_BACKSLASH_ESCAPES``, and ``"`` quotes a name under ``ANSI_QUOTES``; the
caller passes the session's ``sql_mode`` so the tokenizer agrees with the server.

Refused, before anything is sent:

- more than one statement (a ``;`` token anywhere but at the end);
- a first keyword other than ``SELECT`` or ``WITH`` (after opening parentheses);
- ``INSERT``, ``UPDATE``, ``DELETE`` or ``MERGE`` anywhere outside strings and comments (PostgreSQL
  allows them inside ``WITH``);
- ``INTO`` anywhere outside strings and comments: ``SELECT ... INTO OUTFILE`` writes a file on the
  MySQL server and ``SELECT ... INTO t`` creates a table on PostgreSQL; a query that returns rows to
  recon never needs it;
- an executable comment, ``/*! ... */`` or ``/*M! ... */``: MySQL and MariaDB run its text as code
  (``/*!CREATE OR REPLACE TABLE victim AS*/ SELECT ...`` is a ``CREATE``), so no tokenizer that
  reads it as a comment can vouch for the statement; it is refused on every database.

This check is the friendly refusal; the guarantee is the read-only session and transaction of
``recon.store.source`` (a ``WITH`` may hold a data-modifying statement on PostgreSQL, a function may
write), and beneath it the read-only database role docs/operations.md asks for.
"""

from __future__ import annotations

import re
import types
from functools import cache

from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.tokenizer_core import Token, TokenType
from sqlglot.tokens import Tokenizer

from recon.errors import InputError

# recon's backend names (SQLAlchemy's) to sqlglot's dialects.
_DIALECT = {"postgresql": "postgres", "mysql": "mysql", "mariadb": "mysql", "sqlite": "sqlite"}
_WRITES = frozenset({TokenType.INSERT, TokenType.UPDATE, TokenType.DELETE, TokenType.MERGE})
_EXECUTABLE_COMMENT = re.compile(r"/\*M?!", re.IGNORECASE)


def check_single_select(sql: str, backend: str, sql_mode: str = "") -> str:
    """The statement without trailing semicolons and comments, or ``InputError`` unless it is
    exactly one ``SELECT``/``WITH`` statement for the ``backend`` (``postgresql``, ``mysql``,
    ``sqlite``; ``sql_mode`` is a MySQL session's ``@@sql_mode``)."""
    tokens = _tokens(sql, backend, sql_mode)
    _refuse_executable_comments(sql, tokens)
    while tokens and tokens[-1].token_type is TokenType.SEMICOLON:
        tokens.pop()
    if not tokens:
        raise InputError("the query file is empty")
    if any(token.token_type is TokenType.SEMICOLON for token in tokens):
        raise InputError("the query must be a single statement (found a ';' between statements)")
    first = next((t for t in tokens if t.token_type is not TokenType.L_PAREN), tokens[0])
    if first.token_type not in (TokenType.SELECT, TokenType.WITH):
        raise InputError("the query must be a single SELECT (or WITH ... SELECT) statement")
    if any(token.token_type in _WRITES for token in tokens):
        raise InputError(
            "the query must only read: INSERT, UPDATE, DELETE and MERGE are refused, even in WITH"
        )
    if any(token.token_type is TokenType.INTO for token in tokens):
        raise InputError("the query must return rows, not write them: SELECT ... INTO is refused")
    return sql[: tokens[-1].end + 1].strip()


def _tokens(sql: str, backend: str, sql_mode: str) -> list[Token]:
    try:
        return list(_tokenizer(backend, _quoting_modes(backend, sql_mode))().tokenize(sql))
    except SqlglotError as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"the query cannot be read as SQL: {reason}") from None


def _quoting_modes(backend: str, sql_mode: str) -> frozenset[str]:
    if _DIALECT.get(backend) != "mysql":
        return frozenset()
    modes = {mode.strip().upper() for mode in sql_mode.split(",")}
    return frozenset(modes & {"NO_BACKSLASH_ESCAPES", "ANSI_QUOTES"})


@cache
def _tokenizer(backend: str, modes: frozenset[str]) -> type[Tokenizer]:
    base: type[Tokenizer] = Dialect.get_or_raise(_DIALECT.get(backend, "postgres")).tokenizer_class
    if not modes:
        return base
    changes: dict[str, object] = {}
    if "NO_BACKSLASH_ESCAPES" in modes:
        changes["STRING_ESCAPES"] = [e for e in base.STRING_ESCAPES if e != "\\"]
    if "ANSI_QUOTES" in modes:
        changes["QUOTES"] = [q for q in base.QUOTES if q != '"']
        changes["IDENTIFIERS"] = [*base.IDENTIFIERS, '"']
    # A subclass, so sqlglot's metaclass rebuilds its tables from the changed attributes.
    return types.new_class(
        f"MySQLTokenizer_{'_'.join(sorted(modes))}", (base,), {}, lambda ns: ns.update(changes)
    )


def _refuse_executable_comments(sql: str, tokens: list[Token]) -> None:
    # Between two tokens there is only whitespace and comments: look there, in the text itself,
    # since the tokenizer hands comments back without their delimiters.
    start = 0
    for token in [*tokens, None]:
        end = len(sql) if token is None else token.start
        if _EXECUTABLE_COMMENT.search(sql, start, end):
            raise InputError(
                "the query has an executable comment (/*! ... */ or /*M! ... */), which MySQL "
                "and MariaDB run as code: remove it"
            )
        if token is not None:
            start = token.end + 1
