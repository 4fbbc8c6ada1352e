"""The receiver's ``GET /metrics`` (Prometheus text): notifications stored by kind, and requests
refused by reason. Counters of this process (they start at zero when the receiver starts, which
Prometheus' ``rate()`` and ``increase()`` expect), in a registry of the app's own."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, generate_latest
from starlette.requests import Request
from starlette.responses import Response

# The receiver's refusals by the status it answers (the reason is what the answer says).
REASONS = {
    400: "malformed_body",
    403: "forbidden",
    404: "not_found",
    413: "body_too_large",
    414: "query_too_long",
    415: "unsupported_media_type",
    422: "not_a_notification",
    503: "database_unavailable",
}


class ReceiverMetrics:
    """The receiver's counters and the ``/metrics`` endpoint that shows them."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.stored = Counter(
            "recon_notifications_stored",
            "Notifications stored, by kind (a duplicate is not counted).",
            ["kind"],
            registry=self.registry,
        )
        self.refused = Counter(
            "recon_notifications_refused",
            "Requests to the callback path refused, by reason.",
            ["reason"],
            registry=self.registry,
        )

    def answered(self, status: int) -> None:
        """Count a refusal by the status the receiver answered (2xx: nothing to count)."""
        if status >= 400:
            self.refused.labels(reason=REASONS.get(status, f"http_{status}")).inc()

    async def endpoint(self, request: Request) -> Response:
        """``GET /metrics``."""
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)
