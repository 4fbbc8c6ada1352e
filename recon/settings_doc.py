"""docs/configuration.md, rendered from the settings model (``python -m recon.settings_doc``).

Every setting's name and default come from ``recon.settings.Settings``, its meaning from
``recon.settings_help.MEANINGS``. ``tests/unit/test_configuration_doc.py`` fails when the file and
the model drift apart; run ``.venv/bin/python -m recon.settings_doc`` to write the file again.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from pydantic_core import PydanticUndefined

from recon.settings import (
    _DEFAULT_SCHEDULES,
    FILE_ONLY_FIELDS,
    SECRET_FIELDS,
    Settings,
    env_name,
)
from recon.settings_help import MEANINGS

DOC = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"

HEADER = """\
# Configuration

<!-- Generated from recon/settings.py by `python -m recon.settings_doc`: edit the model, not this
file (tests/unit/test_configuration_doc.py fails when they differ). -->

Every setting of recon, for the operator who runs it and the finance team that reads its reports.
Settings come from `RECON_*` environment variables (an empty value counts as unset), then an
optional TOML file (`--config FILE` or `RECON_CONFIG`; keys are the lower-case names without
`RECON_`, lists are TOML arrays), then the defaults below, which are the embedded demo (SQLite in
the working directory, the sandbox on loopback). In production they live in one environment file
([operations.md](operations.md)); `recon config check` prints the effective values and where each
came from.

Wrong values are reported one line each at start, naming the variable (exit 2). Lists are
comma-separated (`a@x.com,b@x.com`) or a JSON list (`["a@x.com"]`). Durations are seconds
(`3600`), a number with a unit (`24h`: `s`, `m`, `h` or `d`), `HH:MM:SS` or ISO 8601 (`PT1H`).
`RECON_REPORT_MODE` is octal (`640`). Numbers are finite (no `inf` or `nan`), and no span (a
number of days, a duration) goes beyond 36,500 days.

Secrets are never logged or printed: every message, log line and shown setting passes through one
scrubber (`recon/redact.py`), which masks as `***` each known secret (API secret, access and
refresh tokens, SMTP password, path token, heartbeat URL, the database password; also
percent-encoded; those of four characters or more) wherever it appears, the password of anything
shaped like `scheme:[//]user:password@host` by position, up to the last `@`, even when the URL
cannot be parsed, and the value of any `password=`, `secret=`, `token=` or `api_key=` parameter. A
database URL recon cannot use (malformed, a bad port, an unknown dialect, an `@` inside the
password, which must be written `%40`) is a configuration error (exit 2).

Every secret ({secrets}) can also be read from a file: `RECON_<NAME>_FILE` names the file, or a
credentials directory (systemd's `LoadCredential=`, `$CREDENTIALS_DIRECTORY`) holds a file named
`RECON_<NAME>`; a value given both ways is refused ([operations.md](operations.md)).

| Variable | Default | Meaning |
|---|---|---|
"""


FOOTER = """
## Provider accounts

A merchant with several brands or markets has one account at the provider for each, each with its
own public key and secret. `[accounts.NAME]` tables in the TOML file name them; recon reconciles
each account's payouts with that account's keys, and finance reads each account by its `label`.
Without any table, the `RECON_API_*` settings are one account named `default`, as before. Three
brands:

```toml
[accounts.northwind]
label = "Northwind (EU)"                    # the brand or market finance reads, required
api_base_url = "https://api.provider.example"   # required
public_key = "pk_live_northwind_4f2a"       # required, each account its own

[accounts.fjord]
label = "Fjord Nordics"
api_base_url = "https://api.provider.example"
public_key = "pk_live_fjord_91c0"
rate_limit = 20          # optional: requests per second (default: RECON_RATE_LIMIT)
concurrency = 8          # optional: requests in flight (default: RECON_CONCURRENCY)

[accounts.harbour]
label = "Harbour UK"
api_base_url = "https://api.provider.example"
public_key = "pk_live_harbour_07be"
mail_to = ["finance-uk@harbour.example"]    # optional: this account's own recipients
```

Each account's secret is never in the file: it comes from `RECON_ACCOUNT_<NAME>_SECRET` (the name
upper-cased: `RECON_ACCOUNT_NORTHWIND_SECRET`), or the file named by
`RECON_ACCOUNT_<NAME>_SECRET_FILE`, or a file `RECON_ACCOUNT_<NAME>_SECRET` in the credentials
directory, like every other secret. `RECON_MAIL_TO` still receives the pack over every account.
`recon config check` lists the accounts (name, label, URL, public key, where the secret is read
from) and asks the provider for a token with each account's keys.

