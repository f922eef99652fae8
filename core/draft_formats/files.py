"""Reading a draft file by its suffix: the checks every format shares (a file, not too large, UTF-8
text) and the dispatch to the format's parser."""

from __future__ import annotations

from pathlib import Path

from core.draft_formats.text_file import read_text_draft
from core.draft_formats.types import ParsedDraft
from core.errors import DraftError

DOCX_LIMIT = 200_000_000  # bytes: a Word file with its images

# File suffix → format.
DRAFT_SUFFIXES = {".tex": "tex", ".ltx": "tex", ".md": "md", ".markdown": "md", ".txt": "txt",
                  ".text": "txt", ".docx": "docx"}


def draft_format(path: str | Path) -> str | None:
    """The draft format of a file name ("tex", "md", "txt", "docx"), None for any other suffix."""
    return DRAFT_SUFFIXES.get(Path(path).suffix.lower())


def _check_binary_file(path: Path, limit: int) -> None:
    """A file to open whole (a .docx): there, a regular file, not too large; else one line."""
    from core.fileio import human_size

    if path.is_dir():
        raise DraftError(f"{path}: is a folder, not a draft")
    if not path.exists():
        raise DraftError(f"{path}: no such file")
    if not path.is_file():
        raise DraftError(f"{path}: is not a regular file (a device or a pipe?), not a draft")
    try:
        size = path.stat().st_size
    except OSError as error:
        raise DraftError(f"{path}: cannot be read ({error.strerror or error})") from None
    if size > limit:
        raise DraftError(f"{path}: is too large for a draft ({human_size(size)}; at most "
                         f"{human_size(limit)})")


def read_draft_file(path: Path, project_root: Path | None = None) -> ParsedDraft:
    from dataclasses import replace

    fmt = DRAFT_SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        known = " ".join(sorted(set(DRAFT_SUFFIXES)))
        raise DraftError(f"{path}: not a draft (the suffix {path.suffix or '(none)'!r} is none of {known})")
    if fmt == "docx":
        from core.draft_formats.docx import parse_docx

        _check_binary_file(path, DOCX_LIMIT)

        return replace(parse_docx(path), path=path)
    what = {"tex": "a LaTeX draft", "md": "a Markdown draft"}.get(fmt, "a draft text file")
    text = read_text_draft(path, what)
    if fmt == "tex":
        from core.draft_formats.latex import parse_latex

        root = Path(project_root) if project_root is not None else path.parent
        parsed = parse_latex(text, name=str(path), path=path, project_root=root)
    elif fmt == "md":
        from core.draft_formats.markdown import parse_markdown

        parsed = parse_markdown(text)
    else:
        from core.draft_formats.plaintext import parse_plain_text

        parsed = parse_plain_text(text)
    return replace(parsed, path=path, project_root=parsed.project_root)
