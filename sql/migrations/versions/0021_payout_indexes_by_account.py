"""Every index of payouts leads with the provider account.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28

Every read of payouts is one account's (``provider_account = ?``, 0018). SQLite plans without
statistics and, given an equality on the account and an index on it (the (provider_account,
merchant_reference) one), takes that index over one on the read's own columns, so the night's
flagged, due and related-payout reads walked the whole account, the related ones once per 100
party ranges. Each index of payouts that did not lead with the account is made again with it
first: (outcome, outcome_since), (next_check_at), (exceptions), (candidate_duplicates),
(outcome, next_check_at, outcome_since), (bank_account_id, amount_minor, created),
(customer_id, amount_minor, created) and (currency, outcome, amount_minor), the last with
fee_minor after it, so that the roll-forward's fee position is read from the index alone too.

Re-runnable: each new index is made if missing, then the old one dropped if present.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from recon.store.migrate_steps import create_index_if_missing, drop_index_if_present

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ACCOUNT = "provider_account"
# (old name, old columns, new name, keyword arguments for both: MariaDB's prefix of a TEXT)
_CHANGES: tuple[tuple[str, list[str], str, dict[str, Any]], ...] = (
    (
        "ix_payouts_outcome_outcome_since",
        ["outcome", "outcome_since"],
        "ix_payouts_provider_account_outcome_outcome_since",
        {},
    ),
    ("ix_payouts_next_check_at", ["next_check_at"], "ix_payouts_provider_account_next_check_at", {}),
    (
        "ix_payouts_exceptions",
        ["exceptions"],
        "ix_payouts_provider_account_exceptions",
        {"mysql_length": {"exceptions": 255}},
    ),
    (
        "ix_payouts_candidate_duplicates",
        ["candidate_duplicates"],
        "ix_payouts_provider_account_candidate_duplicates",
        {"mysql_length": {"candidate_duplicates": 255}},
    ),
    (
        "ix_payouts_outcome_next_check_at_outcome_since",
        ["outcome", "next_check_at", "outcome_since"],
        "ix_payouts_provider_account_outcome_next_check_at_outcome_since",
        {},
    ),
    (
        "ix_payouts_bank_account_id_amount_minor_created",
        ["bank_account_id", "amount_minor", "created"],
        "ix_payouts_account_bank_account_amount_created",
        {},
    ),
    (
        "ix_payouts_customer_id_amount_minor_created",
        ["customer_id", "amount_minor", "created"],
        "ix_payouts_provider_account_customer_id_amount_minor_created",
        {},
    ),
    (
        "ix_payouts_currency_outcome_amount_minor",
        ["currency", "outcome", "amount_minor"],
        "ix_payouts_account_currency_outcome_amounts",
        {},
    ),
)


# The new index's columns after the account, where they are not the old one's.
_MORE = {"ix_payouts_account_currency_outcome_amounts": ["fee_minor"]}


def upgrade() -> None:
    for old, columns, new, kwargs in _CHANGES:
        create_index_if_missing(new, "payouts", [ACCOUNT, *columns, *_MORE.get(new, [])], **kwargs)
        drop_index_if_present(old, "payouts")


def downgrade() -> None:
    for old, columns, new, kwargs in reversed(_CHANGES):
        create_index_if_missing(old, "payouts", columns, **kwargs)
        drop_index_if_present(new, "payouts")
