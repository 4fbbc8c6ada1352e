"""The README's and the guides' runnable command blocks, typed line by line as a newcomer would.

The marker: a fenced code block whose info string is ``sh runnable``::

    ```sh runnable
    recon exceptions list      # a comment is fine
    ```

Only those blocks run; every other block (production set-up, output shown, SQL) is left alone.
The README runs first, then each guide in ``docs/`` in name order, all in one fresh directory
holding what a clone holds for them (``examples/``) and a ``.venv`` that is the virtual
environment running this test, so a guide's blocks see what the README's left (the demo's store,
``recon.db``). Each document starts from a shell where that venv is active; within a document,
``export``, ``unset`` and ``. .venv/bin/activate`` lines carry over to the lines after them (each
line is its own ``bash -c``, so those lines are repeated in front of the next ones). Every other
line must exit 0. The lines this test does not run as written, each for a reason:

- ``make demo`` is ``make install`` (which made the venv running this test) plus ``recon demo``;
  the test runs ``recon demo --payouts 40``: the same night and the same store with fewer
  payouts (300 take twice as long; ``tests/e2e/test_demo.py`` runs the demo's own checks).
- ``sleep N`` is the reader waiting N seconds: the test moves the sandbox's clock N seconds on
  instead (``POST /sandbox/clock/advance``), which processes what fell due, as waiting would.
- A line ending in ``&`` (``recon sandbox serve``, ``recon serve callbacks``) starts in the
  background; the test waits until it listens (as a person waits for its start-up line) and stops
  it at the end. The documented default ports become free ones, so that the test never collides
  with a real sandbox or receiver: ``--port`` is added to ``recon sandbox serve``, the environment
  names them where a line relies on a default (``RECON_API_BASE_URL``, ``RECON_SANDBOX_URL``,
  ``RECON_RECEIVER_PORT``), and ``127.0.0.1:8700``/``:8701`` in a line become the chosen ports.
  After ``export RECON_CONFIG=…`` (the demo's configuration: its brands' accounts name their own
  URL, and ``RECON_API_BASE_URL`` beside them is refused) no line relies on the default URL, and
  ``RECON_API_BASE_URL`` is not given.

Nothing else is configured: the default database is ``recon.db`` in that directory, and there is
no SMTP server, as in a fresh clone. The README's walkthrough is followed to its promise: the first
``recon run`` reports the failures and the delay, and the run after ``sleep 300`` shows 13.01
settled and 14.01 returned. Its first run is made a minute and a half after paying (the clock is
moved on), when 14.01 has settled and is not yet returned: a settled payout is not asked about
again for days, so only the returned-funds notification the walkthrough's sandbox sends to the
receiver can show the return within the walkthrough.
"""

from __future__ import annotations

import csv
import math
import os
import re
import shlex
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from recon.settings import RECEIVER_PORT, SANDBOX_PORT
from tests.e2e.run_support import explain

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```sh runnable\n(.*?)^```$", re.MULTILINE | re.DOTALL)
STATE = ("export ", "unset ", ". ")  # lines whose effect the next lines of the document keep
DEMO_PAYOUTS = 40
SLOW_READER = 90  # seconds between paying and the first run: 14.01 has settled, not yet returned
REPORT_LINE = re.compile(r"^recon: report (\S+report\.html)$", re.MULTILINE)
DEMO_LINE = "export RECON_CONFIG=demo-out/recon.toml CREDENTIALS_DIRECTORY=demo-out/credentials"
# The walkthrough's sample (examples/payouts.csv) by sandbox amount (docs/sandbox.md, 7.3).
FIRST_RUN = {"11.01": "aborted", "11.02": "aborted", "12.01": "failed", "13.01": "delayed"}
AFTER_THE_WAIT = {"11.01": "aborted", "11.02": "aborted", "12.01": "failed", "14.01": "returned"}


