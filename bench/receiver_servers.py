"""Measure ASGI servers for the callback receiver: throughput and four abuses of a public endpoint.

Usage: [THROUGHPUT_ONLY=1] python bench/receiver_servers.py NAME -- COMMAND...
(COMMAND serves an app on $PORT that answers POST /callbacks; it is started with RLIMIT_NOFILE
1024, systemd's default for a service)

Probes, all on loopback and bounded: 2,000 POSTs at concurrency 32 (callbacks/s); 300 half-sent
requests (how many are still open 15 s later); a header dripped a byte a second and a body that
stalls (how long until the server ends each, 40 s at most); 1,100 idle connections, then one
real POST (its status); one header of up to 300 MB sent for at most 60 s (how much the server
took before it stopped it, and the server's resident memory before and after). Prints one table
row.
"""

from __future__ import annotations

import asyncio
import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

BODY = b'{"merchant_id": "m", "transaction_id": "t-1", "transaction_state": 6}'
HEAD = b"POST /callbacks HTTP/1.1\r\nhost: r\r\ncontent-type: application/json\r\n"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and its children, in MB."""
    total = 0
    pids = [pid]
    while pids:
        current = pids.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        pids.extend(int(child) for child in children)
    return total / 1024


async def throughput(url: str, n: int = 2000, concurrency: int = 32) -> float:
    semaphore = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    headers = {"content-type": "application/json"}
    async with aiohttp.ClientSession(url, connector=connector) as session:

        async def post(i: int) -> int:
            async with (
                semaphore,
                session.post(
                    f"/callbacks?n={i}",
                    data=BODY.replace(b"t-1", f"t-{i}".encode()),
                    headers=headers,
                ) as answer,
            ):
                await answer.read()
                return answer.status

        started = time.perf_counter()
        statuses = await asyncio.gather(*(post(i) for i in range(n)))
        elapsed = time.perf_counter() - started
    assert set(statuses) == {200}, set(statuses)
    return n / elapsed


def still_open(socks: list[socket.socket]) -> int:
    count = 0
    for sock in socks:
        sock.setblocking(False)
        try:
            data = sock.recv(65536)
            count += 0 if data == b"" or data.startswith(b"HTTP/1.1 4") else 1
        except BlockingIOError:
            count += 1
        except OSError:
            pass
    return count


def post_status(port: int) -> str:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(HEAD + f"content-length: {len(BODY)}\r\n\r\n".encode() + BODY)
            return sock.recv(100).split(b"\r\n", 1)[0].decode() or "closed"
    except OSError as exc:
        return type(exc).__name__


def huge_header(port: int, seconds: float = 60) -> int:
    """MB of one header the server took (up to 300 MB, sent for at most ``seconds``)."""
    sent = 0
    chunk = b"a" * (1 << 20)
    deadline = time.monotonic() + seconds
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(HEAD + b"x-pad: ")
            while sent < 300 << 20 and time.monotonic() < deadline:
                sock.sendall(chunk)
                sent += len(chunk)
    except OSError:
        pass
    return sent >> 20


def closed_after(port: int, first: bytes, drip: bytes, seconds: int = 40) -> str:
    """Send ``first``, then ``drip`` once a second: how long until the server ends it."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(first)
        sock.settimeout(1)
        while time.monotonic() - started < seconds:
            try:
                if sock.recv(65536) == b"":
                    break
                break  # an answer (408/400) ends it too
            except TimeoutError:
                pass
            except OSError:
                break
            try:
                if drip:
                    sock.sendall(drip)
            except OSError:
                break
        else:
            return f"open at {seconds} s"
    return f"{time.monotonic() - started:.0f} s"


def main() -> None:
    name, command = sys.argv[1], sys.argv[sys.argv.index("--") + 1 :]
    port = free_port()

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    proc = subprocess.Popen(
        command,
        env=os.environ | {"PORT": str(port)},
        preexec_fn=limits,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        url = f"http://127.0.0.1:{port}"
        rate = asyncio.run(throughput(url))
        if os.environ.get("THROUGHPUT_ONLY"):
            print(f"| {name} | {rate:.0f} |")
            return
        dripped = closed_after(port, HEAD + b"x-drip: ", b"a")
        stalled = closed_after(port, HEAD + b"content-length: 100\r\n\r\n{", b"")
        half = [socket.create_connection(("127.0.0.1", port)) for _ in range(300)]
        for sock in half:
            sock.sendall(HEAD + b"x-slow: ")
        time.sleep(15)
        open_after = still_open(half)
        for sock in half:
            sock.close()
        idle = []
        for _ in range(1100):
            try:
                idle.append(socket.create_connection(("127.0.0.1", port), timeout=2))
            except OSError:
                break
        real = post_status(port)
        for sock in idle:
            sock.close()
        time.sleep(1)
        before = tree_rss_mb(proc.pid)
        sent_mb = huge_header(port)
        time.sleep(1)
        after = tree_rss_mb(proc.pid)
        print(
            f"| {name} | {rate:.0f} | {open_after}/300 | {dripped} | {stalled} | {real} "
            f"| {sent_mb} MB "
            f"| {before:.0f} → {after:.0f} MB |"
        )
    finally:
        proc.terminate()
        proc.wait(timeout=20)


if __name__ == "__main__":
    main()
