"""The exit code of `recon run` over several accounts, from each account's night's end."""

from __future__ import annotations

from datetime import UTC, datetime

from recon.constants import ExitCode
from recon.night.end import NightEnd, Outcome
from recon.night.nights import Nights, exit_code_of

AS_OF = datetime(2026, 11, 27, 2, 0, tzinfo=UTC)


def end(account: str, outcome: Outcome, code: int) -> NightEnd:
    return NightEnd(outcome=outcome, exit_code=code, run_id=1, as_of=AS_OF, seconds=1.0,
                    account=account)  # fmt: skip


def code(*ends: NightEnd, mail_failed: bool = False) -> int:
    return exit_code_of(Nights(ends, None, 0), mail_failed=mail_failed)


FINE = end("brand_a", Outcome.FINISHED, 0)


def test_every_night_complete_is_0() -> None:
    """Every night complete is 0."""
    assert code(FINE, end("brand_b", Outcome.FINISHED, 0)) == ExitCode.OK


def test_one_failed_night_among_finished_ones_is_3() -> None:
    """One failed night among finished ones is 3."""
    assert code(FINE, end("brand_b", Outcome.FAILED, 1)) == ExitCode.INCOMPLETE


def test_one_incomplete_night_is_3() -> None:
    """One incomplete night is 3."""
    assert code(FINE, end("brand_b", Outcome.FINISHED, 3)) == ExitCode.INCOMPLETE


def test_an_account_another_run_holds_is_4_when_nothing_else_went_wrong() -> None:
    """An account another run holds is 4 when nothing else went wrong."""
    assert code(FINE, end("brand_b", Outcome.REFUSED, 4)) == ExitCode.LOCKED
    assert code(end("brand_b", Outcome.REFUSED, 4)) == ExitCode.LOCKED


def test_a_failed_mail_is_5() -> None:
    """A failed mail is 5."""
    assert code(FINE, end("brand_b", Outcome.FINISHED, 0), mail_failed=True) == 5


def test_no_night_finished_is_the_first_nights_code() -> None:
    """No night finished is the first nights code."""
    assert code(end("brand_a", Outcome.FAILED, 1), end("brand_b", Outcome.FAILED, 1)) == 1
