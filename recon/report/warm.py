"""Loading the report's drawing libraries ahead of time, while a run waits on the provider.

A run spends most of its time waiting for answers, with a core to spare; matplotlib's import and
first drawing (about 0.4 s of CPU) would otherwise come after the last answer, on the run's clock.
"""

from __future__ import annotations

import io
import logging
import threading

log = logging.getLogger(__name__)


def warm_up() -> None:
    """Import matplotlib and draw one tiny figure, so the report's chart starts warm."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(1, 1), dpi=10)
    FigureCanvasAgg(fig)
    fig.add_subplot().set_title("warm")
    fig.savefig(io.BytesIO(), format="png")


def warm_up_in_background() -> threading.Thread:
    """Start :func:`warm_up` in a daemon thread; a failure is only logged (the chart reports it)."""

    def target() -> None:
        try:
            warm_up()
        except Exception:
            log.debug("warming up the chart libraries failed", exc_info=True)

    thread = threading.Thread(target=target, name="recon-warm-up", daemon=True)
    thread.start()
    return thread
