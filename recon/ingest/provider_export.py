"""Reading the provider's transaction export file through the ``[export]`` mapping.

:func:`read_export` turns a file's bytes into an :class:`ExportFile`: its headers, which of them
the mapping matched and which are left over, the rows it could read (:class:`ExportRow`) and the
problems of those it could not (:class:`RowProblem`: line, field, reason). Nothing is stored.

A file shaped unlike the mapping is refused whole (``InputError``): bytes that are not in the
mapping's encoding, broken quoting, no header, or a required column (``transaction_id``, ``type``,
``state``, ``amount``, ``currency``) whose header is missing, named with the headers expected and
found. A row that cannot be read is a problem of that row, for the caller to judge: the importer
refuses the file listing them (:meth:`ExportFile.refuse_unreadable`), ``recon provider-export
check`` lists them.

Amounts are exact: the text, with the mapping's decimal separator, to integer minor units of the
row's currency (:func:`recon.money.to_minor`), never through a float. States are read as the
provider's answers are (:func:`recon.provider.states.read_state`). Times are epoch seconds or the
mapping's strftime format; a time without an offset is a wall-clock time in ``time_zone``.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, tzinfo
from types import MappingProxyType

from recon.constants import MAX_ID_LENGTH, TxState
from recon.errors import InputError
from recon.export_rows import MONEY_OUT, ExportKind, ExportRow
from recon.export_settings import EPOCH, REQUIRED_COLUMNS, ExportMapping
from recon.money import format_minor, minor_digits, normalise_currency, parse_decimal, to_minor
from recon.provider.states import read_state
from recon.timeparse import epoch_seconds, in_zone

_SHOWN = 40  # characters of a cell a reason quotes at most
# An amount of at most 15 whole digits: far below the BIGINT columns' 19, so it never overflows.
_PLAIN_AMOUNT = re.compile(r"([+-]?)([0-9]{1,15})(?:\.([0-9]*))?")
_NO_EXTRA: Mapping[str, str] = MappingProxyType({})
# Problems listed in an error at most; the rest are counted.
SHOWN_PROBLEMS = 20


@dataclass(frozen=True, slots=True)
class RowProblem:
    """A row that cannot be read: its line (the header is line 1), the field, why."""

    line: int
    field: str
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.field}: {self.reason}"


@dataclass(frozen=True, slots=True)
class ExportFile:
    """What the mapping makes of one export file.

    ``headers``: the header row as written. ``matched``: recon's name -> the header it read.
    ``leftover``: the headers the mapping does not name (kept with each row as ``extra``).
    ``rows``: the rows read, in file order; ``problems``: the rows that could not be.
    """

    source: str
    headers: tuple[str, ...]
    matched: Mapping[str, str]
    leftover: tuple[str, ...]
    rows: tuple[ExportRow, ...]
    problems: tuple[RowProblem, ...]

    def refuse_unreadable(self) -> None:
        """``InputError`` listing the rows that cannot be read, when there are any: a file is
        taken whole or not at all."""
        if not self.problems:
            return
        shown = [str(problem) for problem in self.problems[:SHOWN_PROBLEMS]]
        if len(self.problems) > SHOWN_PROBLEMS:
            shown.append(f"... and {len(self.problems) - SHOWN_PROBLEMS} more")
        raise InputError(
            f"{self.source}: {len(self.problems)} row(s) of the export cannot be read "
            "(nothing was stored; `recon provider-export check` lists them all)",
            shown,
        )


def read_export(data: bytes, mapping: ExportMapping, *, source: str) -> ExportFile:
    """Read an export file's bytes through ``mapping`` (``source`` names it in messages).

    ``InputError`` when the file is shaped unlike the mapping; unreadable rows are
    :attr:`ExportFile.problems`.
    """
    text = _decoded(data, mapping.encoding, source)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=mapping.delimiter, strict=True)
    try:
        header = next(reader, None)
        if header is None or not any(cell.strip() for cell in header):
            raise InputError(f"{source}: the export is empty: no header row")
        headers = tuple(_unique(header))
        matched, positions = _matched(header, headers, mapping, source)
        taken = set(positions.values())
        extra_at = [(i, name) for i, name in enumerate(headers) if i not in taken]
        rows, problems = _rows(reader, len(headers), positions, extra_at, mapping)
    except csv.Error as exc:
        raise InputError(f"{source}: line {reader.line_num}: not a CSV file: {exc}") from None
    leftover = tuple(name for _, name in extra_at)
    return ExportFile(
        source=source,
        headers=headers,
        matched=MappingProxyType(matched),
        leftover=leftover,
        rows=tuple(rows),
        problems=tuple(problems),
    )


def _decoded(data: bytes, encoding: str, source: str) -> str:
    codec = "utf-8-sig" if encoding.replace("_", "-").lower() in ("utf-8", "utf8") else encoding
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{source}: line {line}: not {encoding} (byte {exc.start}): set [export] encoding"
        ) from None
    return text.removeprefix("\ufeff")


def _unique(header: list[str]) -> Iterator[str]:
    """The header's names, a repeated one numbered (``Note``, ``Note #2``) so none is lost."""
    seen: dict[str, int] = {}
    for name in header:
        count = seen[name] = seen.get(name, 0) + 1
        yield name if count == 1 else f"{name} #{count}"


