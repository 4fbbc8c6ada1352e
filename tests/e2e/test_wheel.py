"""The package works as a wheel: templates and SQL migrations ship inside it."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_carries_the_templates_and_the_migrations(tmp_path: Path) -> None:
    """`pip install .` gets recon/_data/{reports,sql}, where recon.resources looks first."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("recon-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in (
        "recon/_data/reports/report.html",
        "recon/_data/reports/report.css",
        "recon/_data/reports/sandbox/hosted.html",
        "recon/_data/sql/migrations/env.py",
        "recon/_data/sql/migrations/versions/0001_initial.py",
        "recon/cli.py",
    ):
        assert expected in names, f"{expected} is missing from {wheel.name}"
