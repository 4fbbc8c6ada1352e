"""`recon sandbox serve` as a process with --account, --fee and --export-cap: the options reach
the sandbox it serves, and the secrets on its command line reach none of its output."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from decimal import Decimal

import httpx

from recon import jsonparse
from tests.e2e.run_support import RECON


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


class Merchant:
    """One account's calls to the served sandbox."""

    def __init__(self, base_url: str, public_key: str, secret: str) -> None:
        self.base_url = base_url
        keys = {"public_key": public_key, "secret": secret}
        answer = httpx.post(f"{base_url}/api/merchant.authorize", json=keys)
        assert answer.status_code == 200, answer.text
        self.headers = {"authorization": f"Bearer {answer.json()['access_token']}"}

    def call(self, op: str, body: dict[str, object]) -> httpx.Response:
        content = jsonparse.dumpb(body)
        return httpx.post(f"{self.base_url}/api/{op}", content=content, headers=self.headers)

    def pay(self, amount: str, reference: str) -> str:
        account = self.call(
            "bank_account.create", {"country_id": "DE", "iban": "DE89370400440532013000"}
        )
        body = {
            "amount": Decimal(amount),
            "bank_account_id": account.json()["id"],
            "merchant_reference": reference,
        }
        created = self.call("transaction.create_withdrawal", body)
        assert created.status_code == 200, created.text
        tx_id: str = created.json()["id"]
        return tx_id


def test_two_accounts_a_fee_and_an_export_cap_are_served_as_given() -> None:
    """Two --account merchants authorize with their own keys (the demo keys do not); each
    reads only its own payout; the settled payout carries the --fee price (1.00 + 2 % of 10.00 =
    1.20); an export of three rows under --export-cap 2 is a file of two; no secret is printed."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    args = ["sandbox", "serve", "--port", str(port), "--settle-after", "0"]
    args += ["--account", "brand-a:key-a:secret-a-1f9", "--account", "brand-b:key-b:secret-b-77c"]
    args += ["--fee", "1.00,2", "--export-cap", "2"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    proc = subprocess.Popen(
        [RECON, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        wait_listening(base_url, proc)
        demo = {"public_key": "sandbox-public-key", "secret": "sandbox-secret"}
        assert httpx.post(f"{base_url}/api/merchant.authorize", json=demo).status_code == 401
        brand_a = Merchant(base_url, "key-a", "secret-a-1f9")
        brand_b = Merchant(base_url, "key-b", "secret-b-77c")
        start = int(time.time()) - 1
        paid = [brand_a.pay(amount, f"a-{amount}") for amount in ("10.00", "20.00")]
        theirs = brand_b.pay("10.00", "b-1")
        httpx.post(f"{base_url}/sandbox/clock/advance", json={"seconds": 1})

        answer = jsonparse.loads(brand_a.call("transaction.get", {"id": paid[0]}).content)
        assert (answer["merchant_id"], answer["state"]) == ("brand-a", 6)
        assert answer["fee_amount"] == Decimal("1.20")
        assert brand_a.call("transaction.get", {"id": theirs}).status_code == 404

        window = {"settled_from": start, "settled_to": start + 3600, "types": [1, "fee"]}
        task = brand_a.call("transaction.csv_export", window).json()
        for _ in range(3):
            done = brand_a.call("export_task.get", task).json()
        assert done["rows"] == 2  # four rows (two payouts, two fees) cut to the cap
        lines = httpx.get(done["artifact_url"]).text.splitlines()
        assert len(lines) == 1 + 2
    finally:
        proc.terminate()
        output, _ = proc.communicate(timeout=20)
    assert "secret-a-1f9" not in output
    assert "secret-b-77c" not in output
