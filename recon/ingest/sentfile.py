"""Reading a file someone sent, within bounds: what it is, how far it inflates, what errors quote.

Every check here refuses with one :class:`~recon.errors.InputError` line naming the file, before
the file's content is parsed:

- :func:`open_regular` opens without blocking and refuses what is not a regular file (a FIFO, a
  device, a directory: said without reading it) and, when asked, a symbolic link (whose target's
  first line an error would otherwise quote).
- :func:`check_workbook` refuses a zip whose parts declare more than ``max_bytes`` inflated, or
  actually inflate beyond it (a declared size can lie), or hold more than ``max_rows`` rows or
  shared strings: the parser keeps every shared string in memory, and rows become objects.
- :func:`excerpt` is how every error quotes input: at most :data:`EXCERPT_CHARS` characters of it.

XML entity declarations are refused by the parser itself: openpyxl parses with ``defusedxml`` when
it is installed (a dependency of recon), which :func:`check_workbook` makes sure of.
"""

from __future__ import annotations

import errno
import os
import stat
import zipfile
import zlib
from typing import BinaryIO

from openpyxl.xml import DEFUSEDXML

from recon.errors import InputError

EXCERPT_CHARS = 60
# Excel's rows per sheet: a workbook recon mails holds far fewer (see docs/configuration.md).
MAX_ROWS = 1_048_576
_CHUNK = 1024 * 1024
# How a row and a shared string start, prefixed by a namespace or not. Counted as bytes (``count``
# is much faster than a regular expression: docs/decisions.md, "Measured in passing"); a longer
# name that starts the same (``<rowBreaks``) counts too, which only errs towards refusing.
_COUNTED = {"rows": (b"<row", b":row"), "shared strings": (b"<si", b":si")}
_CARRY = 3  # a token cut by a chunk's end is found in the next window, and counted once


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """``value`` quoted (``repr``), cut to ``limit`` characters with its full length said."""
    text = str(value)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


def open_regular(path: os.PathLike[str] | str, *, follow_symlinks: bool = True) -> BinaryIO:
    """``path`` open for reading in binary, if it is a regular file.

    Opened without blocking (a FIFO with no writer would wait forever) and checked on the open
    descriptor, so what is checked is what is read.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise InputError(
                f"{path}: a symbolic link, not read: give the file itself, not a link to it"
            ) from None
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"{path}: {_kind(mode)}, not a regular file: not read")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def check_size(handle: BinaryIO, source: str, *, max_bytes: int) -> None:
    """Refuse a file larger than ``max_bytes`` (``RECON_APPLY_MAX_BYTES``)."""
    size = os.fstat(handle.fileno()).st_size
    if size > max_bytes:
        raise InputError(
            f"{source}: {size:,} bytes, more than RECON_APPLY_MAX_BYTES ({max_bytes:,})"
        )


def check_workbook(handle: BinaryIO, source: str, *, max_bytes: int, max_rows: int) -> None:
    """Refuse a workbook that would inflate beyond ``max_bytes`` or hold more than ``max_rows``
    rows (or shared strings), by reading every part once with a byte cap, before any XML is parsed.

    Leaves ``handle`` at its start for the parser.
    """
    if not DEFUSEDXML:
        # OPENPYXL_DEFUSEDXML=False in the environment, or defusedxml missing: no workbook is safe.
        raise InputError(
            f"{source}: workbooks are not read without defusedxml (see docs/finance.md)"
        )
    try:
        with zipfile.ZipFile(handle) as archive:
            members = archive.infolist()
            declared = sum(member.file_size for member in members)
            if declared > max_bytes:
                raise InputError(
                    f"{source}: its parts would inflate to {declared:,} bytes, more than"
                    f" RECON_APPLY_MAX_BYTES ({max_bytes:,})"
                )
            budget = max_bytes
            counts = dict.fromkeys(_COUNTED, 0)
            for member in members:
                budget = _read_part(archive, member, source, budget, counts)
                for what, count in counts.items():
                    if count > max_rows:
                        raise InputError(f"{source}: more than {max_rows:,} {what}")
    except zipfile.BadZipFile as exc:
        raise InputError(f"{source}: a zip file but not a readable workbook ({exc})") from None
    handle.seek(0)


def _read_part(
    archive: zipfile.ZipFile,
    member: zipfile.ZipInfo,
    source: str,
    budget: int,
    counts: dict[str, int],
) -> int:
    """Inflate one part within ``budget`` bytes, adding its rows and shared strings to ``counts``;
    the budget left."""
    name = excerpt(member.filename)
    carry = b""
    try:
        with archive.open(member) as part:
            while chunk := part.read(_CHUNK):
                budget -= len(chunk)
                if budget < 0:  # zipfile stops at the declared size; this does not rely on it
                    raise InputError(f"{source}: part {name} inflates past RECON_APPLY_MAX_BYTES")
                window = carry + chunk
                carry = window[-_CARRY:]
                for what, tokens in _COUNTED.items():
                    # What lies wholly in the carry was counted with the previous window.
                    counts[what] += sum(window.count(t) - carry.count(t) for t in tokens)
    except (
        zipfile.BadZipFile,
        EOFError,
        zlib.error,
        NotImplementedError,
        RuntimeError,
        ValueError,
    ) as exc:
        # A bad checksum, a cut or corrupt stream, an unknown compression method, an encrypted part.
        raise InputError(f"{source}: part {name} is damaged ({excerpt(exc)})") from None
    return budget
