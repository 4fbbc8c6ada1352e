"""What each setting means, for the people who set it: docs/configuration.md shows these.

Keyed by the field names of ``recon.settings.Settings`` (that module stays about types, bounds and
validation); ``tests/unit/test_configuration_doc.py`` fails when a field has no meaning here or a
meaning has no field.
"""

from __future__ import annotations

MEANINGS: dict[str, str] = {
    "database_url": (
        "recon's database: SQLite, `postgresql://…` (psycopg 3) or `mysql://…`/`mariadb://…` "
        "(PyMySQL)"
    ),
    "import_file": (
        "A CSV of the merchant's payouts that `recon run` imports before each night, as "
        "`recon import payouts FILE` does (all rows or none); a failed import fails the night "
        "and changes nothing. Unset: no import"
    ),
    "import_sql": (
        "Instead of a file: a file holding one `SELECT` of the merchant's payouts, run read-only "
        "against `RECON_IMPORT_SOURCE_URL` before each night, as `recon import payouts --sql` "
        "does"
    ),
    "import_source_url": (
        "The merchant's database that `RECON_IMPORT_SQL` reads (give recon a read-only role). A "
        "secret: shown masked, and can come from `RECON_IMPORT_SOURCE_URL_FILE`"
    ),
    "api_base_url": (
        "The provider (default: the local sandbox), for the one account `default`; with "
        "`[accounts.NAME]` tables, each account gives its own and this is not read"
    ),
    "api_public_key": "`merchant.authorize` public key of the account `default` (as above)",
    "api_secret": "`merchant.authorize` secret of the account `default` (as above)",
    "accounts": (
        "The provider accounts, one table each, in the TOML file only ([Provider accounts]"
        "(#provider-accounts)); none: the `RECON_API_*` settings are the one account `default`"
    ),
    "concurrency": (
        "Requests in flight at once (also the connection pool size); an account's own "
        "`concurrency` wins"
    ),
    "rate_limit": (
        "Requests per second cap, shared by all workers (unset: no cap); an account's own "
        "`rate_limit` wins"
    ),
    "connect_timeout": "Seconds to connect to the provider",
    "read_timeout": "Seconds to wait for the provider's answer; the provider gives up after 60 s",
    "request_deadline": (
        "Seconds for the whole exchange (connect to last byte) of one attempt, however slowly the"
        " bytes come; past it the attempt is a timeout (retried like one). Keep it above "
        "`RECON_READ_TIMEOUT`"
    ),
    "max_answer_bytes": (
        "Longest answer body read (512 KiB; answers are about 1 KB). A longer one, or one "
        "announcing more, is cut off while reading and is a malformed answer (`fetch_failed`)"
    ),
    "retry_attempts": "Attempts for reads and authorize (connect errors, timeouts, 429, 5xx)",
    "retry_initial_wait": (
        "Seconds before the first retry: exponential backoff with full jitter; `Retry-After` is "
        "honoured and shared"
    ),
    "retry_max_wait": "The longest wait between retries, in seconds",
    "token_refresh_margin": (
        "Re-authorize this many seconds before the token expires (also on a 401)"
    ),
    "not_found_error_names": '4xx error names that mean "unknown transaction" (besides 404)',
    "session_found_error_names": (
        '4xx error names that mean "this id is a session\'s" (so is a message saying a session was'
        " found)"
    ),
    "watch_days": "How long failed, aborted and unknown payouts stay watched, in calendar days",
    "return_watch_days": "How long settled payouts are re-checked for returns, in calendar days",
    "claim_poll_cap": (
        "Returned-funds claims (announced, not confirmed) asked about per run at most; the rest "
        "wait for the next run"
    ),
    "refused_limit": (
        "An id the provider refuses to this merchant account (401 or 403 with a working token) is"
        " that payout's `fetch_failed`; the run stops (exit 1) only when the refusals pass this "
        "many **and** more than half the ids asked so far, which is what a revoked key looks like"
    ),
    "unrecorded_poll_cap": (
        "Ids the provider named that the record lacks asked about per run at most; the rest wait "
        "for the next run (counted in the report's footer)"
    ),
    "keep_raw_days": (
        "Days raw provider answers and raw notification bodies are kept; each run drops older "
        "ones (the parsed fields stay), except evidence of a finding still open or of a return. "
        "`recon db prune --dry-run` says what would go"
    ),
    "watch_schedule": (
        "Calendar days (in `RECON_TIMEZONE`) after the outcome on which failed, aborted and "
        "unknown payouts are checked; whole days, increasing, none beyond `RECON_WATCH_DAYS` "
        "(unset: the default's days up to it). The window ends with a check on its last day"
    ),
    "return_watch_schedule": (
        "The same for settled payouts and returned-funds claims, up to `RECON_RETURN_WATCH_DAYS`"
    ),
    "delay_grace": (
        "Completed payouts past `eta` + this are `delayed` (seconds, `1h`, `HH:MM:SS` or `PT1H`)"
    ),
    "fees": (
        'The agreed price of payouts: `[[fees]]` entries in the TOML file (see "Fee entries"'
        " below; in the environment a JSON list of them). None: fees are reported, never checked"
    ),
    "fee_tolerance": (
        "How far the fee charged may differ from the agreed one before it is `fee_mismatch`, as an"
        " amount in the payout's currency (`0.01`)"
    ),
    "fee_grace": (
        "How long after a payout settled its fee may still come before it is `fee_missing`"
    ),
    "journal": (
        "The ledger's account codes the journal books each settlement, fee and return to: a "
        '`[journal]` table in the TOML file (see "Journal" below; in the environment a JSON '
        "table). None: no entries are made"
    ),
    "journal_locked_through": (
        "The last day of a closed period (`2026-10-31`), which may be the run's own day, never a "
        "later one: an entry whose event date is on or before it posts on the first open day "
        "after it, marked late. None: nothing is closed"
    ),
    "export": (
        "How the provider's transaction export file is read: an `[export]` table in the TOML file "
        '(see "The provider\'s export" below; in the environment a JSON table). Default: the '
        "sandbox's own file"
    ),
    "provider_export": (
        "`api`: each night pulls the provider's transaction export (the settlement days since the "
        "last one pulled, plus the lookback) before it polls; `off`: only files imported by hand"
    ),
    "export_lookback_days": (
        "Settlement days before the last pulled one that each night pulls again, so rows whose "
        "state changed late are seen as new versions"
    ),
    "export_row_cap": (
        "The provider's cap on an export file's rows: a file of exactly this many rows is never "
        "taken as complete (its window is split and pulled again)"
    ),
    "stale_days": "Pending or delayed longer than this is flagged `stale`",
    "duplicate_window": (
        "Payouts to the same bank account or customer with the same amount, created this close "
        "together, are possibly paid twice when more than one is settled or in flight (seconds, "
        "`24h`, `30m`, `2d`, `HH:MM:SS` or `PT24H`)"
    ),
    "out_dir": "Where `recon run`/`recon report` write without `--out`",
    "timezone": (
        "Dates in reports, and the zone of times given without an offset (import columns "
        "`created`/`eta`, `--as-of`) (IANA name)"
    ),
    "report_row_cap": "Rows per table in report.html (the CSVs have all)",
    "mail_row_cap": (
        "Rows per table in the email's body (each cut table says how many more rows the attached "
        "files hold): the inlined styles make every row heavy, and Gmail cuts a message body past"
        " ~102 KB"
    ),
    "report_days": (
        "Days of runs the reports cover: payouts changed in them (beside open and flagged ones), "
        "and the window of report.html's totals (with month to date)"
    ),
    "report_mode": (
        "Permission bits of every report file, octal (`640` lets the group read them), whatever "
        "the umask; the owner must keep read and write. The directory's own mode is the "
        "operator's"
    ),
    "report_workbook": (
        "report.xlsx's `Payouts` sheet: `night` holds the payouts the night needs read (changed "
        "other than routinely, open or flagged), `window` every row of payouts.csv; `off` writes "
        "and mails no workbook, the CSVs only (and removes an earlier run's `report.xlsx` from "
        "the directory). Cells are the pack's dearest part: ~15 µs each, 20 CPU s for a 7-day "
        'window of 140,000 payouts (BENCHMARKS.md, "Fifth round")'
    ),
    "apply_max_bytes": (
        "The largest file `recon exceptions apply` reads, on disk and, for a workbook, inflated "
        "(256 MiB). Sized at 2.2x the largest workbook recon mails at the benchmark's volume: "
        "`RECON_REPORT_WORKBOOK=window` over 7 days of 20,000 payouts a night, with 20,000 "
        "exceptions, is 8.3 MB zipped and 114 MB inflated, and `apply` reads it in 7 s at a peak "
        "of 125 MB (the bound's check is 0.9 s of that). Raise it with the volume"
    ),
    "csv_dialect": (
        "The CSVs' dialect: `standard` (`,` between cells, `.` in amounts, UTF-8 without BOM, LF)"
        " or `excel-eu` (`;`, `,` as decimal mark in amounts, UTF-8 with BOM, CRLF); see "
        "[finance.md](finance.md#csv-dialects)"
    ),
    "heartbeat_url": (
        "A dead man's switch (healthchecks.io convention): `recon run` pings `URL/start` when it "
        "starts, `URL` when it exits 0, `URL/fail` on any other exit; a dry run pings nothing. A "
        "secret: masked everywhere"
    ),
    "max_run_age": (
        "`recon status` is CRITICAL when the last complete run finished longer ago; a report "
        'whose previous run is older than this before it says "A run is missing" at the top '
        "(seconds, `HH:MM:SS` or `PT26H`)"
    ),
    "log_format": (
        "`json`: every log line on standard error, and every result or error line of the "
        "commands, is one JSON object (`time`, `level`, `logger`, `message`, `exception`) for log"
        " shippers"
    ),
    "metrics_file": (
        "Prometheus text written atomically at the end of every run, failed or not, for "
        "node_exporter's textfile collector ([operations.md](operations.md), metrics)"
    ),
    "receiver_max_body_bytes": "Larger callback bodies get 413",
    "receiver_allow_networks": "CIDRs allowed to post callbacks (others get 403)",
    "receiver_path_token": "Secret path segment: callbacks go to `/callbacks/<token>`",
    "receiver_header_timeout": (
        "Seconds from a connection's start (or its previous answer) to the end of a request's "
        "headers; then 408 and the connection is closed"
    ),
    "receiver_body_timeout": (
        "Seconds from the end of the headers to the end of the body; then 408, closed, nothing "
        "stored"
    ),
    "receiver_max_header_bytes": (
        "Request line and headers together; larger gets 400 and is closed while it is read"
    ),
    "receiver_max_connections": (
        "Past it the connection waiting longest for its request is closed (408); if none is idle,"
        " the new request gets 503"
    ),
    "receiver_health_cache": "Seconds `GET /health` reuses its last write probe",
    "smtp_host": "Mail server; required to send (no host: no email)",
    "smtp_port": "Mail server port (usually 587 for STARTTLS, 465 for TLS)",
    "smtp_security": "`none`, `starttls` or `tls` (implicit TLS); certificates are verified",
    "smtp_user": "SMTP login; recon logs in when a user is set",
    "smtp_password": "SMTP password",
    "smtp_timeout": "Seconds per connection attempt",
    "mail_from": "Sender",
    "mail_to": (
        'Recipients. Lists: comma-separated (`a@x.com,b@x.com`) or JSON (`["a@x.com"]`), as for '
        "every list setting"
    ),
    "mail_cc": "Copy recipients (a list, as `RECON_MAIL_TO`)",
    "mail_zip_above_bytes": "Zip the CSVs into one attachment above this total",
}
