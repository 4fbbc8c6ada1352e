"""recon's pytest plugin in a merchant's project: ``payout_sandbox`` with no conftest.

The merchant's tests are docs/sandbox.md's own example, run by pytest in a fresh directory.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx

from recon.sandbox.loopback import LoopbackSandbox

ROOT = Path(__file__).resolve().parents[2]
SECTION = "### In your own tests: the `payout_sandbox` fixture"


def merchant_tests() -> str:
    """The Python block of docs/sandbox.md's section on the fixture."""
    text = (ROOT / "docs" / "sandbox.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None, "docs/sandbox.md shows no merchant test"
    return found.group(1)


def test_a_merchants_project_without_a_conftest_gets_the_payout_sandbox(tmp_path: Path) -> None:
    """docs/sandbox.md's tests of a failed payout (12.01), a return (14.01) and a second account
    with its fee, alone in a directory with no conftest, pass under pytest: the fixture comes
    from the entry point."""
    project = tmp_path / "merchant"
    project.mkdir()
    (project / "test_payouts.py").write_text(merchant_tests(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECON_", "PYTEST_"))}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error",
         "--rootdir", str(project), "test_payouts.py"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout
    assert not list(project.glob("conftest.py"))


def test_the_fixture_serves_the_sandbox_over_http_with_its_own_secret(
    payout_sandbox: LoopbackSandbox,
) -> None:
    """recon's own runs load the plugin too: the url answers on loopback, the keys it names
    authorize, and advance moves the sandbox clock."""
    assert payout_sandbox.url.startswith("http://127.0.0.1:")
    keys = {"public_key": payout_sandbox.public_key, "secret": payout_sandbox.secret}
    assert httpx.post(f"{payout_sandbox.url}/api/merchant.authorize", json=keys).status_code == 200
    wrong = {**keys, "secret": "sandbox-secret"}
    assert httpx.post(f"{payout_sandbox.url}/api/merchant.authorize", json=wrong).status_code == 401
    before = httpx.get(f"{payout_sandbox.url}/sandbox/clock").json()["offset"]
    payout_sandbox.advance(3600)
    after = httpx.get(f"{payout_sandbox.url}/sandbox/clock").json()["offset"]
    assert after - before == 3600


def test_loading_the_plugin_imports_nothing_of_recon_but_the_plugin() -> None:
    """pytest loads the plugin in every run of a project that installed recon: importing it
    costs nothing (the sandbox, uvicorn and httpx load only when a test asks for the fixture)."""
    code = (
        "import sys, recon.pytest_plugin; "
        "print(sorted(m for m in sys.modules if m.startswith(('recon', 'uvicorn', 'httpx'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "['recon', 'recon.pytest_plugin']"
