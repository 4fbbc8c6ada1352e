"""The shell of the export's match: read the account's stored export rows settled since the
night's bound (:func:`recon.reconcile.export_match.match_since`) and the record they concern,
once, before asking; the core (:func:`recon.reconcile.export_match.match_export`)
says which payouts the export decides, which ids it names, which to ask about, and what it finds.

Without an export file stored for the account the night reads nothing more and matches nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import Engine

from recon.constants import PollReason
from recon.night.lifecycle import Run
from recon.reconcile.export_match import ExportMatch, match_export, match_since, no_match
from recon.settings import Settings
from recon.store.export_match_reads import read_export
from recon.store.export_rows import has_files


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
    return match_export(
        reads.rows,
        reads.record,
        to_ask=[i for ids in polls.values() for i in ids],
        covered=reads.covered,
        as_of=run.as_of,
        lookback_days=settings.export_lookback_days,
    )
