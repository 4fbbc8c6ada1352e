"""What ``make demo`` prints of a night's roll-forward: a few lines from rollforward.csv.

One line per currency: each outcome's count at the previous run and now, and whether the findings
closed; the file itself is beside the report.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path


def roll_forward_lines(report_dir: Path) -> list[str]:
    """``roll-forward (rollforward.csv): EUR settled 0 -> 120, ...`` for the night in
    ``report_dir``."""
    path = report_dir / "rollforward.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    moves: dict[str, list[str]] = defaultdict(list)
    lines: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for r in rows:
        lines[(r["currency"], r["outcome"])][r["line"]] = r["count"]
    for (cur, outcome), got in lines.items():
        moves[cur or "findings"].append(
            f"{'' if outcome == 'findings' else outcome + ' '}{got['previous']} -> {got['now']}"
        )
    out = [f"roll-forward ({path}): every line closes unless a rollforward_break is listed"]
    out += [f"  {cur}: " + ", ".join(parts) for cur, parts in sorted(moves.items())]
    return out
