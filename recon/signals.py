"""SIGTERM and SIGINT as an exception, so that a process asked to stop cleans up on its way out.

Python turns SIGINT into ``KeyboardInterrupt``, but SIGTERM (``kill``, systemd stopping a unit,
cron's timeout) ends the process at once: no ``finally`` runs, and a half-written partial file stays
behind, full of customer data (docs/reliability.md). Inside
:func:`stopping_raises` both signals raise :class:`Terminated` instead; on the way out the previous
handlers are back, and the signal is delivered again under them, so the process still ends the way
it would have (SIGTERM's default: killed by the signal, exit status 143 in a shell).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Terminated(BaseException):  # a BaseException, as KeyboardInterrupt: not an error to handle
    """The process was asked to stop by ``signum``; ``finally`` blocks run on the way out."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


@contextmanager
def stopping_raises() -> Iterator[None]:
    """Inside, SIGTERM and SIGINT raise :class:`Terminated` (a signal ignored before stays
    ignored). Only the main thread can set handlers: elsewhere this changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(sig, _raise)
    try:
        yield
    except Terminated as stop:
        _restore(previous)
        signal.raise_signal(stop.signum)  # as if it had come now, to the previous handler
        raise  # that handler let the process live: still stop what was being done
    finally:
        _restore(previous)


def _restore(previous: dict[signal.Signals, Any]) -> None:
    for sig, handler in previous.items():
        # None: a handler not set from Python; the default is the closest that can be put back
        signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
