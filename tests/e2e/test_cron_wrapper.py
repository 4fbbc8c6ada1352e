"""cron/recon-nightly.sh as cron runs it: env file, flock, timestamped log, rotation, exit codes.

``RECON_BIN`` points at a small fake recon: the wrapper's job is the environment, the lock, the log
and the exit code; a real ``recon run`` is tested elsewhere.
"""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.monitor_support import Monitor

WRAPPER = Path(__file__).resolve().parents[2] / "cron" / "recon-nightly.sh"
SECRET = "wrapper-api-secret-d41d8c"

pytestmark = pytest.mark.skipif(
    shutil.which("flock") is None or shutil.which("bash") is None,
    reason="needs bash and flock(1) from util-linux",
)
needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="the wrapper pings with curl")

FAKE_RECON = """#!/bin/sh
# A stand-in for `recon`: records that it ran, says whether it got the secret (never its value).
echo "$$" >>"$FAKE_RUNS"
echo "fake recon $* tz=$RECON_TIMEZONE secret=${RECON_API_SECRET:+present}"
echo "a line on stderr" >&2
if [ -n "${FAKE_PRINT_BYTES:-}" ]; then head -c "$FAKE_PRINT_BYTES" /dev/zero | tr '\\0' x; echo; fi
sleep "${FAKE_SLEEP:-0}"
exit "${FAKE_CODE:-0}"
"""


