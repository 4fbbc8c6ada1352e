"""Plumbing shared by the benchmark modules: measured child processes, the sandbox, the machine.

Every figure comes from a child process, so the benchmark script's own memory and CPU never count:
``os.wait4`` gives each child's CPU seconds and peak resident memory (Linux ``ru_maxrss``, KiB).
Children are always reaped; the sandbox is stopped even when a measurement fails, and a throwaway
PostgreSQL database is dropped even when a measurement fails.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
RECON = [PYTHON, "-m", "recon"]


@dataclass(frozen=True)
class Measured:
    """One child process: wall seconds, CPU seconds (user + system), peak memory, its output."""

    seconds: float
    cpu_seconds: float
    peak_mb: float
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        """The last line of stdout, parsed (the helper scripts print one JSON object)."""
        return json.loads(self.stdout.strip().splitlines()[-1])


def measure(
    cmd: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 600.0,
    check: bool = True,
    memory_limit_mb: float | None = None,
    cwd: Path = ROOT,
) -> Measured:
    """Run ``cmd`` to the end and measure it; kill it after ``timeout`` seconds.

    ``memory_limit_mb`` caps the child's address space (``RLIMIT_AS``), so a step that would take
    the shared machine's memory fails with a ``MemoryError`` instead. ``cwd`` is where it runs
    (``python -m recon`` imports recon from there first: another tree's, in ``bench/trees.py``).
    """
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    # Measured as installed: an installed recon starts from its compiled bytecode, so the tree's
    # is compiled (see :func:`compile_tree`) and read, not compiled again in every measured run.
    full_env.pop("PYTHONDONTWRITEBYTECODE", None)
    limit = None if memory_limit_mb is None else int(memory_limit_mb * 1024 * 1024)

    def cap() -> None:
        if limit is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            list(cmd), stdout=out, stderr=err, env=full_env, cwd=cwd, preexec_fn=cap
        )
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        result = Measured(
            seconds=seconds,
            cpu_seconds=usage.ru_utime + usage.ru_stime,
            peak_mb=usage.ru_maxrss / 1024,
            returncode=proc.returncode,
            stdout=out.read(),
            stderr=err.read(),
        )
    if check and result.returncode not in (0,):
        raise RuntimeError(
            f"{' '.join(cmd[:4])}... exited {result.returncode}:\n{result.stderr[-3000:]}"
        )
    return result


def compile_tree(tree: Path = ROOT) -> None:
    """Compile ``tree``'s ``recon`` and ``bench`` packages to bytecode, as installing would
    (a machine with ``PYTHONDONTWRITEBYTECODE`` set otherwise compiles them in every measured
    run: ~0.3 CPU s of start-up, more for a larger tree)."""
    packages = [str(tree / name) for name in ("recon", "bench") if (tree / name).is_dir()]
    subprocess.run([PYTHON, "-m", "compileall", "-q", *packages], check=True, cwd=tree)


def median_of(runs: Sequence[Measured]) -> Measured:
    """The run with the median wall time (so its CPU and memory belong to the same run)."""
    ordered = sorted(runs, key=lambda m: m.seconds)
    return ordered[(len(ordered) - 1) // 2]


def median(values: Sequence[float]) -> float:
    """The median of ``values``."""
    return float(statistics.median(values))


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for(port: int, proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode} before it served")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the sandbox on port {port} did not start in {timeout:.0f} s")


@dataclass(frozen=True)
class Served:
    """A sandbox serving in a child process."""

    url: str
    pid: int

    def cpu_seconds(self) -> float:
        """CPU seconds (user + system) the sandbox process has used so far (Linux /proc)."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def _served(cmd: list[str], port: int) -> Iterator[Served]:
    """Start ``cmd``, a server that will listen on ``port``; stop it (then kill it) at the end."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    try:
        _wait_for(port, proc)
        yield Served(f"http://127.0.0.1:{port}", proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@contextmanager
def sandbox_process(settle_after: float = 86_400.0) -> Iterator[Served]:
    """``recon sandbox serve`` in its own process (its own GIL); yields its url and pid.

    Payouts settle only after ``settle_after`` seconds, so no background event changes the
    answers while the benchmark runs. Faults (latency, rate limit) are set with :func:`set_faults`.
    """
    port = free_port()
    cmd = [*RECON, "sandbox", "serve", "--port", str(port), "--settle-after", str(settle_after)]
    with _served(cmd, port) as served:
        yield served


@contextmanager
def standin_process(
    answers: Path | None = None, *, fast: bool = False, latency_ms: float = 0.0
) -> Iterator[Served]:
    """The provider stand-in (``bench/standin.py``; ``fast``: on aiohttp) in its own process."""
    port = free_port()
    cmd = [PYTHON, str(ROOT / "bench" / "standin.py"), str(port), "--latency-ms", f"{latency_ms:g}"]
    if answers is not None:
        cmd += ["--answers", str(answers)]
    if fast:
        cmd += ["--fast"]
    with _served(cmd, port) as served:
        yield served


def admin(base_url: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
    """Call a sandbox admin route (GET without ``body``, POST with it); the decoded answer."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(  # noqa: S310 - a loopback http url built here
        f"{base_url}{path}", data=data, headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
        return json.loads(answer.read())


def set_faults(base_url: str, **faults: Any) -> None:
    """Change the sandbox's faults (``latency_ms``, ``rate_limit_rps``...); re-seeds its draws."""
    admin(base_url, "/sandbox/faults", faults)


def copy_sqlite(source: Path, target: Path) -> None:
    """A fresh copy of a (closed, checkpointed) SQLite database file."""
    for suffix in ("-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(source, target)


# --- PostgreSQL: a throwaway database on a server the caller names --------------------------------

BENCH_POSTGRES_ENV = "RECON_BENCH_POSTGRES_URL"
TEST_POSTGRES_ENV = "RECON_TEST_POSTGRES_URL"
_CONNECT_TIMEOUT_S = 5


@dataclass(frozen=True)
class PostgresServer:
    """Where the PostgreSQL benchmarks run, or why they do not (``url`` is then empty)."""

    url: str
    reason: str = ""

    @property
    def shown(self) -> str:
        """The server URL without its password, for BENCHMARKS.md."""
        from recon.store.db import safe_url

        return safe_url(self.url) if self.url else ""


def _admin_engine(server_url: str) -> Any:
    """An AUTOCOMMIT engine on the server URL's own database: CREATE/DROP DATABASE need it."""
    from sqlalchemy import create_engine

    from recon.store.db import parse_url

    return create_engine(
        parse_url(server_url),
        isolation_level="AUTOCOMMIT",
        connect_args={"connect_timeout": _CONNECT_TIMEOUT_S},
    )


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def postgres_server(environ: Mapping[str, str] = os.environ) -> PostgresServer:
    """The PostgreSQL server of ``$RECON_BENCH_POSTGRES_URL`` (else the tests' URL), if it answers.

    An empty ``RECON_BENCH_POSTGRES_URL`` turns the PostgreSQL benchmarks off. The URL's database
    is only the door: the benchmarks create their own (see :func:`throwaway_database`).
    """
    from sqlalchemy.exc import SQLAlchemyError

    from recon.errors import ConfigError
    from recon.store.db import safe_url

    if BENCH_POSTGRES_ENV in environ:
        url, source = environ[BENCH_POSTGRES_ENV].strip(), BENCH_POSTGRES_ENV
        if not url:
            return PostgresServer("", f"`{BENCH_POSTGRES_ENV}` is empty")
    else:
        url, source = environ.get(TEST_POSTGRES_ENV, "").strip(), TEST_POSTGRES_ENV
    if not url:
        return PostgresServer(
            "", f"neither `{BENCH_POSTGRES_ENV}` nor `{TEST_POSTGRES_ENV}` is set"
        )
    try:
        admin = _admin_engine(url)
    except (ConfigError, SQLAlchemyError, ImportError) as exc:
        return PostgresServer("", f"`{source}` is not a usable URL: {_first_line(exc)}")
    try:
        if admin.dialect.name != "postgresql":
            return PostgresServer("", f"`{source}` is not a PostgreSQL URL")
        with admin.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
    except SQLAlchemyError as exc:
        return PostgresServer("", f"no server answered at {safe_url(url)}: {_first_line(exc)}")
    finally:
        admin.dispose()
    return PostgresServer(url)


class ThrowawayDatabase:
    """A database ``recon_bench_<pid>_<tag>`` the benchmark owns on a PostgreSQL server.

    Nothing is ever measured in the database the server URL names, which may hold someone's data:
    :meth:`reset` (re)creates this one empty, :meth:`drop` removes it, sessions and all.
    """

    def __init__(self, server_url: str, tag: str) -> None:
        from recon.store.db import parse_url

        self.name = f"recon_bench_{os.getpid()}_{tag}"
        self._server_url = server_url
        self.url = (
            parse_url(server_url).set(database=self.name).render_as_string(hide_password=False)
        )

    @contextmanager
    def _admin(self) -> Iterator[Any]:
        admin = _admin_engine(self._server_url)
        try:
            with admin.connect() as conn:
                yield conn
        finally:
            admin.dispose()

    def _drop(self, conn: Any) -> None:
        # WITH (FORCE) (PostgreSQL 13+) also ends a session that a stopped step left behind.
        force = " WITH (FORCE)" if conn.dialect.server_version_info >= (13,) else ""
        conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {self.name}{force}")

    def reset(self) -> None:
        """Drop the database if it exists and create it again, empty."""
        with self._admin() as conn:
            self._drop(conn)
            conn.exec_driver_sql(f"CREATE DATABASE {self.name}")

    def drop(self) -> None:
        """Drop the database (closing any session still on it)."""
        with self._admin() as conn:
            self._drop(conn)


@contextmanager
def throwaway_database(server_url: str, tag: str) -> Iterator[ThrowawayDatabase]:
    """A new empty :class:`ThrowawayDatabase`, dropped on the way out even after a failure."""
    database = ThrowawayDatabase(server_url, tag)
    try:
        database.reset()
        yield database
    finally:
        database.drop()


def machine() -> dict[str, str]:
    """Cores, memory, CPU model, Python: the header of BENCHMARKS.md."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    return {
        "cores": str(os.cpu_count()),
        "memory": memory,
        "cpu": cpu,
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
    }
