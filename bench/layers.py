"""Polling without the rest of the run: where between the bare loop and ``recon run`` time goes.

``client``: recon's ``ProviderClient.get_transaction_raw`` (recon's aiohttp wire,
exact JSON parsing, the pydantic model) for every id, 50 workers, nothing stored.
``poll``: :func:`recon.night.poll.poll` with that client and a sink that turns each batch into
``observations`` rows (``observation_row``) and inserts them into a scratch SQLite store, as a run
does, but without the run's selection, classification and reports.

Usage: ``python bench/layers.py client|poll BASE_URL IDS_FILE [--db PATH]``; prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recon.night.observe import observation_row
from recon.night.poll import Fetched, poll
from recon.provider.client import ProviderClient
from recon.sandbox.config import DEFAULT_PUBLIC_KEY, DEFAULT_SECRET


async def _client(base_url: str, ids: list[str]) -> dict[str, Any]:
    async with ProviderClient(
        base_url, DEFAULT_PUBLIC_KEY, DEFAULT_SECRET, concurrency=50
    ) as client:
        await client.authorize()
        todo = iter(ids)

        async def worker() -> None:
            for transaction_id in todo:
                await client.get_transaction_raw(transaction_id)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(50)))
        return {"count": len(ids), "seconds": time.perf_counter() - started, "errors": 0}


async def _poll(base_url: str, ids: list[str], db: Path) -> dict[str, Any]:
    from datetime import UTC, datetime

    from recon.store.db import ensure_schema, make_engine, write_transaction
    from recon.store.observations import insert_observations
    from recon.store.runs import start_run

    engine = make_engine(f"sqlite:///{db}")
    ensure_schema(engine)
    with write_transaction(engine) as conn:
        now = datetime.now(UTC)
        run_id = start_run(conn, as_of=now, started_at=now, host="bench", pid=0)

    def sink(batch: Sequence[Fetched]) -> None:
        rows = [observation_row(f, run_id) for f in batch]
        with write_transaction(engine) as conn:
            insert_observations(conn, rows)

    async with ProviderClient(
        base_url, DEFAULT_PUBLIC_KEY, DEFAULT_SECRET, concurrency=50
    ) as client:
        await client.authorize()
        stats = await poll(client, ids, workers=50, sink=sink)
    return {"count": len(ids), "seconds": stats.seconds, "errors": stats.errors}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["client", "poll"])
    parser.add_argument("base_url")
    parser.add_argument("ids", type=Path)
    parser.add_argument("--db", type=Path, default=Path("layers.db"))
    args = parser.parse_args()
    ids = args.ids.read_text().split()
    if args.mode == "client":
        result = asyncio.run(_client(args.base_url, ids))
    else:
        result = asyncio.run(_poll(args.base_url, ids, args.db))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
