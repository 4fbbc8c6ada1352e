"""The ``recon`` command: parse, wire, call one function, map errors to exit codes.

No logic lives here. :mod:`recon.cli.app` holds the group and :func:`~recon.cli.app.command`,
the decorator every command is declared with (settings, the store, exit codes); the commands are
grouped by what they serve: :mod:`~recon.cli.night` (run, report, runs, status),
:mod:`~recon.cli.data` (db, import, export), :mod:`~recon.cli.findings` (exceptions, show),
:mod:`~recon.cli.service` (serve, config) and :mod:`~recon.cli.sandbox` (sandbox, demo).

Start-up: a module of this package imports at its top only what is cheap (click, pydantic,
recon's settings and constants). What pulls in SQLAlchemy, pandas, Jinja2, httpx, aiohttp or
uvicorn is imported inside the command that calls it. Measured (issue 29, mean CPU of 10 runs
under ``/usr/bin/time``): ``recon --help`` 0.20 s and ``recon status`` (a Nagios check, run every
few minutes, SQLAlchemy included) 0.43 s; with every command's imports at the top, any command
would start at 1.6 s. ``tests/unit/test_cli_startup.py`` keeps it so.
"""

from recon.cli import data, findings, night, sandbox, service
from recon.cli.app import main

__all__ = ["data", "findings", "main", "night", "sandbox", "service"]