An account's name is what the store, the `--account NAME` options, the callback URL and the
metrics call it: a plain identifier of lower-case letters, digits and `_`, starting with a letter,
at most 32 characters. A store that recon filled before it had accounts holds everything under
`default`: when that merchant adds a second brand, keep the first one's table named `default` (its
label says the brand), so its history stays its own.

Refused at start (exit 2, naming the table and key): a name that is not a plain identifier, a key
an account table does not have, a missing `label`, `api_base_url` or `public_key`, a `secret` in
the file, an account whose secret is found nowhere, two accounts with one public key, and
`RECON_API_BASE_URL`, `RECON_API_PUBLIC_KEY` or `RECON_API_SECRET` set alongside account tables
(nothing would read them).

## Fee entries

`[[fees]]` entries in the TOML file state the agreed price of payouts, so that each payout's fee is
checked against it (`fee_mismatch`, `fee_on_unpaid`, `fee_missing`: [finance.md](finance.md)):

```toml
[[fees]]
currency = "EUR"
valid_from = 2026-11-01      # a date, required
valid_to = 2026-11-15        # optional, the last day it prices (included)
fixed = "0.25"               # an amount in the currency
percent = "0.50"             # of the payout's amount, 0 to 100
min = "0.30"                 # optional
max = "25.00"                # optional
rounding = "half_even"       # half_even (default), half_up, down or up
# account = "default"        # optional: every account when absent
```

The entry whose currency and account match a payout, and whose dates cover the day it was created
(in `RECON_TIMEZONE`), prices it: `fixed` plus `percent` of its amount, rounded to the currency's
minor unit (0 decimals for JPY, 3 for KWD), then held between `min` and `max`. `account` names a
configured account (`default` without account tables). An entry is refused (exit 2, naming it)
when its currency or rounding is unknown, `percent` is above 100, an amount is negative or has more
decimals than its currency, `min` is above `max`, its account is not configured, or two entries
could price one payout.

## Journal

A `[journal]` table in the TOML file makes each run book the money it proved as double-entry
entries that are never edited ([finance.md](finance.md)): a settled payout debits
`payouts_payable` and credits `provider_balance`, its fee debits `fee_expense` and credits
`provider_balance`, a confirmed return debits `provider_balance` and credits `payouts_payable`.
`[journal.accounts]` gives the ledger's code for each; a provider account with codes of its own
gives them in `[accounts.NAME.journal]`, and the rest come from `[journal]`:

```toml
[journal]
sie_series = "R"               # the SIE #VER series
xero_date_format = "%d/%m/%Y"  # how Xero's Date column is written
xero_tax_rate = "Tax Exempt"   # Xero's TaxRate column: the tax rate's name in the organisation

[journal.accounts]             # the ledger's code for each account the entries book to
payouts_payable = "2890"
provider_balance = "1940"
fee_expense = "6570"
suspense = "2999"

[accounts.nordlys.journal]     # one provider account's own series and codes (optional)
sie_series = "N"

[accounts.nordlys.journal.accounts]
provider_balance = "1941"
```

Without `[journal]` no entries are made. An entry's event date is the day the provider settled
the payout, in `RECON_TIMEZONE` (a return, and a reversal of an entry no longer so, the day of
the run that saw it). `RECON_JOURNAL_LOCKED_THROUGH` (or `journal_locked_through = 2026-10-31` in
the file) is the last day of a closed period: an entry whose event date is on or before it posts
on the first day after it, marked late, so nothing posts into a closed period; a day after the
run's own is refused (exit 2). `recon config check` shows each account's codes and where they are
configured. Refused at start (exit 2, naming the key): a key the table does not have, a code that
is empty, longer than 64 characters, holds a control character or starts or ends with a space, a
`sie_series` other than 1 to 8 letters or digits, and `[accounts.NAME.journal]` without a
`[journal]` table. A code that an entry needs and nobody set refuses the night (exit 2), naming
the event and the setting.

