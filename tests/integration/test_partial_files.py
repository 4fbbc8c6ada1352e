"""The sweep of partial files left by killed writers: theirs go, a running writer's stay."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from recon.files import sweep_partials


def gone_pid() -> int:
    """The id of a process that has ended (and been reaped)."""
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    return int(child.stdout)


def test_only_leftovers_of_ended_writers_from_before_the_start_are_swept(tmp_path: Path) -> None:
    """A dead writer's partial file and directory go; a running writer's, a newer one and files
    that are not recon's partial files stay."""
    dead, alive = gone_pid(), os.getppid()
    leftover = tmp_path / f".payouts.csv.recon-{dead}.a1b2c3_d.tmp"
    leftover.write_text("tx1,ref-1\n")
    leftover_dir = tmp_path / f".payouts.xlsx.recon-{dead}.x9y8z7w6.tmp"
    leftover_dir.mkdir()
    (leftover_dir / "tmprows").write_text("<row/>")
    running = tmp_path / f".payouts.csv.recon-{alive}.qwertyui.tmp"
    running.write_text("tx2\n")
    own = tmp_path / f".payouts.csv.recon-{os.getpid()}.asdfghjk.tmp"
    own.write_text("tx3\n")
    other = [tmp_path / ".payouts.csv.abcdefgh.tmp", tmp_path / ".bashrc", tmp_path / "p.csv"]
    for path in other:
        path.write_text("x")
    started = time.time() + 1  # everything above was written before this
    newer = tmp_path / f".late.csv.recon-{dead}.zxcvbnmm.tmp"
    newer.write_text("tx4\n")
    os.utime(newer, (started + 5, started + 5))

    removed = sweep_partials(tmp_path, before=started)

    assert sorted(removed) == sorted([leftover, leftover_dir])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in [running, own, newer, *other]
    )


def test_a_directory_that_does_not_exist_has_nothing_to_sweep(tmp_path: Path) -> None:
    """No directory yet (the export creates it after): nothing removed, no error."""
    assert sweep_partials(tmp_path / "missing", before=time.time()) == []
