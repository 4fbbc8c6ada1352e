"""The line `recon run` ends with (and cron logs) counts in words that agree with the numbers."""

from __future__ import annotations

from datetime import UTC, datetime

from recon.counts import RunCounts
from recon.night.finish import summary_line
from recon.night.lifecycle import Run, RunMode
from recon.night.poll import PollStats

AS_OF = datetime(2026, 11, 23, 2, 30, tzinfo=UTC)


def test_one_payout_and_one_exception_are_singular() -> None:
    """One payout and one exception are "1 payout" and "1 exception", not "1 payouts"."""
    run = Run(RunMode.NIGHTLY, AS_OF, AS_OF, id=7)
    counts = RunCounts(payouts=1, exceptions=1, outcomes={"failed": 1})
    line = summary_line(run, counts, PollStats(requested=1, seconds=0.5), 1.0)
    assert line.startswith("recon: run 7 as of 2026-11-23T02:30:00+00:00: 1 payout (failed 1); ")
    assert "; 1 exception; " in line


def test_other_counts_are_plural() -> None:
    """0 and 2 take the plural."""
    run = Run(RunMode.NIGHTLY, AS_OF, AS_OF, id=8)
    line = summary_line(run, RunCounts(payouts=2), PollStats(), 0.1)
    assert ": 2 payouts (none); 0 exceptions; polled 0" in line
