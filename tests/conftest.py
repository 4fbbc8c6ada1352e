"""Shared fixtures: real databases (SQLite always; PostgreSQL and MariaDB when configured)."""

from __future__ import annotations

import os

import pytest

POSTGRES_ENV = "RECON_TEST_POSTGRES_URL"
MYSQL_ENV = "RECON_TEST_MYSQL_URL"
REQUIRE_ENV = "RECON_TEST_REQUIRE_DBS"


def database_url_or_skip(env: str, example: str) -> str:
    """The URL of a real test database, or skip (fail under CI, where RECON_TEST_REQUIRE_DBS=1)."""
    url = os.environ.get(env)
    if not url:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{env} is not set but {REQUIRE_ENV}=1: the database suite must run")
        pytest.skip(f"set {env} (for example {example}) to run this test against a real server")
    return url
