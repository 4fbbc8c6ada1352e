"""The sandbox's HTTP error answers: ``{"error_name": ..., "error_message": ...}`` with a status."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError


class SandboxError(Exception):
    """An error answer of the sandbox API; the app turns it into JSON with this status."""

    def __init__(
        self,
        status: int,
        name: str,
        message: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(f"{status} {name}: {message}")
        self.status = status
        self.name = name
        self.message = message
        self.headers = dict(headers or {})


def unauthorized(message: str = "missing, unknown or expired access token") -> SandboxError:
    return SandboxError(401, "unauthorized", message)


def refused(status: int) -> SandboxError:
    """A transaction refused to the merchant asking (``/sandbox/transactions/{id}/refuse``)."""
    name = "unauthorized" if status == 401 else "forbidden"
    return SandboxError(status, name, "this transaction is not available to this merchant account")


def invalid(message: str) -> SandboxError:
    return SandboxError(400, "invalid_request", message)


def invalid_from(exc: ValidationError) -> SandboxError:
    """A 400 naming each wrong or missing field, without echoing secrets back."""
    parts = []
    for err in exc.errors(include_input=False, include_url=False):
        field = ".".join(str(p) for p in err["loc"]) or "body"
        parts.append(f"{field}: {err['msg']}")
    return invalid("; ".join(parts))
