"""A cProfile of one measured command, summarised as its top entries (recon's own code first)."""

from __future__ import annotations

import pstats
import tempfile
from pathlib import Path

from bench.support import PYTHON, ROOT, measure


def profile_command(args: list[str], env: dict[str, str], top: int = 12) -> list[str]:
    """Run ``python -m recon ARGS`` under cProfile; the top entries by cumulative time, as text.

    Two lists: recon's own functions (where in recon the time goes) and every function by its
    own time (what the interpreter actually executes).
    """
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.prof"
        measure([PYTHON, "-m", "cProfile", "-o", str(out), "-m", "recon", *args], env=env)
        stats = pstats.Stats(str(out))
        rows = stats.stats  # type: ignore[attr-defined]
        total = max(ct for (_, _, _), (_, _, _, ct, _) in rows.items())
        lines = [f"total {total:.1f} s under the profiler", "", "recon functions, cumulative:"]
        own = []
        for (path, line, name), (_, calls, tottime, cumtime, _) in rows.items():
            if "/recon/" in path and "site-packages" not in path and name != "<module>":
                rel = Path(path).resolve().relative_to(ROOT) if ROOT in Path(path).parents else path
                own.append((cumtime, calls, tottime, f"{rel}:{line}({name})"))
        for cumtime, calls, _, where in sorted(own, reverse=True)[:top]:
            lines.append(f"  {cumtime:7.2f} s  {calls:>9} calls  {where}")
        lines += ["", "all functions, own time:"]
        flat = sorted(
            (
                (tt, nc, f"{Path(p).name}:{ln}({fn})")
                for (p, ln, fn), (_, nc, tt, _, _) in rows.items()
            ),
            reverse=True,
        )
        for tottime, calls, where in flat[:top]:
            lines.append(f"  {tottime:7.2f} s  {calls:>9} calls  {where}")
        return lines