def _key(header: str) -> str:
    return header.strip().casefold()


def _matched(
    header: list[str], headers: tuple[str, ...], mapping: ExportMapping, source: str
) -> tuple[dict[str, str], dict[str, int]]:
    """Recon's name -> the header found for it, and -> its position; ``InputError`` naming the
    headers expected and found when a required one is missing or a mapped one appears twice."""
    where: dict[str, list[int]] = {}
    for i, name in enumerate(header):
        where.setdefault(_key(name), []).append(i)
    matched: dict[str, str] = {}
    positions: dict[str, int] = {}
    missing: list[str] = []
    twice: list[str] = []
    for name, expected in mapping.columns.named().items():
        found = where.get(_key(expected), [])
        if len(found) > 1:
            twice.append(expected)
        elif found:
            matched[name], positions[name] = headers[found[0]], found[0]
        elif name in REQUIRED_COLUMNS:
            missing.append(f"{name} = {expected!r}")
    if missing or twice:
        wanted = ", ".join(f"{n} = {h!r}" for n, h in mapping.columns.named().items())
        what = f"no column for {', '.join(missing)}" if missing else ""
        if twice:
            what += ("; " if what else "") + f"headers found twice: {', '.join(twice)}"
        raise InputError(
            f"{source}: an export shaped unlike the mapping: {what}",
            [
                f"expected (the [export.columns] mapping): {wanted}",
                f"found (delimiter {mapping.delimiter!r}): "
                + ", ".join(repr(name) for name in headers),
            ],
        )
    return matched, positions


class _Unreadable(Exception):  # a row's problem: caught in _rows, never raised out
    def __init__(self, field: str, reason: str) -> None:
        self.field, self.reason = field, reason


def _storable(field: str, text: str, limit: int | None = MAX_ID_LENGTH) -> str:
    """``text`` as the store can hold it: no NUL (no database column takes one), at most
    ``limit`` characters (an id's column)."""
    if "\x00" in text:
        raise _Unreadable(field, "contains a NUL character")
    if limit is not None and len(text) > limit:
        raise _Unreadable(field, f"longer than {limit} characters")
    return text


def _rows(
    reader: Iterator[list[str]],
    width: int,
    at: Mapping[str, int],
    extra_at: list[tuple[int, str]],
    mapping: ExportMapping,
) -> tuple[list[ExportRow], list[RowProblem]]:
    cells = _Cells(mapping)
    rows: list[ExportRow] = []
    problems: list[RowProblem] = []
    previous = reader.line_num  # type: ignore[attr-defined]  # csv reader: the last line read
    for record in reader:
        line = previous + 1  # a record is named by its first physical line
        previous = reader.line_num  # type: ignore[attr-defined]
        if not any(cell.strip() for cell in record):
            continue  # a blank line, or one of delimiters only (a spreadsheet's last rows)
        if len(record) != width:
            problems.append(
                RowProblem(line, "row", f"{len(record)} fields where the header has {width}")
            )
            continue
        try:
            rows.append(cells.row(line, record, at, extra_at))
        except _Unreadable as bad:
            problems.append(RowProblem(line, bad.field, bad.reason))
    return rows, problems


