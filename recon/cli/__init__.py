"""The ``recon`` command: parse, wire, call one function, map errors to exit codes.

No logic lives here. :mod:`recon.cli.app` holds the group and :func:`~recon.cli.app.command`,
the decorator every command is declared with (settings, the store, exit codes); the commands are
grouped by what they serve: :mod:`~recon.cli.night` (run, report, runs, status),
:mod:`~recon.cli.data` (db, import, export), :mod:`~recon.cli.findings` (exceptions, show),
:mod:`~recon.cli.service` (serve, config) and :mod:`~recon.cli.sandbox` (sandbox, demo).

Start-up: a module of this package imports at its top only what is cheap (click, pydantic,
recon's settings and constants). What pulls in SQLAlchemy, pandas, Jinja2, httpx, aiohttp or
uvicorn is imported inside the command that calls it: ``recon --help`` and ``recon status`` (a
Nagios check, run every few minutes) took 0.22-0.30 CPU s that way, against 1.9-2.1 s with every
command's imports at the top (issue 29, ``/usr/bin/time``; ``python -X importtime`` names
the costs). ``tests/unit/test_cli_startup.py`` keeps it so.
"""

from recon.cli import data, findings, night, sandbox, service
from recon.cli.app import main

__all__ = ["data", "findings", "main", "night", "sandbox", "service"]
