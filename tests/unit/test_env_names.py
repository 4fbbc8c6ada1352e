"""The RECON_ variables recon knows: what `recon config check` warns about, and stale names."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from recon.accounts import SECRET_VARIABLE
from recon.cli import main
from recon.env_names import RENAMED, TOOL_PREFIXES, known_names, unknown_variables

ROOT = Path(__file__).resolve().parents[2]
_NAME = re.compile(r"\bRECON_[A-Z0-9_]*[A-Z0-9]\b")
# docs/scaling.md sketches a design not built (RECON_SHARD); settings.py's docstring says RECON_X;
# docs/operations.md shows the warning a typo gets (RECON_MAX_RUN_AGEE), decisions.md a name like
# nothing known (RECON_XYZZY).
_NOT_NAMES = frozenset({"RECON_SHARD", "RECON_X", "RECON_MAX_RUN_AGEE", "RECON_XYZZY"})


def test_a_typo_and_a_stale_name_are_unknown_and_the_stale_one_names_its_replacement() -> None:
    """Unknown names come back sorted; the renamed one carries what replaced it."""
    found = unknown_variables(["RECON_TIMEZONE", "recon_mail_too", "RECON_RECHECK_DAYS", "HOME"])
    assert [(u.name, u.replaced_by) for u in found] == [
        ("RECON_MAIL_TOO", None),
        ("RECON_RECHECK_DAYS", "RECON_WATCH_DAYS"),
    ]
    assert "replaced by RECON_WATCH_DAYS" in found[1].message()


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("RECON_MAX_RUN_AGEE", "RECON_MAX_RUN_AGE"),
        ("recon_mail_too", "RECON_MAIL_TO"),
        ("RECON_TIMEZOEN", "RECON_TIMEZONE"),
        ("RECON_DATABSE_URL", "RECON_DATABASE_URL"),
        ("RECON_METRICS_FILES", "RECON_METRICS_FILE"),
        ("RECON_LOG_FILES", "RECON_LOG_FILE"),  # the wrapper's own
    ],
)
def test_a_typo_names_the_closest_known_variable(typed: str, meant: str) -> None:
    """The message an operator reads says which name was meant."""
    (unknown,) = unknown_variables([typed])
    assert unknown.message() == f"{typed.upper()}: unknown setting; did you mean {meant}?"


def test_a_name_like_nothing_known_gets_no_suggestion() -> None:
    """The shared RECON_ prefix alone makes no match: RECON_XYZZY is not RECON_BIN."""
    (unknown,) = unknown_variables(["RECON_XYZZY"])
    assert unknown.message() == "RECON_XYZZY: unknown setting (a typo?); it does nothing"


def test_the_config_file_the_wrapper_and_the_test_suite_variables_are_known() -> None:
    """RECON_CONFIG, the cron wrapper's names and RECON_TEST_* give no warning."""
    names = ["RECON_CONFIG", "RECON_LOCK_FILE", "RECON_TEST_MYSQL_URL", "RECON_BENCH_POSTGRES_URL"]
    assert unknown_variables(names) == []


def test_every_environment_variable_of_a_command_option_is_known() -> None:
    """An option that reads RECON_* (recon sandbox pay --url) is not reported as unknown."""

    def envvars(command: click.Command) -> set[str]:
        found = {str(p.envvar) for p in command.params if isinstance(p.envvar, str)}
        for sub in getattr(command, "commands", {}).values():
            found |= envvars(sub)
        return found

    assert envvars(main) - known_names() == set()


def test_the_examples_the_scripts_and_the_docs_name_only_variables_recon_reads() -> None:
    """No stale name (RECON_RECHECK_DAYS) is left in cron/, examples/, the README or docs/."""
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "cron").iterdir(),
             *(ROOT / "examples").rglob("*")]  # fmt: skip
    named = {
        (name, path.relative_to(ROOT).as_posix())
        for path in files
        if path.is_file()
        for name in _NAME.findall(path.read_text(encoding="utf-8", errors="replace"))
    }
    stale = {
        (name, where)
        for name, where in named
        if name not in known_names() and name not in _NOT_NAMES and not name.startswith(
            TOOL_PREFIXES) and not SECRET_VARIABLE.fullmatch(name)
    }  # fmt: skip
    assert stale == set()
    assert not {name for name, _ in named} & set(RENAMED)


def test_a_secret_read_from_a_file_and_the_ci_switch_are_known() -> None:
    """RECON_API_SECRET_FILE (a secret from a file) and RECON_REQUIRE_SHELLCHECK (make lint) are
    read, so config check does not call them typos."""
    assert unknown_variables(["RECON_API_SECRET_FILE", "RECON_SMTP_PASSWORD_FILE"]) == []
    assert unknown_variables(["RECON_REQUIRE_SHELLCHECK"]) == []
    assert [u.name for u in unknown_variables(["RECON_METRICS_FILES"])] == ["RECON_METRICS_FILES"]


def test_an_accounts_secret_is_read_and_a_table_is_no_variable() -> None:
    """RECON_ACCOUNT_<NAME>_SECRET and its _FILE form are read (config check names those of an
    account not configured); RECON_ACCOUNTS is no variable: the tables are the file's."""
    assert unknown_variables(["RECON_ACCOUNT_BRAND_A_SECRET"]) == []
    assert unknown_variables(["RECON_ACCOUNT_BRAND_A_SECRET_FILE"]) == []
    assert [u.name for u in unknown_variables(["RECON_ACCOUNTS"])] == ["RECON_ACCOUNTS"]
