"""The frames a run, the store and the report exchange beside the classifier's three, declared in
:mod:`recon.frames`'s notation (:func:`recon.frames.empty` makes one with no rows,
:func:`recon.conform.typed` shapes a frame read from the store to one).

Where each is carried and what its rows mean is told where it is used: :class:`recon.decision.
RunInputs`, :class:`~recon.decision.KnownReturns` and :class:`~recon.decision.ProviderInputs`.
Ids and other text are ``string``, numbers ``Int64``, times ``datetime64[us, UTC]``.
"""

from __future__ import annotations

import pandas as pd

from recon.frames import (
    AS_READ,
    CODES,
    INT,
    MONEY,
    TEXT,
    TIME,
    Column,
    Frame,
    PayoutsIn,
    PayoutsOut,
    ReturnsIn,
)


class Answers(Frame):
    """This run's answers as the run keeps them (observations' columns, ``RunInputs.answers``),
    oldest first."""

    TRANSACTION_ID = Column("transaction_id", AS_READ)
    STATUS = Column("status", AS_READ)
    STATE = Column("state", INT)
    TYPE = Column("type", INT)
    ERROR_CODE = Column("error_code", AS_READ)
    AMOUNT_MINOR = Column("amount_minor", MONEY)
    AMOUNT = Column("amount", AS_READ, doc="the provider's exact amount text")
    CURRENCY = Column("currency", AS_READ)
    RELATED_TRANSACTION_ID = Column("related_transaction_id", AS_READ)
    ORIGINAL_TRANSACTION_ID = Column("original_transaction_id", AS_READ)
    MERCHANT_REFERENCE = Column("merchant_reference", AS_READ)
    TO_BANK_ACCOUNT_ID = Column("to_bank_account_id", AS_READ)
    CREATED = Column("created", TIME)
    ETA = Column("eta", TIME)
    STATE_RAW = Column("state_raw", AS_READ)
    FEE_AMOUNT_MINOR = Column("fee_amount_minor", MONEY, doc="the answer's fee in minor units")
    FEE_ID = Column("fee_id", AS_READ)
    SETTLED = Column("settled", TIME, doc="the answer's settled time")


class EarlierAnswers(Frame):
    """An earlier run's answer about a return (``KnownReturns.earlier``: the latest that speaks
    per id)."""

    TRANSACTION_ID = Column("transaction_id", TEXT)
    STATUS = Column("status", TEXT)
    TYPE = Column("type", INT)
    RELATED_TRANSACTION_ID = Column("related_transaction_id", AS_READ)
    ORIGINAL_TRANSACTION_ID = Column("original_transaction_id", AS_READ)
    AMOUNT_MINOR = Column("amount_minor", MONEY)
    CURRENCY = Column("currency", AS_READ)


class StoredAnswers(Frame):
    """Earlier answers as the store reads them (``ReturnReads.answers``), oldest first."""

    ID = Column("id", INT, doc="the stored answer's row, which orders them")
    TRANSACTION_ID = EarlierAnswers.TRANSACTION_ID
    STATUS = EarlierAnswers.STATUS
    TYPE = EarlierAnswers.TYPE
    RELATED_TRANSACTION_ID = EarlierAnswers.RELATED_TRANSACTION_ID
    ORIGINAL_TRANSACTION_ID = EarlierAnswers.ORIGINAL_TRANSACTION_ID
    AMOUNT_MINOR = EarlierAnswers.AMOUNT_MINOR
    CURRENCY = EarlierAnswers.CURRENCY


class Notices(Frame):
    """One row per stored returned-funds notification, oldest first (``KnownReturns.notices``)."""

    RETURN_ID = ReturnsIn.RETURN_ID
    CLAIMED_ORIGINAL_ID = ReturnsIn.CLAIMED_ORIGINAL_ID
    CLAIMED_AMOUNT = ReturnsIn.CLAIMED_AMOUNT


class Confirmations(Frame):
    """Per return, the payout the latest earlier run confirmed it for
    (``KnownReturns.confirmations``)."""

    RETURN_ID = Column("return_id", AS_READ)
    CONFIRMED_ORIGINAL_ID = Column("confirmed_original_id", AS_READ)


class Watched(Frame):
    """Confirmed returns to watch (``KnownReturns.watched``)."""

    RETURN_ID = Column("return_id", TEXT)
    CONFIRMED_AT = Column("confirmed_at", TIME)
    CONFIRMED_AMOUNT_MINOR = Column("confirmed_amount_minor", MONEY)
    CONFIRMED_CURRENCY = Column("confirmed_currency", TEXT)
    LAST_ASKED_AT = Column("last_asked_at", TIME)


