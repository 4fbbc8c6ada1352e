"""Writing a cassette from what a recording saw: its steps in time order, split into nights."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.golden.cassette import night_name, write_json, write_jsonl


def iso(moment: datetime) -> str:
    """A time as the cassette keeps it: ISO 8601 in UTC (a naive one is read as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat()


@dataclass
class NightRecord:
    """What happened before one run, and the run."""

    items: list[tuple[datetime, str, Any]] = field(default_factory=list)
    run: dict[str, Any] | None = None
    answers: list[dict[str, Any]] = field(default_factory=list)

    def add(self, at: datetime, kind: str, value: Any) -> None:
        self.items.append((at if at.tzinfo else at.replace(tzinfo=UTC), kind, value))


def write_night(folder: Path, night: NightRecord) -> None:
    """The night's folder: steps.json (time order, the run last) and the files it names."""
    if night.run is None:
        raise ValueError(f"{folder}: a night ends with its run")
    folder.mkdir(parents=True, exist_ok=True)
    steps: list[dict[str, Any]] = []
    imports = notes = 0
    pending: list[dict[str, Any]] = []

    def flush() -> None:
        nonlocal notes
        if pending:
            notes += 1
            name = "notifications.jsonl" if notes == 1 else f"notifications-{notes}.jsonl"
            write_jsonl(folder / name, list(pending))
            steps.append({"notifications": name})
            pending.clear()

    for at, kind, value in sorted(night.items, key=lambda item: item[0]):
        if kind == "notification":
            pending.append({**value, "received_at": iso(at)})
            continue
        flush()
        if kind == "import":
            imports += 1
            name = "payouts.csv" if imports == 1 else f"payouts-{imports}.csv"
            (folder / name).write_text(value, encoding="utf-8")
            steps.append({"import": name, "now": iso(at)})
        elif kind == "act":
            steps.append({"act": value, "now": iso(at)})
        elif kind == "sql":
            steps.append({"sql": value})
        else:
            raise ValueError(f"unknown step kind {kind}")
    flush()
    steps.append({"run": night.run})
    write_json(folder / "steps.json", steps)
    write_jsonl(folder / "answers.jsonl", night.answers)


def write_cassette(folder: Path, settings: dict[str, Any], nights: list[NightRecord]) -> None:
    """A whole cassette (an earlier one in ``folder`` is replaced)."""
    shutil.rmtree(folder, ignore_errors=True)
    write_json(folder / "settings.json", settings)
    for number, night in enumerate(nights, start=1):
        write_night(folder / night_name(number), night)
