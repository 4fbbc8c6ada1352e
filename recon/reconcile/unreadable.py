"""Notifications recon could not read in full: each stays a finding until a person closes it.

A callback is a claim, and one recon cannot read may claim money: it is stored as received and
named here every night (nothing judges it again), with why it could not be read and how it starts.
A callback for an account that is not configured is named the same way, with its account: recon
never asks the provider about it, so a person must.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from recon.frames import ItemKind
from recon.reconcile.finding import Found, Kind, findings

NOTIFICATION_UNREADABLE = Kind(
    name="notification_unreadable",
    items=(ItemKind.NOTIFICATION,),
    label="Unreadable notification",
    action=(
        "The provider (or someone) sent a callback recon could not read in full; it is stored as "
        "received: read it (recon show, or the notifications table) and ask the provider if it "
        "claims money."
    ),
    detail=(
        "{% if account is defined and account is not none %}a callback for the account "
        "{{ account }}, which is not configured ({{ status }}{{ ': ' ~ reason if reason else '' }})"
        "{% else %}{{ status }}: {{ reason if reason is not none else '' }}{% endif %}"
        "; the body starts {{ excerpt if excerpt is not none else '' }}"
    ),
    same_when=("status", "reason", "excerpt", "account"),
)


def unreadable(notifications: pd.DataFrame) -> pd.DataFrame:
    """One finding per stored notification recon could not read in full, or sent for an account
    that is not configured (``account``; missing: the run's own account)."""
    facts = notifications[["status", "reason", "excerpt", "account"]].reset_index(drop=True)
    return findings(
        NOTIFICATION_UNREADABLE,
        ItemKind.NOTIFICATION,
        notifications["id"].astype("string").reset_index(drop=True),
        Found(np.ones(len(facts), dtype=bool), facts),
    )
