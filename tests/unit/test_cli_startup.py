"""Importing the command line (what ``recon --help`` does before anything else) loads none of the
heavy libraries: each command imports what it needs when it runs (see recon/cli)."""

from __future__ import annotations

import subprocess
import sys

# Together they would multiply the CLI's start-up time (docs/decisions.md, "Machinery measured").
HEAVY = ("sqlalchemy", "pandas", "numpy", "jinja2", "httpx", "aiohttp", "uvicorn", "matplotlib")


def test_importing_the_command_line_loads_none_of_the_heavy_libraries() -> None:
    """Every command is declared, and no database, dataframe or HTTP library is loaded yet."""
    probe = (
        "import sys; from recon.cli import main; "
        "print(len(main.commands), *sorted({m.split('.')[0] for m in sys.modules}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert int(out[0]) == 16  # with `recon provider-export`
    assert sorted(set(HEAVY) & set(out[1:])) == []
