"""A database URL written wrong never shows its password: every command, every malformed form.

Each command runs as cron runs it (a subprocess); stdout and stderr together are searched for any
piece of the password. A URL recon cannot use is a configuration error (exit 2); a URL it can use
but whose server does not answer is an unreachable database (exit 1). Either way: one line.
"""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from recon.constants import ExitCode
from tests.e2e.run_support import explain, recon, recon_env

pytestmark = pytest.mark.timeout(120)


def closed_port() -> int:
    """A loopback port where nothing listens (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


PORT = closed_port()
# Every password below contains "S3C" and "RETPW": neither may appear anywhere in the output.
NEEDLES = ("S3C", "RETPW")
URLS = [
    pytest.param("postgresql:/u:S3CRETPW@host/db", ExitCode.USAGE, id="one-slash"),
    pytest.param("postgresql:u:S3CRETPW@host/db", ExitCode.USAGE, id="no-slash"),
    pytest.param("postgresql://u:S3CRETPW@host:notaport/db", ExitCode.USAGE, id="bad-port"),
    pytest.param("postgresql://u:S3CRETPW@host:99999/db", ExitCode.USAGE, id="port-too-big"),
    pytest.param("mysql+pymysql://u:S3C@RETPW@127.0.0.1/db", ExitCode.USAGE, id="at-in-password"),
    pytest.param("nosuchdb://u:S3CRETPW@host/db", ExitCode.USAGE, id="unknown-dialect"),
    pytest.param("u:S3CRETPW@host/db", ExitCode.USAGE, id="no-scheme"),
    pytest.param(
        f"mysql://u:S3CRETPW@127.0.0.1:{PORT}/db?charset=bogus", ExitCode.USAGE, id="bad-charset"
    ),
    pytest.param(
        f"postgresql://u@127.0.0.1:{PORT}/db?password=S3CRETPW",
        ExitCode.FAILURE,
        id="query-password",
    ),
    pytest.param(
        f"postgresql://u:S3C%40RETPW@127.0.0.1:{PORT}/db", ExitCode.FAILURE, id="percent-encoded"
    ),
    pytest.param(f"mysql://u:S3CRETPW@127.0.0.1:{PORT}/db", ExitCode.FAILURE, id="mysql-down"),
]


def assert_one_clean_line(done: subprocess.CompletedProcess[str], expected: ExitCode) -> None:
    """The documented exit code, and one line on stderr holding no piece of the password."""
    output = done.stdout + done.stderr
    assert done.returncode == expected, explain(done)
    assert "Traceback" not in output, explain(done)
    assert [n for n in NEEDLES if n in output] == [], explain(done)
    assert done.stdout == "", explain(done)
    assert len(done.stderr.strip().splitlines()) == 1, explain(done)
    assert done.stderr.startswith("recon: error: "), explain(done)


@pytest.mark.parametrize(("url", "expected"), URLS)
@pytest.mark.parametrize("command", [["db", "upgrade"], ["run", "--out", "out"]])
def test_a_bad_database_url_is_one_line_without_the_password(
    tmp_path: Path, url: str, expected: ExitCode, command: list[str]
) -> None:
    """`db upgrade` and `run` with RECON_DATABASE_URL wrong in any way."""
    done = recon(recon_env(url, "http://127.0.0.1:9"), *command, cwd=tmp_path)
    assert_one_clean_line(done, expected)


@pytest.mark.parametrize(("url", "expected"), URLS)
def test_a_bad_source_url_is_one_line_without_the_password(
    tmp_path: Path, url: str, expected: ExitCode
) -> None:
    """`recon import payouts --sql --source-url` with the merchant's URL wrong in any way."""
    query = tmp_path / "payouts.sql"
    query.write_text("SELECT 1 AS transaction_id\n", encoding="utf-8")
    env = recon_env(f"sqlite:///{tmp_path / 'recon.db'}", "http://127.0.0.1:9")
    args = ["import", "payouts", "--sql", str(query), "--source-url", url]
    assert_one_clean_line(recon(env, *args, cwd=tmp_path), expected)


@pytest.mark.parametrize(("url", "expected"), [p for p in URLS if p.values[1] == ExitCode.USAGE])
def test_config_check_names_a_malformed_database_url_and_exits_2(
    tmp_path: Path, url: str, expected: ExitCode
) -> None:
    """`recon config check` lists the settings and a failed database line, without the password."""
    env = recon_env(url, f"http://127.0.0.1:{PORT}")
    done = recon(env, "config", "check", cwd=tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == expected, explain(done)
    assert "Traceback" not in output, explain(done)
    assert [n for n in NEEDLES if n in output] == [], explain(done)
    (line,) = [ln for ln in done.stdout.splitlines() if ln.strip()[2:].startswith("database")]
    assert line.strip().startswith("✗"), explain(done)
