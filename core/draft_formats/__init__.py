"""Drafts in the formats authors write in: LaTeX (``.tex``), Markdown (``.md``), Word (``.docx``) and
plain text (``.txt``), parsed into sentences that read cleanly, each with its character range in the
source, and headings with their section kinds (no Qt, no torch).

``parse_draft_text(text, fmt)`` parses a text already in memory; ``read_draft(path)`` reads a file by
its suffix (``\\input``/``\\include`` followed within the project folder only). Bad input raises
:class:`core.errors.DraftError` or :class:`core.fileio.TextInputError`, one line each.
``read_draft_job(ctx, path)`` is ``read_draft`` as a job, also in a child process
(``core.procjobs.run_in_process(ctx, "core.draft_formats:read_draft_job", path)``: Stop ends it at once).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from core.draft_formats.files import DRAFT_SUFFIXES, draft_format, read_draft_file
from core.draft_formats.types import FORMATS, DraftSentence, ParsedDraft, Span
from core.errors import Cancelled, DraftError, RhetoricaError

if TYPE_CHECKING:  # pragma: no cover
    from core.jobs import JobContext

__all__ = [
    "DRAFT_SUFFIXES",
    "FORMATS",
    "DraftError",
    "DraftSentence",
    "ParsedDraft",
    "Span",
    "draft_format",
    "parse_draft_text",
    "read_draft",
    "read_draft_job",
]

def parse_draft_text(text: str, fmt: str, *, name: str = "the draft") -> ParsedDraft:
    """Parse a draft held in memory. ``fmt`` is "tex", "md" or "txt" (a ``.docx`` is a file: use
    :func:`read_draft`); ``name`` names it in error messages. A ``.tex`` text's ``\\input`` files are
    not read (there is no project folder): each is noted in ``warnings``."""
    if fmt == "tex":
        from core.draft_formats.latex import parse_latex

        return parse_latex(text, name=name)
    if fmt == "md":
        from core.draft_formats.markdown import parse_markdown

        return parse_markdown(text)
    if fmt == "txt":
        from core.draft_formats.plaintext import parse_plain_text

        return parse_plain_text(text)
    raise DraftError(f"{name}: unknown draft format {fmt!r} (use tex, md or txt)")


def read_draft(path: Path, project_root: Path | None = None) -> ParsedDraft:
    """Read and parse the draft at ``path`` by its suffix (.tex .ltx .md .markdown .txt .text .docx).
    ``project_root`` (default: the draft's folder) bounds ``\\input``/``\\include``: files outside it,
    or included in a cycle, are refused."""
    return read_draft_file(Path(path), project_root)


def read_draft_job(ctx: JobContext, path: Path, max_chars: int | None = None) -> ParsedDraft:
    """:func:`read_draft` as a job, in a worker thread or a child process (its result pickles): every
    refusal is a one-line :class:`DraftError` naming the file (a :class:`core.fileio.TextInputError`, an
    ``OSError`` or a parser's own error too, so that it crosses the process boundary with its words);
    ``max_chars`` (None: no bound) refuses a draft whose readable text is longer, before it is sent back."""
    ctx.progress(0, 1, f"reading {path.name}")
    try:
        parsed = read_draft(path)
    except (DraftError, Cancelled):
        raise
    except Exception as error:  # every failure of a read is one line naming the file
        reason = (error.strerror if isinstance(error, OSError) and error.strerror else str(error)) \
            or type(error).__name__
        message = str(error) if isinstance(error, RhetoricaError) else f"{path}: cannot be read ({reason})"
        raise DraftError(" ".join(message.split())) from None
    if max_chars is not None and len(parsed.plain) > max_chars:
        raise DraftError(f"{path}: is too long for the draft pane ({len(parsed.plain):,} characters; at "
                         f"most {max_chars:,})")
    return parsed
