"""Replay a cassette into a fresh store, night by night, and write each night's report pack.

    python -m tests.golden.replay               # replay every scenario, compare, print the diff
    python -m tests.golden.replay --update      # rewrite tests/golden/<scenario>/night-NN/
    python -m tests.golden.replay demo --out D  # one scenario's packs into D, to look at

A replay is deterministic and in-process: SQLite in a temporary folder, the provider answered from
the cassette (``httpx.MockTransport``), the wall clock pinned to the night's recorded clock while
the run runs (time-machine, ``tick=False``), retries without their waits, the email received by an
SMTP server on loopback. Nothing is read from the environment: ``RECON_*`` variables are dropped.
"""

from __future__ import annotations

import argparse
import difflib
import email
import email.policy
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import httpx
import time_machine

from tests.golden import product
from tests.golden.cassette import Cassette, Replayer, read_jsonl, when
from tests.golden.pack import collect

GOLDEN = Path(__file__).resolve().parent
# Every folder beside this module holding a cassette is a scenario.
SCENARIOS = tuple(sorted(p.parent.parent.name for p in GOLDEN.glob("*/cassette/settings.json")))
MAIL = {"mail_from": "recon@golden.test", "mail_to": ["finance@golden.test"]}
PROVIDER_URL = "http://provider.golden.test"


def _drop_recon_environment() -> None:
    """The cassette says every setting: one left in the shell must not reach the replay."""
    for name in [n for n in os.environ if n.upper().startswith("RECON_")]:
        if not name.upper().startswith("RECON_TEST_"):
            del os.environ[name]


class Inbox:
    """An SMTP handler keeping every message it receives."""

    def __init__(self) -> None:
        self.received: list[EmailMessage] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.received.append(parsed)
        return "250 OK"

    def take(self) -> list[EmailMessage]:
        taken, self.received = self.received, []
        return taken


@contextmanager
def smtp_server() -> Iterator[tuple[Inbox, int]]:
    from aiosmtpd.controller import Controller

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


def replay(scenario: Path, out: Path) -> Path:
    """Replay ``scenario``'s cassette into ``out``; returns where the packs are (``packs/``)."""
    _drop_recon_environment()
    cassette = Cassette(scenario / "cassette")
    work, packs = out / "work", out / "packs"
    for folder in (work, packs):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    database_url = f"sqlite:///{work / 'recon.db'}"
    with smtp_server() as (inbox, port), product.no_retry_waits():
        overrides = {
            **_with_provider(cassette.settings),
            **MAIL,
            "smtp_host": "127.0.0.1",
            "smtp_port": port,
        }
        settings = product.settings(database_url, overrides)
        engine = product.new_store(database_url)
        try:
            for night in cassette.nights():
                for step in night.steps:
                    if "import" in step:
                        product.import_payouts(
                            engine,
                            night.folder / step["import"],
                            zone=settings.zone,
                            now=when(step["now"]),
                            settings=settings,
                        )
                    elif "notifications" in step:
                        for row in read_jsonl(night.folder / step["notifications"]):
                            product.store_notification(
                                engine,
                                row["body"],
                                query=row["query"],
                                source=row["source"],
                                received_at=when(row["received_at"]),
                                account=row.get("account", product.DEFAULT_ACCOUNT),
                            )
                    elif "act" in step:
                        product.act(database_url, step["act"], now=when(step["now"]))
                    elif "sql" in step:
                        product.execute(engine, step["sql"])
                    elif "run" in step:
                        replayer = Replayer(night.answers())
                        report_dir = work / night.name
                        with time_machine.travel(when(step["run"]["clock"]), tick=False):
                            end = product.run_night(
                                settings,
                                report_dir,
                                as_of=when(step["run"]["as_of"]),
                                transport=httpx.MockTransport(replayer),
                                email=True,
                            )
                        replayer.check(f"{scenario.name}/{night.name}")
                        collect(
                            report_dir, packs / night.name, mails=inbox.take(), run_text=end.text()
                        )
                    else:
                        raise ValueError(f"{night.folder}/steps.json: unknown step {step}")
        finally:
            engine.dispose()
    return packs


def _with_provider(recorded: dict[str, Any]) -> dict[str, Any]:
    """The cassette's settings asking the replayed provider: its URL in ``RECON_API_BASE_URL``,
    or in each ``[accounts.NAME]`` table (with a secret: the cassette keeps none)."""
    tables = recorded.get("accounts")
    if not tables:
        return {**recorded, "api_base_url": PROVIDER_URL}
    accounts = {
        name: {**table, "api_base_url": PROVIDER_URL, "secret": f"golden-{name}"}
        for name, table in tables.items()
    }
    return {**recorded, "accounts": accounts}


def _files(folder: Path) -> dict[str, Path]:
    if not folder.is_dir():
        return {}
    return {str(p.relative_to(folder)): p for p in sorted(folder.rglob("*")) if p.is_file()}


def expected_dir(scenario: Path) -> Path:
    """Where a scenario's expected packs are: beside its cassette."""
    return scenario


def differences(expected: Path, produced: Path, *, limit: int = 3) -> list[str]:
    """A readable unified diff of the first ``limit`` files that differ (missing or extra too)."""
    want = {k: v for k, v in _files(expected).items() if k.startswith("night-")}
    got = _files(produced)
    problems: list[str] = []
    for name in sorted(set(want) | set(got)):
        if name not in got:
            problems.append(f"--- {name}: expected, but the replay did not produce it")
        elif name not in want:
            problems.append(f"+++ {name}: produced, but not expected (run --update?)")
        elif want[name].read_bytes() != got[name].read_bytes():
            if name.endswith(".png"):
                problems.append(f"*** {name}: the images differ")
            else:
                diff = difflib.unified_diff(
                    want[name].read_text(encoding="utf-8").splitlines(keepends=True),
                    got[name].read_text(encoding="utf-8").splitlines(keepends=True),
                    fromfile=f"expected/{name}",
                    tofile=f"replayed/{name}",
                    n=2,
                )
                lines = list(diff)
                cut = lines[:60] + (
                    [f"... {len(lines) - 60} more diff lines\n"] if len(lines) > 60 else []
                )
                problems.append("".join(cut))
        if len(problems) >= limit:
            break
    return problems


def update(scenario: Path, produced: Path) -> None:
    """Replace the scenario's expected packs by the ones just produced."""
    for old in sorted(expected_dir(scenario).glob("night-*")):
        shutil.rmtree(old)
    for night in sorted(produced.iterdir()):
        shutil.copytree(night, expected_dir(scenario) / night.name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenarios", nargs="*", default=list(SCENARIOS))
    parser.add_argument("--update", action="store_true", help="rewrite the expected packs")
    parser.add_argument("--out", type=Path, help="keep the replay here (default: a temp dir)")
    args = parser.parse_args(argv)
    failed = False
    with tempfile.TemporaryDirectory(prefix="recon-golden-") as temp:
        for name in args.scenarios:
            scenario = GOLDEN / name
            out = (args.out or Path(temp)) / name
            produced = replay(scenario, out)
            if args.update:
                update(scenario, produced)
                print(f"{name}: expected packs rewritten from the replay")
                continue
            problems = differences(expected_dir(scenario), produced)
            failed = failed or bool(problems)
            print(f"{name}: {'DIFFERS' if problems else 'identical'}")
            for problem in problems:
                print(problem)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
