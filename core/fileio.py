"""Small file helpers shared by the cache, drafts and exports (no Qt)."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from core.errors import RhetoricaError

_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG}
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}


class StorageError(RhetoricaError, OSError):
    """Saving failed because of the disk, not the data (also an ``OSError``, so code catching that
    still works). The message is one line naming what was being saved."""


class DiskFullError(StorageError):
    """The disk (or quota) is full."""


class ReadOnlyError(StorageError):
    """The target folder or file is read-only."""


def storage_error(error: BaseException, what: str, where: str | Path | None = None) -> StorageError | None:
    """The :class:`StorageError` an ``OSError`` (or SQLite's "disk is full" / "readonly database")
    means while saving ``what`` (in ``where``), or None when it is some other failure."""
    if isinstance(error, StorageError):
        return error
    code = getattr(error, "errno", None)
    text = str(error).lower()
    place = f" ({where})" if where is not None else ""
    if code in _FULL or "disk is full" in text or "no space left" in text or "file too large" in text:
        return DiskFullError(f"disk full while saving {what}{place}: free some space and try again; "
                             "what was saved before is intact")
    if code in _READ_ONLY or "readonly database" in text or "read-only" in text:
        return ReadOnlyError(f"cannot save {what}: {where or 'the folder'} is read-only (check its "
                             "permissions, or choose a writable folder)")
    return None


@contextlib.contextmanager
def saving(what: str, where: str | Path | None = None) -> Iterator[None]:
    """Turn a disk-full or read-only ``OSError`` raised inside into a clear :class:`StorageError`."""
    try:
        yield
    except OSError as error:
        clear = storage_error(error, what, where)
        if clear is None or clear is error:
            raise
        raise clear from None


def fsync_dir(folder: str | Path) -> None:
    """Flush a folder's entries (a rename into it) to disk; a no-op where folders cannot be opened."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_with(path: str | Path, write: Callable[[Path], object], what: str | None = None,
                      tmp_name: str | None = None) -> None:
    """Call ``write(tmp)`` for a temporary file next to ``path``, fsync it, then rename it over
    ``path``: readers (and a crash at any point) see the old file or the complete new one. A
    failure removes the temporary file; disk-full / read-only failures raise :class:`StorageError`
    naming ``what`` (default: the file name). ``tmp_name``: a fixed temporary name (for files with
    one writer, so a killed save leaves one stale temporary file that the next save reuses, not one
    per kill); default: a unique name, safe for concurrent writers."""
    path = Path(path)
    what = what or path.name
    with saving(what, path.parent):
        path.parent.mkdir(parents=True, exist_ok=True)
        if tmp_name is None:
            fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            os.close(fd)
            tmp = Path(name)
        else:
            tmp = path.with_name(tmp_name)
        try:
            write(tmp)
            with open(tmp, "rb+") as handle:
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    fsync_dir(path.parent)


def atomic_write_bytes(path: str | Path, data: bytes, what: str | None = None,
                       tmp_name: str | None = None) -> None:
    """:func:`atomic_write_text` for bytes (``tmp_name``: see :func:`atomic_write_with`)."""
    atomic_write_with(path, lambda tmp: tmp.write_bytes(data), what, tmp_name)


def atomic_write_text(path: str | Path, text: str, what: str | None = None, encoding: str = "utf-8") -> None:
    """Write ``text`` so that readers see either the old file or the complete new one.

    The text goes to a temporary file in the same folder, is flushed to disk, then renamed over
    ``path`` (``os.replace`` is atomic on POSIX and Windows).  Parent folders are created.  A full
    disk or a read-only folder raises :class:`DiskFullError` / :class:`ReadOnlyError`.
    """
    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding=encoding, newline="") as handle:
            handle.write(text)

    atomic_write_with(path, write, what)


def file_sha256(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()
