"""What people read: amounts with their currency, provider states and types by name, findings
with their label.

Amounts come from integer minor units with the currency's digits and thousands separated:
``211477`` DKK reads ``2,114.77 DKK``, never "211477 minor units".
States and types read as the provider's names in lower case (``settled``, ``returned funds``); a
value the interface does not document keeps its number in brackets (``an undocumented state
(9)``), never "state 9".
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pandas as pd

from recon.constants import TxState, TxType
from recon.money import from_minor
from recon.provider.states import read_state

_STATE_NAMES = {int(s): s.name.lower() for s in TxState}
_TYPE_NAMES = {
    int(TxType.PAYMENT): "payment",
    int(TxType.PAYOUT): "payout",
    int(TxType.RETURNED_FUNDS): "returned funds",
    int(TxType.REFUND): "refund",
}
DASH = " — "


def local_time(moment: datetime, zone: ZoneInfo, *, seconds: bool = False) -> str:
    """A moment as people read it, in their zone and naming it: ``2026-11-20 06:00 CET``
    (``06:00:00``: with ``seconds``)."""
    return moment.astimezone(zone).strftime(f"%Y-%m-%d %H:%M{':%S' if seconds else ''} %Z")


def counted(count: int, noun: str) -> str:
    """``1 row``, ``2 rows``: a count with its noun in the singular or the plural."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def money(minor: object, currency: object) -> str:
    """One amount: ``2,114.77 DKK`` (the currency's digits, thousands separated); ``no amount``
    when either part is missing."""
    if _missing(minor) or _missing(currency):
        return "no amount"
    code = str(currency).upper()
    return f"{from_minor(int(str(minor)), code):,} {code}"


def money_text(minor: pd.Series, currency: pd.Series) -> pd.Series:
    """A column of amounts, ``50.00 DKK`` per row (``<NA>`` where the amount is missing).

    For details, which name few rows: one :func:`money` per row keeps one formatter.
    """
    text = [
        None if _missing(value) else money(value, code)
        for value, code in zip(minor.astype(object), currency.astype(object), strict=True)
    ]
    return pd.Series(text, index=minor.index, dtype="string")


def state_name(value: object) -> str:
    """A transaction state by its name (``settled``); ``an undocumented state (9)`` otherwise."""
    if _missing(value):
        return "no state"
    try:
        # The one reader of a state: numbers, numeric text, names with or without STATE_.
        return _STATE_NAMES[
            read_state(value if isinstance(value, str) else int(str(value)), TxState)
        ]
    except (KeyError, ValueError):
        return f"an undocumented state ({value})"


def state_names(values: pd.Series) -> pd.Series:
    """A column of states by name (``<NA>`` stays ``<NA>``)."""
    text = values.astype("string")
    names = {v: state_name(v) for v in text.dropna().unique()}
    return text.map(names).astype("string")


def type_name(value: object) -> str:
    """A transaction type by name (``payment``, ``returned funds``)."""
    if _missing(value):
        return "no type"
    try:
        return _TYPE_NAMES[int(str(value))]
    except (KeyError, ValueError):
        return f"an undocumented type ({value})"


def type_names(values: pd.Series) -> pd.Series:
    """A column of types by name."""
    text = values.astype("string")
    names = {v: type_name(v) for v in text.dropna().unique()}
    return text.map(names).astype("string")


def flag_label(name: object) -> str:
    """A finding's short label (``Paid after a failure``); the name itself if it has none."""
    from recon.reconcile.kinds import label  # the registry brings pandas: only when labelling

    return label(name)


def flag_words(name: object) -> str:
    """A finding as people read it: its label (``Paid after a failure``); the code name stays in
    the CSV files."""
    return flag_label(name)


def _missing(value: object) -> bool:
    """None, NA or NaN (a scalar read from a frame or a row)."""
    return value is None or bool(pd.isna(value) is True)  # type: ignore[call-overload]
