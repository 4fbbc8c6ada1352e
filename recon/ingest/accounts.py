"""Which provider account an imported row belongs to: its ``provider_account`` cell, ``--account``,
or the one account there is.

A row is stored under the account it names, which must be configured; a row naming none is the
account ``--account`` names, else the only account configured (with only the default account a
file from before accounts imports as it always did). With several accounts and neither, the row
is refused; so is a row naming another account than ``--account``. An input without the column
that cannot be given an account is refused as a whole, before any row is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from recon.constants import DEFAULT_ACCOUNT
from recon.errors import InputError
from recon.ingest.sentfile import excerpt

if TYPE_CHECKING:
    from recon.settings import Settings

COLUMN = "provider_account"
OPTION = "--account"


@dataclass(frozen=True)
class ImportAccounts:
    """The configured accounts' names, and the account ``--account`` gave (None: not given)."""

    configured: tuple[str, ...] = (DEFAULT_ACCOUNT,)
    given: str | None = None

    @classmethod
    def of(cls, settings: Settings, given: str | None = None) -> ImportAccounts:
        """The accounts of ``settings``; ``given`` not configured is ``InputError`` (exit 2)
        naming ``--account``."""
        if given is not None:
            settings.select_accounts([given], option=OPTION)
        return cls(tuple(a.name for a in settings.provider_accounts), given)

    @property
    def fallback(self) -> str | None:
        """The account of a row naming none: ``--account``'s, else the only one configured."""
        if self.given is not None:
            return self.given
        return self.configured[0] if len(self.configured) == 1 else None

    def _listed(self) -> str:
        return ", ".join(self.configured)

    def check_columns(self, source: str, has_column: bool, outcome: str) -> None:
        """Refuse an input whose rows cannot be given an account: no ``provider_account`` column,
        several accounts configured and no ``--account``."""
        if not has_column and self.fallback is None:
            raise InputError(
                f"{source}: {outcome}: several accounts are configured ({self._listed()}); "
                f"give the file a {COLUMN} column or name its account with {OPTION} NAME"
            )

    def of_file(self, source: str) -> str:
        """The account of a file whose rows cannot name one (notification bodies as received):
        ``--account``'s or the only one; with several accounts and no ``--account``, refused."""
        if self.fallback is None:
            raise InputError(
                f"{source}: nothing was imported: several accounts are configured "
                f"({self._listed()}); name the file's account with {OPTION} NAME"
            )
        return self.fallback

    def of_row(self, named: str | None) -> tuple[str | None, str | None]:
        """(the row's account, None) or (None, why the row has none) for the cell ``named``
        (stripped text, None when empty or absent)."""
        if named is None:
            if self.fallback is None:
                return None, (
                    f"{COLUMN} is missing: several accounts are configured ({self._listed()})"
                )
            return self.fallback, None
        if named not in self.configured:
            return None, (
                f"{COLUMN} {excerpt(named, 40)} is not a configured account "
                f"(the accounts: {self._listed()})"
            )
        if self.given is not None and named != self.given:
            return None, f"{COLUMN} {named!r} is not the account {OPTION} names ({self.given!r})"
        return named, None
