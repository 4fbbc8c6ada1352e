"""Turning the provider's answers into ``observations`` rows, exactly (no float on the way)."""

from __future__ import annotations

from typing import Any

from recon.jsonparse import dumps, loads
from recon.money import to_minor
from recon.night.poll import Fetched

_ERROR_TEXT_MAX = 2000


def _minor_or_none(tx_amount: Any, currency: str | None) -> int | None:
    if tx_amount is None or currency is None:
        return None
    try:
        return to_minor(tx_amount, currency)
    except ValueError:
        return None  # more decimals than the currency has: kept as exact text, flagged later


def _raw_text(raw: bytes) -> str:
    """The body as stored: the provider's own text (JSON is UTF-8, RFC 8259); a body the parser
    accepted in another encoding is stored re-encoded, with the same values."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return dumps(loads(raw))


def observation_row(fetched: Fetched, run_id: int | None) -> dict[str, Any]:
    """The ``observations`` row of one answer (``run_id`` None for a dry run, never stored)."""
    row: dict[str, Any] = {
        "run_id": run_id,
        "transaction_id": fetched.transaction_id,
        "fetched_at": fetched.fetched_at,
        "status": str(fetched.status),
        "error": (fetched.error or None) and fetched.error[:_ERROR_TEXT_MAX],
    }
    if fetched.session_transaction_id is not None:
        row["related_transaction_id"] = fetched.session_transaction_id
    if fetched.answered_about is not None:
        row["related_transaction_id"] = fetched.answered_about
    tx = fetched.transaction
    if tx is not None:
        currency = tx.currency_id if len(tx.currency_id) == 3 else None
        row.update(
            state=tx.state,
            type=tx.type,
            error_code=tx.error_code,
            amount=format(tx.amount, "f"),
            amount_minor=_minor_or_none(tx.amount, currency),
            currency=currency,
            related_transaction_id=tx.related_transaction_id,
            original_transaction_id=tx.original_transaction_id,
            merchant_reference=tx.merchant_reference,
            to_bank_account_id=tx.to_bank_account_id,
            created=tx.created,
            eta=tx.eta,
            state_raw=tx.unrecognised_state,
            fee_amount_minor=_minor_or_none(tx.fee_amount, currency),
            fee_id=tx.fee_id,
            settled=tx.settled,
            raw=_raw_text(fetched.raw) if fetched.raw is not None else None,
        )
    return row
