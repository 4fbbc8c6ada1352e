"""The frame contract of the nightly classification: each column declared once, with its dtype.

A :class:`Column` is its name (a ``str``, usable wherever pandas takes a label) with a dtype, a
flag saying whether an input may leave it out, and a line saying what it means. A :class:`Frame`
declares its columns as class attributes, in order; a frame that extends another subclasses it,
as pandera's ``class OutputSchema(InputSchema)`` does, and a frame that shows a few columns of
another names those columns again (the same objects, so the two cannot drift).

The shell builds three frames for :func:`recon.reconcile.classify.classify` and gets three back.
:func:`recon.conform.conform` holds an input to its declaration: *optional* columns may be left
out (filled with ``<NA>``), extras pass through at the end. Text is ``string``
(``pd.StringDtype()``, missing = ``<NA>``), whole numbers ``Int64``, money integer minor units in
``Int64`` (never float), times ``datetime64[us, UTC]`` (missing = ``NaT``), flags ``bool`` (never
missing). Outcome, item kind and status are categoricals of the enums of :mod:`recon.constants`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from enum import StrEnum
from typing import Any, ClassVar, NoReturn

import pandas as pd

from recon.constants import FlagStatus, Outcome


class ItemKind(StrEnum):
    """What an exception is about."""

    PAYOUT = "payout"
    RETURN = "return"
    NOTIFICATION = "notification"  # a stored claim recon could not read in full
    PROVIDER = "provider"  # an id the provider named that the record lacks (provider_items)
    ATTEMPT = "attempt"  # a recorded create without a transaction id (creation_attempts)
    ROLLFORWARD = "rollforward"  # a line of the roll-forward ("EUR/settled/now")


TEXT = pd.StringDtype()
INT = pd.Int64Dtype()
MONEY = pd.Int64Dtype()
TIME = pd.DatetimeTZDtype(unit="us", tz="UTC")
BOOL = "bool"
# Text kept as the driver or the parser gives it (str or None), where NA-aware comparisons of
# ``string`` would change the filters that use it.
AS_READ = "object"
# Text with a handful of distinct values (currencies, outcomes, flags), kept as categorical codes
# with the categories found: one small code per row instead of one Python string each.
CODES = pd.CategoricalDtype()
OUTCOME = pd.CategoricalDtype([o.value for o in Outcome])
FACTS = "object"  # one mapping per row (recon.reconcile.finding)
ITEM_KIND = pd.CategoricalDtype([k.value for k in ItemKind])
FLAG_STATUS = pd.CategoricalDtype([s.value for s in FlagStatus])


class Column(str):
    """One column of a frame: its name (the string itself), dtype, whether an input may leave it
    out (``optional``) and what it means (``doc``). Frozen."""

    dtype: Any
    optional: bool
    doc: str

    def __new__(cls, name: str, dtype: Any, *, optional: bool = False, doc: str = "") -> Column:
        column = super().__new__(cls, name)
        object.__setattr__(column, "dtype", dtype)
        object.__setattr__(column, "optional", optional)
        object.__setattr__(column, "doc", doc)
        return column

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"column {str(self)!r} is frozen")

    def __reduce__(self) -> tuple[type[str], tuple[str]]:
        # Pickled (a frame's labels, a worker's arguments) as its plain name.
        return str, (str(self),)

    def __repr__(self) -> str:
        return f"Column({str(self)!r}, {self.dtype!r})"


class _FrameType(type):
    """Collects a :class:`Frame`'s columns, its bases' first, and lets the class be iterated."""

    _columns: tuple[Column, ...]

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> _FrameType:
        cls = super().__new__(mcs, name, bases, namespace)
        inherited = [c for base in bases for c in getattr(base, "_columns", ())]
        own = [(attr, v) for attr, v in namespace.items() if isinstance(v, Column)]
        for attr, column in own:
            if attr != column.upper():
                raise TypeError(f"{name}.{attr} declares column {str(column)!r}")
        columns = [*inherited, *(column for _, column in own)]
        names = [str(c) for c in columns]
        if len(set(names)) != len(names):
            raise TypeError(f"{name} declares a column twice: {names}")
        cls._columns = tuple(columns)
        return cls

    def __iter__(cls) -> Iterator[Column]:
        return iter(cls._columns)

    def __len__(cls) -> int:
        return len(cls._columns)


class Frame(metaclass=_FrameType):
    """A frame's declaration: its columns as class attributes, in order (see the module's first
    paragraph). The class itself iterates over its :class:`Column` objects."""

    _columns: ClassVar[tuple[Column, ...]]

    @classmethod
    def names(cls) -> list[str]:
        """The column names, in order, as plain strings."""
        return [str(c) for c in cls._columns]

    @classmethod
    def dtypes(cls) -> dict[str, Any]:
        """Column name to dtype, in order (for ``DataFrame.astype``)."""
        return {str(c): c.dtype for c in cls._columns}


def empty(columns: Iterable[Column]) -> pd.DataFrame:
    """A frame with no rows and exactly the declared columns and dtypes."""
    return pd.DataFrame({str(c): pd.Series(dtype=c.dtype) for c in columns})


def columns(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """Plain-``str`` column names for ``DataFrame.assign(**...)`` (columns are ``str`` too)."""
    return {str(name): value for name, value in mapping.items()}


class PayoutsIn(Frame):
    """Input ``payouts``: one row per payout in the store, with what the previous run decided."""

    TRANSACTION_ID = Column(
        "transaction_id", TEXT, doc="the provider's payout id (unique, case-sensitive)"
    )
    MERCHANT_REFERENCE = Column("merchant_reference", TEXT, doc="our reference")
    AMOUNT_MINOR = Column("amount_minor", MONEY, doc="local amount in minor units")
    CURRENCY = Column("currency", TEXT, doc="local currency, upper case")
    BANK_ACCOUNT_ID = Column(
        "bank_account_id", TEXT, doc="recipient bank account (<NA> if unknown)"
    )
    CUSTOMER_ID = Column("customer_id", TEXT, doc="customer (<NA> if unknown)")
    CREATED = Column("created", TIME, doc="when the payout was created (NaT if unknown)")
    ETA = Column("eta", TIME, doc="the provider's estimated arrival (NaT if unknown)")
    PREV_OUTCOME = Column(
        "prev_outcome",
        OUTCOME,
        doc="outcome after the previous run (<NA>: never run; text is accepted, any other value "
        "is an InputError)",
    )
    PREV_STATE = Column("prev_state", INT, doc="state after the previous run")
    PREV_ERROR_CODE = Column("prev_error_code", TEXT, doc="error code after the previous run")
    PREV_OUTCOME_SINCE = Column("prev_outcome_since", TIME, doc="when prev_outcome was first seen")
    PREV_EXCEPTIONS = Column(
        "prev_exceptions", TEXT, optional=True, doc="the previous run's exceptions cell (a;b)"
    )
    PREV_RETURNED_MINOR = Column(
        "prev_returned_minor", MONEY, optional=True, doc="returned_minor after the previous run"
    )
    PREV_CANDIDATE_DUPLICATES = Column(
        "prev_candidate_duplicates",
        TEXT,
        optional=True,
        doc="candidate_duplicates after the previous run (it and the two above only tell what "
        "changed)",
    )
    PREV_NEXT_CHECK_AT = Column(
        "prev_next_check_at",
        TIME,
        optional=True,
        doc="when the watch schedule made it due (NaT: not set)",
    )
    CALLBACK_FAILED_STATE = Column(
        "callback_failed_state",
        INT,
        optional=True,
        doc="the state (2, 3) a stored transaction notification said: evidence of 'seen failed', "
        "never an outcome",
    )
    CALLBACK_FAILED_AT = Column(
        "callback_failed_at", TIME, optional=True, doc="when that notification said it"
    )
    EVER_FAILED = Column("ever_failed", BOOL, doc="an earlier run saw the payout failed or aborted")
    POLLED = Column("polled", BOOL, doc="this run tried to fetch it")
    SETTLED_SINCE = Column(
        "settled_since",
        TIME,
        optional=True,
        doc="when a run first saw it settled or returned (the start of its latest settled "
        "stretch); NaT: never, or not kept",
    )
    PREV_FEE_MINOR = Column(
        "prev_fee_minor",
        MONEY,
        optional=True,
        doc="the provider's fee as the latest answer said it (minor units of its currency)",
    )
    PREV_FEE_ID = Column("prev_fee_id", TEXT, optional=True, doc="that answer's fee_id")
    PREV_FEE_EXPECTED_MINOR = Column(
        "prev_fee_expected_minor",
        MONEY,
        optional=True,
        doc="the agreed fee as the previous run priced it",
    )
    PREV_FEE_ENTRY = Column(
        "prev_fee_entry", TEXT, optional=True, doc="the [[fees]] entry that priced it then"
    )
    PREV_SETTLED_AT = Column(
        "prev_settled_at",
        TIME,
        optional=True,
        doc="the provider's settled time as the latest answer said it (NaT: none said)",
    )


class PayoutsOut(PayoutsIn):
    """Output ``payouts``: the input's columns, then what the classification decided."""

    OUTCOME = Column("outcome", OUTCOME, doc="exactly one Outcome value")
    STATE = Column(
        "state", INT, doc="this run's state; the kept one if not fetched; <NA> if unknown"
    )
    ERROR_CODE = Column(
        "error_code", TEXT, doc="this run's error code; the kept one if not fetched"
    )
    RETURNED_MINOR = Column(
        "returned_minor",
        MONEY,
        doc="sum of confirmed returns' provider amounts (0 when none; <NA> if a confirmed "
        "return's amount does not fit its currency)",
    )
    EXCEPTIONS = Column("exceptions", TEXT, doc="sorted ';'-joined flags, '' when none")
    CANDIDATE_DUPLICATES = Column(
        "candidate_duplicates",
        TEXT,
        doc="for late_settlement: ';'-joined later payouts to the same bank account or customer "
        "with the same amount; '' otherwise",
    )
    OUTCOME_CHANGED = Column(
        "outcome_changed", BOOL, doc="outcome differs from prev_outcome (True when never run)"
    )
    OUTCOME_SINCE = Column("outcome_since", TIME, doc="prev_outcome_since if unchanged, else as_of")
    FEE_MINOR = Column(
        "fee_minor", MONEY, doc="the provider's fee: this run's answer's, else the kept one"
    )
    FEE_ID = Column("fee_id", TEXT, doc="its fee_id, as fee_minor")
    FEE_EXPECTED_MINOR = Column(
        "fee_expected_minor",
        MONEY,
        doc="the agreed fee (0 on a failed or aborted payout); <NA>: no entry prices it",
    )
    FEE_ENTRY = Column(
        "fee_entry",
        TEXT,
        doc="the [[fees]] entry that priced it (valid_from, currency, account); <NA>: none",
    )
    SETTLED_AT = Column(
        "settled_at",
        TIME,
        doc="the provider's settled time: this run's answer's, else the kept one",
    )


