"""recon as a service: ``recon serve callbacks`` and ``recon config check``."""

from __future__ import annotations

import click

from recon.cli.app import command, config_file, main
from recon.settings import RECEIVER_PORT, Settings


@main.group("serve")
def serve_group() -> None:
    """Long-running servers of recon."""


@command(serve_group, "callbacks")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option(
    "--port",
    default=RECEIVER_PORT,
    envvar="RECON_RECEIVER_PORT",
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (or $RECON_RECEIVER_PORT).",
)
def serve_callbacks(settings: Settings, host: str, port: int) -> None:
    """Receive the provider's notifications on POST /callbacks and store each once.

    Answers 200 only after a body is committed, 503 while the database cannot commit (the provider
    retries), 4xx for bodies that are not JSON objects. GET /health checks that the database
    accepts writes.
    """
    from recon.ingest.receiver import serve_callbacks as serve_receiver

    serve_receiver(settings, host, port)


@main.group("config")
def config_group() -> None:
    """recon's configuration: RECON_* environment variables and the optional TOML file."""


@command(config_group, "check")
def config_check_command(settings: Settings) -> int:
    """Print every setting (secrets masked) and its source; test the database, provider, SMTP.

    Nothing is written and no mail is sent. Exit codes: 0 every configured connection works,
    1 one does not, 2 the configuration itself is invalid (one line per wrong value).
    """
    from recon.config_check import check_configuration  # ssl, smtplib, asyncio: lazy

    return int(check_configuration(settings, config_file(), echo=click.echo))
