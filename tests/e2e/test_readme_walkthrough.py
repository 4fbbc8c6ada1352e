"""The README's walkthrough, typed line by line as a newcomer would (issue 17, done-when 2).

The lines are read from README.md's "A five-minute walkthrough" block, so the test breaks when the
README changes and stops being true. Each line runs in a fresh directory holding what a clone
holds for it (``examples/``) and a ``.venv`` that is the virtual environment running this test:

- ``make demo`` is not run: it is ``make install`` (which made the venv this test runs in) plus
  ``recon demo``, which ``tests/e2e/test_demo.py`` runs; here it would add half a minute.
- ``. .venv/bin/activate`` is run literally, in front of every later line (each line is its own
  ``bash -c``, so activation is repeated rather than kept).
- ``recon sandbox serve``, which the block's comment says to start in another terminal, is started
  as a subprocess on a free port (``--port``); every other ``recon`` line runs as written. The
  README's default ports become free ones so that the test never collides with a real sandbox or
  receiver: through the environment where a line relies on a default (``RECON_API_BASE_URL``,
  ``RECON_SANDBOX_URL``, ``RECON_RECEIVER_PORT``), by replacing the number where a line spells it.
- A line ending in ``&`` is started in the background, waited for until it listens (as a person
  waits for its start-up line), and stopped at the end.

Nothing else is configured: the database is the default ``recon.db`` in that directory, and there
is no SMTP server, as in a fresh clone.
"""

from __future__ import annotations

import csv
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
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from recon.settings import RECEIVER_PORT, SANDBOX_PORT
from tests.e2e.run_support import explain

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## A five-minute walkthrough"
OTHER_TERMINAL = re.compile(r"in another terminal[^:]*: (recon sandbox serve)\)")
AGAIN_LATER = re.compile(r"Run `(recon run [^`]+)` again five minutes later")
LATER = 300  # seconds: "five minutes"
# What the prose under the block says of the sample's sandbox amounts (docs/sandbox.md, 7.3).
FIRST_RUN = {"11.01": {"aborted"}, "11.02": {"aborted"}, "12.01": {"failed"}, "13.01": {"delayed"}}
FIVE_MINUTES_LATER = {
    "11.01": "aborted",
    "11.02": "aborted",
    "12.01": "failed",
    "14.01": "returned",
}
REPORT_LINE = re.compile(r"^recon: report (\S+report\.html)$", re.MULTILINE)


def walkthrough_block() -> list[str]:
    """The lines of the indented code block right under the walkthrough's heading."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    block: list[str] = []
    for line in lines[lines.index(SECTION) + 1 :]:
        if line.startswith("    "):
            block.append(line[4:])
        elif line.strip():
            assert block, f"prose before the walkthrough's code block: {line!r}"
            break
    return [line for line in block if line.strip()]


@dataclass(frozen=True)
class Walkthrough:
    """The block, sorted into what the test substitutes and the lines it runs as written."""

    activate: str
    sandbox: str  # the command the comment says to run in another terminal
    commands: list[str]  # every line after the activation that the reader types, in order
    later: str  # the command the prose under the block says to run again later


def read_walkthrough() -> Walkthrough:
    """Sort the block's lines; a line this test does not know how to run fails it."""
    lines = walkthrough_block()
    assert lines[0].split("#")[0].split() == ["make", "demo"], lines[0]
    assert lines[1] == ". .venv/bin/activate", lines[1]
    sandbox = None
    commands = []
    for line in lines[2:]:
        if line.startswith("#"):
            found = OTHER_TERMINAL.search(line)
            sandbox = sandbox or (found.group(1) if found else None)
        elif line.startswith("recon "):
            commands.append(line)
        else:
            raise AssertionError(f"the walkthrough has a line this test cannot run: {line!r}")
    assert sandbox is not None, "the walkthrough no longer says to start the sandbox"
    prose = (ROOT / "README.md").read_text(encoding="utf-8").partition(SECTION)[2]
    later = AGAIN_LATER.search(" ".join(prose.split()))
    assert later is not None, "the walkthrough no longer says to run again later"
    typed = [shlex.join(shlex.split(line, comments=True)) for line in commands]
    assert later.group(1) in typed, f"{later.group(1)!r} is not a line of the block"
    return Walkthrough(lines[1], sandbox, commands, later.group(1))


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


def run_line(script: str, *, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )


def outcomes(report_dir: Path) -> dict[str, str]:
    """payouts.csv of the report: merchant reference -> outcome."""
    with (report_dir / "payouts.csv").open(encoding="utf-8") as handle:
        return {row["merchant_reference"]: row["outcome"] for row in csv.DictReader(handle)}


def stored_notifications(directory: Path) -> int:
    with sqlite3.connect(directory / "recon.db", timeout=30) as conn:
        return int(conn.execute("SELECT count(*) FROM notifications").fetchone()[0])


def sample_amounts(directory: Path) -> dict[str, str]:
    """examples/payouts.csv: merchant reference -> amount."""
    with (directory / "examples" / "payouts.csv").open(encoding="utf-8") as handle:
        return {row["merchant_reference"]: row["amount"] for row in csv.DictReader(handle)}


