"""Small file helpers shared by the cache, drafts and exports (no Qt)."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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
    if path.is_dir():  # os.replace would fail naming the temporary file
        raise StorageError(f"cannot write {path}: it is a folder")
    with saving(what, path.parent):
        path.parent.mkdir(parents=True, exist_ok=True)
        if tmp_name is None:
            fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            os.close(fd)
            tmp = Path(name)
            # mkstemp makes the file private (0600): give it the permissions the file had, or a new
            # file's usual ones, so replacing an export does not silently change who may read it
            with contextlib.suppress(OSError):
                os.chmod(tmp, path.stat().st_mode & 0o7777 if path.exists() else _new_file_mode())
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


def _new_file_mode() -> int:
    """The permissions ``open(path, "w")`` would give a new file (0666 less the umask)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # elsewhere: read it by setting it, and put it back at once
    os.umask(mask)
    return 0o666 & ~mask


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


TEXT_INPUT_LIMIT = 50_000_000  # bytes: far above any draft or sentence list, far below a hang


class TextInputError(RhetoricaError):
    """A text input (a draft, a list of sentences) that cannot be read as UTF-8 text; one line
    naming the file."""


def human_size(count: int) -> str:
    """``count`` bytes as "3.0 GB", "50.0 MB", "12.3 kB" or "17 bytes"."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


def check_text_file(path: str | Path, what: str = "a text file", *, max_bytes: int = TEXT_INPUT_LIMIT) -> int:
    """Check, reading in blocks (memory stays small whatever the size), that ``path`` is a UTF-8 text
    file of at most ``max_bytes``; returns its size. Raises :class:`TextInputError` a user can act on:
    no such file, a folder or device, too large (checked before reading), UTF-16, a binary file (NUL
    bytes), or not UTF-8 (the first bad byte and its offset)."""
    import codecs

    path = Path(path)
    name = str(path)
    if path.is_dir():
        raise TextInputError(f"{name}: is a folder, not {what}")
    if not path.exists():
        raise TextInputError(f"{name}: no such file")
    if not path.is_file():
        raise TextInputError(f"{name}: is not a regular file (a device or a pipe?), not {what}")
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise TextInputError(f"{name}: is too large for {what} ({human_size(size)}; at most "
                                 f"{human_size(max_bytes)})")
        decoder = codecs.getincrementaldecoder("utf-8")()
        offset = 0
        with open(path, "rb") as handle:
            while block := handle.read(1 << 20):
                if offset == 0 and block[:2] in (b"\xff\xfe", b"\xfe\xff"):
                    raise TextInputError(f"{name}: is UTF-16 text; save it as UTF-8")
                if offset == 0 and block.lstrip()[:5] == b"%PDF-":
                    raise TextInputError(f"{name}: is a PDF, not {what}")
                nul = block.find(b"\x00")
                if nul >= 0:
                    raise TextInputError(f"{name}: is a binary file, not {what} (a NUL byte at offset "
                                         f"{offset + nul})")
                pending = len(decoder.getstate()[0])  # bytes of a character cut by the last block
                try:
                    decoder.decode(block)
                except UnicodeDecodeError as error:
                    bad = offset - pending + error.start
                    raise TextInputError(f"{name}: not UTF-8 text (byte 0x{error.object[error.start]:02x} at "
                                         f"offset {bad}); save it as UTF-8") from None
                offset += len(block)
                if offset > max_bytes:
                    raise TextInputError(f"{name}: is too large for {what} (more than "
                                         f"{human_size(max_bytes)})")
            pending_bytes = decoder.getstate()[0]
            if pending_bytes:  # the file ends inside a character
                raise TextInputError(f"{name}: not UTF-8 text (byte 0x{pending_bytes[0]:02x} at offset "
                                     f"{offset - len(pending_bytes)}); save it as UTF-8")
    except OSError as error:
        raise TextInputError(f"{name}: cannot be read ({error.strerror or error})") from None
    return offset


def read_text_input(path: str | Path, what: str = "a text file", *, max_bytes: int = TEXT_INPUT_LIMIT) -> str:
    """The text of ``path`` read as UTF-8 (a leading byte-order mark dropped), after
    :func:`check_text_file` (so every refusal is one line naming the file)."""
    check_text_file(path, what, max_bytes=max_bytes)
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
        return data[:max_bytes].decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:  # changed since the check
        raise TextInputError(f"{path}: cannot be read as UTF-8 text ({error})") from None


def read_jsonl_objects(path: str | Path, what: str = "a JSON Lines file", *,
                       max_bytes: int = TEXT_INPUT_LIMIT) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line of a JSON Lines file, after the checks of
    :func:`read_text_input` (a regular UTF-8 file of bounded size); a line that is not JSON, is nested too
    deeply or is not an object is a one-line :class:`core.errors.DatasetError` naming the file and line."""
    from core.errors import DatasetError
    from core.json_shapes import loads

    rows = []
    for number, line in enumerate(read_text_input(path, what, max_bytes=max_bytes).splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = loads(line)
        except ValueError as error:
            raise DatasetError(f"{path}:{number}: not a JSON line ({error}); expected {what}") from None
        if not isinstance(row, dict):
            raise DatasetError(f"{path}:{number}: not a JSON object; expected {what}")
        rows.append((number, row))
    return rows
