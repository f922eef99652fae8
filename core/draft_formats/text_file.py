"""The text of a text draft file (``.tex``, ``.md``, ``.txt`` and the files a LaTeX draft
``\\input``s), read with the checks every text format shares: a file, not too large, UTF-8."""

from __future__ import annotations

from pathlib import Path

TEXT_DRAFT_LIMIT = 20_000_000  # bytes: a long thesis in LaTeX is a few MB


def read_text_draft(path: Path, what: str = "a draft") -> str:
    """The UTF-8 text of a text draft (one-line :class:`core.fileio.TextInputError` for a missing,
    binary, UTF-16, non-UTF-8 or too large file). Line ends are kept as they are, so offsets into the
    returned text are offsets into the file's characters."""
    from core.fileio import read_text_input

    return read_text_input(path, what, max_bytes=TEXT_DRAFT_LIMIT)