def test_the_readme_walkthrough_runs_line_by_line_in_a_fresh_directory(tmp_path: Path) -> None:
    """Every line of the walkthrough exits 0 in order, and its comments' promises hold."""
    walk = read_walkthrough()
    venv = Path(sys.prefix)
    if not (venv / "bin" / "activate").is_file():
        pytest.skip("the tests are not running in a virtual environment (make install makes one)")
    home = tmp_path / "clone"
    shutil.copytree(ROOT / "examples", home / "examples")
    (home / ".venv").symlink_to(venv, target_is_directory=True)
    sandbox_port, receiver_port = free_port(), free_port()
    sandbox_url = f"http://127.0.0.1:{sandbox_port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECON_", "VIRTUAL_ENV"))}
    env.update(
        RECON_API_BASE_URL=sandbox_url,
        RECON_SANDBOX_URL=sandbox_url,
        RECON_RECEIVER_PORT=str(receiver_port),
    )
    ports = {SANDBOX_PORT: sandbox_port, RECEIVER_PORT: receiver_port}

    def literal(line: str) -> str:
        for default, chosen in ports.items():
            line = line.replace(f"127.0.0.1:{default}", f"127.0.0.1:{chosen}")
        return f"{walk.activate}\n{line}"

    reports: list[Path] = []
    first: dict[str, str] = {}  # the first run's outcomes, read before a later run replaces them
    first_html = ""
    with ExitStack() as stack:
        stack.enter_context(
            background(
                literal(f"exec {walk.sandbox} --port {sandbox_port}"),
                cwd=home, env=env, port=sandbox_port, log=tmp_path / "sandbox.log",
            )
        )  # fmt: skip
        for line in walk.commands:
            words = shlex.split(line, comments=True)
            if words[-1] == "&":
                assert words[:-1] == ["recon", "serve", "callbacks"], (
                    f"a background line this test does not know the port of: {line!r}"
                )
                stack.enter_context(
                    background(
                        literal(f"exec {shlex.join(words[:-1])}"),
                        cwd=home, env=env, port=receiver_port, log=tmp_path / "receiver.log",
                    )
                )  # fmt: skip
                continue
            done = run_line(literal(line), cwd=home, env=env)
            assert done.returncode == 0, f"{line}\n{explain(done)}"
            if words[:2] == ["recon", "run"]:
                found = REPORT_LINE.findall(done.stdout)
                assert found, f"recon run printed no report path:\n{explain(done)}"
                reports.append(Path(found[-1]))
                first = first or outcomes(reports[-1].parent)
                first_html = first_html or reports[-1].read_text(encoding="utf-8")
        _wait_for_callbacks(home, expected=len(sample_amounts(home)))
        # "... again five minutes later": the sandbox's clock moves those minutes on.
        advanced = httpx.post(
            f"{sandbox_url}/sandbox/clock/advance", json={"seconds": LATER}, timeout=60
        )
        assert advanced.status_code == 200, advanced.text
        again = run_line(literal(walk.later), cwd=home, env=env)
        assert again.returncode == 0, f"{walk.later}\n{explain(again)}"
        later = outcomes(Path(REPORT_LINE.findall(again.stdout)[-1]).parent)

    assert (home / "recon.db").is_file(), "recon db upgrade did not create recon.db here"
    assert reports, "the walkthrough has no recon run"
    for report in reports:
        assert report.is_file(), report
        assert report.is_relative_to(home / "out"), report
    amounts = sample_amounts(home)
    assert set(first) == set(amounts) == set(later)
    # The first run: the failures and the delay; the rest are in flight, or settled already if
    # the machine took over a minute between paying and polling.
    for reference, amount in amounts.items():
        expected = FIRST_RUN.get(amount, {"pending", "settled", "returned"})
        assert first[reference] in expected, (reference, amount, first[reference])
    for reference, amount in amounts.items():
        assert later[reference] == FIVE_MINUTES_LATER.get(amount, "settled"), (reference, amount)
    # The morning read (issue 26): the first night's failed and aborted payouts are counted on
    # top as ones to re-pay or contact, and listed right after Needs action.
    failing = sum(1 for a in amounts.values() if FIRST_RUN.get(a, set()) & {"failed", "aborted"})
    assert failing > 0
    assert re.search(rf"<strong>{failing} failed to re-pay or contact</strong>", first_html)
    titles = re.findall(r"<h2>([^<]+)</h2>", first_html)
    assert titles[:2] == ["Needs action", "Failed tonight: re-pay or contact"], titles


def _wait_for_callbacks(home: Path, *, expected: int) -> None:
    """The sandbox calls back each payout's state at creation, in the background: wait for all."""
    deadline = time.monotonic() + 60
    while stored_notifications(home) < expected and time.monotonic() < deadline:
        time.sleep(0.1)
    assert stored_notifications(home) >= expected, "the provider's callbacks did not all land"
