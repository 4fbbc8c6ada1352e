"""The shell of the provider's side: read what the core needs, in two steps of a night.

Between two asking phases (no question out): the items (live ones, and ids named for the first
time by the notifications since the previous finished run or by this run's answers), from which
the core picks the ids to ask (:func:`recon.reconcile.unrecorded.to_ask`). After the last phase:
the same items again (the answers may name more ids), the unmatched attempts and the recorded
payouts that may repeat either, as :class:`~recon.decision.ProviderInputs` for
:func:`recon.reconcile.decide.decide`.
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd
from sqlalchemy import Connection

from recon.constants import DEFAULT_ACCOUNT
from recon.decision import ProviderInputs
from recon.frames import Observations
from recon.reconcile.unrecorded import named_ids, new_items, to_ask
from recon.run_frames import Attempts, Named, ProviderItems
from recon.store.provider_items import (
    absent_ids,
    live_items,
    named_since,
    recorded_among,
    recorded_like,
    unmatched_attempts,
)
from recon.store.runs import previous_finished_run, run_record


def items_now(
    conn: Connection,
    *,
    run_id: int | None,
    as_of: datetime,
    answers: pd.DataFrame,
    account: str = DEFAULT_ACCOUNT,
    also_named: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The live items of ``account`` and the ids named for the first time (not recorded, not yet
    an item); ``also_named``: ids named besides the notifications (the export's,
    :class:`~recon.run_frames.Named`)."""
    previous = previous_finished_run(conn, run_id, account=account)
    record = run_record(conn, previous) if previous is not None else None
    since = record.started_at if record else None
    notified = named_since(conn, since, account=account)
    if also_named is not None and not also_named.empty:
        notified = pd.concat([notified, also_named], ignore_index=True)
    named = named_ids(notified, answers, at=as_of)
    fresh = set(absent_ids(conn, named[Named.TRANSACTION_ID].astype(str), account=account))
    first = new_items(named[named[Named.TRANSACTION_ID].isin(fresh).to_numpy()])
    return pd.concat([live_items(conn, account=account), first], ignore_index=True)


def ids_to_ask(
    conn: Connection,
    *,
    run_id: int | None,
    as_of: datetime,
    answers: pd.DataFrame,
    cap: int,
    account: str = DEFAULT_ACCOUNT,
    also_named: pd.DataFrame | None = None,
) -> tuple[list[str], int]:
    """The ids the record lacks to ask about this run, and how many more were due."""
    items = items_now(
        conn, run_id=run_id, as_of=as_of, answers=answers, account=account, also_named=also_named
    )
    return to_ask(items, cap=cap, answered=answers[Observations.TRANSACTION_ID].astype(str))


def provider_inputs(
    conn: Connection,
    *,
    run_id: int | None,
    as_of: datetime,
    answers: pd.DataFrame,
    window: pd.Timedelta,
    over_cap: int,
    account: str = DEFAULT_ACCOUNT,
    also_named: pd.DataFrame | None = None,
) -> ProviderInputs:
    """What the core decides the provider's side of ``account`` from, read after every answer is
    in."""
    items = items_now(
        conn, run_id=run_id, as_of=as_of, answers=answers, account=account, also_named=also_named
    )
    attempts = unmatched_attempts(conn, account=account)
    mine = answers[answers[Observations.TRANSACTION_ID].isin(items[ProviderItems.TRANSACTION_ID])]
    refs = pd.concat(
        [
            items[ProviderItems.MERCHANT_REFERENCE],
            mine[Observations.MERCHANT_REFERENCE],
            attempts[Attempts.MERCHANT_REFERENCE],
        ]
    ).dropna()
    parties = pd.concat(
        [
            items[[ProviderItems.TO_BANK_ACCOUNT_ID, ProviderItems.AMOUNT_MINOR]],
            mine[[Observations.TO_BANK_ACCOUNT_ID, Observations.AMOUNT_MINOR]].set_axis(
                [ProviderItems.TO_BANK_ACCOUNT_ID, ProviderItems.AMOUNT_MINOR], axis=1
            ),
        ]
    ).dropna()
    pairs = {(str(a), int(m)) for a, m in zip(parties.iloc[:, 0], parties.iloc[:, 1], strict=True)}
    return ProviderInputs(
        items=items,
        attempts=attempts,
        recorded=recorded_like(conn, refs.astype(str), pairs, account=account),
        window=window,
        recorded_ids=recorded_among(
            conn, items[ProviderItems.TRANSACTION_ID].astype(str), account=account
        ),
        over_cap=over_cap,
    )
