"""`recon serve callbacks` says where it listens as soon as it does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx

ANNOUNCE = re.compile(r"receiving callbacks on (http://127\.0\.0\.1:(\d+))(/callbacks\S*)")


def _serve(tmp_path: Path, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "recon"), "serve", "callbacks", "--port", "0"],
        env=os.environ | {"RECON_DATABASE_URL": f"sqlite:///{tmp_path / 'recon.db'}"} | env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _announced(proc: subprocess.Popen[str]) -> re.Match[str]:
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:  # ends if the process exits before announcing
        seen.append(line)
        found = ANNOUNCE.search(line)
        if found:
            return found
    raise AssertionError(f"no start-up line; output: {''.join(seen)}")


def test_the_receiver_logs_the_address_it_listens_on(tmp_path: Path) -> None:
    """With --port 0 the line names the port the system chose; the health check answers there."""
    proc = _serve(tmp_path)
    try:
        found = _announced(proc)
        assert found.group(3) == "/callbacks"
        assert int(found.group(2)) > 0
        assert httpx.get(f"{found.group(1)}/health", timeout=10).status_code == 200
    finally:
        proc.terminate()
        proc.communicate(timeout=20)  # reads the rest and closes the pipe


def test_the_start_up_line_never_shows_the_path_token(tmp_path: Path) -> None:
    """A secret path is named by its variable, never by its value."""
    token = "announce-token-71c2e9"
    proc = _serve(tmp_path, RECON_RECEIVER_PATH_TOKEN=token)
    try:
        found = _announced(proc)
        assert found.group(3) == "/callbacks/<RECON_RECEIVER_PATH_TOKEN>"
        assert token not in found.string
    finally:
        proc.terminate()
        proc.communicate(timeout=20)  # reads the rest and closes the pipe
