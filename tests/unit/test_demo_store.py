"""The demo's store, and the one line that points the other commands at it."""

from __future__ import annotations

from pathlib import Path

from recon.demo.store import demo_database_url, demo_env_line, demo_store_hint


def test_the_line_is_relative_to_the_checkout_as_the_readme_writes_it(tmp_path: Path) -> None:
    """`make demo` in a checkout prints the README's line, which works from that directory."""
    line = demo_env_line(Path("demo-out"), cwd=Path.cwd())
    assert line == "export RECON_DATABASE_URL=sqlite:///demo-out/recon-demo.db"
    assert demo_env_line(tmp_path / "d", cwd=tmp_path) == (
        "export RECON_DATABASE_URL=sqlite:///d/recon-demo.db"
    )


def test_a_store_outside_the_working_directory_is_named_absolutely(tmp_path: Path) -> None:
    """`recon demo --dir /elsewhere` prints an absolute URL: sqlite://// and the full path."""
    elsewhere = tmp_path / "elsewhere"
    line = demo_env_line(elsewhere, cwd=tmp_path / "work")
    assert line == f"export RECON_DATABASE_URL=sqlite:///{elsewhere.resolve()}/recon-demo.db"
    assert demo_database_url(elsewhere) == f"sqlite:///{elsewhere.resolve()}/recon-demo.db"


def test_the_demo_ends_with_the_line_on_a_line_of_its_own(tmp_path: Path) -> None:
    """The hint's last line is the shell line alone, indented, to copy as it is."""
    hint = demo_store_hint(tmp_path / "demo-out")
    assert hint.splitlines()[-1].strip() == demo_env_line(tmp_path / "demo-out")
