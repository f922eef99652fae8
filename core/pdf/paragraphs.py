"""Sections under construction: paragraphs of clean text with their position map, and the
final sentences with their rectangles."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from core.document import PageRect, Section, SectionKind, Sentence
from core.pdf.layout import PageLayout
from core.pdf.lines import Line, tail
from core.pdf.textmap import MappedText

TERMINAL = (".", "?", "!", ":", ".”", ".\"", ".)", "?”", "!”", ".’")
_BULLET = re.compile(r"^[•◦▪●∙·\x0f\x07\uf0b7]\s*")


@dataclass
class BuiltSection:
    heading: str
    kind: SectionKind
    level: int
    number: str
    page: int
    size: float = 0.0
    paragraphs: list[MappedText] = field(default_factory=list)


class SectionBuilder:
    """Collects body lines into paragraphs of the current section."""

    def __init__(self, layouts: list[PageLayout], body_size: float,
                 compounds: frozenset[str] = frozenset()) -> None:
        self.layouts = layouts
        self.compounds = compounds
        self.body_size = body_size
        self.sections: list[BuiltSection] = []
        self.prev: Line | None = None

    def open_section(self, heading: str, kind: SectionKind, level: int, number: str, page: int,
                     size: float = 0.0) -> None:
        self.sections.append(BuiltSection(heading, kind, level, number, page, size))
        self.prev = None

    def add_body(self, line: Line) -> None:
        if not self.sections:
            self.open_section("", SectionKind.OTHER, 1, "", line.page)
        section = self.sections[-1]
        bullet = _BULLET.match(line.text)
        if bullet:
            line = tail(line, bullet.end())
            if not line.text:
                return
        if bullet or not section.paragraphs or self._new_paragraph(self.prev, line):
            section.paragraphs.append(MappedText(compounds=self.compounds))
        section.paragraphs[-1].add_line(line)
        self.prev = line

    def _new_paragraph(self, prev: Line | None, line: Line) -> bool:
        if prev is None:
            return True
        text = prev.text.rstrip()
        terminal = text.endswith(TERMINAL)
        layout = self.layouts[line.page]
        col_prev = self.layouts[prev.page].column_of(prev)
        col = layout.column_of(line)
        size = max(line.size, 1.0)
        indent = line.x0 - prev.x0 > 0.8 * size if col_prev == col else False
        same_flow = prev.page == line.page and col_prev == col and line.y0 > prev.y0
        if same_flow:
            gap = line.y0 - prev.y1
            if gap > 2.2 * size:
                return True
            if not terminal:
                return False
            if gap > 0.55 * (line.y1 - line.y0):
                return True
            _x0, x1 = layout.column_bounds(col)
            return indent or prev.x1 < x1 - 0.12 * (x1 - _x0)
        if not terminal:
            return False
        x0, _x1 = layout.column_bounds(col)
        pl = self.layouts[prev.page]
        px0, px1 = pl.column_bounds(col_prev)
        return line.x0 > x0 + 0.8 * size or prev.x1 < px1 - 0.12 * (px1 - px0)


def to_sentences(
    built: list[BuiltSection],
    split: Callable[[str], list[tuple[int, int]]],
    all_lines: list[Line],
) -> tuple[list[Section], list[Sentence]]:
    """Split every paragraph into sentences; one rectangle per line fragment of a sentence."""
    sections: list[Section] = []
    sentences: list[Sentence] = []
    offset = 0
    for si, b in enumerate(built):
        first = len(sentences)
        for para in b.paragraphs:
            text = para.text
            for a, e in split(text):
                piece = text[a:e]
                stripped = piece.strip()
                if sum(c.isalpha() for c in stripped) < 2:
                    continue
                a += len(piece) - len(piece.lstrip())
                e = a + len(stripped)
                rects: list[PageRect] = []
                pages: list[int] = []
                for lid, x0, x1 in para.slice_lines(a, e):
                    ln = all_lines[lid]
                    rects.append(PageRect(ln.page, x0, ln.y0, x1, ln.y1))
                    if ln.page not in pages:
                        pages.append(ln.page)
                index = len(sentences)
                sentences.append(Sentence(
                    id=f"s{index}", text=stripped, section_index=si, index=index, pages=pages,
                    rects=rects, char_start=offset, char_end=offset + len(stripped),
                ))
                offset += len(stripped) + 1
        sections.append(Section(
            heading=b.heading, kind=b.kind, level=b.level, number=b.number, page=b.page,
            first_sentence=first, sentence_count=len(sentences) - first,
        ))
    return sections, sentences
