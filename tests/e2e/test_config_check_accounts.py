"""`recon config check` as a process, with two accounts against `recon sandbox serve --account`
twice: each account's keys tested, every secret kept out of the output."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import httpx

from tests.e2e.run_support import RECON

SECRET_A = "sk-brand-a-0c51e9"
SECRET_B = "sk-brand-b-f7a204"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(base_url: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the sandbox exited early"
        try:
            if httpx.get(f"{base_url}/sandbox/clock", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("the sandbox did not start listening")


def test_two_accounts_of_a_served_sandbox_pass_and_a_wrong_one_fails(tmp_path: Path) -> None:
    """Both accounts ✓ (exit 0); brand B's secret changed: brand B ✗, brand A still ✓ (exit 1);
    neither secret, nor the wrong one, on standard output or error."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("RECON_")}
    serve = [RECON, "sandbox", "serve", "--port", str(port)]
    serve += ["--account", f"brand-a:key-a:{SECRET_A}", "--account", f"brand-b:key-b:{SECRET_B}"]
    sandbox = subprocess.Popen(
        serve, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True
    )
    config = tmp_path / "recon.toml"
    config.write_text(
        f'[accounts.brand_a]\nlabel = "Brand A"\napi_base_url = "{base_url}"\n'
        'public_key = "key-a"\n\n'
        f'[accounts.brand_b]\nlabel = "Brand B"\napi_base_url = "{base_url}"\n'
        'public_key = "key-b"\n',
        encoding="utf-8",
    )
    secret_b = tmp_path / "brand-b-secret"
    secret_b.write_text(SECRET_B + "\n", encoding="utf-8")
    env |= {
        "RECON_CONFIG": str(config),
        "RECON_DATABASE_URL": f"sqlite:///{tmp_path / 'recon.db'}",
        "RECON_ACCOUNT_BRAND_A_SECRET": SECRET_A,
        "RECON_ACCOUNT_BRAND_B_SECRET_FILE": str(secret_b),
    }
    try:
        wait_listening(base_url, sandbox)

        def check() -> subprocess.CompletedProcess[str]:
            done = subprocess.run(
                [RECON, "config", "check"], env=env, capture_output=True, text=True, timeout=60
            )
            for secret in (SECRET_A, SECRET_B, "sk-wrong-b-93"):
                assert secret not in done.stdout + done.stderr
            return done

        passed = check()
        assert passed.returncode == 0, passed.stdout + passed.stderr
        assert "✓ provider brand_a" in passed.stdout
        assert "✓ provider brand_b" in passed.stdout
        assert "env RECON_ACCOUNT_BRAND_B_SECRET_FILE" in passed.stdout

        secret_b.write_text("sk-wrong-b-93\n", encoding="utf-8")
        failed = check()
        assert failed.returncode == 1, failed.stdout + failed.stderr
        assert "✓ provider brand_a" in failed.stdout
        assert "✗ provider brand_b" in failed.stdout
    finally:
        sandbox.terminate()
        sandbox.wait(timeout=20)
