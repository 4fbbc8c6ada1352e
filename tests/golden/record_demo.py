"""Record the demo's two nights as a cassette (a dev tool, run by hand; not part of the suite).

    .venv/bin/python -m tests.golden.record_demo      # rewrites tests/golden/demo/cassette/

Runs ``recon.demo.night.run_demo`` as ``make demo`` does (the sandbox and the receiver on loopback,
two brands, each a provider account, 300 payouts, seed 7), with two wrappers around the demo's
calls into recon: the payouts import is given its time explicitly (kept with the file), and each
night (each brand's run, then the pack over both) gets a transport that passes every request to
the sandbox and keeps the exchange. The brands' accounts are kept in settings.json (names, labels,
public keys; the replay gives them its provider's URL and a secret of its own). Notifications
(with the account each was told to), people's actions and each night's start (the replay's wall
clock) are read back from the demo's store afterwards. The sandbox's ids
are random, so a new recording changes every file: re-record only when the demo itself changes,
then rewrite the expected packs (``python -m tests.golden.replay --update demo``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest.mock import patch

import httpx

from tests.golden import product
from tests.golden.cassette import Recorder
from tests.golden.timeline import NightRecord, iso, write_cassette

CASSETTE = Path(__file__).resolve().parent / "demo" / "cassette"


def _brand_tables() -> dict[str, dict[str, str]]:
    from recon.demo.brands import BRANDS

    return {b.name: {"label": b.label, "public_key": b.public_key} for b in BRANDS}


BRAND_TABLES = _brand_tables()


def record(work: Path) -> list[NightRecord]:
    import recon.demo.night as demo_night

    events: list[dict[str, Any]] = []
    run_original = product.run_nights
    import_original = product.import_payouts_csv

    def recorded_import(engine: Any, path: Path, **kwargs: Any) -> Any:
        now = datetime.now(UTC)
        events.append({"import": path.read_text(encoding="utf-8"), "now": now})
        return import_original(engine, path, now=now, **kwargs)

    def recorded_run(settings: Any, options: Any, accounts: Any, **kwargs: Any) -> Any:
        engine = product.new_store(settings.database_url)
        before = product.last_notification_id(engine)
        recorder = Recorder(httpx.AsyncHTTPTransport())
        try:
            return run_original(settings, options, accounts, transport=recorder, **kwargs)
        finally:
            after = product.last_notification_id(engine)
            engine.dispose()
            events.append(
                {"run": options.as_of, "notified": before, "late": after, "answers": recorder}
            )

    # The demo's own calls into recon, wrapped (each calls through to the real function).
    with (
        patch.object(demo_night, "run_nights", recorded_run),
        patch.object(demo_night, "import_payouts_csv", recorded_import),
    ):
        demo_night.run_demo(work / "demo", echo=lambda line: None)

    engine = product.new_store(f"sqlite:///{work / 'demo' / 'recon-demo.db'}")
    try:
        stored = product.stored_notifications(engine)
        actions = product.person_actions(engine)
        log = product.run_log(engine)
        findings = {c["exception_id"]: c for c in product.cases(engine)}
    finally:
        engine.dispose()
    runs = [e for e in events if "run" in e]
    # Each night is every brand's run at one as-of: the night starts with its first run.
    starts: dict[Any, Any] = {}
    for row in log:
        starts.setdefault(_utc(row["as_of"]), row)
    log = list(starts.values())
    if len(runs) != len(log):
        raise AssertionError(f"{len(runs)} nights recorded, {len(log)} in the store")
    nights: list[NightRecord] = []
    night = NightRecord()
    floor, done = 0, 0
    for event in events:
        if "import" in event:
            night.add(event["now"], "import", event["import"])
            continue
        stored_run = log[done]
        if _utc(stored_run["as_of"]) != event["run"]:
            raise AssertionError(f"run {stored_run['id']}: as_of {stored_run['as_of']} recorded")
        if event["late"] != event["notified"]:
            print(
                f"warning: {event['late'] - event['notified']} notifications arrived while run"
                f" {stored_run['id']} ran; the replay stores them before the next night",
                file=sys.stderr,
            )
        for row in stored:
            if floor < row["id"] <= event["notified"]:
                body = {
                    "body": row["body"],
                    "query": row["query"],
                    "source": row["source"],
                    "account": row["provider_account"],
                }
                night.add(row["received_at"], "notification", body)
        started = _utc(stored_run["started_at"])
        previous = _utc(log[done - 1]["started_at"]) if done else None
        groups: dict[datetime, list[dict[str, Any]]] = defaultdict(list)
        for action in actions:
            at = _utc(action["at"])
            if at < started and (previous is None or at >= previous):
                groups[at].append(_request(action, findings[action["exception_id"]]))
        for at, requests in groups.items():
            night.add(at, "act", requests)
        night.run = {"as_of": iso(event["run"]), "clock": iso(started)}
        night.answers = event["answers"].exchanges
        nights.append(night)
        night, floor, done = NightRecord(), event["notified"], done + 1
    return nights


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _request(action: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    """A person's action as the cassette keeps it: naming the finding (its item and kind) it was
    taken on, not the exception id (an id is a night's output)."""
    return {
        "finding": {"item": case["item_id"], "flag": case["flag"]},
        "action": action["action"],
        "note": action["note"],
        "by": action["by"],
        "until": iso(action["until"]) if action["until"] else None,
        "where": action["source"],
        "decided_by": action["decided_by"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", type=Path, help="keep the demo's folder (its reports) here")
    args = parser.parse_args(argv)
    for name in [n for n in os.environ if n.upper().startswith("RECON_")]:
        del os.environ[name]
    with tempfile.TemporaryDirectory(prefix="recon-golden-demo-") as temp:
        nights = record(args.keep or Path(temp))
    write_cassette(CASSETTE, {"accounts": BRAND_TABLES}, nights)
    print(f"recorded {len(nights)} nights into {CASSETTE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
