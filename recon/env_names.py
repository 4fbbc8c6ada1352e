"""The ``RECON_*`` environment variables recon knows, and those it would silently ignore.

A variable with recon's prefix that no setting, command option or script reads is most likely a
typo or a name a newer recon dropped (``RECON_RECHECK_DAYS``, replaced by ``RECON_WATCH_DAYS``):
every command names each one on standard error, with its replacement or the closest known name
(:func:`difflib.get_close_matches`, on the names without their shared prefix), and
``recon config check`` fails on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from recon.accounts import SECRET_VARIABLE
from recon.secret_files import file_variable
from recon.settings import (
    CONFIG_ENV,
    ENV_PREFIX,
    FILE_ONLY_FIELDS,
    SECRET_FIELDS,
    Settings,
    env_name,
)

# Read by the command line's options rather than the settings (`recon sandbox …`, `recon import
# payouts --source-url`, `recon serve callbacks --port`).
OPTION_VARIABLES = frozenset(
    {"RECON_SANDBOX_URL", "RECON_SANDBOX_SECRET", "RECON_SOURCE_URL", "RECON_RECEIVER_PORT"}
)
# Read by cron/recon-nightly.sh, which runs recon (its environment is recon's environment too).
WRAPPER_VARIABLES = frozenset(
    {
        "RECON_ENV_FILE",
        "RECON_BIN",
        "RECON_LOG_FILE",
        "RECON_LOG_MAX_BYTES",
        "RECON_LOG_KEEP",
        "RECON_LOG_GZIP",
        "RECON_LOCK_FILE",
        "RECON_VERBOSE",
    }
)
# The test suite's and the benchmarks' own variables (RECON_TEST_POSTGRES_URL, ...), and make
# lint's (RECON_REQUIRE_SHELLCHECK, set by .ci/run).
TOOL_PREFIXES = ("RECON_TEST_", "RECON_BENCH_", "RECON_REQUIRE_")
# Names earlier versions read, and what replaced them.
RENAMED: Mapping[str, str] = {"RECON_RECHECK_DAYS": "RECON_WATCH_DAYS"}
# How alike (difflib's ratio, 0-1) a known name must be to be offered: a letter doubled, dropped
# or swapped scores 0.87-0.96 (TIMEZOEN 0.88, MAX_RUN_AGEE 0.96); difflib's default, 0.6, would
# offer names that share only a word.
_CLOSE = 0.75


@dataclass(frozen=True, slots=True)
class UnknownVariable:
    """A ``RECON_`` variable nothing reads, and the name that replaced it or that it misspells."""

    name: str
    replaced_by: str | None
    closest: str | None = None

    def message(self) -> str:
        """What the operator reads: the name, that it does nothing, and what to use instead."""
        if self.replaced_by:
            return (
                f"{self.name}: no longer read (replaced by {self.replaced_by}); it does nothing, "
                "remove it"
            )
        if self.closest:
            return f"{self.name}: unknown setting; did you mean {self.closest}?"
        return f"{self.name}: unknown setting (a typo?); it does nothing"


def known_names() -> frozenset[str]:
    """Every ``RECON_`` variable recon or its scripts read (accounts' secrets apart: their names
    follow the configured accounts, :data:`recon.accounts.SECRET_VARIABLE`)."""
    settings = {env_name(field) for field in Settings.model_fields if field not in FILE_ONLY_FIELDS}
    secret_files = {file_variable(env_name(field)) for field in SECRET_FIELDS}
    return frozenset({*settings, *secret_files, CONFIG_ENV, *OPTION_VARIABLES, *WRAPPER_VARIABLES})


def unknown_variables(names: Iterable[str]) -> list[UnknownVariable]:
    """The ``RECON_`` names among ``names`` (an environment's keys) that nothing reads, sorted.

    Names are compared upper-cased, as the settings read them.
    """
    known = known_names()
    found = sorted(
        {
            name.upper()
            for name in names
            if name.upper().startswith(ENV_PREFIX) and not name.upper().startswith(TOOL_PREFIXES)
        }
        - known
    )
    # An account's secret: `recon config check` names one whose account is not configured.
    found = [name for name in found if not SECRET_VARIABLE.fullmatch(name)]
    if not found:
        return []
    import difflib  # only when there is something to suggest: every command starts here

    # Compared without the shared prefix, which alone would make RECON_XYZZY "close" to RECON_BIN.
    bare = {name.removeprefix(ENV_PREFIX): name for name in sorted(known)}
    unknown = []
    for name in found:
        close = difflib.get_close_matches(name.removeprefix(ENV_PREFIX), bare, n=1, cutoff=_CLOSE)
        unknown.append(UnknownVariable(name, RENAMED.get(name), bare[close[0]] if close else None))
    return unknown
