"""`make demo` in a fresh checkout: before the first install's minute and a half, it says what it
is doing, and pip shows each package as it comes (it was silent: `--quiet`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_a_first_make_demo_says_it_is_installing_and_lets_pip_show_progress(
    tmp_path: Path,
) -> None:
    """`make -n demo` where no venv exists yet: the announcement comes first, and the locked
    dependencies are installed without --quiet."""
    for name in ("Makefile", "requirements.lock", "requirements-dev.lock", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    # Run as a user would at a shell: under `make test` the parent make's MAKELEVEL and MAKEFLAGS
    # would turn this into a sub-make that prints "Entering directory" first.
    alone = {k: v for k, v in os.environ.items() if k not in {"MAKELEVEL", "MAKEFLAGS", "MFLAGS"}}
    planned = subprocess.run(
        ["make", "-n", "demo"], cwd=tmp_path, env=alone, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert "installing" in planned[0]
    assert "first" in planned[0]
    (locked,) = [line for line in planned if "-r requirements-dev.lock" in line]
    assert "--quiet" not in locked
    assert planned[-1].endswith("recon demo")
