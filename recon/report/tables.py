"""The columns of the report's files, defined once: the CSVs write them as text, the workbook as
cells.

Each function returns a :data:`Table`: column name to values, in the file's column order (a
contract). Values stay typed so each writer encodes them its own way:

=================  ==========================================  =====================================
value              CSV (:mod:`recon.report.csvpack`)           XLSX (:mod:`recon.report.workbook`)
=================  ==========================================  =====================================
:class:`Amounts`   exact text with the currency's digits       a number, formatted with those digits
:class:`Times`     ISO 8601 local time with its offset         an Excel date-time in local time
:class:`Dates`     ISO 8601 date (``2026-11-20``)              an Excel date
bool ``Series``    ``true`` / ``false``                        TRUE / FALSE
other ``Series``   text (neutralised unless in ``NUMERIC``)    the same text, or a number
=================  ==========================================  =====================================
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from recon.reconcile.pricing import DEFAULT_ACCOUNT
from recon.report.actions import payout_actions
from recon.report.balance import balance_frame
from recon.report.fees import fee_rows
from recon.report.journal import journal_lines
from recon.report.model import ACCOUNT, ReportInput
from recon.report.views import payout_summary
from recon.words import DASH, flag_label


@dataclass(frozen=True)
class Amounts:
    """Integer minor units (``Int64``, ``NA`` for none) and each row's currency code."""

    minor: pd.Series
    currency: pd.Series


@dataclass(frozen=True)
class Times:
    """Aware timestamps (``NaT`` for none), shown in ``timezone``."""

    values: pd.Series
    timezone: str


@dataclass(frozen=True)
class Dates:
    """Calendar days (``datetime.date``, ``None`` for none): a ledger's posting and event dates."""

    values: pd.Series


Column = pd.Series | Amounts | Times | Dates
Table = dict[str, Column]

PAYOUTS_COLUMNS = [
    "transaction_id",
    "provider_account",
    "merchant_reference",
    "amount",
    "currency",
    "outcome",
    "state",
    "error_code",
    "returned_amount",
    "exceptions",
    "candidate_duplicates",
    "created",
    "eta",
    "previous_outcome",
    "action",
]
SUMMARY_COLUMNS = ["currency", "outcome", "count", "amount", "returned_amount", "net"]
EXCEPTIONS_COLUMNS = [
    "exception_id",
    "provider_account",
    "transaction_id",
    "exception",
    "status",
    "amount",
    "currency",
    "merchant_reference",
    "error_code",
    "action",
    "item_kind",
    "detail",
    # the case: who owns it, since when, the earlier resolution of a reopened one, and an empty
    # `resolution` to fill in and send back through `recon exceptions apply`
    "owner",
    "note",
    "until",
    "first_seen",
    "previous_resolution",
    "resolution",
    # One problem, one finding: its payouts (";" between them) and the money at stake.
    "members",
    "amount_at_stake",
]
ROLLFORWARD_COLUMNS = ["currency", "provider_account", "outcome", "line", "count", "amount"]
FEES_COLUMNS = [
    "provider_account",
    "transaction_id",
    "merchant_reference",
    "currency",
    "amount",
    "outcome",
    "fee_id",
    "fee_charged",
    "fee_expected",
    "fee_difference",
    "fee_entry",
    "created",
]
# journal.csv and `recon journal export --format csv`: a line of a journal entry per row.
JOURNAL_COLUMNS = [
    "journal_id",
    "line",
    "posting_date",
    "event_date",
    "account",
    "debit",
    "credit",
    "currency",
    "provider_account",
    "event",
    "transaction_id",
    "merchant_reference",
    "reverses",
    "late",
    "batch",
]
RETURNS_COLUMNS = [
    "return_transaction_id",
    "provider_account",
    "original_transaction_id",
    "amount",
    "currency",
    "matched",
    "confirmed",
    "notified",
]

