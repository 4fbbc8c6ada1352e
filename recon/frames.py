"""The frame contract of the nightly classification: column names, dtypes, schemas, empty frames.

The shell builds three frames for :func:`recon.reconcile.classify.classify` and gets three back;
every column is a ``StrEnum`` member and every dtype fixed by a schema below. ``conform`` holds an
input to its schema: *optional* columns may be left out (filled with ``<NA>``), extras pass
through at the end. Text is ``string`` (``pd.StringDtype()``,
missing = ``<NA>``), whole numbers ``Int64``, money integer minor units in ``Int64`` (never
float), times ``datetime64[us, UTC]`` (missing = ``NaT``), flags ``bool`` (never missing).
Outcome, item kind and status are categoricals of the enums of :mod:`recon.constants`.

Input ``payouts`` (:data:`PAYOUTS_IN`), one row per payout in the store:

==================== ========= ===================================================================
transaction_id       string    the provider's payout id (unique, case-sensitive)
merchant_reference   string    our reference
amount_minor         Int64     local amount in minor units
currency             string    local currency, upper case
bank_account_id      string    recipient bank account (<NA> if unknown)
customer_id          string    customer (<NA> if unknown)
created              datetime  when the payout was created (NaT if unknown)
eta                  datetime  the provider's estimated arrival (NaT if unknown)
prev_outcome         category  outcome after the previous run (OUTCOME dtype; <NA> = never run;
                               text is accepted, any other value is an InputError)
prev_state           Int64     state after the previous run
prev_error_code      string    error code after the previous run
prev_outcome_since   datetime  when prev_outcome was first seen
prev_exceptions      string    *optional*: the previous run's ``exceptions`` cell (``a;b``)
prev_returned_minor  Int64     *optional*: ``returned_minor`` after the previous run
prev_candidate_dupl… string    *optional*: ``candidate_duplicates`` after the previous run
                               (``prev_candidate_duplicates``; both only tell what changed)
prev_next_check_at   datetime  *optional*: when the watch schedule made it due (NaT: not set)
callback_failed_sta… Int64     *optional*: the state (2, 3) a stored transaction notification
callback_failed_at   datetime  said, and when: evidence of "seen failed", never an outcome
ever_failed          bool      an earlier run saw the payout failed or aborted
settled_since        datetime  *optional*: when a run first saw it settled or returned (the
                               start of its latest settled stretch); NaT: never, or not kept
prev_fee_minor       Int64     *optional*: the provider's fee as the latest answer said it
prev_fee_id          string    *optional*: that answer's fee_id
prev_fee_expected_m… Int64     *optional*: the agreed fee as the previous run priced it
prev_fee_entry       string    *optional*: the entry that priced it (``prev_fee_expected_minor``)
polled               bool      this run tried to fetch it
==================== ========= ===================================================================

Input ``observations`` (:data:`OBSERVATIONS_IN`), at most one row per transaction id: the provider's
answer in THIS run, for payouts and returned-funds transactions alike (the shell keeps the latest):

======================== ======= ==============================================================
transaction_id           string  the id asked for
status                   string  ``ok``, ``not_found``, ``session``, ``wrong_id``, ``refused``
                                 or ``error`` (constants.ObsStatus)
state                    Int64   normalised state number (``ok`` only)
type                     Int64   transaction type (``ok`` only)
error_code               string  the provider's error code, if any
amount_minor             Int64   provider amount in minor units; <NA> if it does not fit the
                                 currency's digits (e.g. ``10.005`` EUR)
amount_text              string  *optional*: the provider's exact amount text (for details)
currency                 string  as the provider sent it (compared case-insensitively)
related_transaction_id   string  the provider's related_transaction_id; for ``session`` the
                                 session's transaction, for ``wrong_id`` the id answered about
original_transaction_id  string  the provider's original_transaction_id
merchant_reference       string  *optional*: the answer's merchant_reference (checked)
to_bank_account_id       string  *optional*: the answer's to_bank_account_id (checked)
created                  datetime *optional*: the answer's created (used if the record has none)
eta                      datetime *optional*: the answer's eta (used if the record has none)
state_raw                string  *optional*: an undocumented state name as sent (state <NA>)
fee_amount_minor         Int64   *optional*: the answer's fee in minor units of its currency
fee_id                   string  *optional*: the answer's fee_id
======================== ======= ==============================================================

Input ``returns`` (:data:`RETURNS_IN`), one row per returned-funds transaction known from any side
(rows repeating a return id, e.g. one per notification, are collapsed):

=============================== ======= =======================================================
return_id                       string  the returned-funds transaction id
claimed_original_id             string  a notification's original_transaction_id (<NA> if none)
notified                        bool    at least one RETURNED_TRANSACTION notification is stored
claimed_amount                  string  a notification's amount text (<NA> if none)
obs_status                      string  best provider evidence: ``ok``/``not_found`` from this
                                        run, else the latest earlier ``ok`` (or ``not_found``,
                                        for a return once confirmed); ``error`` if this run's
                                        fetch failed and no earlier answer exists; <NA> if
                                        never asked
obs_type                        Int64   type in that evidence
obs_related_transaction_id      string  related_transaction_id in that evidence
obs_original_transaction_id     string  original_transaction_id in that evidence
obs_amount_minor                Int64   amount in minor units (<NA> if it does not fit)
obs_currency                    string  currency as the provider sent it
confirmed_original_id           string  *optional*: the payout an earlier run confirmed this
                                        return for (the stored ``original_id`` of a row with
                                        ``confirmed``); keeps a confirmation across runs
confirmed_at                    datetime *optional*: when a run first confirmed this return
confirmed_amount_minor          Int64   *optional*: the provider's amount then
confirmed_currency              string  *optional*: the provider's currency then
=============================== ======= =======================================================

Output ``payouts`` (:data:`PAYOUTS_OUT` after the input columns):

==================== ========== ==============================================================
outcome              category   exactly one :class:`~recon.constants.Outcome` value
state                Int64      this run's state; the kept one if not fetched; <NA> if unknown
error_code           string     this run's error code; the kept one if not fetched
returned_minor       Int64      sum of confirmed returns' provider amounts (0 when none; <NA>
                                if a confirmed return's amount does not fit its currency)
exceptions           string     sorted ``;``-joined flags, ``""`` when none
candidate_duplicates string     for late_settlement: ``;``-joined later payouts to the same
                                bank account or customer with the same amount; ``""`` otherwise
outcome_changed      bool       outcome differs from prev_outcome (True when never run)
outcome_since        datetime   prev_outcome_since if unchanged, else ``as_of``
fee_minor            Int64      the provider's fee: this run's answer's, else the kept one
fee_id               string     its fee_id, as fee_minor
fee_expected_minor   Int64      the agreed fee (0 on a failed or aborted payout); <NA>: no price
fee_entry            string     the ``[[fees]]`` entry that priced it (valid_from, currency,
                                account); <NA>: none
==================== ========== ==============================================================

The decision then adds what the store needs (:data:`RECORD_OUT`, :mod:`recon.reconcile.record`):
``record_changed``, ``ever_failed_now``, ``settled_since_now``, ``next_check_at``, ``answered``
and ``write``.

Output ``findings`` (:data:`FINDINGS`), one row per item and kind, sorted: item_id, item_kind,
flag (the kind's name, :mod:`recon.reconcile.kinds`), facts (a mapping of values; None: kept
without an answer), known (the facts count tonight). :func:`recon.reconcile.cases.follow_cases`
makes :data:`COMPARED` of them: ``detail`` (words stored before facts were values) and ``status``.

Output ``returns`` (:data:`RETURNS_OUT`), one row per returned-funds transaction: return_id,
original_id (the confirmed payout, else the single claimed one; <NA> if none), amount_minor (the
provider's, Int64), currency (upper case), confirmed (bool), matched (bool: original_id is a payout
in the store), notified (bool), then claimed_original_id and claimed_amount (string).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

import pandas as pd

from recon.constants import FlagStatus, Outcome


class PayoutCol(StrEnum):
    """Columns of the payouts frame, input and output."""

    TRANSACTION_ID = "transaction_id"
    MERCHANT_REFERENCE = "merchant_reference"
    AMOUNT_MINOR = "amount_minor"
    CURRENCY = "currency"
    BANK_ACCOUNT_ID = "bank_account_id"
    CUSTOMER_ID = "customer_id"
    CREATED = "created"
    ETA = "eta"
    PREV_OUTCOME = "prev_outcome"
    PREV_STATE = "prev_state"
    PREV_ERROR_CODE = "prev_error_code"
    PREV_OUTCOME_SINCE = "prev_outcome_since"
    PREV_EXCEPTIONS = "prev_exceptions"
    PREV_RETURNED_MINOR = "prev_returned_minor"
    PREV_CANDIDATE_DUPLICATES = "prev_candidate_duplicates"
    PREV_NEXT_CHECK_AT = "prev_next_check_at"
    CALLBACK_FAILED_STATE = "callback_failed_state"
    CALLBACK_FAILED_AT = "callback_failed_at"
    EVER_FAILED = "ever_failed"
    SETTLED_SINCE = "settled_since"
    PREV_FEE_MINOR = "prev_fee_minor"
    PREV_FEE_ID = "prev_fee_id"
    PREV_FEE_EXPECTED_MINOR = "prev_fee_expected_minor"
    PREV_FEE_ENTRY = "prev_fee_entry"
    POLLED = "polled"
    OUTCOME = "outcome"
    STATE = "state"
    ERROR_CODE = "error_code"
    RETURNED_MINOR = "returned_minor"
    EXCEPTIONS = "exceptions"
    CANDIDATE_DUPLICATES = "candidate_duplicates"
    OUTCOME_CHANGED = "outcome_changed"
    OUTCOME_SINCE = "outcome_since"
    FEE_MINOR = "fee_minor"
    FEE_ID = "fee_id"
    FEE_EXPECTED_MINOR = "fee_expected_minor"
    FEE_ENTRY = "fee_entry"
    RECORD_CHANGED = "record_changed"
    EVER_FAILED_NOW = "ever_failed_now"
    SETTLED_SINCE_NOW = "settled_since_now"
    NEXT_CHECK_AT = "next_check_at"
    ANSWERED = "answered"
    WRITE = "write"


class ObsCol(StrEnum):
    """Columns of the observations frame (this run's provider answers)."""

    TRANSACTION_ID = "transaction_id"
    STATUS = "status"
    STATE = "state"
    TYPE = "type"
    ERROR_CODE = "error_code"
    AMOUNT_MINOR = "amount_minor"
    AMOUNT_TEXT = "amount_text"
    CURRENCY = "currency"
    RELATED_TRANSACTION_ID = "related_transaction_id"
    ORIGINAL_TRANSACTION_ID = "original_transaction_id"
    MERCHANT_REFERENCE = "merchant_reference"
    TO_BANK_ACCOUNT_ID = "to_bank_account_id"
    CREATED = "created"
    ETA = "eta"
    STATE_RAW = "state_raw"
    FEE_AMOUNT_MINOR = "fee_amount_minor"
    FEE_ID = "fee_id"


class ReturnCol(StrEnum):
    """Columns of the returns frame, input and output."""

    RETURN_ID = "return_id"
    CLAIMED_ORIGINAL_ID = "claimed_original_id"
    NOTIFIED = "notified"
    CLAIMED_AMOUNT = "claimed_amount"
    OBS_STATUS = "obs_status"
    OBS_TYPE = "obs_type"
    OBS_RELATED_TRANSACTION_ID = "obs_related_transaction_id"
    OBS_ORIGINAL_TRANSACTION_ID = "obs_original_transaction_id"
    OBS_AMOUNT_MINOR = "obs_amount_minor"
    OBS_CURRENCY = "obs_currency"
    CONFIRMED_ORIGINAL_ID = "confirmed_original_id"
    CONFIRMED_AT = "confirmed_at"
    CONFIRMED_AMOUNT_MINOR = "confirmed_amount_minor"
    CONFIRMED_CURRENCY = "confirmed_currency"
    ORIGINAL_ID = "original_id"
    AMOUNT_MINOR = "amount_minor"
    CURRENCY = "currency"
    CONFIRMED = "confirmed"
    MATCHED = "matched"


class ExceptionCol(StrEnum):
    """Columns of the findings frame and of its comparison with the previous run."""

    ITEM_ID = "item_id"
    ITEM_KIND = "item_kind"
    FLAG = "flag"
    FACTS = "facts"  # the finding's facts as values (a mapping; None: kept, no new answer)
    KNOWN = "known"  # the facts count for comparison tonight (the item was answered)
    DETAIL = "detail"  # the words a finding was stored with before facts were values
    STATUS = "status"


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
OUTCOME = pd.CategoricalDtype([o.value for o in Outcome])
FACTS = "object"  # one mapping per row (recon.reconcile.finding)
ITEM_KIND = pd.CategoricalDtype([k.value for k in ItemKind])
FLAG_STATUS = pd.CategoricalDtype([s.value for s in FlagStatus])

Schema = Mapping[str, Any]

PAYOUTS_IN: Schema = {
    PayoutCol.TRANSACTION_ID: TEXT,
    PayoutCol.MERCHANT_REFERENCE: TEXT,
    PayoutCol.AMOUNT_MINOR: MONEY,
    PayoutCol.CURRENCY: TEXT,
    PayoutCol.BANK_ACCOUNT_ID: TEXT,
    PayoutCol.CUSTOMER_ID: TEXT,
    PayoutCol.CREATED: TIME,
    PayoutCol.ETA: TIME,
    PayoutCol.PREV_OUTCOME: OUTCOME,
    PayoutCol.PREV_STATE: INT,
    PayoutCol.PREV_ERROR_CODE: TEXT,
    PayoutCol.PREV_OUTCOME_SINCE: TIME,
    PayoutCol.PREV_EXCEPTIONS: TEXT,
    PayoutCol.PREV_RETURNED_MINOR: MONEY,
    PayoutCol.PREV_CANDIDATE_DUPLICATES: TEXT,
    PayoutCol.PREV_NEXT_CHECK_AT: TIME,
    PayoutCol.CALLBACK_FAILED_STATE: INT,
    PayoutCol.CALLBACK_FAILED_AT: TIME,
    PayoutCol.EVER_FAILED: BOOL,
    PayoutCol.POLLED: BOOL,
    PayoutCol.SETTLED_SINCE: TIME,
    PayoutCol.PREV_FEE_MINOR: MONEY,
    PayoutCol.PREV_FEE_ID: TEXT,
    PayoutCol.PREV_FEE_EXPECTED_MINOR: MONEY,
    PayoutCol.PREV_FEE_ENTRY: TEXT,
}
PAYOUTS_OPTIONAL = frozenset(
    {
        PayoutCol.PREV_EXCEPTIONS,
        PayoutCol.PREV_RETURNED_MINOR,
        PayoutCol.PREV_CANDIDATE_DUPLICATES,
        PayoutCol.PREV_NEXT_CHECK_AT,
        PayoutCol.CALLBACK_FAILED_STATE,
        PayoutCol.CALLBACK_FAILED_AT,
        PayoutCol.SETTLED_SINCE,
        PayoutCol.PREV_FEE_MINOR,
        PayoutCol.PREV_FEE_ID,
        PayoutCol.PREV_FEE_EXPECTED_MINOR,
        PayoutCol.PREV_FEE_ENTRY,
    }
)

PAYOUTS_OUT: Schema = {
    PayoutCol.OUTCOME: OUTCOME,
    PayoutCol.STATE: INT,
    PayoutCol.ERROR_CODE: TEXT,
    PayoutCol.RETURNED_MINOR: MONEY,
    PayoutCol.EXCEPTIONS: TEXT,
    PayoutCol.CANDIDATE_DUPLICATES: TEXT,
    PayoutCol.OUTCOME_CHANGED: BOOL,
    PayoutCol.OUTCOME_SINCE: TIME,
    PayoutCol.FEE_MINOR: MONEY,
    PayoutCol.FEE_ID: TEXT,
    PayoutCol.FEE_EXPECTED_MINOR: MONEY,
    PayoutCol.FEE_ENTRY: TEXT,
}

# What the decision adds for the store (:func:`recon.reconcile.record.with_record`).
RECORD_OUT: Schema = {
    PayoutCol.RECORD_CHANGED: BOOL,
    PayoutCol.EVER_FAILED_NOW: BOOL,
    PayoutCol.SETTLED_SINCE_NOW: TIME,
    PayoutCol.NEXT_CHECK_AT: TIME,
    PayoutCol.ANSWERED: BOOL,
    PayoutCol.WRITE: BOOL,
}

OBSERVATIONS_IN: Schema = {
    ObsCol.TRANSACTION_ID: TEXT,
    ObsCol.STATUS: TEXT,
    ObsCol.STATE: INT,
    ObsCol.TYPE: INT,
    ObsCol.ERROR_CODE: TEXT,
    ObsCol.AMOUNT_MINOR: MONEY,
    ObsCol.AMOUNT_TEXT: TEXT,
    ObsCol.CURRENCY: TEXT,
    ObsCol.RELATED_TRANSACTION_ID: TEXT,
    ObsCol.ORIGINAL_TRANSACTION_ID: TEXT,
    ObsCol.MERCHANT_REFERENCE: TEXT,
    ObsCol.TO_BANK_ACCOUNT_ID: TEXT,
    ObsCol.CREATED: TIME,
    ObsCol.ETA: TIME,
    ObsCol.STATE_RAW: TEXT,
    ObsCol.FEE_AMOUNT_MINOR: MONEY,
    ObsCol.FEE_ID: TEXT,
}
OBSERVATIONS_OPTIONAL = frozenset(
    {
        ObsCol.AMOUNT_TEXT,
        ObsCol.MERCHANT_REFERENCE,
        ObsCol.TO_BANK_ACCOUNT_ID,
        ObsCol.CREATED,
        ObsCol.ETA,
        ObsCol.STATE_RAW,
        ObsCol.FEE_AMOUNT_MINOR,
        ObsCol.FEE_ID,
    }
)

RETURNS_IN: Schema = {
    ReturnCol.RETURN_ID: TEXT,
    ReturnCol.CLAIMED_ORIGINAL_ID: TEXT,
    ReturnCol.NOTIFIED: BOOL,
    ReturnCol.CLAIMED_AMOUNT: TEXT,
    ReturnCol.OBS_STATUS: TEXT,
    ReturnCol.OBS_TYPE: INT,
    ReturnCol.OBS_RELATED_TRANSACTION_ID: TEXT,
    ReturnCol.OBS_ORIGINAL_TRANSACTION_ID: TEXT,
    ReturnCol.OBS_AMOUNT_MINOR: MONEY,
    ReturnCol.OBS_CURRENCY: TEXT,
    ReturnCol.CONFIRMED_ORIGINAL_ID: TEXT,
    ReturnCol.CONFIRMED_AT: TIME,
    ReturnCol.CONFIRMED_AMOUNT_MINOR: MONEY,
    ReturnCol.CONFIRMED_CURRENCY: TEXT,
}
RETURNS_OPTIONAL = frozenset(
    {
        ReturnCol.CLAIMED_AMOUNT,
        ReturnCol.CONFIRMED_ORIGINAL_ID,
        ReturnCol.CONFIRMED_AT,
        ReturnCol.CONFIRMED_AMOUNT_MINOR,
        ReturnCol.CONFIRMED_CURRENCY,
    }
)

RETURNS_OUT: Schema = {
    ReturnCol.RETURN_ID: TEXT,
    ReturnCol.ORIGINAL_ID: TEXT,
    ReturnCol.AMOUNT_MINOR: MONEY,
    ReturnCol.CURRENCY: TEXT,
    ReturnCol.CONFIRMED: BOOL,
    ReturnCol.MATCHED: BOOL,
    ReturnCol.NOTIFIED: BOOL,
    ReturnCol.CLAIMED_ORIGINAL_ID: TEXT,
    ReturnCol.CLAIMED_AMOUNT: TEXT,
}

FINDINGS: Schema = {
    ExceptionCol.ITEM_ID: TEXT,
    ExceptionCol.ITEM_KIND: ITEM_KIND,
    ExceptionCol.FLAG: TEXT,
    ExceptionCol.FACTS: FACTS,
    ExceptionCol.KNOWN: BOOL,
}

COMPARED: Schema = {
    ExceptionCol.ITEM_ID: TEXT,
    ExceptionCol.ITEM_KIND: ITEM_KIND,
    ExceptionCol.FLAG: TEXT,
    ExceptionCol.FACTS: FACTS,
    ExceptionCol.DETAIL: TEXT,
    ExceptionCol.STATUS: FLAG_STATUS,
}


def empty(schema: Schema) -> pd.DataFrame:
    """A frame with no rows and exactly the schema's columns and dtypes."""
    return pd.DataFrame({str(name): pd.Series(dtype=dtype) for name, dtype in schema.items()})


def columns(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """Plain-``str`` column names for ``DataFrame.assign(**...)`` (enum members are ``str`` too)."""
    return {str(name): value for name, value in mapping.items()}