## The provider's export

The provider's transaction export (a CSV of every transaction settled in a window) has no
published columns, so an `[export]` table in the TOML file says how to read it. Without one, the
file is read as the sandbox writes it (`,`, `.` decimals, UTF-8, epoch seconds, its headers):

```toml
[export]
delimiter = ";"
decimal_separator = ","
encoding = "utf-8"
times = "%Y-%m-%d %H:%M:%S"  # or "epoch" (seconds, with or without a fraction)
time_zone = "Europe/Stockholm"  # for times written without an offset
money_out = "positive"     # or "negative": a file writing money out with a minus

[export.columns]           # recon's name = the file's header
transaction_id = "Transaction ID"
type = "Type"
state = "Status"
amount = "Amount"
currency = "Currency"
merchant_reference = "Merchant reference"
settled = "Settled at"
# also: fee_amount, fee_id, related_transaction_id, created (optional)

[export.types]             # recon's kind = the values of the type column that mean it
payout = ["1"]
returned_funds = ["13"]
fee = ["Fee"]
top_up = ["Top-up"]
merchant_withdrawal = ["Merchant withdrawal"]
```

A key of `[export]` left out keeps the sandbox's value. An `[export.columns]` table, once given,
is the whole of the columns: `transaction_id`, `type`, `state`, `amount` and `currency` are
required, the others are read only when named; an `[export.types]` table, once given, is the whole
of the types (a row of a type it does not name is kept as `other`, never matched or summed).
recon keeps money out (payouts, fees, merchant withdrawals) as positive figures, as the sandbox
writes them; `money_out = "negative"` reads a file that writes them with a minus (`-10.00` paid
out) with their amount and fee_amount turned, so a positive one among them (a fee given back)
lowers the money out. `recon provider-export check` notes money out that sums below zero.
Headers are matched without case or surrounding spaces; headers the mapping does not name are
kept with each row. States are read as the provider's answers write them (`6` or
`STATE_SETTLED`). `recon provider-export check FILE` shows what the mapping makes of a file
([operations.md](operations.md)). Refused at start (exit 2, naming the key): a key the tables do
not have, a required column left out of a given `[export.columns]`, a delimiter that is a letter,
digit, quote or newline, a decimal separator other than `.` or `,`, an unknown encoding or time
zone, `times` neither `epoch` nor a format with `%`, `money_out` neither `positive` nor
`negative`, and one type value under two kinds.
"""


def default_text(name: str) -> str:
    """A field's default as the table shows it (``none`` when unset)."""
    field = Settings.model_fields[name]
    value: Any = field.default
    if value is PydanticUndefined and field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
    if value is None and name in _DEFAULT_SCHEDULES:
        value = list(_DEFAULT_SCHEDULES[name])
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if name == "report_mode":
        return f"`{value:o}`"
    if name == "export":
        return "the sandbox's file"
    if isinstance(value, timedelta):
        return f"`{_duration(value)}`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, list | dict):
        return f"`{','.join(str(v) for v in value)}`" if value else "none"
    return "none" if value is None else f"`{value}`"


def variable_text(name: str) -> str:
    """A setting as the table names it: its variable, or its table for those the file only gives."""
    if name in FILE_ONLY_FIELDS:
        return f"`[{name}.NAME]` (file only)"
    return f"`{env_name(name)}`"


def _duration(value: timedelta) -> str:
    seconds = int(value.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0 and seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def render() -> str:
    """The whole of docs/configuration.md."""
    rows = [
        f"| {variable_text(name)} | {default_text(name)} | {MEANINGS[name]} |"
        for name in Settings.model_fields
    ]
    secrets = ", ".join(f"`{env_name(name)}`" for name in sorted(SECRET_FIELDS))
    return HEADER.replace("{secrets}", secrets) + "\n".join(rows) + "\n" + FOOTER


def main() -> int:
    """Write docs/configuration.md (or the path given) from the model."""
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else DOC
    target.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"wrote {target}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
