"""Where the templates (``reports/``) and SQL files (``sql/``) are, in a checkout or in a wheel."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    """Directory ``name`` ("reports" or "sql"): bundled in the wheel, or at the checkout's top."""
    bundled = _PACKAGE_DIR / "_data" / name
    if bundled.is_dir():
        return bundled
    checkout = _PACKAGE_DIR.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"recon data directory {name!r} not found (looked in {bundled})")


def reports_dir() -> Path:
    return data_dir("reports")


def sql_dir() -> Path:
    return data_dir("sql")