class PayoutsDecided(PayoutsOut):
    """The classified payouts with what the store must record (:mod:`recon.reconcile.record`
    says each rule)."""

    RECORD_CHANGED = Column(
        "record_changed", BOOL, doc="a reconciled column differs from the previous run's"
    )
    EVER_FAILED_NOW = Column(
        "ever_failed_now", BOOL, doc="failed or aborted in some run, this one included"
    )
    SETTLED_SINCE_NOW = Column("settled_since_now", TIME, doc="settled_since as this run leaves it")
    NEXT_CHECK_AT = Column("next_check_at", TIME, doc="when the watch schedule makes it due again")
    ANSWERED = Column("answered", BOOL, doc="this run has an answer about it")
    CREATED_FILLED = Column(
        "created_filled", BOOL, doc="the answer filled in the created the record lacked"
    )
    WRITE = Column("write", BOOL, doc="its row in the store is written")


class Observations(Frame):
    """Input ``observations``: at most one row per transaction id, the provider's answer in THIS
    run, for payouts and returned-funds transactions alike (the shell keeps the latest)."""

    TRANSACTION_ID = Column("transaction_id", TEXT, doc="the id asked for")
    STATUS = Column(
        "status",
        TEXT,
        doc="ok, not_found, session, wrong_id, refused or error (constants.ObsStatus)",
    )
    STATE = Column("state", INT, doc="normalised state number (ok only)")
    TYPE = Column("type", INT, doc="transaction type (ok only)")
    ERROR_CODE = Column("error_code", TEXT, doc="the provider's error code, if any")
    AMOUNT_MINOR = Column(
        "amount_minor",
        MONEY,
        doc="provider amount in minor units; <NA> if it does not fit the currency's digits "
        "(e.g. 10.005 EUR)",
    )
    AMOUNT_TEXT = Column(
        "amount_text", TEXT, optional=True, doc="the provider's exact amount text (for details)"
    )
    CURRENCY = Column("currency", TEXT, doc="as the provider sent it (compared case-insensitively)")
    RELATED_TRANSACTION_ID = Column(
        "related_transaction_id",
        TEXT,
        doc="the provider's related_transaction_id; for session the session's transaction, for "
        "wrong_id the id answered about",
    )
    ORIGINAL_TRANSACTION_ID = Column(
        "original_transaction_id", TEXT, doc="the provider's original_transaction_id"
    )
    MERCHANT_REFERENCE = Column(
        "merchant_reference", TEXT, optional=True, doc="the answer's merchant_reference (checked)"
    )
    TO_BANK_ACCOUNT_ID = Column(
        "to_bank_account_id", TEXT, optional=True, doc="the answer's to_bank_account_id (checked)"
    )
    CREATED = Column(
        "created", TIME, optional=True, doc="the answer's created (used if the record has none)"
    )
    ETA = Column("eta", TIME, optional=True, doc="the answer's eta (used if the record has none)")
    STATE_RAW = Column(
        "state_raw", TEXT, optional=True, doc="an undocumented state name as sent (state <NA>)"
    )
    FEE_AMOUNT_MINOR = Column(
        "fee_amount_minor",
        MONEY,
        optional=True,
        doc="the answer's fee in minor units of its currency",
    )
    FEE_ID = Column("fee_id", TEXT, optional=True, doc="the answer's fee_id")
    SETTLED = Column(
        "settled", TIME, optional=True, doc="the provider's settled time in the answer"
    )