# Columns that hold numbers (or booleans): never prefixed, so spreadsheets read them as numbers.
# balance.csv: a line of a balance statement per row, the statement's status on each.
BALANCE_COLUMNS = [
    "provider_account",
    "currency",
    "period_start",
    "period_end",
    "line",
    "count",
    "amount",
    "status",
]
NUMERIC = frozenset(
    {"amount", "returned_amount", "net", "state", "count", "matched", "confirmed", "notified"}
    | {"fee_charged", "fee_expected", "fee_difference"}
    | {"debit", "credit", "late", "batch"}
)

# Columns of provider ids (and ;-lists of them): an id of letters, digits, "_ . -" is left bare
# there (see recon.textsafe.neutralise).
IDS = frozenset(
    {
        "exception_id",
        "provider_account",
        "transaction_id",
        "return_transaction_id",
        "original_transaction_id",
        "candidate_duplicates",
        "members",
        "fee_id",
        "journal_id",
        "reverses",
    }
)


def payout_columns(p: pd.DataFrame, timezone: str) -> Table:
    """payouts.csv's columns for the payouts frame ``p`` (or a block of its rows)."""
    return {
        "transaction_id": p["transaction_id"],
        "provider_account": account_of(p),
        "merchant_reference": p["merchant_reference"],
        "amount": Amounts(p["amount_minor"], p["currency"]),
        "currency": p["currency"],
        "outcome": p["outcome"],
        "state": p["state"].astype("Int64"),
        "error_code": p["error_code"],
        "returned_amount": Amounts(p["returned_minor"], p["currency"]),
        "exceptions": p["exceptions"],
        "candidate_duplicates": p["candidate_duplicates"],
        "created": Times(p["created"], timezone),
        "eta": Times(p["eta"], timezone),
        "previous_outcome": p["prev_outcome"],
        "action": payout_actions(p),
    }


def account_of(p: pd.DataFrame) -> pd.Series:
    """The rows' provider account: their column, or the default account's where a frame read from
    a store that keeps one account has none (the export's parts)."""
    if ACCOUNT in p.columns:
        return p[ACCOUNT]
    return pd.Series(DEFAULT_ACCOUNT, index=p.index, dtype="string")


def summary_columns(data: ReportInput) -> Table:
    """summary.csv's columns: count and amount per currency and outcome present; for settled and
    returned payouts also the confirmed returns on them and the net (none for other outcomes)."""
    s = payout_summary(data)
    return {
        "currency": s["currency"],
        "outcome": s["outcome"],
        "count": s["count"],
        "amount": Amounts(s["amount_minor"].astype("Int64"), s["currency"]),
        "returned_amount": Amounts(s["returned_minor"], s["currency"]),
        "net": Amounts(s["net_minor"], s["currency"]),
    }


def exception_columns(e: pd.DataFrame, timezone: str) -> Table:
    """exceptions.csv's columns for ``e``, rows of :func:`recon.report.views.exceptions_table`."""
    return {
        "exception_id": e["exception_id"],
        "provider_account": e[ACCOUNT],
        "transaction_id": e["item_id"],
        "exception": e["flag"],
        "status": e["status"],
        "amount": Amounts(e["amount_minor"], e["currency"]),
        "currency": e["currency"],
        "merchant_reference": e["merchant_reference"],
        "error_code": e["error_code"],
        # The finding's label first (the `exception` column keeps its name: a contract).
        "action": _labelled(e["flag"], e["action"]),
        "item_kind": e["item_kind"],
        "detail": e["detail"],
        "owner": e["owner"],
        "note": e["note"],
        "until": Times(e["until"], timezone),
        "first_seen": Times(e["opened_at"], timezone),
        "previous_resolution": e["previous_resolution"],
        "resolution": pd.Series("", index=e.index, dtype=object),
        "members": e["members"],
        "amount_at_stake": Amounts(e["at_stake_minor"], e["currency"]),
    }


