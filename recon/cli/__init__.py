"""The ``recon`` command: parse, wire, call one function, map errors to exit codes.

No logic lives here. :mod:`recon.cli.app` holds the group and :func:`~recon.cli.app.command`,
the decorator every command is declared with (settings, the store, exit codes); the commands are
grouped by what they serve: :mod:`~recon.cli.night` (run, report, runs, status),
:mod:`~recon.cli.data` (db, import, export), :mod:`~recon.cli.journal` (journal),
:mod:`~recon.cli.exports` (provider-export), :mod:`~recon.cli.balance` (balance),
:mod:`~recon.cli.exports` (provider-export check) and :mod:`~recon.cli.export_pull`
(provider-export pull),
:mod:`~recon.cli.findings` (exceptions, show),
:mod:`~recon.cli.service` (serve, config) and :mod:`~recon.cli.sandbox` (sandbox, demo).

Start-up: a module of this package imports at its top only what is cheap (click, pydantic,
recon's settings and constants). What pulls in SQLAlchemy, pandas, Jinja2, httpx, aiohttp or
uvicorn is imported inside the command that calls it, so that ``recon status`` (a Nagios check,
run every few minutes) starts quickly (docs/decisions.md, "Machinery measured against the plain
way"). ``tests/unit/test_cli_startup.py`` keeps it so.
"""

from recon.cli import (
    balance,
    data,
    export_pull,
    exports,
    findings,
    journal,
    night,
    sandbox,
    service,
)
from recon.cli.app import main

__all__ = [
    "balance",
    "data",
    "export_pull",
    "exports",
    "findings",
    "journal",
    "main",
    "night",
    "sandbox",
    "service",
]