class _Cells:
    """Reads the cells of one row; what repeats (currencies, states, types) is read once."""

    def __init__(self, mapping: ExportMapping) -> None:
        self.comma = mapping.decimal_separator == ","
        self.times = mapping.times
        self.zone: tzinfo = mapping.zone
        self.kinds = mapping.types.kinds()
        # Money out written with a minus: read with its sign turned (recon's sense: positive).
        self.turned = MONEY_OUT if mapping.money_out == "negative" else frozenset()
        self.currencies: dict[str, str] = {}
        self.digits: dict[str, int] = {}
        self.states: dict[str, int | None] = {}

    def row(
        self,
        line: int,
        record: list[str],
        at: Mapping[str, int],
        extra_at: list[tuple[int, str]],
    ) -> ExportRow:
        transaction_id = _storable("transaction_id", record[at["transaction_id"]].strip())
        if not transaction_id:
            raise _Unreadable("transaction_id", "empty")
        type_raw = _storable("type", record[at["type"]].strip(), limit=None)
        state_raw = _storable("state", record[at["state"]].strip(), limit=None)
        currency = self.currency(record[at["currency"]])
        amount = self.amount("amount", record[at["amount"]], currency, required=True)
        assert amount is not None
        kind = self.kinds.get(type_raw, ExportKind.OTHER)
        fee = (
            self.amount("fee_amount", record[at["fee_amount"]], currency, required=False)
            if "fee_amount" in at
            else None
        )
        if kind in self.turned:
            amount, fee = -amount, None if fee is None else -fee
        return ExportRow(
            line=line,
            transaction_id=transaction_id,
            kind=kind,
            type_raw=type_raw,
            state=self.state(state_raw),
            state_raw=state_raw,
            amount_minor=amount,
            currency=currency,
            merchant_reference=self.text(record, at, "merchant_reference", limit=None),
            settled=self.time(record, at, "settled"),
            created=self.time(record, at, "created"),
            fee_amount_minor=fee,
            fee_id=self.text(record, at, "fee_id"),
            related_transaction_id=self.text(record, at, "related_transaction_id"),
            extra={name: record[i] for i, name in extra_at} if extra_at else _NO_EXTRA,
        )

    @staticmethod
    def text(
        record: list[str], at: Mapping[str, int], name: str, limit: int | None = MAX_ID_LENGTH
    ) -> str | None:
        """The cell of column ``name`` (None: not mapped, or empty), refused where the store
        could not hold it: a NUL anywhere, longer than ``limit`` for an id."""
        i = at.get(name)
        if i is None:
            return None
        return _storable(name, record[i].strip(), limit) or None

    def currency(self, cell: str) -> str:
        code = self.currencies.get(cell)
        if code is None:
            if not cell.strip():
                raise _Unreadable("currency", "empty")
            try:
                code = normalise_currency(cell)
            except ValueError as exc:
                raise _Unreadable("currency", str(exc)) from None
            self.currencies[cell] = code
        return code

    def amount(self, field: str, cell: str, currency: str, *, required: bool) -> int | None:
        text = cell.strip()
        if not text:
            if required:
                raise _Unreadable(field, "empty")
            return None
        if self.comma:
            if "." in text:
                raise _Unreadable(field, self.not_an_amount(cell))
            text = text.replace(",", ".")
        plain = _PLAIN_AMOUNT.fullmatch(text)
        if plain is not None:  # the usual cell, in integers: the same value to_minor gives
            sign, whole, fraction = plain.groups()
            fraction = (fraction or "").rstrip("0")
            digits = self.digits.get(currency)
            if digits is None:
                digits = self.digits[currency] = minor_digits(currency)
            if len(fraction) <= digits:
                minor: int = int(whole) * 10**digits + int(fraction.ljust(digits, "0") or 0)
                return -minor if sign == "-" else minor
        try:
            amount = parse_decimal(text)
        except ValueError:
            raise _Unreadable(field, self.not_an_amount(cell)) from None
        try:
            return to_minor(amount, currency)
        except ValueError as exc:
            raise _Unreadable(field, f"{exc} (written {_shown(cell)})") from None

    def not_an_amount(self, cell: str) -> str:
        separator = "," if self.comma else "."
        return (
            f"not an amount: {_shown(cell)} (digits, {separator!r} before the decimals, "
            "no thousands separators)"
        )

    def state(self, text: str) -> int | None:
        if text in self.states:
            return self.states[text]
        state: int | None = None
        if text:
            try:
                state = read_state(text, TxState)
            except ValueError as exc:
                raise _Unreadable("state", str(exc)) from None
        self.states[text] = state
        return state

    def time(self, record: list[str], at: Mapping[str, int], name: str) -> datetime | None:
        i = at.get(name)
        if i is None:
            return None
        text = record[i].strip()
        if not text:
            return None
        try:
            return epoch_seconds(text) if self.times == EPOCH else self.formatted(text)
        except (ValueError, OverflowError) as exc:
            raise _Unreadable(name, str(exc)) from None

    def formatted(self, text: str) -> datetime:
        try:
            parsed = datetime.strptime(text, self.times)  # noqa: DTZ007 - the zone is set below
        except ValueError:
            raise ValueError(f"not a time in the format {self.times!r}: {_shown(text)}") from None
        return in_zone(parsed, self.zone, text)