class Notified(Frame):
    """Per announced return, when its latest notification came (``ReturnReads.notified``)."""

    RETURN_ID = Watched.RETURN_ID
    LAST_NOTIFIED_AT = Column("last_notified_at", TIME)


class Claims(Notified):
    """Announced returns and the runs that asked about them since (``KnownReturns.claims``)."""

    FIRST_ASKED_AT = Column("first_asked_at", TIME)
    LAST_ASKED_AT = Watched.LAST_ASKED_AT


class Asks(Frame):
    """Every answer of another run about an announced id, with that run's clock and start
    (``ReturnReads.asks``)."""

    TRANSACTION_ID = Column("transaction_id", TEXT)
    AS_OF = Column("as_of", TIME)
    STARTED_AT = Column("started_at", TIME)


class ProviderItems(Frame):
    """Ids the provider named that the record lacks (``provider_items``), as the core reads and
    writes them (``ProviderInputs.items``)."""

    TRANSACTION_ID = Column("transaction_id", TEXT)
    FIRST_NAMED_AT = Column("first_named_at", TIME)
    NAMED_BY = Column("named_by", TEXT)
    LAST_ASKED_RUN_ID = Column("last_asked_run_id", INT)
    STATUS = Column("status", TEXT)
    TYPE = Column("type", INT)
    STATE = Column("state", INT)
    AMOUNT_MINOR = Column("amount_minor", MONEY)
    CURRENCY = Column("currency", TEXT)
    MERCHANT_REFERENCE = Column("merchant_reference", TEXT)
    TO_BANK_ACCOUNT_ID = Column("to_bank_account_id", TEXT)
    CUSTOMER_ID = Column("customer_id", TEXT)
    CREATED = Column("created", TIME)
    ANSWERED_AT = Column("answered_at", TIME)


class Named(Frame):
    """Ids notifications named since a time: who named each and when (the store's read)."""

    TRANSACTION_ID = ProviderItems.TRANSACTION_ID
    NAMED_BY = ProviderItems.NAMED_BY
    NAMED_AT = Column("named_at", TIME)


class FirstNamed(Frame):
    """Ids named by notifications or this run's answers, each once, with when it was first
    named."""

    TRANSACTION_ID = ProviderItems.TRANSACTION_ID
    NAMED_BY = ProviderItems.NAMED_BY
    FIRST_NAMED_AT = ProviderItems.FIRST_NAMED_AT


class Attempts(Frame):
    """Creates recorded without a transaction id and not matched yet (``creation_attempts``)."""

    ID = Column("id", INT)
    MERCHANT_REFERENCE = PayoutsIn.MERCHANT_REFERENCE
    AMOUNT_MINOR = PayoutsIn.AMOUNT_MINOR
    CURRENCY = PayoutsIn.CURRENCY
    BANK_ACCOUNT_ID = PayoutsIn.BANK_ACCOUNT_ID
    CUSTOMER_ID = PayoutsIn.CUSTOMER_ID
    CREATED = PayoutsIn.CREATED


class Recorded(Frame):
    """Recorded payouts an unrecorded payout or a create may repeat (a few columns of
    ``payouts``)."""

    TRANSACTION_ID = PayoutsIn.TRANSACTION_ID
    MERCHANT_REFERENCE = PayoutsIn.MERCHANT_REFERENCE
    AMOUNT_MINOR = PayoutsIn.AMOUNT_MINOR
    CURRENCY = PayoutsIn.CURRENCY
    BANK_ACCOUNT_ID = PayoutsIn.BANK_ACCOUNT_ID
    CUSTOMER_ID = PayoutsIn.CUSTOMER_ID
    CREATED = PayoutsIn.CREATED
    OUTCOME = Column(
        "outcome", TEXT, doc="as the store holds it (a payout decided tonight: tonight's)"
    )


class Cases(Frame):
    """The store's live cases, as :func:`recon.reconcile.cases.follow_cases` reads them."""

    EXCEPTION_ID = Column("exception_id", TEXT, doc="stable while the same finding stays open")
    ITEM_KIND = Column("item_kind", TEXT)
    ITEM_ID = Column("item_id", TEXT)
    FLAG = Column("flag", TEXT)
    STATE = Column("state", TEXT)
    FACTS = Column("facts", TEXT)
    LAST_FACTS = Column("last_facts", TEXT)
    DETAIL = Column("detail", TEXT)
    OPENED_AT = Column("opened_at", TIME, doc="when recon first saw it")
    OWNER = Column("owner", TEXT)
    NOTE = Column("note", TEXT)
    UNTIL = Column("until", TIME, doc="a snooze's end")
    STATE_AT = Column("state_at", TIME)
    PREVIOUS_RESOLUTION = Column(
        "previous_resolution", TEXT, doc="the resolution before its facts changed and it reopened"
    )
    REPORTED_RUN_ID = Column("reported_run_id", INT)
    VERSION = Column("version", INT)


