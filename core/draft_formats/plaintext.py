"""Plain-text drafts: the text is its own readable text; a markdown ``#`` line or a short line naming
a known section ("2 Methods", "Abstract") is a heading, as in the draft pane (``core.drafts``)."""

from __future__ import annotations

from core.draft_formats.reading import ReadingBuilder, ReadingHeading, assemble_draft
from core.draft_formats.types import ParsedDraft


def plain_headings(text: str) -> list[ReadingHeading]:
    """The heading lines of a plain-text draft, with their levels (0: known by name only)."""
    from core.drafts import heading_of

    headings: list[ReadingHeading] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        found = heading_of(line)
        if found is not None:
            level, title = found
            end = offset + len(line.rstrip("\r\n"))
            headings.append(ReadingHeading(offset, end, level, title, offset, None))
        offset += len(line)
    return headings


def parse_plain_text(text: str) -> ParsedDraft:
    builder = ReadingBuilder()
    builder.verbatim(text, 0, None)
    builder.headings.extend(plain_headings(text))
    return assemble_draft("txt", builder, text)
