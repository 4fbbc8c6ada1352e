"""``recon journal export``: the journal's unexported lines as a numbered batch, and a batch again.

An export reads every line of the chosen account(s) not yet in a batch, checks them
(:mod:`recon.reconcile.journal_check`: a failure refuses the whole batch, ``JournalUnbalanced``,
nothing written), renders the files (:mod:`recon.report.journal_files`) and then, in this order:

1. writes each file, fsynced, to a partial file beside its final name (:mod:`recon.files`);
2. in one transaction records the batch (number, format, account, options, each file's sha256)
   and stamps its number on the lines, then commits;
3. renames the partial files to their names.

A crash before the commit leaves no batch and no stamped line (the partial files are swept by the
next export into the directory); a crash after it leaves a batch recorded whose files may be
missing, and ``--batch N`` writes them, byte for byte, from the stored lines and options. So a
line is never marked exported unless its batch can be written again, and no file of a batch that
was not recorded ever appears (docs/decisions.md, "The journal export").

``--batch N`` renders batch N from its lines and options, checks every file's sha256 against the
one recorded, and only then writes them (atomically).
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

import recon
from recon.errors import (
    InputError,
    JournalMismatch,
    JournalUnbalanced,
    ReportDirError,
    ReportWriteError,
)
from recon.files import (
    DEFAULT_MODE,
    discard,
    fsync_dir,
    make_private_dirs,
    staged_file,
    sweep_partials,
)
from recon.journal_settings import JournalSetting, account_books
from recon.reconcile.journal import JournalLine
from recon.reconcile.journal_check import unbalanced
from recon.report.journal_files import (
    XERO_MAX_LINES,
    Files,
    JournalFormat,
    file_entry,
    manifest_file,
    manifest_name,
    render_files,
)
from recon.settings import Settings
from recon.signals import stopping_raises
from recon.store.db import write_transaction
from recon.store.journal_export import (
    BatchRecord,
    batch_lines,
    batch_record,
    next_batch,
    record_batch,
    unexported_lines,
)

PROGRAM = "recon"


@dataclass(frozen=True)
class JournalExport:
    """What an export wrote: the batch (None: nothing to export), its lines and entries, the
    files in the order recorded (the manifest last)."""

    batch: int | None
    format: str | None = None
    lines: int = 0
    entries: int = 0
    paths: tuple[Path, ...] = ()


def export_options(
    settings: Settings, fmt: JournalFormat, lines: Sequence[JournalLine], created_at: datetime
) -> dict[str, Any]:
    """The options a new batch's files are written with, recorded with it so that ``--batch N``
    writes the same bytes whatever the settings are by then."""
    journal = settings.journal or JournalSetting()
    match fmt:
        case JournalFormat.CSV:
            return {"dialect": settings.csv_dialect}
        case JournalFormat.XERO:
            return {
                "date_format": journal.xero_date_format,
                "tax_rate": journal.xero_tax_rate,
                "lines_per_file": XERO_MAX_LINES,
            }
        case JournalFormat.SIE:
            configured = {account.name: account for account in settings.provider_accounts}
            series, names = {}, {}
            for name in sorted({line.provider_account for line in lines}):
                account = configured.get(name)
                books = account_books(journal, name, account.journal if account else None)
                series[name] = books.sie_series if books is not None else journal.sie_series
                names[name] = account.label if account is not None else name
            return {
                "series": series,
                "names": names,
                "program": PROGRAM,
                "version": recon.__version__,
                "generated": created_at.astimezone(settings.zone).strftime("%Y%m%d"),
            }


def _with_manifest(
    record: BatchRecord, files: Files, lines: Sequence[JournalLine]
) -> tuple[Files, list[dict[str, Any]]]:
    entries = [file_entry(name, content) for name, content in files]
    manifest = manifest_file(
        batch=record.batch,
        fmt=record.format,
        provider_account=record.provider_account,
        created_at=record.created_at,
        lines=lines,
        files=entries,
        options=record.options,
    )
    name = manifest_name(record.batch)
    return [*files, (name, manifest)], [*entries, file_entry(name, manifest)]


def export_journal(
    settings: Settings,
    engine: Engine,
    out_dir: Path,
    *,
    fmt: JournalFormat,
    account: str | None = None,
    now: datetime | None = None,
    mode: int = DEFAULT_MODE,
) -> JournalExport:
    """Export every line of ``account`` (None: of every account) not yet in a batch as the next
    batch, into ``out_dir``; ``JournalExport(None)`` when there is none."""
    created_at = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    staged: dict[Path, Path] = {}
    with stopping_raises():
        try:
            with write_transaction(engine) as conn:  # the write lock first: no busy read
                lines = unexported_lines(conn, account)
                if not lines:
                    return JournalExport(None)
                problems = unbalanced(lines)
                if problems:
                    raise JournalUnbalanced([str(problem) for problem in problems])
                _prepare(out_dir)  # only for a batch that will be written: a refusal makes nothing
                number = next_batch(conn)
                record = BatchRecord(
                    batch=number,
                    format=str(fmt),
                    provider_account=account,
                    created_at=created_at,
                    lines=len(lines),
                    options=export_options(settings, fmt, lines, created_at),
                    files=[],
                )
                files, entries = _with_manifest(
                    record, render_files(fmt, number, lines, record.options), lines
                )
                staged = _stage(out_dir, files, mode)
                record_batch(conn, replace(record, files=entries), lines)
        except BaseException:
            for partial in staged.values():
                discard(partial)
            raise
        paths = _place(out_dir, staged, number, recorded=True)
    return JournalExport(
        number, str(fmt), len(lines), len({line.journal_id for line in lines}), paths
    )


def rewrite_batch(
    engine: Engine, out_dir: Path, batch: int, *, mode: int = DEFAULT_MODE
) -> JournalExport:
    """Write batch ``batch``'s files again, byte for byte, into ``out_dir``: rendered from its
    stored lines and options, each checked against the sha256 recorded before any is written.
    ``InputError`` when there is no such batch, ``JournalMismatch`` when a file differs."""
    with engine.connect() as conn:
        record = batch_record(conn, batch)
        if record is None:
            last = next_batch(conn) - 1
            known = f"the last is {last}" if last else "none was exported yet"
            raise InputError(f"--batch {batch}: there is no journal batch {batch} ({known})")
        lines = batch_lines(conn, batch)
    files, entries = _with_manifest(
        record, render_files(record.format, batch, lines, record.options), lines
    )
    _check_same(record, entries)
    with stopping_raises():
        _prepare(out_dir)
        staged = _stage(out_dir, files, mode)  # discards its partial files when it fails
        paths = _place(out_dir, staged, batch, recorded=False)
    return JournalExport(
        batch, record.format, len(lines), len({line.journal_id for line in lines}), paths
    )


def _check_same(record: BatchRecord, entries: Sequence[Mapping[str, Any]]) -> None:
    recorded = {entry["name"]: entry for entry in record.files}
    rendered = {entry["name"]: entry for entry in entries}
    differ = sorted(
        name
        for name in recorded.keys() | rendered.keys()
        if recorded.get(name, {}).get("sha256") != rendered.get(name, {}).get("sha256")
    )
    if differ:
        raise JournalMismatch(
            f"journal batch {record.batch} renders otherwise than it was exported "
            f"({', '.join(differ)} differ from the sha256 recorded): a stored line or the "
            "batch's options changed since, or this version of recon writes the format "
            "otherwise; nothing was written"
        )


# Errors that say the directory itself is wrong (a bad --out), not that writing into it failed.
_BAD_DIRECTORY = frozenset(
    {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EEXIST, errno.EISDIR}
)


def _os_error(out_dir: Path, exc: OSError) -> ReportWriteError:
    kind = ReportDirError if exc.errno in _BAD_DIRECTORY else ReportWriteError
    return kind(f"cannot write the journal files to {out_dir}: {exc.strerror or exc}")


def _prepare(out_dir: Path) -> None:
    try:
        make_private_dirs(out_dir)
        sweep_partials(out_dir, before=time.time())
    except OSError as exc:
        raise _os_error(out_dir, exc) from None


def _stage(out_dir: Path, files: Files, mode: int) -> dict[Path, Path]:
    """Each file written, fsynced, to a partial file beside its name: final path → partial."""
    staged: dict[Path, Path] = {}
    try:
        for name, content in files:
            staged[out_dir / name] = staged_file(out_dir / name, [content], mode)
    except BaseException as exc:
        for partial in staged.values():
            discard(partial)
        if isinstance(exc, OSError):
            raise _os_error(out_dir, exc) from None
        raise
    return staged


def _place(
    out_dir: Path, staged: dict[Path, Path], batch: int, *, recorded: bool
) -> tuple[Path, ...]:
    try:
        for target, partial in staged.items():
            os.replace(partial, target)
    except OSError as exc:
        for partial in staged.values():
            discard(partial)
        again = (
            f"journal batch {batch} is recorded, but its files could not be put in place: "
            f"write them with `recon journal export --batch {batch}`; "
            if recorded
            else ""
        )
        raise ReportWriteError(f"{again}cannot write to {out_dir}: {exc.strerror or exc}") from None
    fsync_dir(out_dir)
    return tuple(staged)