def _labelled(flags: pd.Series, actions: pd.Series) -> pd.Series:
    """``Paid after a failure — Reported failed, then paid out…``: label, then what to do."""
    labels = flags.astype(object).map({f: flag_label(f) + DASH for f in pd.unique(flags)})
    text = labels.astype(object).fillna("").astype(str) + actions.astype(object).fillna("").astype(
        str
    )
    return text.str.removesuffix(DASH).astype(object)


def return_columns(data: ReportInput) -> Table:
    """returns.csv's columns: each returned-funds transaction, its original payout, how far it is
    proven."""
    r = data.returns
    return {
        "return_transaction_id": r["return_id"],
        "provider_account": r[ACCOUNT],
        "original_transaction_id": r["original_id"],
        "amount": Amounts(r["amount_minor"], r["currency"]),
        "currency": r["currency"],
        "matched": r["matched"].astype(bool),
        "confirmed": r["confirmed"].astype(bool),
        "notified": r["notified"].astype(bool),
    }


def rollforward_columns(data: ReportInput) -> Table:
    """rollforward.csv's columns: one line per row, amounts with the currency's digits (none for
    the findings, which are counted)."""
    r = data.rollforward
    return {
        "currency": r["currency"],
        "provider_account": r[ACCOUNT],
        "outcome": r["outcome"],
        "line": r["line"],
        "count": r["count"].astype("Int64"),
        "amount": Amounts(r["amount_minor"].astype("Int64"), r["currency"]),
    }


def fee_columns(data: ReportInput) -> Table:
    """fees.csv's columns: each payout with a fee charged or agreed, the fees and the entry."""
    f = fee_rows(data)
    return {
        "provider_account": f["provider_account"],
        "transaction_id": f["transaction_id"],
        "merchant_reference": f["merchant_reference"],
        "currency": f["currency"],
        "amount": Amounts(f["amount_minor"], f["currency"]),
        "outcome": f["outcome"],
        "fee_id": f["fee_id"],
        "fee_charged": Amounts(f["fee_minor"], f["currency"]),
        "fee_expected": Amounts(f["fee_expected_minor"], f["currency"]),
        "fee_difference": Amounts(f["difference_minor"], f["currency"]),
        "fee_entry": f["fee_entry"],
        "created": Times(f["created"], data.timezone),
    }


def journal_columns(data: ReportInput) -> Table:
    """journal.csv's columns: each line the nights' entries made, by account, entry and line
    (``batch``: empty until an export sends it, and in a run's report as the run left it)."""
    return journal_line_columns(journal_lines(data))


def journal_line_columns(j: pd.DataFrame) -> Table:
    """The columns of a journal frame's lines (:func:`recon.report.journal.journal_frame`), in
    its order: how a line becomes a row of journal.csv and of ``recon journal export``'s csv.
    A line's debit or credit is 0 on the side it does not book; ``batch`` empty for none."""
    return {
        "journal_id": j["journal_id"],
        "line": j["line"].astype("Int64"),
        "posting_date": Dates(j["posting_date"]),
        "event_date": Dates(j["event_date"]),
        "account": j["account"],
        "debit": Amounts(j["debit_minor"], j["currency"]),
        "credit": Amounts(j["credit_minor"], j["currency"]),
        "currency": j["currency"],
        "provider_account": j[ACCOUNT],
        "event": j["event"],
        "transaction_id": j["transaction_id"],
        "merchant_reference": j["merchant_reference"],
        "reverses": j["reverses"],
        "late": j["late"].astype(bool),
        "batch": j["batch"],
    }


def balance_columns(data: ReportInput) -> Table:
    """balance.csv's columns: each line of each balance statement, in the statements' order
    (account, currency, period); ``amount`` exact in the currency's digits."""
    b = data.balance if data.balance is not None else balance_frame(())
    return {
        "provider_account": b[ACCOUNT],
        "currency": b["currency"],
        "period_start": Dates(b["period_start"]),
        "period_end": Dates(b["period_end"]),
        "line": b["line"],
        "count": b["count"].astype("Int64"),
        "amount": Amounts(b["amount_minor"].astype("Int64"), b["currency"]),
        "status": b["status"],
    }