class ReturnsIn(Frame):
    """Input ``returns``: one row per returned-funds transaction known from any side (rows
    repeating a return id, e.g. one per notification, are collapsed)."""

    RETURN_ID = Column("return_id", TEXT, doc="the returned-funds transaction id")
    CLAIMED_ORIGINAL_ID = Column(
        "claimed_original_id",
        TEXT,
        doc="a notification's original_transaction_id (<NA> if none)",
    )
    NOTIFIED = Column(
        "notified", BOOL, doc="at least one RETURNED_TRANSACTION notification is stored"
    )
    CLAIMED_AMOUNT = Column(
        "claimed_amount", TEXT, optional=True, doc="a notification's amount text (<NA> if none)"
    )
    OBS_STATUS = Column(
        "obs_status",
        TEXT,
        doc="best provider evidence: ok/not_found from this run, else the latest earlier ok (or "
        "not_found, for a return once confirmed); error if this run's fetch failed and no "
        "earlier answer exists; <NA> if never asked",
    )
    OBS_TYPE = Column("obs_type", INT, doc="type in that evidence")
    OBS_RELATED_TRANSACTION_ID = Column(
        "obs_related_transaction_id", TEXT, doc="related_transaction_id in that evidence"
    )
    OBS_ORIGINAL_TRANSACTION_ID = Column(
        "obs_original_transaction_id", TEXT, doc="original_transaction_id in that evidence"
    )
    OBS_AMOUNT_MINOR = Column(
        "obs_amount_minor", MONEY, doc="amount in minor units (<NA> if it does not fit)"
    )
    OBS_CURRENCY = Column("obs_currency", TEXT, doc="currency as the provider sent it")
    CONFIRMED_ORIGINAL_ID = Column(
        "confirmed_original_id",
        TEXT,
        optional=True,
        doc="the payout an earlier run confirmed this return for (the stored original_id of a "
        "confirmed row); keeps a confirmation across runs",
    )
    CONFIRMED_AT = Column(
        "confirmed_at", TIME, optional=True, doc="when a run first confirmed this return"
    )
    CONFIRMED_AMOUNT_MINOR = Column(
        "confirmed_amount_minor", MONEY, optional=True, doc="the provider's amount then"
    )
    CONFIRMED_CURRENCY = Column(
        "confirmed_currency", TEXT, optional=True, doc="the provider's currency then"
    )