def runnable_blocks(document: Path) -> list[list[str]]:
    """The non-empty lines of each ``sh runnable`` block of ``document``, in order."""
    text = document.read_text(encoding="utf-8")
    return [[ln for ln in m.group(1).splitlines() if ln.strip()] for m in FENCE.finditer(text)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Wait until ``port`` accepts connections; fail with the log if the process ends first."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"exited {proc.returncode}:\n{log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            time.sleep(0.05)
        else:
            return
    raise AssertionError(f"nothing listens on {port}:\n{log.read_text()}")


@contextmanager
def background(
    script: str, *, cwd: Path, env: dict[str, str], port: int, log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``script`` (bash) in the background, wait until it listens on ``port``; stop it."""
    with log.open("wb") as out:
        proc = subprocess.Popen(["bash", "-c", script], cwd=cwd, env=env, stdout=out, stderr=out)
        try:
            wait_listening(port, proc, log)
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@dataclass
class Session:
    """One reader's terminal: the directory, the environment, the servers started, what ran."""

    home: Path
    logs: Path
    stack: ExitStack
    sandbox_port: int = field(default_factory=free_port)
    receiver_port: int = field(default_factory=free_port)
    runs: list[Path] = field(default_factory=list)  # report directories, one per `recon run`
    outcomes: list[dict[str, str]] = field(default_factory=list)  # read right after each run
    pages: list[str] = field(default_factory=list)  # report.html, read right after each run
    printed: list[str] = field(default_factory=list)  # stdout of every line, in order

    @property
    def sandbox_url(self) -> str:
        return f"http://127.0.0.1:{self.sandbox_port}"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RECON_", "VIRTUAL_ENV"))}
        env.update(
            PATH=f"{self.home / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}",
            RECON_API_BASE_URL=self.sandbox_url,
            RECON_SANDBOX_URL=self.sandbox_url,
            RECON_RECEIVER_PORT=str(self.receiver_port),
        )
        return env

    def literal(self, line: str) -> str:
        ports = {SANDBOX_PORT: self.sandbox_port, RECEIVER_PORT: self.receiver_port}
        for default, chosen in ports.items():
            line = line.replace(f"127.0.0.1:{default}", f"127.0.0.1:{chosen}")
        return line

    def run(self, state: list[str], line: str) -> subprocess.CompletedProcess[str]:
        config = [s for s in state if "RECON_CONFIG" in s.split("#")[0]]
        own_accounts = bool(config) and config[-1].startswith("export RECON_CONFIG=")
        unset = ["unset RECON_API_BASE_URL"] if own_accounts else []
        script = "\n".join([*unset, *state, self.literal(line)])
        return subprocess.run(
            ["bash", "-c", script], cwd=self.home, env=self.env(), capture_output=True,
            text=True, timeout=300,
        )  # fmt: skip

    def start(self, state: list[str], words: list[str]) -> None:
        """A background line: the sandbox or the receiver, on its free port."""
        if words[:3] == ["recon", "sandbox", "serve"]:
            port, name = self.sandbox_port, "sandbox"
            words = words if "--port" in words else [*words, "--port", str(port)]
        elif words[:3] == ["recon", "serve", "callbacks"]:
            port, name = self.receiver_port, "receiver"
        else:
            raise AssertionError(f"a background line this test does not know the port of: {words}")
        script = "\n".join([*state, "exec " + self.literal(shlex.join(words))])
        self.stack.enter_context(
            background(
                script, cwd=self.home, env=self.env(), port=port, log=self.logs / f"{name}.log"
            )
        )

    def advance(self, seconds: int) -> None:
        """The sandbox's clock moves on, and what fell due is processed before it answers."""
        moved = httpx.post(
            f"{self.sandbox_url}/sandbox/clock/advance", json={"seconds": seconds}, timeout=120
        )
        assert moved.status_code == 200, moved.text

    def slow_reader(self) -> None:
        """Move the sandbox's clock to SLOW_READER seconds after 14.01 was paid, if it is not
        there yet: 14.01 has settled (60 s) and is not yet returned (120 s)."""
        records = httpx.get(f"{self.sandbox_url}/sandbox/transactions", timeout=60).json()
        paid = max(
            float(r["created"])
            for r in records["transactions"]
            if Decimal(str(r["amount"])) == Decimal("14.01")
        )
        now = float(httpx.get(f"{self.sandbox_url}/sandbox/clock", timeout=60).json()["now"])
        if now < paid + SLOW_READER:
            self.advance(math.ceil(paid + SLOW_READER - now))

    def follow(self, document: Path) -> None:
        """Every runnable block of ``document``, line by line, in order."""
        state = [". .venv/bin/activate"]
        for block in runnable_blocks(document):
            for line in block:
                self.line(document, state, line)

    def line(self, document: Path, state: list[str], line: str) -> None:
        words = shlex.split(line, comments=True)
        if not words:
            return
        if line.startswith(STATE):
            state.append(line)
            return
        if words[:2] == ["make", "demo"]:
            line = f"recon demo --payouts {DEMO_PAYOUTS}"
        elif words[0] == "sleep":
            self.advance(int(words[1]))
            return
        elif words[-1] == "&":
            self.start(state, words[:-1])
            return
        if words[:2] == ["recon", "run"] and not self.runs:
            self.wait_for_callbacks()
            self.slow_reader()
        done = self.run(state, line)
        where = f"{document.relative_to(ROOT)}: {line}"
        assert done.returncode == 0, f"{where}\n{explain(done)}"
        self.printed.append(done.stdout)
        if words[:2] == ["recon", "run"]:
            found = REPORT_LINE.findall(done.stdout)
            assert found, f"{where}: recon run printed no report path\n{explain(done)}"
            self.runs.append(Path(found[-1]).parent)
            self.outcomes.append(outcomes(self.runs[-1]))
            self.pages.append((self.runs[-1] / "report.html").read_text(encoding="utf-8"))

    def wait_for_callbacks(self) -> None:
        """The sandbox calls back each payout's state at creation, in the background: wait."""
        expected = len(sample_amounts(self.home))
        deadline = time.monotonic() + 60
        while stored_notifications(self.home) < expected and time.monotonic() < deadline:
            time.sleep(0.1)


def outcomes(report_dir: Path) -> dict[str, str]:
    """payouts.csv of the report: merchant reference -> outcome."""
    with (report_dir / "payouts.csv").open(encoding="utf-8") as handle:
        return {row["merchant_reference"]: row["outcome"] for row in csv.DictReader(handle)}


def stored_notifications(directory: Path) -> int:
    if not (directory / "recon.db").is_file():
        return 0
    with sqlite3.connect(directory / "recon.db", timeout=30) as conn:
        return int(conn.execute("SELECT count(*) FROM notifications").fetchone()[0])


def sample_amounts(directory: Path) -> dict[str, str]:
    """examples/payouts.csv: merchant reference -> amount."""
    with (directory / "examples" / "payouts.csv").open(encoding="utf-8") as handle:
        return {row["merchant_reference"]: row["amount"] for row in csv.DictReader(handle)}


def test_the_readme_has_the_walkthrough_blocks_this_test_follows() -> None:
    """The README marks its walkthrough runnable: the demo, its store, and a night with a return."""
    lines = [line for block in runnable_blocks(ROOT / "README.md") for line in block]
    typed = [" ".join(shlex.split(line, comments=True)) for line in lines]
    assert typed[:2] == ["make demo", ". .venv/bin/activate"], typed[:2]
    assert DEMO_LINE in typed
    assert "recon exceptions list" in typed
    assert typed.count("recon run") == 2
    assert "sleep 300" in typed
    assert (
        typed.index("recon run")
        < typed.index("sleep 300")
        < len(typed) - typed[::-1].index("recon run")
    )
    serve = next(t for t in typed if t.startswith("recon sandbox serve"))
    assert f"--returned-funds-url http://127.0.0.1:{RECEIVER_PORT}/callbacks" in serve


def test_the_docs_runnable_blocks_run_line_by_line_in_a_fresh_directory(tmp_path: Path) -> None:
    """Every runnable line exits 0 in order, and the walkthrough's promises hold."""
    venv = Path(sys.prefix)
    if not (venv / "bin" / "activate").is_file():
        pytest.skip("the tests are not running in a virtual environment (make install makes one)")
    home = tmp_path / "clone"
    shutil.copytree(ROOT / "examples", home / "examples")
    (home / ".venv").symlink_to(venv, target_is_directory=True)
    with ExitStack() as stack:
        session = Session(home, tmp_path, stack)
        for document in DOCUMENTS:
            session.follow(document)

    assert any(DEMO_LINE in printed for printed in session.printed), "the demo names its store"
    listed = next(p for p in session.printed if re.search(r"needs? action", p))
    assert "E2-3" in listed, listed  # the demo's exceptions, not the empty default store
    assert (home / "recon.db").is_file(), "recon db upgrade did not create recon.db here"
    assert len(session.runs) == 2, session.runs
    for report in session.runs:
        assert report.is_relative_to(home / "out"), report
    amounts = sample_amounts(home)
    first, later = session.outcomes
    assert set(first) == set(amounts) == set(later)
    for reference, amount in amounts.items():
        # 14.01 is returned already when the machine took over two minutes from paying to polling.
        allowed = (
            {"settled", "returned"} if amount == "14.01" else {FIRST_RUN.get(amount, "settled")}
        )
        assert first[reference] in allowed, (reference, amount, first[reference])
        assert later[reference] == AFTER_THE_WAIT.get(amount, "settled"), (reference, amount)
    # The morning read: the first night's failed and aborted payouts are counted on
    # top as ones to re-pay or contact, and listed right after Needs action.
    failing = sum(1 for a in amounts.values() if FIRST_RUN.get(a) in {"failed", "aborted"})
    assert failing > 0
    assert re.search(rf" · {failing} failed to re-pay or contact</strong>", session.pages[0])
    titles = re.findall(r"<h2>([^<]+)</h2>", session.pages[0])
    assert titles[:2] == ["Needs action", "Failed tonight: re-pay or contact"], titles
