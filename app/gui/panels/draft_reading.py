"""Reading a draft file for the draft pane (``draft_files``; :func:`read_job` runs in a worker thread and
uses no Qt; :func:`as_shown` is for the UI thread). A small
Markdown or text draft is read in the worker thread itself; any other draft in a child process
(``core.procjobs``), because ``core.draft_formats`` has no check points: Stop, a newer open and quitting
end a child at once, where a thread would run on to the end of the read. Also the words of what a read
says (:func:`flat`, :func:`short`) and a read text as the editor shows it (:func:`as_shown`)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from core.draft_formats import ParsedDraft
from core.jobs import JobContext

IN_THREAD_BYTES = 1_000_000  # a .md or .txt draft this small is read in a worker thread (at once)
CHILD_READ = "core.draft_formats:read_draft_job"  # what a child process runs to read any other draft
PANE_CHARS = 8_000_000  # the longest readable text the pane takes (a long thesis is about 1,000,000)
SHORT_PATH = 120  # characters of a path a message shows whole


def flat(error: BaseException | str) -> str:
    """An error's message on one line (whole: a path in it is not cut)."""
    return " ".join(str(error).split())


def short(path: str | Path) -> str:
    """``path`` for a message: a very long one is cut in its middle."""
    name = str(path)
    return name if len(name) <= SHORT_PATH else f"{name[:50]}…{name[-60:]}"


def as_shown(text: str) -> str:
    """``text`` as the editor gives it back (its document turns CRLF and CR, no-break spaces and
    paragraph separators into newlines and spaces)."""
    from PySide6.QtGui import QTextDocument

    document = QTextDocument()
    document.setPlainText(text)
    return document.toPlainText()


def read_job(ctx: JobContext, path: Path) -> ParsedDraft:
    """Read and parse the draft at ``path``: a small .md or .txt draft (:func:`small_text`) in this thread,
    any other (a .docx or .tex, whose text or ``\\input`` files can be far larger than the file) in a child
    process. A draft whose readable text is longer than :data:`PANE_CHARS` is refused in one line."""
    from core.draft_formats import read_draft_job

    if not small_text(path):
        from core.procjobs import run_in_process

        return run_in_process(ctx, CHILD_READ, path, PANE_CHARS)
    return read_draft_job(ctx, path, PANE_CHARS)


def small_text(path: Path) -> bool:
    """``path`` is read in the worker thread: a .md or .txt draft of at most :data:`IN_THREAD_BYTES`, or
    anything but a regular file (its read says why at once: no such file, a folder, a pipe …)."""
    try:
        info = path.stat()
    except (OSError, ValueError):
        return True
    if not stat.S_ISREG(info.st_mode):
        return True
    return path.suffix.lower() in (".md", ".markdown", ".txt", ".text") and info.st_size <= IN_THREAD_BYTES


def is_file(path: Path) -> bool:
    """``path`` is a regular file (not a folder or a device); False, not an error, for any odd path."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def gone(path: str) -> bool:
    """Nothing is at ``path``, or nothing ever can be (a name too long): its recent entry goes."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return True
    except OSError as error:
        return error.errno == errno.ENAMETOOLONG
    return False
