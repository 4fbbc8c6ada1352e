"""The report's one chart: amounts settled and failed per day, one small panel per currency (small
multiples: amounts of different currencies never share an axis), as a PNG (matplotlib, Agg).

It is shown at most :data:`CHART_WIDTH` CSS pixels wide, so a 390 px phone shows it unscaled and
its text stays legible, and drawn at :data:`PIXEL_RATIO` times that for sharp screens.

A PNG, not an SVG or script, because email clients show images and nothing else. The figure is
built with the object API (``Figure`` + ``FigureCanvasAgg``), so no global pyplot state is touched
and no display is needed.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from recon.constants import FAILED_OUTCOMES, Outcome
from recon.money import minor_digits

MAX_DAYS = 31
PIXEL_RATIO = 2  # PNG pixels per CSS pixel
CHART_WIDTH = 360  # CSS pixels: fits a 390 px phone with the page's margins
PANEL_HEIGHT = 150  # CSS pixels per currency
DEFAULT_CHART_SIZE = (CHART_WIDTH, 200)  # CSS pixels, when the PNG cannot tell
_DPI = 100 * PIXEL_RATIO
SETTLED_COLOUR = "#009E73"
FAILED_COLOUR = "#D55E00"
# Colour-blind-safe palette (Okabe and Ito), chosen so failures read as warm and success as cool.
COLOURS: dict[str, str] = {
    Outcome.SETTLED: "#009E73",
    Outcome.RETURNED: "#CC79A7",
    Outcome.FAILED: "#D55E00",
    Outcome.ABORTED: "#E69F00",
    Outcome.DELAYED: "#F0E442",
    Outcome.PENDING: "#56B4E9",
    Outcome.UNKNOWN: "#999999",
    Outcome.UNCHECKED: "#000000",
}


def daily_volume(payouts: pd.DataFrame, timezone: str) -> pd.DataFrame:
    """Payout counts per local day (rows, at most the last ``MAX_DAYS``) and outcome (columns)."""
    created = pd.to_datetime(payouts["created"], utc=True)
    frame = pd.DataFrame(
        {
            # The local midnight of each payout's day; only the days found are printed as text
            # (strftime over every payout cost time and memory: BENCHMARKS.md).
            "day": created.dt.tz_convert(timezone).dt.tz_localize(None).dt.floor("D"),
            "outcome": payouts["outcome"].astype(object),
        }
    )[created.notna()]
    table = frame.groupby(["day", "outcome"]).size().unstack(fill_value=0)
    order = [o.value for o in Outcome if o.value in table.columns]
    table = table[order].sort_index().tail(MAX_DAYS)
    table.index = pd.DatetimeIndex(table.index).strftime("%Y-%m-%d")
    if not table.empty:
        # Quiet days are bars of zero, not missing days.
        days = pd.date_range(table.index[0], table.index[-1], freq="D").strftime("%Y-%m-%d")
        table = table.reindex(days, fill_value=0)
    return table


def daily_amounts(payouts: pd.DataFrame, timezone: str) -> pd.DataFrame:
    """Amounts per local day (rows, the last ``MAX_DAYS`` days with payouts) and (currency,
    ``settled`` or ``failed``) (columns), in integer minor units: settled counts settled and
    returned payouts, failed counts failed and aborted ones, each on the day it was created."""
    created = pd.to_datetime(payouts["created"], utc=True)
    outcome = payouts["outcome"].astype(object)
    kind = np.select(
        [
            outcome.isin([Outcome.SETTLED, Outcome.RETURNED]).to_numpy(dtype=bool),
            outcome.isin(FAILED_OUTCOMES).to_numpy(dtype=bool),
        ],
        ["settled", "failed"],
        default="",
    )
    frame = pd.DataFrame(
        {
            "day": created.dt.tz_convert(timezone).dt.tz_localize(None).dt.floor("D"),
            "currency": payouts["currency"].astype(object),
            "kind": kind,
            "amount": payouts["amount_minor"].astype("Int64").fillna(0).astype(np.int64),
        }
    )[created.notna().to_numpy() & payouts["currency"].notna().to_numpy()]
    currencies = sorted(str(c) for c in frame["currency"].unique())
    columns = pd.MultiIndex.from_product([currencies, ["settled", "failed"]])
    if frame.empty:
        return pd.DataFrame(columns=columns, dtype=np.int64)
    days = pd.date_range(frame["day"].min(), frame["day"].max(), freq="D")[-MAX_DAYS:]
    counted = frame[frame["kind"] != ""]
    table = (
        counted.groupby(["day", "currency", "kind"])["amount"].sum().unstack(["currency", "kind"])
    )
    table = table.reindex(index=days, columns=columns).fillna(0).astype(np.int64)
    table.index = pd.DatetimeIndex(table.index).strftime("%Y-%m-%d")
    return table


def volume_chart_png(payouts: pd.DataFrame, timezone: str) -> bytes:
    """Small multiples of :func:`daily_amounts`: a panel per currency, settled above the line and
    failed below it, in the currency's major units; PNG bytes, :data:`CHART_WIDTH` CSS px wide."""
    # Imported here: matplotlib costs about a second of start-up that only a chart needs.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    table = daily_amounts(payouts, timezone)
    currencies = list(dict.fromkeys(str(column[0]) for column in table.columns))
    panels = max(len(currencies), 1)
    height = 40 + PANEL_HEIGHT * panels  # CSS pixels: the title line and a panel per currency
    fig = Figure(figsize=(CHART_WIDTH / 100, height / 100), dpi=_DPI)
    FigureCanvasAgg(fig)
    if table.empty:
        ax = fig.add_subplot()
        ax.text(0.5, 0.5, "no payouts", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
    else:
        fig.suptitle(f"Settled and failed per day ({timezone})", fontsize=10, x=0.02, ha="left")
        positions = np.arange(len(table))
        step = max(1, len(table) // 5)
        axes = fig.subplots(panels, 1, sharex=True, squeeze=False)[:, 0]
        for ax, cur in zip(axes, currencies, strict=True):
            scale = 10 ** minor_digits(cur)
            # Heights only: the figures themselves are exact in the tables and the CSVs.
            settled = table[(cur, "settled")].to_numpy() / scale
            failed = table[(cur, "failed")].to_numpy() / scale
            ax.bar(positions, settled, color=SETTLED_COLOUR, label="settled")
            ax.bar(positions, -failed, color=FAILED_COLOUR, label="failed or aborted")
            ax.axhline(0, color="#56606b", linewidth=0.6)
            ax.set_title(cur, fontsize=10, loc="left", fontweight="bold", pad=2)
            ax.yaxis.set_major_locator(MaxNLocator(nbins=3))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _short_amount(abs(v))))
            ax.tick_params(labelsize=8, length=2)
            ax.spines[["top", "right"]].set_visible(False)
        axes[0].legend(
            fontsize=8,
            frameon=False,
            loc="upper left",
            ncols=2,
            bbox_to_anchor=(0.0, 1.0),
            borderaxespad=0.0,
        )
        axes[-1].set_xticks(positions[::step], [d[5:] for d in table.index[::step]])
    fig.tight_layout(pad=0.4)
    buf = io.BytesIO()
    # No timestamps in the PNG metadata, so the same data gives the same bytes.
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def _short_amount(value: float) -> str:
    """An axis label: ``1.2M``, ``35k``, ``900``."""
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"
