"""A run's counts: what the run log stores, the closing line prints and the report's footer shows.

A typed record instead of a ``dict[str, Any]``; stored in ``runs.counts`` as a JSON object with the
same keys, so older rows read back unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any

# The kinds of finding a run ends with no answer about (those only an answer ends,
# recon.reconcile.finding.Ends.ANSWER), by name: the run log is read without the core.
UNANSWERED = ("fetch_failed", "wrong_transaction")


@dataclass(frozen=True)
class RunCounts:
    """How many payouts, answers, exceptions, outcomes and flags a run had, and how fast it was.

    ``seconds`` and ``requests_per_second`` are durations, not money, but kept as exact decimal
    text because the store's JSON writer refuses floats everywhere.
    """

    payouts: int = 0
    polled: int = 0
    fetched: int = 0
    exceptions: int = 0
    outcomes: Mapping[str, int] = field(default_factory=dict)
    flags: Mapping[str, int] = field(default_factory=dict)
    requests: int = 0
    retries: int = 0  # requests sent again (after a failure or a 429)
    polls: Mapping[str, int] = field(default_factory=dict)  # ids asked about, per PollReason
    polls_saved: int = 0  # payouts decided from the provider's export without asking
    claims_over_cap: int = 0  # unverified return claims due but left for the next run
    # Ids the provider named that the record lacks: unrecorded payouts, other types,
    # unknown to the provider, left for the next run (recon.reconcile.unrecorded's COUNT_*).
    provider: Mapping[str, int] = field(default_factory=dict)
    journal_entries: int = 0  # the journal entries the run made (recon.night.journal)
    seconds: Decimal = Decimal(0)
    requests_per_second: Decimal = Decimal(0)

    @property
    def fetch_failed(self) -> int:
        """Items without an answer about them this run (the run is then incomplete): fetches that
        failed, and answers about another id (``wrong_transaction``)."""
        return sum(int(self.flags.get(f, 0)) for f in UNANSWERED)

    def to_json(self) -> dict[str, Any]:
        """The JSON object stored in the run log."""
        data = asdict(self)
        data["outcomes"], data["flags"] = dict(self.outcomes), dict(self.flags)
        data["polls"] = dict(self.polls)
        data["provider"] = dict(self.provider)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunCounts:
        """A stored object back (missing keys, e.g. of a run that never got far, are zero)."""

        def number(key: str) -> Decimal:
            value = data.get(key)
            return Decimal(str(value)) if value is not None else Decimal(0)

        return cls(
            payouts=int(data.get("payouts", 0)),
            polled=int(data.get("polled", 0)),
            fetched=int(data.get("fetched", 0)),
            exceptions=int(data.get("exceptions", 0)),
            outcomes={str(k): int(v) for k, v in dict(data.get("outcomes", {})).items()},
            flags={str(k): int(v) for k, v in dict(data.get("flags", {})).items()},
            requests=int(data.get("requests", 0)),
            retries=int(data.get("retries", 0)),
            polls={str(k): int(v) for k, v in dict(data.get("polls", {})).items()},
            polls_saved=int(data.get("polls_saved", 0)),
            claims_over_cap=int(data.get("claims_over_cap", 0)),
            provider={str(k): int(v) for k, v in dict(data.get("provider", {})).items()},
            journal_entries=int(data.get("journal_entries", 0)),
            seconds=number("seconds"),
            requests_per_second=number("requests_per_second"),
        )
