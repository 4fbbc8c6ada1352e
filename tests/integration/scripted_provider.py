"""The harness of the property tests over many nights: a provider scripted at the HTTP boundary
(``httpx.MockTransport``), the settings a night runs with, and people acting on open findings.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from hypothesis import strategies as st
from sqlalchemy import Engine

from recon.constants import CaseAction
from recon.decision import ActionRequest
from recon.ops.findings import act
from recon.settings import Settings
from recon.store.cases import list_cases
from recon.store.db import write_transaction

START = datetime(2027, 1, 4, 6, tzinfo=UTC)
STATES = (1, 2, 3, 6, None)  # pending, aborted, failed, settled, unknown to the provider
ACTIONS = ("acknowledge", "resolve", "snooze")

# What people do before a night: up to two actions, each on an open case picked by position.
people_acting = st.lists(
    st.tuples(st.integers(0, 5), st.sampled_from(ACTIONS)),
    max_size=2,
).map(tuple)


@dataclass
class Provider:
    """The provider's side: each id's state (None: unknown), the ids that fail, who asked."""

    states: dict[str, int | None] = field(default_factory=dict)
    failing: set[str] = field(default_factory=set)
    asked: list[str] = field(default_factory=list)

    def handle(self, request: httpx.Request) -> httpx.Response:
        """Answer one request as the provider in this state would."""
        operation = request.url.path.rpartition("/api/")[2]
        body = json.loads(request.content)
        if operation == "merchant.authorize":
            return _json(200, '{"access_token": "tok", "expires": 4102444800.0}')
        tx_id = str(body["id"])
        self.asked.append(tx_id)
        if tx_id in self.failing:
            return _json(500, '{"error_name": "internal"}')
        state = self.states.get(tx_id)
        if state is None:
            return _json(404, '{"error_name": "transaction_not_found"}')
        return _json(
            200,
            f'{{"id": "{tx_id}", "state": {state}, "type": 1, "amount": 10.00,'
            f' "currency_id": "sek", "merchant_reference": "ref-{tx_id}"}}',
        )

    def transport(self) -> httpx.MockTransport:
        """A transport that sends every request to this provider."""
        return httpx.MockTransport(self.handle)


def _json(status: int, text: str) -> httpx.Response:
    return httpx.Response(
        status, content=text.encode(), headers={"content-type": "application/json"}
    )


def night_settings(engine: Engine, work: Path) -> Settings:
    """Settings for nights against the scripted provider: one attempt, no workbook."""
    return Settings(
        database_url=str(engine.url), api_base_url="http://provider.test",
        retry_attempts=1, report_workbook="off", out_dir=work / "out",
    )  # fmt: skip


def act_on_open_cases(
    engine: Engine, actions: Iterable[tuple[int, str]], when: datetime
) -> set[str]:
    """People's actions on open cases, each picking a case by position; the ids acted on."""
    with engine.connect() as conn:
        cases = [c.exception_id for c in list_cases(conn, states=["open"])]
    acted: set[str] = set()
    for position, action in actions:
        if not cases:
            break
        exception_id = cases[position % len(cases)]
        if exception_id in acted:
            continue
        until = when + timedelta(days=2) if action == "snooze" else None
        request = ActionRequest(exception_id, CaseAction(action), "a note", "anna", until)
        with write_transaction(engine) as conn:
            act(conn, [request], now=when, source="test")
        acted.add(exception_id)
    return acted
