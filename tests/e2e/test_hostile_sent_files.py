"""Hostile files sent to `recon exceptions apply FILE` and `recon import payouts`: bounded, refused.

Each runs the command as a subprocess and reads its peak resident memory from the kernel
(``wait4``).
On the tree before the fix these fail (docs/reliability.md has the figures): the bombs took
gigabytes, the entity chain crashed the process (SIGSEGV), bad XML gave a traceback, the
million-column header a huge error line, the symlink quoted its target and the FIFO waited
forever. Here the child's address space is capped at 1 GiB, so the old tree fails with
a MemoryError instead of taking the machine's memory, and a watchdog ends a child that waits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.run_support import RECON
from tests.unit import sent_files

ADDRESS_SPACE = 1 << 30
PEAK_BOUND_MIB = 250  # the command's start-up alone peaks at about 115 MiB
WATCHDOG_SECONDS = 60.0


@dataclass(frozen=True)
class Ran:
    code: int
    peak_mib: float
    stdout: str
    stderr: str  # the first 10,000 bytes
    stderr_bytes: int


# Runs argv[3:] under an address-space cap (argv[1]), writes its peak RSS in KiB to argv[2], and
# exits with its code.
_LAUNCHER = """
import os, resource, subprocess, sys
cap = int(sys.argv[1])
cap_it = lambda: resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
child = subprocess.Popen(sys.argv[3:], preexec_fn=cap_it)
_, status, usage = os.wait4(child.pid, 0)
open(sys.argv[2], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def recon(tmp: Path, *args: str) -> Ran:
    """Run recon on its own store, its output to files (a huge error line cannot block it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env["RECON_DATABASE_URL"] = f"sqlite:///{tmp / 'recon.db'}"
    out, err, peak = tmp / "stdout.txt", tmp / "stderr.txt", tmp / "peak.txt"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        # recon runs as the child of a small launcher, which measures it: a process forked from
        # this test (or exec'd by one) counts this process's memory in its own peak, which late in
        # a long session is more than the bound itself.
        proc = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, str(ADDRESS_SPACE), str(peak), RECON, *args],
            env=env,
            cwd=tmp,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,  # the watchdog kills recon with its launcher
        )
        watchdog = threading.Timer(WATCHDOG_SECONDS, os.killpg, (proc.pid, signal.SIGKILL))
        watchdog.start()
        try:
            _, status, _ = os.wait4(proc.pid, 0)
        finally:
            watchdog.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
    with err.open("rb") as handle:
        head = handle.read(10_000).decode(errors="replace")
    return Ran(
        code=proc.returncode,
        peak_mib=int(peak.read_text()) / 1024 if peak.exists() else float("inf"),
        stdout=out.read_text(errors="replace"),
        stderr=head,
        stderr_bytes=err.stat().st_size,
    )


def assert_refused(ran: Ran, file: Path, *words: str) -> None:
    """One short line naming the file, exit 2, bounded memory, nothing applied."""
    print(f"{file.name}: peak {ran.peak_mib:.0f} MiB: {ran.stderr.strip()}")  # noqa: T201 - -s
    assert ran.code == 2, ran.stderr[:2000]
    line = ran.stderr.strip()
    assert "\n" not in line, ran.stderr[:2000]
    assert "Traceback" not in line
    assert ran.stderr_bytes < 600, f"the error line is {ran.stderr_bytes:,} bytes"
    assert line.startswith(f"recon: error: {file}"), line
    assert all(word in line for word in words), line
    assert ran.peak_mib < PEAK_BOUND_MIB, f"peak {ran.peak_mib:.0f} MiB"
    assert ran.stdout == ""


WORKBOOKS: dict[str, tuple[Callable[[Path], Path], str]] = {
    # 1 MB zipped, 288 MB inflated
    "rows bomb": (lambda p: sent_files.rows_bomb(p, 3_000_000), "would inflate to 288,"),
    # 10 million shared strings, 180 MB inflated
    "shared strings": (lambda p: sent_files.strings_bomb(p, 10_000_000), "shared strings"),
    # 991 KB; before the fix the process crashed with SIGSEGV
    "entity chain": (lambda p: sent_files.entity_chain(p, 200_000), "entity declarations"),
    "billion laughs": (sent_files.billion_laughs, "entity declarations"),
    "undefined entity": (sent_files.undefined_entity, "undefined entity"),
    "truncated sheet": (sent_files.truncated_sheet, "no element found"),
}


@pytest.mark.parametrize("attack", WORKBOOKS)
def test_a_hostile_workbook_is_refused_in_one_line_and_bounded_memory(
    tmp_path: Path, attack: str
) -> None:
    """Bombs are refused before parsing; XML with entities or broken XML names its part."""
    make, words = WORKBOOKS[attack]
    file = make(tmp_path / "back.xlsx")
    ran = recon(tmp_path, "exceptions", "apply", str(file))
    assert_refused(ran, file, words, "nothing was applied")


@pytest.mark.parametrize("command", [("exceptions", "apply"), ("import", "payouts")])
def test_a_header_of_a_million_columns_is_one_short_line(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """No column named resolution (or transaction_id): the line's length refuses it, not memory."""
    file = tmp_path / "back.csv"
    file.write_text(",".join(f"column{i}" for i in range(1_000_000)) + "\n")
    ran = recon(tmp_path, *command, str(file))
    assert_refused(ran, file, "line 1 is longer than 1,048,576 characters")


@pytest.mark.parametrize("command", [("exceptions", "apply"), ("import", "payouts")])
def test_a_header_of_many_columns_is_quoted_in_sixty_characters(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """100,000 columns within the line limit: their count and an excerpt."""
    file = tmp_path / "back.csv"
    file.write_text(",".join(f"c{i}" for i in range(100_000)) + "\n")
    ran = recon(tmp_path, *command, str(file))
    assert_refused(ran, file, "found 100,000 columns, from 'c0, c1, c2")


def test_a_symbolic_link_to_another_file_is_refused_without_quoting_it(tmp_path: Path) -> None:
    """The link's target (its first line a secret) is not read."""
    secret = tmp_path / "secret.txt"
    secret.write_text("root:$6$do-not-show$:19000:0:99999:7:::\n")
    file = tmp_path / "back.csv"
    file.symlink_to(secret)
    ran = recon(tmp_path, "exceptions", "apply", str(file))
    assert_refused(ran, file, "a symbolic link, not read")
    assert "do-not-show" not in ran.stderr


@pytest.mark.parametrize("command", [("exceptions", "apply"), ("import", "payouts")])
def test_a_fifo_is_refused_at_once(tmp_path: Path, command: tuple[str, ...]) -> None:
    """No writer ever comes: refused without waiting for one (before: waited forever)."""
    file = tmp_path / "back.csv"
    os.mkfifo(file)
    ran = recon(tmp_path, *command, str(file))
    assert_refused(ran, file, "a FIFO (named pipe), not a regular file: not read")
