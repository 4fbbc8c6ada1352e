"""`recon serve callbacks` as a process: stores what the provider posts, keeps its token secret."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from sqlalchemy import create_engine, select

from recon.store.tables import notifications

TOKEN = "e2e-path-token-8c1f0a"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(base_url: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the receiver exited early"
        try:
            if httpx.get(f"{base_url}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("the receiver did not become healthy")


def test_the_receiver_process_stores_a_callback_and_never_prints_its_token(
    tmp_path: Path,
) -> None:
    """A callback posted to the tokened path is stored; the token appears in no output."""
    database = tmp_path / "recon.db"
    port = free_port()
    env = os.environ | {
        "RECON_DATABASE_URL": f"sqlite:///{database}",
        "RECON_RECEIVER_PATH_TOKEN": TOKEN,
    }
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "recon"), "serve", "callbacks", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base_url, proc)
        body = '{"merchant_id": "m", "transaction_id": "t-9", "transaction_state": 6}'
        headers = {"content-type": "application/json", "user-agent": "Service Callback"}
        stored = httpx.post(f"{base_url}/callbacks/{TOKEN}?shop=1", content=body, headers=headers)
        hidden = httpx.post(f"{base_url}/callbacks", content=body, headers=headers)
    finally:
        proc.terminate()
        output, _ = proc.communicate(timeout=20)
    assert (stored.status_code, stored.json()) == (200, {"status": "stored"})
    assert hidden.status_code == 404
    assert "stored transaction notification" in output
    assert TOKEN not in output
    engine = create_engine(f"sqlite:///{database}")
    with engine.connect() as conn:
        row = conn.execute(select(notifications)).one()
    engine.dispose()
    assert (row.transaction_id, row.query, row.source) == ("t-9", "shop=1", "receiver")


def test_idle_connections_cannot_use_up_the_receivers_file_descriptors(tmp_path: Path) -> None:
    """With few file descriptors (a small LimitNOFILE), idle sockets do not lock callbacks out."""
    database = tmp_path / "recon.db"
    port = free_port()
    env = os.environ | {"RECON_DATABASE_URL": f"sqlite:///{database}"}

    def few_descriptors() -> None:  # in the child: 128 descriptors, as a small LimitNOFILE would
        resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))

    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "recon"), "serve", "callbacks", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=few_descriptors,  # only setrlimit, before exec
    )
    base_url = f"http://127.0.0.1:{port}"
    idle: list[socket.socket] = []
    try:
        wait_healthy(base_url, proc)
        idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(200)]
        body = '{"merchant_id": "m", "transaction_id": "t-idle", "transaction_state": 6}'
        answer = httpx.post(
            f"{base_url}/callbacks",
            content=body,
            headers={"content-type": "application/json"},
            timeout=20,
        )
    finally:
        for sock in idle:
            sock.close()
        proc.terminate()
        output, _ = proc.communicate(timeout=20)
    assert (answer.status_code, answer.json()) == (200, {"status": "stored"})
    # the default cap (1000) does not fit 128 descriptors: it was lowered, and said so
    assert "only 128 file descriptors: at most 96 connections instead of 1000" in output
