"""A night's end mapped to its exit code, in one place (recon.night.end.exit_code)."""

from __future__ import annotations

import signal

from recon.constants import RunStatus
from recon.counts import RunCounts
from recon.errors import InputError, LockHeld, LockLost, MailError, ProviderError, StoreError
from recon.night.end import exit_code
from recon.signals import Terminated

BROKEN = RunCounts(flags={"rollforward_break": 1})


def test_a_finished_night_exits_0_3_or_5() -> None:
    """Complete 0; payouts not fetched or a roll-forward that broke 3, whatever the mail; else a
    failed email 5."""
    assert exit_code(status=RunStatus.COMPLETE, counts=RunCounts()) == 0
    assert exit_code(status=RunStatus.INCOMPLETE, counts=RunCounts()) == 3
    assert exit_code(status=RunStatus.COMPLETE, counts=BROKEN) == 3
    assert exit_code(status=RunStatus.COMPLETE, counts=RunCounts(), mail_failed=True) == 5
    assert exit_code(status=RunStatus.INCOMPLETE, counts=RunCounts(), mail_failed=True) == 3
    assert exit_code(status=RunStatus.DRY_RUN, counts=RunCounts()) == 0


def test_a_night_an_error_stopped_exits_with_the_errors_code() -> None:
    """The documented code of recon's errors (recon.errors.EXIT_FOR); anything else 1."""
    assert exit_code(error=InputError("bad --as-of")) == 2
    assert exit_code(error=LockHeld("held")) == 4
    assert exit_code(error=LockLost("taken")) == 4
    assert exit_code(error=MailError("no")) == 5
    assert exit_code(error=StoreError("down")) == 1
    assert exit_code(error=ProviderError("down")) == 1
    assert exit_code(error=ValueError("a bug")) == 1


def test_a_night_a_signal_stopped_exits_as_the_signal_would() -> None:
    """128 + the signal's number; an interrupt (Ctrl-C) 130."""
    assert exit_code(error=Terminated(signal.SIGTERM)) == 143
    assert exit_code(error=KeyboardInterrupt()) == 130
