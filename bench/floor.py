"""The two reference clients of the polling benchmark, each run as its own process.

``aiohttp``: a bare asyncio loop over one ``aiohttp.ClientSession`` with ``concurrency`` workers
that fetches ``transaction.get`` for every id and parses the answer exactly
(``parse_float=Decimal``, as recon must): the floor, what the machine allows. ``sequential``:
one ``httpx.Client`` asking
about a sample one id after another, the merchant's first script.

Usage: ``python bench/floor.py aiohttp|sequential BASE_URL IDS_FILE [--concurrency N]
[--sample N]``.
Prints one JSON object: ``{"count", "seconds", "errors"}`` (seconds of the fetching only).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from recon.sandbox.config import DEFAULT_PUBLIC_KEY, DEFAULT_SECRET

CREDENTIALS = {"public_key": DEFAULT_PUBLIC_KEY, "secret": DEFAULT_SECRET}


async def _aiohttp(base_url: str, ids: list[str], concurrency: int) -> dict[str, Any]:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency)
    async with aiohttp.ClientSession(base_url, connector=connector) as session:
        async with session.post("/api/merchant.authorize", json=CREDENTIALS) as answer:
            token = (await answer.json())["access_token"]
        headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
        todo = iter(ids)
        errors = 0

        async def worker() -> None:
            nonlocal errors
            for transaction_id in todo:
                body = json.dumps({"id": transaction_id}).encode()
                async with session.post(
                    "/api/transaction.get", data=body, headers=headers
                ) as answer:
                    data = json.loads(await answer.read(), parse_float=Decimal)
                    if answer.status != 200 or "state" not in data:
                        errors += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return {"count": len(ids), "seconds": time.perf_counter() - started, "errors": errors}


def _sequential(base_url: str, ids: list[str]) -> dict[str, Any]:
    import httpx

    with httpx.Client(base_url=base_url) as client:
        token = client.post("/api/merchant.authorize", json=CREDENTIALS).json()["access_token"]
        headers = {"authorization": f"Bearer {token}"}
        errors = 0
        started = time.perf_counter()
        for transaction_id in ids:
            answer = client.post(
                "/api/transaction.get", json={"id": transaction_id}, headers=headers
            )
            data = json.loads(answer.content, parse_float=Decimal)
            if answer.status_code != 200 or "state" not in data:
                errors += 1
        return {"count": len(ids), "seconds": time.perf_counter() - started, "errors": errors}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["aiohttp", "sequential"])
    parser.add_argument("base_url")
    parser.add_argument("ids", type=Path, help="file with one transaction id per line")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--sample", type=int, help="only the first N ids")
    args = parser.parse_args()
    ids = args.ids.read_text().split()
    if args.sample:
        ids = ids[: args.sample]
    if args.mode == "aiohttp":
        result = asyncio.run(_aiohttp(args.base_url, ids, args.concurrency))
    else:
        result = _sequential(args.base_url, ids)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
