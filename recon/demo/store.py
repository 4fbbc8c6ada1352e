"""Where ``recon demo`` keeps its store, and the one line that points the other commands at it.

The demo's SQLite file lives in its working directory (``demo-out/recon-demo.db``), apart from
``recon.db``, the store every command uses by default, so that a demo run never mixes with a
reader's own data. After the demo, ``export RECON_DATABASE_URL=…`` (printed by the demo, and
written in the README) is all it takes for ``recon exceptions list``, ``recon show`` and
``recon report`` to read the demo's night: no file the commands read implicitly, nothing to
un-learn for production, and nothing a test or an env file could pick up by accident.
"""

from __future__ import annotations

from pathlib import Path

DEMO_DATABASE = "recon-demo.db"


def demo_database_url(work_dir: Path) -> str:
    """The demo's store as an absolute SQLite URL (what the demo itself opens)."""
    return f"sqlite:///{(work_dir / DEMO_DATABASE).resolve()}"


def demo_env_line(work_dir: Path, cwd: Path | None = None) -> str:
    """The shell line that points every command at the demo's store.

    Relative to ``cwd`` when the store is under it (``sqlite:///demo-out/recon-demo.db``, the line
    the README shows, which works from the checkout), else absolute.
    """
    store = (work_dir / DEMO_DATABASE).resolve()
    here = (cwd or Path.cwd()).resolve()
    shown = store.relative_to(here).as_posix() if store.is_relative_to(here) else str(store)
    return f"export RECON_DATABASE_URL=sqlite:///{shown}"


def fresh_demo_database(work_dir: Path) -> str:
    """Remove an earlier demo's store (and its journal files); the URL of the one to create."""
    for stale in work_dir.glob(f"{DEMO_DATABASE}*"):
        stale.unlink()
    return demo_database_url(work_dir)


def demo_store_hint(work_dir: Path) -> str:
    """What the demo prints last: the line that points the other commands at its store."""
    return (
        "the demo's store, for recon exceptions list, recon show and recon report:\n"
        f"    {demo_env_line(work_dir)}"
    )
