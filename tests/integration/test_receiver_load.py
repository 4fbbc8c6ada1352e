"""The receiver under a few thousand concurrent posts over a real loopback socket."""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from collections import Counter
from typing import Any

import aiohttp
from sqlalchemy import Engine, select

from recon.ingest.receiver import create_receiver_app
from recon.serving import serve_in_thread
from recon.settings import Settings
from recon.store.tables import notifications

DISTINCT = 1600
DUPLICATES = 800
CONCURRENCY = 64


def bodies(merchant: str) -> tuple[list[str], set[str]]:
    """DISTINCT bodies of all three kinds, plus DUPLICATES re-sent (some re-serialised)."""
    rng = random.Random(7)
    distinct: list[dict[str, Any]] = []
    for i in range(DISTINCT):
        if i % 3 == 0:
            distinct.append({"merchant_id": merchant, "session_id": f"s-{i}", "session_state": 12})
        elif i % 3 == 1:
            distinct.append(
                {"merchant_id": merchant, "transaction_id": f"t-{i}", "transaction_state": 6}
            )
        else:
            distinct.append(
                {
                    "transaction_id": f"r-{i}",
                    "original_transaction_id": f"t-{i - 1}",
                    "notification_type": "RETURNED_TRANSACTION",
                    "merchant_id": merchant,
                    "country_id": "SE",
                    "amount": 10 + i / 100,  # json.dumps writes it; the receiver reads Decimal
                }
            )
    posts = [json.dumps(body) for body in distinct]
    for body in rng.choices(distinct, k=DUPLICATES):
        posts.append(json.dumps(body, indent=rng.choice([None, 1]), sort_keys=rng.random() < 0.5))
    rng.shuffle(posts)
    return posts, {json.dumps(body, sort_keys=True) for body in distinct}


async def post_all(base_url: str, posts: list[str]) -> list[tuple[int, str]]:
    """Post every body with bounded concurrency; retry 503 like the provider would."""
    semaphore = asyncio.Semaphore(CONCURRENCY)
    # aiohttp, not httpx: httpx's connection pool would make the client, not the receiver, the limit
    connector = aiohttp.TCPConnector(limit=CONCURRENCY)
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(base_url, connector=connector, timeout=timeout) as session:

        async def post(i: int, body: str) -> tuple[int, str]:
            async with semaphore:
                for attempt in range(6):
                    async with session.post(
                        f"/callbacks?n={i}", data=body, headers={"content-type": "application/json"}
                    ) as answer:
                        status, payload = answer.status, await answer.json()
                    if status != 503:
                        break
                    await asyncio.sleep(0.05 * (attempt + 1))
                return status, payload.get("status", "")

        return await asyncio.gather(*(post(i, body) for i, body in enumerate(posts)))


def test_concurrent_posts_with_duplicates_lose_nothing_and_store_each_once(
    engine: Engine,
) -> None:
    """Every accepted notification is in the database exactly once, and nothing else is."""
    merchant = "m-load-" + uuid.uuid4().hex
    posts, distinct = bodies(merchant)
    app = create_receiver_app(Settings(), engine)
    with serve_in_thread(app) as base_url:
        answers = asyncio.run(post_all(base_url, posts))

    assert Counter(status for status, _ in answers) == {200: DISTINCT + DUPLICATES}
    assert Counter(kind for _, kind in answers) == {"stored": DISTINCT, "duplicate": DUPLICATES}
    with engine.connect() as conn:
        stored = conn.execute(
            select(notifications.c.dedupe_key, notifications.c.body).where(
                notifications.c.merchant_id == merchant
            )
        ).all()
    assert len(stored) == DISTINCT
    assert len({row.dedupe_key for row in stored}) == DISTINCT
    canonical = {json.dumps(json.loads(row.body), sort_keys=True) for row in stored}
    assert canonical == distinct
