"""The line `recon run` ends with (and cron logs) counts in words that agree with the numbers."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from recon.counts import RunCounts
from recon.night.finish import summary_line
from recon.night.lifecycle import Run, RunMode
from recon.night.poll import PollStats

AS_OF = datetime(2026, 11, 23, 2, 30, tzinfo=UTC)


def test_one_payout_and_one_exception_are_singular() -> None:
    """One payout and one exception are "1 payout" and "1 exception", not "1 payouts"."""
    run = Run(RunMode.NIGHTLY, AS_OF, AS_OF, id=7)
    counts = RunCounts(payouts=1, exceptions=1, outcomes={"failed": 1})
    line = summary_line(run, counts, PollStats(requested=1, seconds=0.5), 1.0, ZoneInfo("UTC"))
    assert line.startswith("recon: run 7 as of 2026-11-23 02:30:00 UTC: 1 payout (failed 1); ")
    assert "; 1 exception; " in line


def test_other_counts_are_plural() -> None:
    """0 and 2 take the plural."""
    run = Run(RunMode.NIGHTLY, AS_OF, AS_OF, id=8)
    line = summary_line(run, RunCounts(payouts=2), PollStats(), 0.1, ZoneInfo("UTC"))
    assert ": 2 payouts (none); 0 exceptions; polled 0" in line


def test_the_as_of_is_in_the_configured_zone_and_names_it() -> None:
    """RECON_TIMEZONE Europe/Copenhagen: the night of 03:30 CET, not 02:30 UTC."""
    run = Run(RunMode.NIGHTLY, AS_OF, AS_OF, id=9)
    line = summary_line(run, RunCounts(), PollStats(), 0.1, ZoneInfo("Europe/Copenhagen"))
    assert line.startswith("recon: run 9 as of 2026-11-23 03:30:00 CET: ")
