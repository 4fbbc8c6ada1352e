"""The two locks: requirements.lock is the runtime set production installs, without test tools;
requirements-dev.lock is the same pins (and hashes) plus the test tools, for `make test`."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


def pins(name: str) -> dict[str, tuple[str, frozenset[str]]]:
    """Each package pinned in the lock file ``name``: its version and hashes."""
    found: dict[str, tuple[str, frozenset[str]]] = {}
    package = ""
    for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
        if pin := _PIN.match(line):
            package = pin[1].lower().replace("_", "-")
            found[package] = (pin[2], frozenset())
        elif package and "--hash=" in line:
            version, hashes = found[package]
            found[package] = (version, hashes | {line.split("--hash=")[1].rstrip(" \\")})
    return found


def dev_extra() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    dev = project["optional-dependencies"]["dev"]
    return {re.split(r"[<>=!~;\[ ]", item, maxsplit=1)[0].lower() for item in dev}


def test_the_runtime_lock_holds_no_test_tool() -> None:
    """pytest, mypy, ruff, hypothesis and the rest of the dev extra are not installed in
    production (before: requirements.lock carried them all)."""
    runtime = pins("requirements.lock")
    assert "pytest" in dev_extra()
    assert sorted(dev_extra() & set(runtime)) == []


def test_the_dev_lock_is_the_runtime_lock_plus_the_test_tools() -> None:
    """Every runtime pin is in the dev lock with the same version and hashes: tests run on
    exactly what production runs."""
    runtime, dev = pins("requirements.lock"), pins("requirements-dev.lock")
    assert runtime
    assert {name: dev.get(name) for name in runtime} == runtime
    assert dev_extra() <= set(dev)