def _shown(text: str) -> str:
    return repr(text) if len(text) <= _SHOWN else repr(text[:_SHOWN]) + "…"


def check_lines(export: ExportFile, *, first: int = 5) -> list[str]:
    """What ``recon provider-export check`` prints of ``export``: the headers matched and left
    over, count and sum per type and currency, the rows that cannot be read, the first rows."""
    lines = ["headers matched (recon name = the file's header):"]
    lines += [f"  {name} = {header!r}" for name, header in export.matched.items()]
    left = ", ".join(repr(header) for header in export.leftover)
    lines.append(f"headers left over (kept with each row): {left or 'none'}")
    totals: dict[tuple[str, ExportKind, str], list[int]] = {}
    for row in export.rows:
        total = totals.setdefault((row.type_raw, row.kind, row.currency), [0, 0])
        total[0] += 1
        total[1] += row.amount_minor
    lines.append(f"rows read: {len(export.rows)}, per type and currency:")
    for (type_raw, kind, currency), (count, minor) in sorted(totals.items()):
        lines.append(
            f"  type {type_raw!r} ({kind}) {currency}: {count} row(s), "
            f"sum {format_minor(minor, currency)} {currency}"
        )
    outward = sorted(
        {
            str(kind)
            for (_, kind, _), (_, minor) in totals.items()
            if kind in MONEY_OUT and minor < 0
        }
    )
    if outward:
        lines.append(
            f"  note: money out ({', '.join(outward)}) sums below zero as read: recon counts "
            'money out as positive; check [export] money_out ("negative" for a file that '
            "writes money leaving the balance with a minus)"
        )
    lines.append(f"rows it cannot read: {len(export.problems) or 'none'}")
    lines += [f"  {problem}" for problem in export.problems]
    if export.rows:
        lines.append(f"first rows as read ({min(first, len(export.rows))}):")
        lines += [f"  {_row_text(row)}" for row in export.rows[:first]]
    return lines


def _row_text(row: ExportRow) -> str:
    state = "none" if row.state is None else str(row.state)
    if row.state is not None and row.state in _STATE_NAMES:
        state += f" {_STATE_NAMES[row.state]}"
    parts = [
        f"line {row.line}: {row.transaction_id}",
        f"{row.kind} ({row.type_raw!r})",
        f"state {state}",
        f"{format_minor(row.amount_minor, row.currency)} {row.currency}",
    ]
    if row.fee_amount_minor is not None:
        parts.append(f"fee {format_minor(row.fee_amount_minor, row.currency)} {row.currency}")
    for name in ("settled", "created"):
        value = getattr(row, name)
        if value is not None:
            parts.append(f"{name} {value.isoformat().replace('+00:00', 'Z')}")
    for name in ("merchant_reference", "fee_id", "related_transaction_id"):
        value = getattr(row, name)
        if value is not None:
            parts.append(f"{name} {value}")
    if row.extra:
        parts.append("extra " + ", ".join(f"{k}={v!r}" for k, v in row.extra.items()))
    return ", ".join(parts)


_STATE_NAMES = {int(state): state.name for state in TxState}
