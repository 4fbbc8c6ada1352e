"""Two provider accounts' nights on one PostgreSQL store: one after the other in one ``recon run``,
and at once as two ``recon run --account`` processes (as on two hosts).

Each account gets ``N`` open payouts (the same ids under both accounts); the provider stand-in
(:mod:`bench.standin`, ``--fast``) answers about any id. Each way runs on a fresh database; the
figure is the wall time from the first process's start to the last one's end. The first way,
one account's night alone, is what each of two hosts would take if the store did not slow them.

    .venv/bin/python -m bench.accounts 5000 postgresql+psycopg://postgres@127.0.0.1:5432/test
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from bench.support import RECON, standin_process, throwaway_database

ACCOUNTS = ("brand_a", "brand_b")


def _seed(url: str, n: int) -> None:
    from recon.store.db import ensure_schema, make_engine
    from recon.store.payouts import upsert_payouts

    engine = make_engine(url)
    try:
        ensure_schema(engine)
        rows = [
            {
                "transaction_id": f"bench-{i:07d}",
                "merchant_reference": f"ref-{i:07d}",
                "amount_minor": 1000 + i % 900,
                "currency": "EUR",
            }
            for i in range(n)
        ]
        with engine.begin() as conn:
            for account in ACCOUNTS:
                upsert_payouts(conn, rows, account=account)
    finally:
        engine.dispose()


def _env(root: Path, url: str, api: str) -> dict[str, str]:
    config = root / "recon.toml"
    config.write_text(
        "".join(
            f'[accounts.{a}]\nlabel = "{a}"\napi_base_url = "{api}"\npublic_key = "key-{a}"\n\n'
            for a in ACCOUNTS
        ),
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env |= {"RECON_CONFIG": str(config), "RECON_DATABASE_URL": url}
    env |= {"RECON_OUT_DIR": str(root / "out"), "RECON_REPORT_WORKBOOK": "off"}
    env |= {f"RECON_ACCOUNT_{a.upper()}_SECRET": f"secret-{a}" for a in ACCOUNTS}
    return env


def _timed(commands: list[list[str]], env: dict[str, str], cwd: Path) -> tuple[float, list[str]]:
    """The wall time of ``commands`` run at once, and each night's own (its summary's total)."""
    started = time.perf_counter()
    procs = [subprocess.Popen(c, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for c in commands]  # fmt: skip
    nights = []
    for proc in procs:
        out, err = proc.communicate(timeout=3600)
        if proc.returncode != 0:
            raise SystemExit(f"exit {proc.returncode}: {out.decode()}\n{err.decode()}")
        nights += re.findall(r"of account (\w+) as of .*; total ([0-9.]+)s", out.decode())
    return time.perf_counter() - started, [f"{a} {s} s" for a, s in nights]


def main(n: int, server_url: str) -> None:
    run = [*RECON, "run", "--no-email"]
    with standin_process(fast=True) as api, TemporaryDirectory() as tmp:
        root = Path(tmp)
        for way, commands in (
            ("one account alone (recon run --account brand_a)", [[*run, "--account", "brand_a"]]),
            ("one after the other (recon run)", [run]),
            ("at once (two recon run --account)", [[*run, "--account", a] for a in ACCOUNTS]),
        ):
            with throwaway_database(server_url, "accounts") as db:
                _seed(db.url, n)
                seconds, nights = _timed(commands, _env(root, db.url, api.url), root)
            each = ", ".join(nights)
            print(f"{n} payouts per account, {way}: {seconds:.1f} s ({each})", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
