"""The hosted bank-selection page: the test bank's scenarios of 7.3 and "select account".

Rendering is pure (a session in, HTML out); the routes in :mod:`recon.sandbox.app` wire it up.
"""

from __future__ import annotations

from functools import cache
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import jinja2

from recon.resources import reports_dir
from recon.sandbox.records import TEST_BANK_NAME, SessionRecord
from recon.sandbox.scenarios import SESSION_SCENARIOS


@cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(reports_dir() / "sandbox"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template("hosted.html")


def render_page(session: SessionRecord, action: str, error: str | None = None) -> str:
    """The page for ``session``: the scenario buttons, or how it ended (and ``error``, if any)."""
    return _template().render(
        locale=session.locale or "en",
        brand_name=session.brand_name or "Merchant",
        session_id=session.id,
        bank_name=TEST_BANK_NAME,
        finished=session.finished,
        state=session.state,
        error_code=session.error_code,
        action=action,
        scenarios=SESSION_SCENARIOS,
        error=error,
    )


def scenario_from_form(body: bytes) -> str:
    """The ``scenario`` field of an urlencoded form body ("" when missing)."""
    fields = dict(parse_qsl(body.decode("utf-8", errors="replace")))
    return fields.get("scenario", "")


def redirect_target(redirect_uri: str, session_id: str) -> str:
    """``redirect_uri`` with ``session_id`` added to its own query parameters."""
    parts = urlsplit(redirect_uri)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query.append(("session_id", session_id))
    return urlunsplit(parts._replace(query=urlencode(query)))