class ReturnsJudged(ReturnsIn):
    """The returns as the classification judges them: the input's columns and the judgement."""

    ORIGINAL_ID = Column(
        "original_id",
        TEXT,
        doc="the confirmed payout, else the single claimed one; <NA> if none",
    )
    AMOUNT_MINOR = Column("amount_minor", MONEY, doc="the provider's amount")
    CURRENCY = Column("currency", TEXT, doc="the provider's currency, upper case")
    CONFIRMED = Column("confirmed", BOOL, doc="the provider confirmed the return for original_id")
    MATCHED = Column("matched", BOOL, doc="original_id is a payout in the store")


class ReturnsOut(Frame):
    """Output ``returns``: one row per returned-funds transaction, as stored and reported."""

    RETURN_ID = ReturnsIn.RETURN_ID
    ORIGINAL_ID = ReturnsJudged.ORIGINAL_ID
    AMOUNT_MINOR = ReturnsJudged.AMOUNT_MINOR
    CURRENCY = ReturnsJudged.CURRENCY
    CONFIRMED = ReturnsJudged.CONFIRMED
    MATCHED = ReturnsJudged.MATCHED
    NOTIFIED = ReturnsIn.NOTIFIED
    CLAIMED_ORIGINAL_ID = ReturnsIn.CLAIMED_ORIGINAL_ID
    CLAIMED_AMOUNT = ReturnsIn.CLAIMED_AMOUNT


class Finding(Frame):
    """What every finding row says: the item, the kind and its facts."""

    ITEM_ID = Column("item_id", TEXT, doc="the payout, return or other item it is about")
    ITEM_KIND = Column("item_kind", ITEM_KIND, doc="what the item is (ItemKind)")
    FLAG = Column("flag", TEXT, doc="the kind's name (recon.reconcile.kinds)")
    FACTS = Column(
        "facts", FACTS, doc="the finding's facts as values (a mapping; None: kept, no new answer)"
    )


class Findings(Finding):
    """Output ``findings``: one row per item and kind, sorted."""

    KNOWN = Column("known", BOOL, doc="the facts count for comparison tonight (it was answered)")


class Compared(Finding):
    """The findings compared with the previous run's (``follow_cases``)."""

    DETAIL = Column(
        "detail", TEXT, doc="the words a finding was stored with before facts were values"
    )
    STATUS = Column("status", FLAG_STATUS, doc="new, persisting, cleared, ... (FlagStatus)")
