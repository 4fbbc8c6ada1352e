"""When ids the provider refuses stop the night, and when each is one payout's problem.

A ``transaction.get`` answered 401 or 403 with a working token (a 401 is asked again once with a new
token; a 403 comes with one the provider accepts) means the provider refuses that id to this
merchant account: an id of another of the merchant's accounts (one per brand or country), or one the
provider locked. That payout is ``fetch_failed`` and the night goes on.

The rule: the night stops only when the refusals so far are more than ``limit``
(``RECON_REFUSED_LIMIT``) **and** more than half of the ids asked so far (payouts and returns
together, the refused ones included). That is what a revoked key, or one stripped of access to
transactions, looks like; a few refused ids among many answered are not. Keys refused by
``merchant.authorize`` itself stop the night at once (no token, no call), outside this rule.
"""

from __future__ import annotations

from dataclasses import dataclass


def refusals_stop_the_night(*, refused: int, asked: int, limit: int) -> bool:
    """True when ``refused`` of ``asked`` ids passes ``limit`` and is more than half of them."""
    return refused > limit and 2 * refused > asked


@dataclass(slots=True)
class Refusals:
    """The night's tally of ids asked and refused, shared by its polling passes."""

    limit: int
    asked: int = 0
    refused: int = 0

    def note(self, *, refused: bool) -> bool:
        """Count one id's end; True when the night must stop (see the module docstring)."""
        self.asked += 1
        self.refused += int(refused)
        return refusals_stop_the_night(refused=self.refused, asked=self.asked, limit=self.limit)

    def stop_message(self) -> str:
        """Why the night stopped, in one line."""
        return (
            f"the provider refused {self.refused} of the {self.asked} ids asked so far (more than "
            f"RECON_REFUSED_LIMIT ({self.limit}) and more than half): the API key looks revoked "
            "or without access to transactions; check it with the provider (the answers stored "
            "so far are kept)"
        )