class CaseReport(Frame):
    """Columns the report's exceptions gain from their case (``EXCEPTION_COLUMNS``)."""

    EXCEPTION_ID = Cases.EXCEPTION_ID
    OWNER = Cases.OWNER
    NOTE = Cases.NOTE
    UNTIL = Cases.UNTIL
    OPENED_AT = Cases.OPENED_AT
    PREVIOUS_RESOLUTION = Cases.PREVIOUS_RESOLUTION


class RecordChanges(Frame):
    """Live record changes (``RunInputs.record_changes``)."""

    ID = Column("id", INT)
    TRANSACTION_ID = Column("transaction_id", TEXT)
    FIELD = Column("field", TEXT)
    BEFORE = Column("before", TEXT)
    AFTER = Column("after", TEXT)
    IMPORTED_AT = Column("imported_at", TIME)
    ANSWERED = Column("answered", pd.BooleanDtype())


class UnreadableNotifications(Frame):
    """Notifications recon could not read in full (``RunInputs.unreadable_notifications``)."""

    ID = Column("id", INT)
    STATUS = Column("status", TEXT)
    REASON = Column("reason", TEXT)
    EXCERPT = Column("excerpt", TEXT)
    ACCOUNT = Column("account", TEXT)  # of an account not configured; missing: the run's own


class FailureCallbacks(Frame):
    """The first failure notification per payout (``RunInputs.failure_callbacks``)."""

    TRANSACTION_ID = Column("transaction_id", TEXT)
    STATE = Column("state", INT)
    RECEIVED_AT = Column("received_at", TIME)


class ReportPayouts(Frame):
    """A stored run's payouts as its report shows them (recon.report.model.PAYOUT_COLUMNS)."""

    TRANSACTION_ID = PayoutsIn.TRANSACTION_ID
    MERCHANT_REFERENCE = PayoutsIn.MERCHANT_REFERENCE
    AMOUNT_MINOR = PayoutsIn.AMOUNT_MINOR
    CURRENCY = Column("currency", CODES)
    OUTCOME = Column("outcome", CODES)
    STATE = Column("state", INT)
    ERROR_CODE = Column("error_code", CODES)
    RETURNED_MINOR = Column("returned_minor", MONEY)
    EXCEPTIONS = Column("exceptions", CODES)
    CANDIDATE_DUPLICATES = Column("candidate_duplicates", CODES)
    CREATED = PayoutsIn.CREATED
    ETA = PayoutsIn.ETA
    BANK_ACCOUNT_ID = PayoutsIn.BANK_ACCOUNT_ID
    CUSTOMER_ID = PayoutsIn.CUSTOMER_ID
    PREV_OUTCOME = Column(
        "prev_outcome", CODES, doc="what the run changed the outcome from (else the outcome)"
    )


class ReportPayoutsWithFees(ReportPayouts):
    """The report's payouts with the provider's fee and the agreed one (fees.csv, the totals)."""

    FEE_MINOR = PayoutsOut.FEE_MINOR
    FEE_ID = PayoutsOut.FEE_ID
    FEE_EXPECTED_MINOR = PayoutsOut.FEE_EXPECTED_MINOR
    FEE_ENTRY = Column("fee_entry", CODES, doc="the [[fees]] entry that priced it")


class OutcomeChanges(Frame):
    """A stored run's outcome changes as its report shows them (``CHANGE_COLUMNS``)."""

    TRANSACTION_ID = PayoutsIn.TRANSACTION_ID
    PREVIOUS_OUTCOME = Column("previous_outcome", CODES)
    OUTCOME = ReportPayouts.OUTCOME
    AMOUNT_MINOR = PayoutsIn.AMOUNT_MINOR
    CURRENCY = ReportPayouts.CURRENCY


class Totals(Frame):
    """Totals per period ("window": the last ``window_days``; "month": month to date), currency
    and outcome: payouts whose outcome as of the run was reached in the period, and their amount
    (the store reads them without ``period``)."""

    PERIOD = Column("period", TEXT)
    CURRENCY = Column("currency", TEXT)
    OUTCOME = Column("outcome", TEXT)
    PAYOUTS = Column("payouts", INT)
    AMOUNT_MINOR = Column("amount_minor", INT)
