"""Loading the run's second half ahead of time, while the run waits on the provider.

A run spends most of its time waiting for answers, with CPU to spare; importing pandas, the report
stack and matplotlib and drawing a first figure (about a second of CPU) would otherwise come
before the first request or after the last answer, on the run's clock.
"""

from __future__ import annotations

import io
import logging
import threading

log = logging.getLogger(__name__)


def warm_up() -> None:
    """Import what deciding and reporting need, and draw one tiny figure (the chart starts warm)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    import recon.reconcile.conclude  # noqa: F401 - pandas, classification, the report stack

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
            log.debug("warming up failed; the run imports what it needs itself", exc_info=True)

    thread = threading.Thread(target=target, name="recon-warm-up", daemon=True)
    thread.start()
    return thread
