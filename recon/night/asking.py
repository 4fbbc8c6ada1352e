"""The night's questions to the provider: one client session (one token) for every asking phase.

:class:`Asking` opens the provider client on an event loop of its own and keeps both for the
night; each :meth:`Asking.ask` is handed the ids to ask about (values, never a store to read) and
returns when every answer is with the observations. Between two phases the session is idle and
the shell may read the store: no store read happens while a question is out.
"""

from __future__ import annotations

import asyncio
from types import TracebackType

import httpx

from recon.night.observations import Observations
from recon.night.poll import PollStats, poll
from recon.night.progress import Progress
from recon.night.refusals import Refusals
from recon.provider.client import ProviderClient
from recon.settings import Settings


class Asking:
    """One provider client session for the night's asking phases (a context manager)."""

    def __init__(
        self,
        settings: Settings,
        observations: Observations,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        progress: Progress | None = None,
    ) -> None:
        self._settings = settings
        self._observations = observations
        self._progress = progress
        self._refusals = Refusals(limit=settings.refused_limit)  # one tally for every phase
        self._runner = asyncio.Runner()
        self._client = ProviderClient.from_settings(settings, transport=transport)

    def __enter__(self) -> Asking:
        self._runner.__enter__()
        try:
            # Even with nothing due: a provider that cannot give a token fails the night.
            self._runner.run(self._client.ensure_token())
        except BaseException as exc:
            self.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self._runner.run(self._client.aclose())
        finally:
            self._runner.__exit__(exc_type, exc, tb)
        if exc_type is None and self._progress is not None:
            self._progress.stop()

    def ask(self, label: str, ids: list[str]) -> PollStats:
        """Ask about ``ids``; the answers go to the observations."""
        return self._runner.run(self._poll(label, ids))

    def requests(self) -> tuple[int, int]:
        """The HTTP requests sent so far (authorization included), and how many were retries."""
        return self._client.stats.requests, self._client.stats.retries

    async def _poll(self, label: str, ids: list[str]) -> PollStats:
        progress = self._progress
        if progress is not None:
            progress.start(label, len(ids))
        return await poll(
            self._client,
            ids,
            workers=self._settings.concurrency,
            sink=self._observations.add,
            progress=progress.advance if progress is not None else None,
            refusals=self._refusals,
        )
