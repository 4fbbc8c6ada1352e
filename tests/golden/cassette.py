"""A cassette: a scenario's nights as recorded inputs at recon's boundaries, plain files to diff.

    tests/golden/<scenario>/cassette/settings.json     recon's settings (on the defaults)
    tests/golden/<scenario>/cassette/night-NN/steps.json
    tests/golden/<scenario>/cassette/night-NN/*.csv     a payouts file imported
    tests/golden/<scenario>/cassette/night-NN/notifications.jsonl
    tests/golden/<scenario>/cassette/night-NN/answers.jsonl

``steps.json`` lists what happened before the night's run, in order, then the run:

    {"import": "payouts.csv", "now": T}                  recon import payouts, at T
    {"notifications": "notifications.jsonl"}             each body stored at its received_at
    {"act": [{exception_id, action, note, by, until, where, decided_by}], "now": T}
    {"sql": [{"sql": "UPDATE …", "params": {…}}]}         the store changed behind recon's back
    {"run": {"as_of": T, "clock": T}}                     recon run --as-of, the wall clock at T

``answers.jsonl`` holds the provider's answer to each request of the run, in the order they were
made: ``{"operation", "id", "request", "status", "headers", "body"}`` (``id`` is the request's
``id``, ``null`` for ``merchant.authorize``, whose secret is not kept). A replay serves each
(operation, id) its answers in that order; a request the cassette lacks, or an answer left over,
fails the replay.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

KEPT_HEADERS = ("content-type", "retry-after")
SECRET_FIELDS = ("secret",)


def night_name(number: int) -> str:
    return f"night-{number:02d}"


def when(value: str) -> datetime:
    """A cassette's time (ISO 8601 with an offset)."""
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError(f"a cassette time needs an offset: {value}")
    return moment


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(row, ensure_ascii=False, sort_keys=False) for row in rows]
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@dataclass
class Night:
    """One night's folder: its steps, and where its files are."""

    folder: Path

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def steps(self) -> list[dict[str, Any]]:
        steps: list[dict[str, Any]] = json.loads(
            (self.folder / "steps.json").read_text(encoding="utf-8")
        )
        return steps

    def answers(self) -> list[dict[str, Any]]:
        path = self.folder / "answers.jsonl"
        return read_jsonl(path) if path.is_file() else []


@dataclass
class Cassette:
    """A scenario's recorded inputs (see the module docstring)."""

    folder: Path

    @property
    def settings(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(
            (self.folder / "settings.json").read_text(encoding="utf-8")
        )
        return loaded

    def nights(self) -> Iterator[Night]:
        for folder in sorted(self.folder.glob("night-*")):
            yield Night(folder)


# --- the provider's side --------------------------------------------------------------------------


def _request_of(request: httpx.Request) -> tuple[str, dict[str, Any]]:
    operation = request.url.path.rsplit("/", 1)[-1]
    body = json.loads(request.content) if request.content else {}
    return operation, body if isinstance(body, dict) else {"body": body}


def _kept(request: dict[str, Any]) -> dict[str, Any]:
    return {k: ("<not kept>" if k in SECRET_FIELDS else v) for k, v in request.items()}


class MissingAnswer(AssertionError):
    """The replay asked what the cassette does not answer (or left answers unasked)."""


@dataclass
class Replayer:
    """Serves a night's recorded answers (``httpx.MockTransport(replayer)``)."""

    answers: list[dict[str, Any]]
    queues: dict[tuple[str, str | None], deque[dict[str, Any]]] = field(init=False)
    missing: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.queues = defaultdict(deque)
        for answer in self.answers:
            self.queues[(answer["operation"], answer["id"])].append(answer)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        operation, body = _request_of(request)
        key = (operation, body.get("id"))
        queue = self.queues.get(key)
        if not queue:
            self.missing.append(f"{operation} {body.get('id')!r}")
            return httpx.Response(
                500,
                json={"error_name": "golden_no_answer", "error_message": "not in the cassette"},
            )
        answer = queue.popleft()
        return httpx.Response(
            answer["status"], headers=answer["headers"], content=answer["body"].encode("utf-8")
        )

    def check(self, where: str) -> None:
        """Every request was answered from the cassette, and every answer was asked for."""
        left = [f"{op} {key!r} x{len(q)}" for (op, key), q in self.queues.items() if q]
        if self.missing or left:
            raise MissingAnswer(
                f"{where}: the replay and the cassette disagree on the provider's requests;"
                f" asked without an answer: {self.missing[:10]}; answers never asked: {left[:10]}"
            )


class Recorder(httpx.AsyncBaseTransport):
    """Passes each request to ``inner`` and keeps the exchange (a recording's transport)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.exchanges: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        operation, body = _request_of(request)
        response = await self.inner.handle_async_request(request)
        content = await response.aread()
        await response.aclose()
        headers = {k: v for k, v in response.headers.items() if k.lower() in KEPT_HEADERS}
        self.exchanges.append(
            {
                "operation": operation,
                "id": body.get("id"),
                "request": _kept(body),
                "status": response.status_code,
                "headers": headers,
                "body": content.decode("utf-8"),
            }
        )
        return httpx.Response(response.status_code, headers=headers, content=content)

    async def aclose(self) -> None:
        await self.inner.aclose()
