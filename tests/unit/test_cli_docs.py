"""Every command is documented: it has help text, the README names it, and a guide has its row."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from recon.cli import main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
# The guides whose "Commands" tables give each command in full (the README's table is short).
GUIDES = [ROOT / "docs" / "finance.md", ROOT / "docs" / "operations.md"]


def _commands(group: click.Group, prefix: str) -> Iterator[tuple[str, click.Command]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        path = f"{prefix} {name}"
        yield path, command
        if isinstance(command, click.Group):
            yield from _commands(command, path)


COMMANDS = list(_commands(main, "recon"))


def test_the_cli_has_the_documented_capabilities() -> None:
    """The command tree holds the commands the issues ask for (guards the lists below)."""
    names = {path for path, _ in COMMANDS}
    for expected in ("recon run", "recon report", "recon demo", "recon import payouts",
                     "recon import notifications", "recon serve callbacks", "recon db upgrade",
                     "recon sandbox serve", "recon runs", "recon status"):  # fmt: skip
        assert expected in names


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[p for p, _ in COMMANDS])
def test_every_command_has_help_text(path: str, command: click.Command) -> None:
    """A command without help leaves an operator guessing."""
    assert (command.help or command.short_help or "").strip(), f"{path} has no help text"
    for param in command.params:
        if isinstance(param, click.Option):
            assert (param.help or "").strip(), f"{path} {param.opts[0]} has no help text"


@pytest.mark.parametrize(
    "path",
    [p for p, c in COMMANDS if not isinstance(c, click.Group)],
)
def test_every_command_is_named_in_the_readme(path: str) -> None:
    """The README is the operator's manual: a command missing from it fails this test."""
    assert path in README.read_text(encoding="utf-8"), f"README.md does not mention `{path}`"


@pytest.mark.parametrize(
    "path",
    [p for p, c in COMMANDS if not isinstance(c, click.Group)],
)
def test_every_command_has_a_row_in_a_guide(path: str) -> None:
    """The README's table is short; finance.md or operations.md holds each command's full row."""
    rows = [
        line
        for guide in GUIDES
        for line in guide.read_text(encoding="utf-8").splitlines()
        if line.startswith("| `recon ")
    ]
    words = path.split()
    assert any(
        line.startswith(f"| `{path}")
        or (words[1] == "exceptions" and words[2] in line.split("`")[1])
        for line in rows
    ), f"no guide has a row for `{path}`"
