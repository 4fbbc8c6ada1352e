"""The schema, as SQLAlchemy Core tables: the single description the migrations and queries share.

Money is integer minor units (BIGINT) where it fits the currency, and exact decimal text as the
provider sent it where it may not. Ids are ``String(255)``, case-sensitive on every database.
``sql/migrations`` creates exactly these tables; a test compares the two.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    CHAR,
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    text,
)

from recon.store.export_tables import balance_records as balance_records
from recon.store.export_tables import provider_export_files as provider_export_files
from recon.store.export_tables import provider_export_rows as provider_export_rows
from recon.store.journal_tables import journal_batches as journal_batches
from recon.store.journal_tables import journal_lines as journal_lines
from recon.store.journal_tables import journal_marks as journal_marks

# The one MetaData (with its constraint names), and the roll-forward's tables, which live apart.
from recon.store.metadata import ACCOUNT_COLUMN, MYSQL_OPTS, metadata
from recon.store.metadata import NAMING as NAMING
from recon.store.rollforward_tables import rollforward_lines as rollforward_lines
from recon.store.rollforward_tables import rollforward_runs as rollforward_runs
from recon.store.types import AnswerText, Id, LongText, SerialKey, Sha256Hex, UTCDateTime

# Alembic's version table (not part of ``metadata``: the migrations keep it), and the newest
# revision in sql/migrations: a store at it needs no migration (a test in
# tests/integration/test_store_schema.py compares it with Alembic's own head).
VERSION_TABLE = "recon_alembic_version"
SCHEMA_HEAD = "0021"
schema_version = Table(VERSION_TABLE, MetaData(), Column("version_num", String(32), nullable=False))


def _account() -> Column[str]:
    return Column(ACCOUNT_COLUMN, String(32), nullable=False, server_default="default")


runs = Table(
    "runs",
    metadata,
    Column("id", SerialKey, primary_key=True, autoincrement=True),
    Column("started_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime),
    Column("as_of", UTCDateTime, nullable=False),
    Column("status", String(32), nullable=False),  # recon.store.runs.RunStatus
    Column("counts", LongText, nullable=False),  # JSON object
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    _account(),  # one run is one account's night
    **MYSQL_OPTS,
)

payouts = Table(
    "payouts",
    metadata,
    # The merchant's record of each payout.
    Column("transaction_id", Id, nullable=False),
    Column("merchant_reference", Id, nullable=False),
    Column("amount_minor", BigInteger, nullable=False),
    Column("currency", CHAR(3), nullable=False),
    Column("bank_account_id", Id),
    Column("customer_id", Id),
    Column("country_id", String(16)),
    Column("created", UTCDateTime),
    Column("eta", UTCDateTime),
    Column("imported_at", UTCDateTime, nullable=False),
    # The latest reconciled state, written by runs, never by imports (outcome NULL: never run).
    Column("outcome", String(32)),
    Column("state", Integer),
    Column("error_code", String(255)),
    Column("returned_minor", BigInteger),
    Column("exceptions", Text),  # flags joined by ';'
    Column("candidate_duplicates", Text),  # later payouts that may repeat a late settlement
    Column("outcome_since", UTCDateTime),  # when a run first saw the current outcome
    Column("ever_failed", Boolean, nullable=False, server_default=false()),
    # When a run first saw it settled or returned (its latest such stretch; 0011): a later failed
    # or aborted answer is then a reversal after settlement.
    Column("settled_since", UTCDateTime),
    Column("last_checked_at", UTCDateTime),
    Column("last_run_id", SerialKey, ForeignKey("runs.id")),
    Column("next_check_at", UTCDateTime),  # when a watched payout is due again (NULL: not watched)
    # The provider's fee as the latest answer said it, in minor units of the currency (0017).
    Column("fee_minor", BigInteger),
    Column("fee_id", Id),
    # The agreed fee and the [[fees]] entry that priced it, as the latest run priced it (0017).
    Column("fee_expected_minor", BigInteger),
    Column("fee_entry", String(255)),
    # The provider's settled time as the latest answer said it (0019): the journal's event date.
    Column("settled_at", UTCDateTime),
    _account(),
    PrimaryKeyConstraint(ACCOUNT_COLUMN, "transaction_id"),
    # Every read is one account's, so every index leads with the account (0021): SQLite plans
    # without statistics and takes an index on the account alone over one that starts elsewhere.
    Index(None, ACCOUNT_COLUMN, "outcome", "outcome_since"),
    Index(None, ACCOUNT_COLUMN, "next_check_at"),  # the poll-selection query: due watches
    # A night reads the payouts it decides, not all (docs/scaling.md, "Indexes"): flagged ones,
    # and the later payouts a late settlement may repeat. MariaDB indexes a prefix of TEXT.
    Index(None, ACCOUNT_COLUMN, "exceptions", mysql_length={"exceptions": 255}),
    Index(None, ACCOUNT_COLUMN, "candidate_duplicates", mysql_length={"candidate_duplicates": 255}),
    # Due watches and unscheduled watched payouts (a range per outcome; 0007).
    Index(None, ACCOUNT_COLUMN, "outcome", "next_check_at", "outcome_since"),
    # A late settlement's later payouts: same party and amount, created after it (0007). Named
    # by hand: the conventional name is longer than PostgreSQL's 63 characters.
    Index(
        "ix_payouts_account_bank_account_amount_created",
        ACCOUNT_COLUMN,
        "bank_account_id",
        "amount_minor",
        "created",
    ),
    Index(None, ACCOUNT_COLUMN, "customer_id", "amount_minor", "created"),
    # A possible duplicate's members, and the recorded payouts an unrecorded one or a create may
    # repeat: the same merchant_reference (0013).
    Index(None, ACCOUNT_COLUMN, "merchant_reference"),
    # The roll-forward's position per currency and outcome, amounts and fees, read from the index
    # alone (0015, 0021).
    Index(
        "ix_payouts_account_currency_outcome_amounts",
        ACCOUNT_COLUMN,
        "currency",
        "outcome",
        "amount_minor",
        "fee_minor",
    ),
    **MYSQL_OPTS,
)

observations = Table(
    "observations",
    metadata,
    Column("id", SerialKey, primary_key=True, autoincrement=True),
    Column("run_id", SerialKey, ForeignKey("runs.id"), nullable=False),
    Column("transaction_id", Id, nullable=False),
    Column("fetched_at", UTCDateTime, nullable=False),
    Column("status", String(16), nullable=False),  # ok / not_found / error
    Column("state", Integer),
    Column("type", Integer),
    Column("error_code", String(255)),
    Column("amount", Text),  # exact decimal text, as the provider sent it
    Column("amount_minor", BigInteger),  # when the amount fits the currency's digits
    Column("currency", CHAR(3)),
    Column("related_transaction_id", Id),
    Column("original_transaction_id", Id),
    Column("merchant_reference", AnswerText),  # checked against the record (as sent)
    Column("to_bank_account_id", AnswerText),  # checked against the record
    Column("created", UTCDateTime),  # used when the record has none
    Column("eta", UTCDateTime),  # used when the record has none
    Column("state_raw", String(255)),  # an undocumented state name, as sent
    Column("error", Text),  # why a fetch failed; never secrets
    Column("raw", LongText),  # the JSON body; NULL once past RECON_KEEP_RAW_DAYS (0010)
    Column("fee_amount_minor", BigInteger),  # the answer's fee_amount in minor units (0017)
    Column("fee_id", Id),
    Column("settled", UTCDateTime),  # the answer's settled time (0019)
    _account(),
    Index(None, ACCOUNT_COLUMN, "transaction_id", "fetched_at"),
    Index(None, "run_id"),
    Index(None, "type"),  # the returns read: type-13 answers (0007)
    # Retention walks the answers still holding a raw body, oldest first (0010). Partial where the
    # database can, so a night walks the raw bodies it may drop, not every answer ever stored.
    Index(
        None,
        "fetched_at",
        "id",
        sqlite_where=text("raw IS NOT NULL"),
        postgresql_where=text("raw IS NOT NULL"),
    ),
    **MYSQL_OPTS,
)

notifications = Table(
    "notifications",
    metadata,
    Column("id", SerialKey, primary_key=True, autoincrement=True),
    Column("dedupe_key", Sha256Hex, nullable=False),  # sha256 hex of canonical body
    Column("kind", String(32), nullable=False),  # recon.constants.NotificationKind
    Column("merchant_id", Id),
    Column("transaction_id", Id),
    Column("original_transaction_id", Id),
    Column("session_id", Id),
    Column("state", Integer),
    Column("amount", Text),  # exact decimal text
    Column("country_id", String(16)),
    Column("body", LongText),  # the raw body as received; NULL past RECON_KEEP_RAW_DAYS (0010)
    Column("query", Text, nullable=False),  # the merchant's query string, may be empty
    Column("source", String(16), nullable=False),  # recon.constants.NotificationSource
    Column("received_at", UTCDateTime, nullable=False),
    # recon.constants.ParseStatus, and why a body was not (fully) read: "field: reason; ..."
    Column("parse_status", String(16), nullable=False, server_default="parsed"),
    Column("parse_problem", Text),
    _account(),
    UniqueConstraint(ACCOUNT_COLUMN, "dedupe_key"),
    Index(None, ACCOUNT_COLUMN, "original_transaction_id"),
    Index(None, ACCOUNT_COLUMN, "transaction_id"),
    Index(None, "parse_status"),
    Index(None, "received_at"),  # the ids named since the previous run (0014)
    Index(  # retention's walk (0010), as observations'
        None,
        "received_at",
        "id",
        sqlite_where=text("body IS NOT NULL"),
        postgresql_where=text("body IS NOT NULL"),
    ),
    **MYSQL_OPTS,
)

# The record columns a history row keeps as its run saw them (the provider's created/eta included).
_RECORD_SNAPSHOT: dict[str, Any] = {
    "merchant_reference": Id,
    "amount_minor": BigInteger,
    "currency": CHAR(3),
    "bank_account_id": Id,
    "customer_id": Id,
    "created": UTCDateTime,
    "eta": UTCDateTime,
}
RECORD_SNAPSHOT_COLUMNS: tuple[str, ...] = tuple(_RECORD_SNAPSHOT)

outcome_history = Table(
    "outcome_history",
    metadata,
    Column("id", SerialKey, primary_key=True, autoincrement=True),
    Column("transaction_id", Id, nullable=False),
    Column("run_id", SerialKey, ForeignKey("runs.id"), nullable=False),
    Column("previous_outcome", String(32)),
    Column("outcome", String(32), nullable=False),
    Column("state", Integer),
    Column("error_code", String(255)),
    Column("returned_minor", BigInteger),
    Column("exceptions", Text),
    Column("candidate_duplicates", Text),
    Column("outcome_since", UTCDateTime),
    Column("changed_at", UTCDateTime, nullable=False),  # the run's as_of
    # The record as the run saw it (0012), so a run's report is rebuilt with its own figures
    # whatever is imported later. NULL amount_minor: a row written before 0012 (read the payout).
    *(Column(name, kind) for name, kind in _RECORD_SNAPSHOT.items()),
    Column("fee_minor", BigInteger),  # the fee as the run saw it, and the agreed one (0017)
    Column("fee_id", Id),
    Column("fee_expected_minor", BigInteger),
    Column("fee_entry", String(255)),
    _account(),
    ForeignKeyConstraint(
        [ACCOUNT_COLUMN, "transaction_id"], ["payouts.provider_account", "payouts.transaction_id"]
    ),
    Index(None, ACCOUNT_COLUMN, "transaction_id"),
    Index(None, "run_id"),
    **MYSQL_OPTS,
)

# What an import changed in a payout a run had already reconciled (revision 0012): each field's
# value before and after, as text. A change of a compared field (RECORD_EVIDENCE_FIELDS) is asked
# about until an answer comes (``answered_run_id``) and is the finding record_changed until a
# person resolves it; a run closes it (``closed_run_id``) then, or at once for other fields.
record_changes = Table(
    "record_changes",
    metadata,
    Column("id", SerialKey, primary_key=True, autoincrement=True),
    Column("transaction_id", Id, nullable=False),
    Column("field", String(32), nullable=False),
    Column("before", Text),
    Column("after", Text),
    Column("imported_at", UTCDateTime, nullable=False),
    Column("answered_run_id", SerialKey, ForeignKey("runs.id")),
    Column("closed_run_id", SerialKey, ForeignKey("runs.id")),  # NULL while the change is live
    _account(),
    ForeignKeyConstraint(
        [ACCOUNT_COLUMN, "transaction_id"], ["payouts.provider_account", "payouts.transaction_id"]
    ),
    Index(None, ACCOUNT_COLUMN, "transaction_id"),
    Index(None, "closed_run_id"),
    **MYSQL_OPTS,
)

run_exceptions = Table(
    "run_exceptions",
    metadata,
    Column("run_id", SerialKey, ForeignKey("runs.id"), nullable=False),
    Column("item_kind", String(16), nullable=False),  # payout / return
    Column("item_id", Id, nullable=False),  # a payout or a returned-funds transaction id
    Column("flag", String(64), nullable=False),  # recon.reconcile.kinds
    Column("status", String(16), nullable=False),  # recon.constants.FlagStatus
    Column("facts", Text),  # the finding's facts (JSON); its words are rendered from them (0016)
    Column("detail", Text),  # the words of a row written before 0016
    # The exception's case as this run reported it: a report rebuilt later shows
    # what the run showed, not what people did since.
    Column("exception_id", String(32)),
    Column("owner", String(255)),
    Column("note", Text),
    Column("until", UTCDateTime),
    Column("opened_at", UTCDateTime),
    Column("previous_resolution", Text),
    _account(),
    PrimaryKeyConstraint("run_id", ACCOUNT_COLUMN, "item_kind", "item_id", "flag"),
    **MYSQL_OPTS,
)

# One row per finding (item, exception name) from the run that first saw it until the run that
# no longer does: its stable id, where it stands, and who owns it. Runs and people
# both change it; ``version`` makes each change conditional on what the changer read.
exception_cases = Table(
    "exception_cases",
    metadata,
    Column("exception_id", String(32), primary_key=True),  # "E<run id>-<n>"
    Column("item_kind", String(16), nullable=False),
    Column("item_id", Id, nullable=False),
    Column("flag", String(64), nullable=False),
    Column("state", String(16), nullable=False),  # recon.constants.CaseState
    Column("facts", Text),  # the facts it is compared by (JSON; recon.reconcile.cases.basis)
    Column("last_facts", Text),  # the facts it was last shown with (JSON, 0016)
    Column("detail", Text),  # the words of a case last written before 0016
    Column("opened_run_id", SerialKey, ForeignKey("runs.id"), nullable=False),
    Column("opened_at", UTCDateTime, nullable=False),  # that run's as_of
    Column("last_seen_run_id", SerialKey, ForeignKey("runs.id"), nullable=False),
    Column("ended_run_id", SerialKey, ForeignKey("runs.id")),  # NULL while the finding stands
    Column("owner", String(255)),  # who set the state
    Column("note", Text),
    Column("until", UTCDateTime),  # a snooze's end
    Column("state_at", UTCDateTime),  # when a person last set the state
    Column("reported_run_id", SerialKey, ForeignKey("runs.id")),  # listed a resolution once
    Column("previous_resolution", Text),  # of a case reopened because its facts changed
    Column("version", Integer, nullable=False, server_default="1"),
    _account(),
    Index(None, ACCOUNT_COLUMN, "item_kind", "item_id", "flag"),
    Index(None, "ended_run_id"),
    Index(None, "opened_run_id"),  # the roll-forward's findings opened since a run (0015)
    **MYSQL_OPTS,
)

# Every action on a case, by a person or by a run, in order; appended, never rewritten.
exception_actions = Table(
    "exception_actions",
    metadata,
    Column("id", SerialKey, primary_key=True, autoincrement=True),
    Column("exception_id", String(32), ForeignKey("exception_cases.exception_id"), nullable=False),
    Column("at", UTCDateTime, nullable=False),
    Column("by", String(255), nullable=False),  # who acted (ran the command)
    Column("action", String(32), nullable=False),  # recon.constants.CaseAction
    Column("previous_state", String(16), nullable=False),
    Column("state", String(16), nullable=False),
    Column("note", Text),
    Column("until", UTCDateTime),
    Column("source", Text, nullable=False),  # "command line", "report.xlsx row 4", "run 12"
    Column("decided_by", String(255)),  # who the file's `by` column says decided (0008)
    Index(None, "exception_id"),
    **MYSQL_OPTS,
)

# Each run's judgement of every returned-funds transaction (few rows: returns are rare).
run_returns = Table(
    "run_returns",
    metadata,
    Column("run_id", SerialKey, ForeignKey("runs.id"), nullable=False),
    Column("return_id", Id, nullable=False),
    Column("original_id", Id),
    Column("amount_minor", BigInteger),
    Column("currency", String(8)),
    Column("confirmed", Boolean, nullable=False),
    Column("matched", Boolean, nullable=False),
    Column("notified", Boolean, nullable=False),
    Column("claimed_original_id", Id),
    Column("claimed_amount", Text),
    _account(),
    PrimaryKeyConstraint("run_id", ACCOUNT_COLUMN, "return_id"),
    **MYSQL_OPTS,
)

# Ids the provider named (in a notification or an answer) that the record lacks, each with the
# provider's latest answer about it. Never a payout: recon records nothing it did not
# import. ``status``: recon.reconcile.unrecorded.ItemStatus.
provider_items = Table(
    "provider_items",
    metadata,
    Column("transaction_id", Id, nullable=False),
    Column("first_named_at", UTCDateTime, nullable=False),
    Column("named_by", String(16), nullable=False),  # callback / return / answer / claim
    Column("last_asked_run_id", SerialKey, ForeignKey("runs.id")),
    Column("status", String(16), nullable=False),
    Column("type", Integer),
    Column("state", Integer),
    Column("amount_minor", BigInteger),
    Column("currency", String(8)),
    Column("merchant_reference", AnswerText),
    Column("to_bank_account_id", AnswerText),
    Column("customer_id", AnswerText),
    Column("created", UTCDateTime),
    Column("answered_at", UTCDateTime),
    _account(),
    PrimaryKeyConstraint(ACCOUNT_COLUMN, "transaction_id"),
    Index(None, "status"),  # a night reads the items still open, not every one ever named
    **MYSQL_OPTS,
)

# Creates recorded without a transaction id (a timeout, a lost answer): their outcome is unknown
# until a provider-side item or a later import carries the same reference and amount.
creation_attempts = Table(
    "creation_attempts",
    metadata,
    Column("id", SerialKey, primary_key=True, autoincrement=True),
    Column("merchant_reference", Id, nullable=False),
    Column("amount_minor", BigInteger, nullable=False),
    Column("currency", CHAR(3), nullable=False),
    Column("bank_account_id", Id),
    Column("customer_id", Id),
    Column("created", UTCDateTime),
    Column("imported_at", UTCDateTime, nullable=False),
    Column("matched_transaction_id", Id),
    Column("matched_at", UTCDateTime),
    _account(),
    Index(None, ACCOUNT_COLUMN, "merchant_reference"),
    Index(None, "matched_at"),  # a night reads the unmatched ones (NULL)
    **MYSQL_OPTS,
)

run_lock = Table(
    "run_lock",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("holder", String(255), nullable=False),  # host:pid:uuid
    Column("acquired_at", UTCDateTime, nullable=False),
    Column("heartbeat_at", UTCDateTime, nullable=False),
    **MYSQL_OPTS,
)

# Columns an import writes; the reconciliation columns are the run's alone.
PAYOUT_RECORD_COLUMNS: tuple[str, ...] = (
    "transaction_id",
    "merchant_reference",
    "amount_minor",
    "currency",
    "bank_account_id",
    "customer_id",
    "country_id",
    "created",
    "eta",
)