@dataclass
class Setup:
    """Paths of one wrapper installation in tmp_path."""

    root: Path
    env_file: Path
    log_file: Path
    runs: Path

    def write_env(self, extra: str = "", mode: int = 0o600) -> None:
        self.env_file.write_text(
            "# recon nightly\n"
            f'RECON_API_SECRET="{SECRET}"\n'
            "RECON_TIMEZONE='Europe/Helsinki'\n"
            f"export RECON_BIN={self.root / 'recon'}\n"
            f"RECON_LOG_FILE={self.log_file}\n"
            f"RECON_LOCK_FILE={self.root / 'recon-nightly.lock'}\n"
            f"FAKE_RUNS={self.runs}\n" + extra,
            encoding="utf-8",
        )
        self.env_file.chmod(mode)

    def start(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        env = {"PATH": "/usr/bin:/bin", "RECON_ENV_FILE": str(self.env_file), **(env or {})}
        return subprocess.Popen(
            ["bash", str(WRAPPER), *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        proc = self.start(*args, env=env)
        out, err = proc.communicate(timeout=30)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def recon_runs(self) -> int:
        return len(self.runs.read_text().splitlines()) if self.runs.exists() else 0

    def log(self) -> str:
        return self.log_file.read_text(encoding="utf-8")


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    fake = tmp_path / "recon"
    fake.write_text(FAKE_RECON, encoding="utf-8")
    fake.chmod(0o755)
    installed = Setup(tmp_path, tmp_path / "recon.env", tmp_path / "log" / "recon.log",
                      tmp_path / "runs")  # fmt: skip
    installed.write_env()
    return installed


def test_two_wrappers_started_at_once_run_recon_once_and_the_other_exits_4(
    setup: Setup,
) -> None:
    """Both start together: one runs recon (exit 0), the other exits 4 at once, saying why."""
    setup.write_env("FAKE_SLEEP=2\n")
    started = time.monotonic()
    procs = [setup.start(), setup.start()]
    exited_after: dict[int, float] = {}  # index -> seconds; the output is small, polling is safe
    while len(exited_after) < len(procs) and time.monotonic() - started < 30:
        for index, proc in enumerate(procs):
            if index not in exited_after and proc.poll() is not None:
                exited_after[index] = time.monotonic() - started
        time.sleep(0.02)
    by_code = {
        proc.returncode: (exited_after[index], proc.communicate(timeout=5)[1])
        for index, proc in enumerate(procs)
    }
    assert sorted(by_code) == [0, 4]
    locked_after, locked_err = by_code[4]
    assert locked_after < by_code[0][0]  # it exited at once, while the other was still running
    assert "another recon run is in progress" in locked_err
    assert by_code[0][0] >= 2
    assert setup.recon_runs() == 1
    assert "another recon run is in progress" in setup.log()


def test_a_successful_run_prints_nothing_and_logs_timestamped_lines(setup: Setup) -> None:
    """Exit 0, silent for cron; stdout and stderr of recon land in the log with a timestamp."""
    result = setup.run()
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    lines = setup.log().splitlines()
    assert any(line.endswith("fake recon run tz=Europe/Helsinki secret=present") for line in lines)
    assert any(line.endswith(" a line on stderr") for line in lines)
    assert all(line[:4].isdigit() and line[10] == "T" for line in lines)
    assert re.search(r"recon-nightly: finished with exit code 0$", lines[-1])


def test_a_variable_already_in_the_environment_wins_over_the_env_file(setup: Setup) -> None:
    """RECON_TIMEZONE set by cron or systemd overrides the file's value; the rest still loads."""
    assert setup.run(env={"RECON_TIMEZONE": "UTC"}).returncode == 0
    assert "tz=UTC secret=present" in setup.log()


def test_extra_arguments_are_passed_to_recon_run(setup: Setup) -> None:
    """`recon-nightly.sh --no-email` runs `recon run --no-email`."""
    assert setup.run("--no-email", "--out", "/srv/out").returncode == 0
    assert "fake recon run --no-email --out /srv/out " in setup.log()


def test_check_runs_recon_config_check_with_the_env_file_loaded(setup: Setup) -> None:
    """`recon-nightly.sh --check` prints `recon config check`'s output and exits with its code."""
    setup.write_env("FAKE_CODE=1\n")
    result = setup.run("--check")
    assert result.returncode == 1
    assert "fake recon config check tz=Europe/Helsinki secret=present" in result.stdout
    assert not setup.log_file.exists()


def test_status_runs_recon_status_with_the_env_file_loaded(setup: Setup) -> None:
    """`recon-nightly.sh --status` is `recon status` as the nightly run's user and env file
    would run it: its output and its Nagios exit code, no lock, no log."""
    setup.write_env("FAKE_CODE=2\n")
    result = setup.run("--status")
    assert result.returncode == 2
    assert "fake recon status tz=Europe/Helsinki secret=present" in result.stdout
    assert not setup.log_file.exists()


def test_recon_verbose_adds_the_global_verbose_option(setup: Setup) -> None:
    """RECON_VERBOSE=1 runs `recon -v run` (progress lines in the log); 7 is refused."""
    setup.write_env("RECON_VERBOSE=1\n")
    assert setup.run().returncode == 0
    assert "fake recon -v run tz=" in setup.log()
    setup.write_env("RECON_VERBOSE=7\n")
    assert setup.run().returncode == 2


@pytest.mark.parametrize("code", [1, 3, 5])
def test_the_run_exit_code_is_passed_through_with_a_one_line_summary(
    setup: Setup, code: int
) -> None:
    """recon exits 3: the wrapper exits 3 and prints one line saying what it means and where."""
    setup.write_env(f"FAKE_CODE={code}\n")
    result = setup.run()
    assert result.returncode == code
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"recon-nightly: recon run exited {code}: ")
    assert line.endswith(f"see {setup.log_file}")
    if code == 3:
        assert "incomplete" in line


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_an_env_file_open_to_group_or_others_is_refused_with_exit_2(
    setup: Setup, mode: int
) -> None:
    """The env file holds secrets: any group/other permission stops the run before recon starts."""
    setup.write_env(mode=mode)
    result = setup.run()
    assert result.returncode == 2
    assert f"(mode {mode:o})" in result.stderr
    assert f"chmod 600 {setup.env_file}" in result.stderr
    assert setup.recon_runs() == 0


def test_a_read_only_env_file_is_accepted(setup: Setup) -> None:
    """Mode 400 is as private as 600."""
    setup.write_env(mode=0o400)
    assert setup.run().returncode == 0


def test_a_symlinked_env_file_is_judged_by_its_target(setup: Setup) -> None:
    """/etc/recon/recon.env may be a symlink: the target's mode 600 counts, not the link's."""
    link = setup.root / "link.env"
    link.symlink_to(setup.env_file)
    env = {"RECON_ENV_FILE": str(link)}
    assert setup.run(env=env).returncode == 0
    setup.env_file.chmod(0o644)
    assert setup.run(env=env).returncode == 2


def test_a_missing_env_file_is_refused_with_exit_2(setup: Setup) -> None:
    """No env file: exit 2 naming the file and RECON_ENV_FILE."""
    setup.env_file.unlink()
    result = setup.run()
    assert result.returncode == 2
    assert f"environment file {setup.env_file} does not exist" in result.stderr
    assert "RECON_ENV_FILE" in result.stderr


def test_a_malformed_env_file_line_is_named_by_number_not_content(setup: Setup) -> None:
    """A bad line is reported by its number only: its text may be a secret."""
    setup.write_env(f"{SECRET} oops\n")
    result = setup.run()
    assert result.returncode == 2
    assert f"{setup.env_file} line 8: expected NAME=value" in result.stderr
    assert SECRET not in result.stderr
    assert setup.recon_runs() == 0


def test_the_wrapper_never_writes_the_env_files_content(setup: Setup) -> None:
    """Across a good run, a failed run and a refused start, the secret is in no output or log."""
    outputs = [setup.run()]
    setup.write_env("FAKE_CODE=3\n")
    outputs.append(setup.run())
    setup.write_env(mode=0o644)
    outputs.append(setup.run())
    assert "secret=present" in setup.log()  # recon did receive it
    for result in outputs:
        assert SECRET not in result.stdout + result.stderr
    assert SECRET not in setup.log()


def test_the_log_rotates_above_its_size_and_keeps_n_old_files(setup: Setup) -> None:
    """Above RECON_LOG_MAX_BYTES the log moves to .1, .1 to .2, and the oldest beyond N goes."""
    setup.write_env("RECON_LOG_MAX_BYTES=300\nRECON_LOG_KEEP=2\nFAKE_PRINT_BYTES=400\n")
    for run in range(4):
        assert setup.run().returncode == 0, run
    log = setup.log_file
    assert sorted(p.name for p in log.parent.iterdir()) == ["recon.log", "recon.log.1",
                                                            "recon.log.2"]  # fmt: skip
    assert "log rotated" in setup.log().splitlines()[0]
    assert setup.log().count("fake recon run") == 1
    assert Path(f"{log}.1").read_text(encoding="utf-8").count("fake recon run") == 1


def test_a_small_log_is_not_rotated(setup: Setup) -> None:
    """Below the size every run appends to the same file."""
    for _ in range(3):
        assert setup.run().returncode == 0
    assert setup.log().count("fake recon run") == 3
    assert not Path(f"{setup.log_file}.1").exists()


def test_rotated_logs_are_gzipped_when_asked(setup: Setup) -> None:
    """RECON_LOG_GZIP=1 compresses the rotated file; its content is the previous run's log."""
    setup.write_env("RECON_LOG_MAX_BYTES=100\nRECON_LOG_GZIP=1\n")
    assert setup.run().returncode == 0
    assert setup.run().returncode == 0
    old = gzip.decompress(Path(f"{setup.log_file}.1.gz").read_bytes()).decode()
    assert old.count("fake recon run") == 1
    assert not Path(f"{setup.log_file}.1").exists()


def test_a_recon_missing_from_path_exits_2_with_a_hint(setup: Setup) -> None:
    """RECON_BIN naming nothing: exit 2 and the advice to set a full path."""
    setup.write_env(f"RECON_BIN={setup.root / 'missing-recon'}\n")
    result = setup.run()
    assert result.returncode == 2
    assert "set RECON_BIN to its full path" in result.stderr


@needs_curl
def test_a_recon_that_cannot_start_pings_the_heartbeat_fail_url(
    setup: Setup, monitor: Monitor
) -> None:
    """recon never ran, so it could not ping: the wrapper sends URL/fail, and never prints it."""
    setup.write_env(
        f"RECON_BIN={setup.root / 'missing-recon'}\nRECON_HEARTBEAT_URL={monitor.url}\n"
    )
    result = setup.run()
    assert result.returncode == 2
    assert monitor.paths == ["/ping/3f0e-check/fail"]
    assert "RECON_BIN" in monitor.pings[0][1]
    assert "3f0e-check" not in result.stdout + result.stderr


@needs_curl
def test_a_recon_killed_by_a_signal_pings_fail_and_a_normal_exit_leaves_pings_to_recon(
    setup: Setup, monitor: Monitor
) -> None:
    """Exit 137 (SIGKILL): URL/fail from the wrapper. Exit 0 or 3: recon pings for itself."""
    for code in (0, 3):
        setup.write_env(f"FAKE_CODE={code}\nRECON_HEARTBEAT_URL={monitor.url}\n")
        assert setup.run().returncode == code
    assert monitor.paths == []
    setup.write_env(f"FAKE_CODE=137\nRECON_HEARTBEAT_URL={monitor.url}\n")
    assert setup.run().returncode == 137
    assert monitor.paths == ["/ping/3f0e-check/fail"]
    assert "killed by signal 9" in monitor.pings[0][1]
