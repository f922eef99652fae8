"""The readable text of a draft, built piece by piece with a map back to the source, and the step
that turns it into sentences under headings (shared by every format)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from core.draft_formats.types import DraftSentence, ParsedDraft, Span


@dataclass(frozen=True)
class ReadingHeading:
    """A heading line of the readable text: ``[start, end)`` there, its level (1 = top), its title,
    where it is in the source, and a kind fixed by the format (None: from the title)."""

    start: int
    end: int
    level: int
    title: str
    source_offset: int
    file: str | None
    kind: str | None = None


@dataclass
class ReadingBuilder:
    """Appends readable text, recording for each piece the source range it comes from."""

    parts: list[str] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    headings: list[ReadingHeading] = field(default_factory=list)
    length: int = 0

    def verbatim(self, text: str, source_start: int, file: str | None) -> None:
        """``text`` is the source's own characters from ``source_start`` on (blank lines right after
        a paragraph break are left out)."""
        if text[:1].isspace() and self.ends_with_blank_line():
            kept = text.lstrip()
            source_start += len(text) - len(kept)
            text = kept
        self._add(text, source_start, source_start + len(text), file, True)

    def replaced(self, text: str, source_start: int, source_end: int, file: str | None) -> None:
        """``text`` stands for the source range ``[source_start, source_end)`` (a citation, math ...)."""
        self._add(text, source_start, source_end, file, False)

    def _add(self, text: str, start: int, end: int, file: str | None, verbatim: bool) -> None:
        if not text:
            return
        self.parts.append(text)
        self.spans.append(Span(self.length, self.length + len(text), start, end, file, verbatim))
        self.length += len(text)

    def ends_with_blank_line(self) -> bool:
        tail = "".join(self.parts[-3:])
        return self.length == 0 or tail.endswith("\n\n") or tail.endswith("\n\r\n")

    def paragraph_break(self, source_at: int, file: str | None) -> None:
        """End the paragraph here (a blank line), unless one just ended."""
        if self.ends_with_blank_line():
            return
        tail = "".join(self.parts[-3:])
        self.replaced("\n" if tail.endswith("\n") else "\n\n", source_at, source_at, file)

    def text(self) -> str:
        return "".join(self.parts)


def heading_kinds(headings: list[tuple[int, str]]) -> list[str]:
    """The section kind of each (level, title) heading, with subsections inheriting their parent's
    kind: the draft pane's rule (:func:`core.drafts.inherited_kinds`)."""
    from core.drafts import inherited_kinds

    return inherited_kinds(headings)


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def reading_sentences(text: str, spans: list[Span], headings: list[ReadingHeading],
                      ) -> tuple[list[DraftSentence], list[str], list[int]]:
    """The sentences of a readable text (heading lines are not sentences; a sentence the splitter ran
    across a heading is cut there) with their source ranges, each heading's kind, and the heading index
    of each sentence (-1 before any)."""
    from core.text.sentences import cut_out, split_sentences

    derived = heading_kinds([(h.level, h.title) for h in headings])
    kinds = [h.kind if h.kind is not None else d for h, d in zip(headings, derived, strict=True)]
    starts = [s.plain_start for s in spans]
    heading_ends = [h.end for h in headings]

    def span_at(index: int) -> Span:
        return spans[bisect.bisect_right(starts, index) - 1]

    def source_start(index: int) -> int:
        span = span_at(index)
        return span.source_start + (index - span.plain_start if span.verbatim else 0)

    def source_end(index: int) -> int:  # of the character at ``index``
        span = span_at(index)
        return span.source_start + (index - span.plain_start + 1) if span.verbatim else span.source_end

    sentences: list[DraftSentence] = []
    numbers: list[int] = []
    heading_starts = [h.start for h in headings]
    for span_start, span_end in split_sentences(text):
        for raw_start, raw_end in cut_out(span_start, span_end, heading_starts, heading_ends):
            start, end = _trimmed(text, raw_start, raw_end)
            if start >= end:
                continue
            file = span_at(start).file
            last = end - 1
            while last > start and span_at(last).file != file:  # never across files
                last -= 1
            clean = " ".join(text[start:last + 1].split())
            number = bisect.bisect_right(heading_ends, start) - 1
            under = headings[number] if number >= 0 else None
            sentences.append(DraftSentence(
                clean, source_start(start), source_end(last),
                under.title if under is not None else None,
                kinds[number] if under is not None else None, file))
            numbers.append(number)
    return sentences, kinds, numbers


def assemble_draft(fmt: str, builder: ReadingBuilder, source: str, *, plain: str | None = None,
                   **extra: object) -> ParsedDraft:
    """The :class:`ParsedDraft` of a finished builder. ``plain`` (default: the built text) is what a
    draft pane shows; ``extra`` fills the optional fields (title, path, files, warnings ...)."""
    text = builder.text()
    sentences, kinds, numbers = reading_sentences(text, builder.spans, builder.headings)
    headings: list[tuple[int, str, str | None]] = [
        (h.source_offset, h.title, kind) for h, kind in zip(builder.headings, kinds, strict=True)]
    return ParsedDraft(fmt, sentences, headings, source=source, plain=text if plain is None else plain,
                       heading_files=[h.file for h in builder.headings],
                       heading_levels=[max(1, h.level) for h in builder.headings], sentence_headings=numbers,
                       spans=list(builder.spans),
                       **extra)  # type: ignore[arg-type]
