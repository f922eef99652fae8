"""The author's drafts, saved atomically under the user data folder (no Qt).

The GUI saves the draft pane a moment after each change (debounced) and restores it on start,
so a crash or a restart never loses more than the last second of typing.
"""

from __future__ import annotations

import re
from pathlib import Path

from core.fileio import atomic_write_text as atomic_write_with_text
from core.paths import user_data_dir

_NAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")


def heading_of(line: str) -> tuple[int, str] | None:
    """(markdown level or 0, heading text) when ``line`` is a section heading of a draft: a markdown
    ``#`` line, or a short line naming a known section ("2 Methods", "Abstract")."""
    from core.document import SectionKind
    from core.pdf.headings import is_abstract_heading, section_kind, split_number

    stripped = line.strip()
    match = _MD_HEADING.match(line)
    if match:
        return len(match.group(1)), match.group(2).strip()
    words = stripped.split()
    if not words or len(words) > 6 or stripped[-1] in ".?!,;:" or len(stripped) > 60:
        return None
    _, title = split_number(stripped)
    if is_abstract_heading(title) or section_kind(title) is not SectionKind.OTHER:
        return 0, stripped
    return None


def heading_kind(heading: str) -> str:
    """The section kind a heading names ("other" when it names none)."""
    from core.document import SectionKind
    from core.pdf.headings import is_abstract_heading, section_kind, split_number

    _, bare = split_number(heading)
    return SectionKind.ABSTRACT.value if is_abstract_heading(bare) else section_kind(bare).value


def draft_sentences(text: str) -> list[tuple[int, int, str | None]]:
    """The sentences of a draft as (start, end, section kind): heading lines ("# Methods", "2 Results")
    are not sentences (a sentence the splitter ran together with the heading above it starts after
    the heading), and each sentence carries the kind of the heading above it (``None`` before any)."""
    from core.text.sentences import split_sentences

    headings: list[tuple[int, int, str]] = []  # (start, end, kind) of each heading line
    offset = 0
    for line in text.splitlines(keepends=True):
        found = heading_of(line)
        if found is not None:
            headings.append((offset, offset + len(line.rstrip("\r\n")), heading_kind(found[1])))
        offset += len(line)
    out: list[tuple[int, int, str | None]] = []
    for span_start, span_end in split_sentences(text):
        pieces = [(span_start, span_end)]
        for h_start, h_end, _ in headings:  # cut heading lines out of the span
            pieces = [part for a, b in pieces
                      for part in ((a, min(b, h_start)), (max(a, h_end), b)) if part[0] < part[1]]
        for start, end in pieces:
            while start < end and text[start].isspace():
                start += 1
            while end > start and text[end - 1].isspace():
                end -= 1
            if start < end:
                above = [h for h in headings if h[1] <= start]
                out.append((start, end, above[-1][2] if above else None))
    return out


class DraftStore:
    """Named plain-text drafts in ``user_data_dir()/drafts`` (``RHETORICA_HOME`` overrides)."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else user_data_dir() / "drafts"

    def path(self, name: str = "current") -> Path:
        if not _NAME.match(name):
            raise ValueError(f"bad draft name {name!r}: use letters, digits, '.', '_' or '-'")
        return self.root / f"{name}.txt"

    def save(self, text: str, name: str = "current") -> Path:
        """Save atomically (the old text or the new, never a torn file); a full disk or read-only
        folder raises :class:`core.fileio.DiskFullError` / :class:`core.fileio.ReadOnlyError` (an
        ``OSError`` too) with a one-line message, leaving the previous save intact."""
        path = self.path(name)
        atomic_write_with_text(path, text, f"the draft {name!r}")
        return path

    def load(self, name: str = "current") -> str:
        """The saved text, or an empty string when there is none."""
        try:
            return self.path(name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""
