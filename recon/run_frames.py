"""The frames a run reads beside the classifier's three: their schemas, in :mod:`recon.frames`'s
notation (column name to dtype; :func:`recon.frames.empty` makes one with no rows,
:func:`recon.conform.typed` shapes a frame read from the store to one).

Where each is carried and what its rows mean is told where it is used: :class:`recon.decision.
RunInputs`, :class:`~recon.decision.KnownReturns` and :class:`~recon.decision.ProviderInputs`.
Ids and other text are ``string``, numbers ``Int64``, times ``datetime64[us, UTC]``.
"""

from __future__ import annotations

import pandas as pd

from recon.frames import AS_READ, INT, MONEY, TEXT, TIME, Schema

# This run's answers as the run keeps them (observations' columns, ``RunInputs.answers``), oldest
# first.
ANSWERS: Schema = {
    "transaction_id": AS_READ,
    "status": AS_READ,
    "state": INT,
    "type": INT,
    "error_code": AS_READ,
    "amount_minor": MONEY,
    "amount": AS_READ,
    "currency": AS_READ,
    "related_transaction_id": AS_READ,
    "original_transaction_id": AS_READ,
    "merchant_reference": AS_READ,
    "to_bank_account_id": AS_READ,
    "created": TIME,
    "eta": TIME,
    "state_raw": AS_READ,
    "fee_amount_minor": MONEY,
    "fee_id": AS_READ,
}

# An earlier run's answer about a return (``KnownReturns.earlier``: the latest that speaks per id).
EARLIER_ANSWERS: Schema = {
    "transaction_id": TEXT,
    "status": TEXT,
    "type": INT,
    "related_transaction_id": AS_READ,
    "original_transaction_id": AS_READ,
    "amount_minor": MONEY,
    "currency": AS_READ,
}

# Per return, the payout the latest earlier run confirmed it for (``KnownReturns.confirmations``).
CONFIRMATIONS: Schema = {"return_id": AS_READ, "confirmed_original_id": AS_READ}

# Confirmed returns to watch (``KnownReturns.watched``).
WATCHED: Schema = {
    "return_id": TEXT,
    "confirmed_at": TIME,
    "confirmed_amount_minor": MONEY,
    "confirmed_currency": TEXT,
    "last_asked_at": TIME,
}

# Announced returns and the runs that asked about them since (``KnownReturns.claims``).
CLAIMS: Schema = {
    "return_id": TEXT,
    "last_notified_at": TIME,
    "first_asked_at": TIME,
    "last_asked_at": TIME,
}

# Ids the provider named that the record lacks (``provider_items``), as the core reads and writes
# them (``ProviderInputs.items``).
PROVIDER_ITEMS: Schema = {
    "transaction_id": TEXT,
    "first_named_at": TIME,
    "named_by": TEXT,
    "last_asked_run_id": INT,
    "status": TEXT,
    "type": INT,
    "state": INT,
    "amount_minor": MONEY,
    "currency": TEXT,
    "merchant_reference": TEXT,
    "to_bank_account_id": TEXT,
    "customer_id": TEXT,
    "created": TIME,
    "answered_at": TIME,
}

# Ids notifications named since a time: who named each and when (the store's read).
NAMED: Schema = {"transaction_id": TEXT, "named_by": TEXT, "named_at": TIME}

# Ids named by notifications or this run's answers, each once, with when it was first named.
FIRST_NAMED: Schema = {"transaction_id": TEXT, "named_by": TEXT, "first_named_at": TIME}

# Creates recorded without a transaction id and not matched yet (``creation_attempts``).
ATTEMPTS: Schema = {
    "id": INT,
    "merchant_reference": TEXT,
    "amount_minor": MONEY,
    "currency": TEXT,
    "bank_account_id": TEXT,
    "customer_id": TEXT,
    "created": TIME,
}

# Recorded payouts an unrecorded payout or a create may repeat (a few columns of ``payouts``).
RECORDED: Schema = {
    "transaction_id": TEXT,
    "merchant_reference": TEXT,
    "amount_minor": MONEY,
    "currency": TEXT,
    "bank_account_id": TEXT,
    "customer_id": TEXT,
    "created": TIME,
    "outcome": TEXT,  # as the store holds it (a payout decided tonight: tonight's)
}

# The store's live cases, as :func:`recon.reconcile.cases.follow_cases` reads them.
CASES: Schema = {
    "exception_id": TEXT,
    "item_kind": TEXT,
    "item_id": TEXT,
    "flag": TEXT,
    "state": TEXT,
    "facts": TEXT,
    "last_facts": TEXT,
    "detail": TEXT,
    "opened_at": TIME,
    "owner": TEXT,
    "note": TEXT,
    "until": TIME,
    "state_at": TIME,
    "previous_resolution": TEXT,
    "reported_run_id": INT,
    "version": INT,
}

# Columns the report's exceptions gain from their case (recon.report.model.EXCEPTION_COLUMNS).
CASE_REPORT: Schema = {
    c: CASES[c]
    for c in ("exception_id", "owner", "note", "until", "opened_at", "previous_resolution")
}

# Live record changes (``RunInputs.record_changes``).
RECORD_CHANGES: Schema = {
    "id": INT,
    "transaction_id": TEXT,
    "field": TEXT,
    "before": TEXT,
    "after": TEXT,
    "imported_at": TIME,
    "answered": pd.BooleanDtype(),
}

# Notifications recon could not read in full (``RunInputs.unreadable_notifications``).
UNREADABLE_NOTIFICATIONS: Schema = {"id": INT, "status": TEXT, "reason": TEXT, "excerpt": TEXT}

# The first failure notification per payout (``RunInputs.failure_callbacks``).
FAILURE_CALLBACKS: Schema = {"transaction_id": TEXT, "state": INT, "received_at": TIME}
