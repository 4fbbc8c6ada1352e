"""The shell of the export's match: read the account's stored export rows settled since the
night's bound (:func:`recon.reconcile.export_match.match_since`) and the record they concern,
once, before asking; the core (:func:`recon.reconcile.export_match.match_export`)
says which payouts the export decides, which ids it names, which to ask about, and what it finds;
then which return-watch checks due tonight it stands in for
(:func:`recon.reconcile.export_match.watch_from_export`), decided from their latest answers.

Without an export file stored for the account the night reads nothing more and matches nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

import pandas as pd
from sqlalchemy import Engine

from recon.constants import PollReason
from recon.export_rows import ExportKind
from recon.night.lifecycle import Run
from recon.reconcile.export_match import (
    ExportMatch,
    ExportRowsIn,
    match_export,
    match_since,
    no_match,
    watch_from_export,
)
from recon.run_frames import Answers
from recon.settings import Settings
from recon.store.export_match_reads import read_export, read_watch_due
from recon.store.export_rows import has_files
from recon.store.selection import with_evidence


def export_match(
    settings: Settings, engine: Engine, run: Run, polls: Mapping[PollReason, Sequence[str]]
) -> ExportMatch:
    """What the stored export tells tonight about the ids ``polls`` names, and beyond."""
    with engine.connect() as conn:
        if not has_files(conn, run.account):
            return no_match()
        since = match_since(
            run.as_of,
            watch_days=max(settings.watch_days, settings.return_watch_days),
            lookback_days=settings.export_lookback_days,
        )
        reads = read_export(conn, since=since, account=run.account)
        # A callback since the last check is spent only by an answer, or by a file stored after
        # it that shows the payout; a changed record only by an answer: those are asked about.
        hinted, changed = with_evidence(conn, account=run.account)
        evidence = changed | _unanswered(hinted, reads.rows)
        watched = [
            str(i)
            for i in polls.get(PollReason.RETURN_WATCH, ())
            if i not in hinted and i not in changed
        ]
        due = read_watch_due(conn, watched, as_of=run.as_of, account=run.account)
    matched = match_export(
        reads.rows,
        reads.record,
        to_ask=[i for ids in polls.values() for i in ids if i not in evidence],
        covered=reads.covered,
        as_of=run.as_of,
        lookback_days=settings.export_lookback_days,
    )
    # A return-watch check the export stands in for is decided too, unless the match already
    # decided it or asks about it.
    taken = set(matched.ask) | set(matched.decided[Answers.TRANSACTION_ID].astype(str))
    due = due[~due[Answers.TRANSACTION_ID].isin(taken)]
    stood = watch_from_export(due, reads.rows, covered=reads.covered, as_of=run.as_of)
    if stood.empty:
        return matched
    decided = pd.concat([matched.decided, stood], ignore_index=True).astype(Answers.dtypes())
    return replace(matched, decided=decided)


def _unanswered(hinted: Mapping[str, datetime], rows: pd.DataFrame) -> frozenset[str]:
    """The hinted payouts no export file stored after their latest callback shows."""
    if not hinted:
        return frozenset()
    payout_rows = rows[rows[ExportRowsIn.KIND].astype(str) == ExportKind.PAYOUT.value]
    seen = payout_rows.groupby(ExportRowsIn.TRANSACTION_ID)[ExportRowsIn.SEEN_AT].max()
    return frozenset(
        i for i, at in hinted.items() if i not in seen.index or not seen[i] > pd.Timestamp(at)
    )
