"""Where ``recon demo`` keeps its store and its two brands, and the line that points the other
commands at them.

The demo's SQLite file lives in its working directory (``demo-out/recon-demo.db``), apart from
``recon.db``, the store every command uses by default, so that a demo run never mixes with a
reader's own data. Beside it the demo writes the configuration it ran with: ``recon.toml`` (the
store and the brands' ``[accounts.NAME]`` tables) and ``credentials/`` (each brand's secret, as
systemd's credentials directory holds them). After the demo, ``export RECON_CONFIG=…
CREDENTIALS_DIRECTORY=…`` (printed by the demo, and written in the README) is all it takes for
``recon exceptions list``, ``recon show`` and ``recon report`` to read the demo's nights over both
brands: no file the commands read implicitly, nothing to un-learn for production, and nothing a
test or an env file could pick up by accident.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recon.accounts import secret_variable
from recon.files import make_private_dirs, write_atomic

DEMO_DATABASE = "recon-demo.db"
DEMO_CONFIG = "recon.toml"
DEMO_CREDENTIALS = "credentials"


def demo_database_url(work_dir: Path) -> str:
    """The demo's store as an absolute SQLite URL (what the demo itself opens)."""
    return f"sqlite:///{(work_dir / DEMO_DATABASE).resolve()}"


def _shown(path: Path, here: Path) -> str:
    """``path`` relative to ``here`` when under it, else absolute."""
    path = path.resolve()
    return path.relative_to(here).as_posix() if path.is_relative_to(here) else str(path)


def demo_env_line(work_dir: Path, cwd: Path | None = None) -> str:
    """The shell line that points every command at the demo's configuration and secrets.

    Relative to ``cwd`` when they are under it (``RECON_CONFIG=demo-out/recon.toml``, the line
    the README shows, which works from the checkout), else absolute.
    """
    here = (cwd or Path.cwd()).resolve()
    config = _shown(work_dir / DEMO_CONFIG, here)
    credentials = _shown(work_dir / DEMO_CREDENTIALS, here)
    return f"export RECON_CONFIG={config} CREDENTIALS_DIRECTORY={credentials}"


def fresh_demo_database(work_dir: Path) -> str:
    """Remove an earlier demo's store (and its journal files); the URL of the one to create."""
    for stale in work_dir.glob(f"{DEMO_DATABASE}*"):
        stale.unlink()
    return demo_database_url(work_dir)


def write_demo_config(
    work_dir: Path,
    accounts: Mapping[str, Mapping[str, Any]],
    journal: Mapping[str, Any] | None = None,
) -> Path:
    """The demo's configuration as a reader's commands take it: ``recon.toml`` with its store,
    its ``[journal]`` and an ``[accounts.NAME]`` table per brand (label, api_base_url,
    public_key, its own journal table), and each brand's secret in
    ``credentials/RECON_ACCOUNT_<NAME>_SECRET`` (owner only). Returns the file."""
    lines = [
        "# Written by `recon demo`: its store and its two brands, each a provider account.",
        "# The sandbox it names stopped with the demo; the store's nights are what is read.",
        f"database_url = {_quoted(demo_database_url(work_dir))}",
    ]
    if journal is not None:
        lines += _tables("journal", journal)
    credentials = work_dir / DEMO_CREDENTIALS
    make_private_dirs(credentials)
    for name, table in accounts.items():
        lines += ["", f"[accounts.{name}]"]
        for key in ("label", "api_base_url", "public_key"):
            lines.append(f"{key} = {_quoted(str(table[key]))}")
        if "journal" in table:
            lines += _tables(f"accounts.{name}.journal", table["journal"])
        secret = str(table["secret"]).encode()
        write_atomic(credentials / secret_variable(name), secret)
    path = work_dir / DEMO_CONFIG
    write_atomic(path, ("\n".join(lines) + "\n").encode())
    return path


def _tables(name: str, table: Mapping[str, Any]) -> list[str]:
    """A TOML table of strings and its sub-tables, as lines."""
    lines = ["", f"[{name}]"]
    lines += [
        f"{key} = {_quoted(str(value))}"
        for key, value in table.items()
        if not isinstance(value, Mapping)
    ]
    for key, value in table.items():
        if isinstance(value, Mapping):
            lines += _tables(f"{name}.{key}", value)
    return lines


def _quoted(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


def demo_store_hint(work_dir: Path) -> str:
    """What the demo prints last: the line that points the other commands at its store."""
    return (
        "the demo's store and its two brands, for recon exceptions list, recon show and "
        "recon report:\n"
        f"    {demo_env_line(work_dir)}"
    )
