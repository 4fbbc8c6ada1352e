"""Files and directories recon creates: private directories, and partial files that do not outlive
the process writing them.

A file is written whole or not at all (:func:`write_atomic`): to a partial file beside it,
fsynced, then renamed over the old one; a writer that needs files of its own on the way
(xlsxwriter's row files) works in a partial directory beside it instead, so that none of them
lands in the shared /tmp. The partial file's or directory's name says it is recon's and which
process writes it, ``.{target}.recon-{pid}.{random}.tmp``; a writer that fails, or is stopped by
SIGTERM or SIGINT (:mod:`recon.signals`), removes its own. One killed outright (SIGKILL, a crash, a
power cut) cannot: :func:`sweep_partials` removes such leftovers at the start of the next write
into the directory.

Directories recon creates (the report and export directories and their missing parents, the
demo's work directory) are 0700 whatever the umask: they hold customer data. A directory that
already exists keeps its mode (its owner chose it).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
DEFAULT_MODE = 0o600  # a file recon writes: customer data (RECON_REPORT_MODE may widen it)
_PARTIAL = re.compile(r"^\..+\.recon-(?P<pid>\d+)\.[A-Za-z0-9_]+\.tmp$")


def make_private_dirs(path: Path) -> None:
    """Create ``path`` and its missing parents, each mode 0700 whatever the umask."""
    missing: list[Path] = []
    here = path
    while not here.is_dir():
        missing.append(here)
        if here.parent == here:
            break
        here = here.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            if not directory.is_dir():  # a file where a directory should be, as makedirs says
                raise NotADirectoryError(
                    errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(directory)
                ) from None
            continue  # made meanwhile by someone else: theirs, its mode untouched
        os.chmod(directory, PRIVATE_DIR_MODE)  # mkdir's mode is cut by the umask


def _prefix(target: Path) -> str:
    return f".{target.name}.recon-{os.getpid()}."


def partial_file(target: Path) -> tuple[int, Path]:
    """A new empty partial file for ``target``, in its directory, mode 0600: descriptor and path."""
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=_prefix(target), suffix=".tmp")
    return fd, Path(name)


def partial_dir(target: Path) -> Path:
    """A new empty partial directory for ``target``, in its directory, mode 0700."""
    return Path(tempfile.mkdtemp(dir=target.parent, prefix=_prefix(target), suffix=".tmp"))


def discard(path: Path) -> None:
    """Remove a partial file or directory, if it is still there."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def sweep_partials(directory: Path, *, before: float) -> list[Path]:
    """Remove the partial files and directories in ``directory`` left by recon processes that are
    gone; the paths removed. Only those last changed before ``before`` (a ``time.time()``) are
    candidates, and only when their writer's process id is not running on this host: a write
    still going on, in this process or another, is never touched.
    """
    removed: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return removed
    for entry in entries:
        found = _PARTIAL.match(entry.name)
        if found is None or entry.is_symlink():
            continue
        with contextlib.suppress(FileNotFoundError):
            if entry.stat(follow_symlinks=False).st_mtime >= before:
                continue
            if _running(int(found["pid"])):
                continue
            discard(Path(entry.path))
            removed.append(Path(entry.path))
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    except OverflowError:  # not a process id at all
        return False
    return True


def write_atomic(path: Path, content: bytes, *, mode: int = DEFAULT_MODE) -> None:
    """Replace ``path`` with ``content`` all at once (temp file, fsync, rename, fsync the dir)."""
    write_atomic_chunks(path, [content], mode=mode)


def write_atomic_chunks(path: Path, chunks: Iterable[bytes], *, mode: int = DEFAULT_MODE) -> None:
    """:func:`write_atomic` for content written as it is produced (one chunk held at a time)."""
    tmp = staged_file(path, chunks, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        discard(tmp)
        raise
    fsync_dir(path.parent)


def staged_file(path: Path, chunks: Iterable[bytes], mode: int = DEFAULT_MODE) -> Path:
    """``chunks`` written and fsynced to a new temporary file next to ``path`` (permission bits
    ``mode``, whatever the umask); its path."""
    fd, tmp = partial_file(path)
    try:
        if mode != DEFAULT_MODE:  # mkstemp's own mode is 0600
            os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        discard(tmp)
        raise
    return tmp


def fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is; not possible on every platform.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse fsync on directories
        pass
    finally:
        os.close(fd)
