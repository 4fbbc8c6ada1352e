"""The package works as a wheel: templates and SQL migrations ship inside it."""

from __future__ import annotations

import configparser
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """recon's wheel, built once for this module."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    (built,) = out.glob("recon-*.whl")
    return built


def test_the_wheel_carries_the_templates_and_the_migrations(wheel: Path) -> None:
    """`pip install .` gets recon/_data/{reports,sql}, where recon.resources looks first."""
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in (
        "recon/_data/reports/report.html",
        "recon/_data/reports/report.css",
        "recon/_data/reports/sandbox/hosted.html",
        "recon/_data/sql/migrations/env.py",
        "recon/_data/sql/migrations/versions/0001_initial.py",
        "recon/cli/__init__.py",
    ):
        assert expected in names, f"{expected} is missing from {wheel.name}"


def test_the_wheel_is_typed_and_registers_the_pytest_plugin(wheel: Path) -> None:
    """py.typed ships (type checkers read recon's annotations) and the ``pytest11`` entry point
    names recon's plugin, so a project that installs recon gets ``payout_sandbox``."""
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (entry_points,) = (n for n in names if n.endswith(".dist-info/entry_points.txt"))
        text = archive.read(entry_points).decode("utf-8")
    assert "recon/py.typed" in names
    parser = configparser.ConfigParser()
    parser.read_string(text)
    assert dict(parser["pytest11"]) == {"recon": "recon.pytest_plugin"}
