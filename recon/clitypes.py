"""Option types of the command line that speak the reader's words, not ``strftime``'s."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

import click

from recon.constants import FIRST_DAY, LAST_DAY

EXAMPLE_DATE = "2026-12-25"
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class DateType(click.ParamType[date]):
    """A calendar day written ``YYYY-MM-DD`` (``2026-12-25``), spaces around it ignored.

    Anything else (``25/12/2026``, ``2026-02-30``, a day outside ``FIRST_DAY`` .. ``LAST_DAY``)
    is a usage error saying what was expected, which click turns into exit code 2.
    """

    name = "date"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> date:
        if isinstance(value, date):
            return value
        text = str(value).strip()
        if _ISO_DATE.fullmatch(text):
            try:
                day = date.fromisoformat(text)
            except ValueError:
                pass  # 2026-02-30: the right shape, no such day
            else:
                if FIRST_DAY <= day <= LAST_DAY:
                    return day
                self.fail(
                    f"expected a day from {FIRST_DAY} to {LAST_DAY}, got {text!r}", param, ctx
                )
        self.fail(f"expected a date like {EXAMPLE_DATE}, got {str(value)[:40]!r}", param, ctx)

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        return "YYYY-MM-DD"


DATE = DateType()


class KindChoice(click.Choice[str]):
    """A kind of finding by its code name: the registry's names (:mod:`recon.reconcile.kinds`),
    read only when the option is given or its help shown (the registry brings pandas)."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from recon.reconcile.kinds import names

        return tuple(names())

    @choices.setter
    def choices(self, _: Any) -> None:
        """Click sets the choices in its constructor; the registry has them."""
