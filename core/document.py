"""The document model: plain dataclasses, JSON-serialisable both ways.

A :class:`Paper` holds its sentences in one flat list in reading order; each
:class:`Section` points at the contiguous range of sentences it contains, and
each :class:`Figure` lists the ids of the sentences that mention it.  Nothing
here knows about PDFs, Qt or models.

Reading a paper back (:meth:`Paper.from_dict`, :meth:`Paper.from_json`) checks every field the code
uses and raises :class:`~core.json_shapes.ShapeError` (a ``ValueError``) naming the bad field in words:
a paper JSON or a cache entry of the wrong shape is refused where it is read.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from core.json_shapes import (
    ShapeError,
    as_bool,
    as_index,
    as_int,
    as_list,
    as_numbers,
    as_object,
    as_string,
    as_strings,
    entry,
    kind_of,
    loads,
)

SCHEMA_VERSION = 1


class SectionKind(StrEnum):
    """Canonical kind of a section, whatever its printed heading."""

    ABSTRACT = "abstract"
    INTRODUCTION = "introduction"
    RELATED_WORK = "related-work"
    METHOD = "method"
    RESULT = "result"
    DISCUSSION = "discussion"
    CONCLUSION = "conclusion"
    OTHER = "other"


@dataclass(frozen=True)
class PageRect:
    """A rectangle on one page, in PDF points, origin top-left (pymupdf convention)."""

    page: int  # 0-based page index
    x0: float
    y0: float
    x1: float
    y1: float

    def to_list(self) -> list[float]:
        return [self.page, round(self.x0, 2), round(self.y0, 2), round(self.x1, 2), round(self.y1, 2)]

    @classmethod
    def from_list(cls, values: object, where: str = "rect") -> PageRect:
        """``[page, x0, y0, x1, y1]`` (:class:`~core.json_shapes.ShapeError` when it is not that)."""
        items = as_list(values, where)
        if len(items) != 5:
            raise ShapeError(f"{where} must hold 5 numbers (page, x0, y0, x1, y1), not {len(items)}")
        page = as_int(items[0], f"{where} page", minimum=0)
        x0, y0, x1, y1 = as_numbers(items[1:], f"{where} corners", 4)
        return cls(page, x0, y0, x1, y1)


@dataclass
class Sentence:
    """One body sentence, with where it sits in the paper and on the page."""

    id: str  # stable within a paper: "s{index}"
    text: str
    section_index: int  # index into Paper.sections
    index: int  # position in Paper.sentences (reading order)
    pages: list[int]  # 0-based page indices the sentence touches
    rects: list[PageRect] = field(default_factory=list)  # for highlighting
    char_start: int = 0  # offsets into Paper.body_text()
    char_end: int = 0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["rects"] = [r.to_list() for r in self.rects]
        return data

    @classmethod
    def from_dict(cls, data: object, where: str = "sentence") -> Sentence:
        """A sentence from its JSON (each field checked; :meth:`Paper.from_dict` checks where it points)."""
        data = as_object(data, where)
        rects = as_list(entry(data, "rects", where, []), f"{where}: 'rects'")
        return cls(
            id=as_string(entry(data, "id", where), f"{where}: 'id'"),
            text=as_string(entry(data, "text", where), f"{where}: 'text'"),
            section_index=as_int(entry(data, "section_index", where), f"{where}: 'section_index'"),
            index=as_int(entry(data, "index", where), f"{where}: 'index'", minimum=0),
            pages=[as_int(p, f"{where}: page", minimum=0)
                   for p in as_list(entry(data, "pages", where), f"{where}: 'pages'")],
            rects=[PageRect.from_list(r, f"{where}: rect {i}") for i, r in enumerate(rects)],
            char_start=as_int(entry(data, "char_start", where, 0), f"{where}: 'char_start'", minimum=0),
            char_end=as_int(entry(data, "char_end", where, 0), f"{where}: 'char_end'", minimum=0),
        )


@dataclass
class Section:
    """A section heading and the contiguous sentences under it."""

    heading: str
    kind: SectionKind
    level: int = 1  # 1 = top level, 2 = subsection, ...
    number: str = ""  # as printed, e.g. "3.1"; empty when unnumbered
    page: int = 0
    first_sentence: int = 0  # index into Paper.sentences
    sentence_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["kind"] = self.kind.value
        return data

    @classmethod
    def from_dict(cls, data: object, where: str = "section") -> Section:
        """A section from its JSON (each field checked)."""
        data = as_object(data, where)
        return cls(
            heading=as_string(entry(data, "heading", where), f"{where}: 'heading'"),
            kind=_section_kind(entry(data, "kind", where), f"{where}: 'kind'"),
            level=as_int(entry(data, "level", where, 1), f"{where}: 'level'", minimum=0),
            number=as_string(entry(data, "number", where, ""), f"{where}: 'number'"),
            page=as_int(entry(data, "page", where, 0), f"{where}: 'page'", minimum=0),
            first_sentence=as_int(entry(data, "first_sentence", where, 0), f"{where}: 'first_sentence'",
                                  minimum=0),
            sentence_count=as_int(entry(data, "sentence_count", where, 0), f"{where}: 'sentence_count'",
                                  minimum=0),
        )


def _section_kind(value: object, where: str) -> SectionKind:
    kinds = [kind.value for kind in SectionKind]
    name = as_string(value, where)
    if name not in kinds:
        raise ShapeError(f"{where} must be one of {', '.join(kinds)}, not {name!r}")
    return SectionKind(name)


@dataclass
class Figure:
    """A figure or table: its caption, where it is, and who mentions it."""

    id: str  # "fig3", "tab2"
    kind: str  # "figure" | "table"
    number: str  # as printed: "3", "S1", "2a"
    caption: str
    page: int
    bbox: tuple[float, float, float, float]  # region of the graphic itself (points)
    caption_bbox: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    mentioned_by: list[str] = field(default_factory=list)  # sentence ids
    region_found: bool = True  # False when bbox is a fallback crop near the caption

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["bbox"] = [round(v, 2) for v in self.bbox]
        data["caption_bbox"] = [round(v, 2) for v in self.caption_bbox]
        return data

    @classmethod
    def from_dict(cls, data: object, where: str = "figure") -> Figure:
        """A figure from its JSON (each field checked)."""
        data = as_object(data, where)
        x0, y0, x1, y1 = as_numbers(entry(data, "bbox", where), f"{where}: 'bbox'", 4)
        c0, c1, c2, c3 = as_numbers(entry(data, "caption_bbox", where, [0.0] * 4), f"{where}: 'caption_bbox'",
                                    4)
        return cls(
            id=as_string(entry(data, "id", where), f"{where}: 'id'"),
            kind=as_string(entry(data, "kind", where), f"{where}: 'kind'"),
            number=as_string(entry(data, "number", where), f"{where}: 'number'"),
            caption=as_string(entry(data, "caption", where), f"{where}: 'caption'"),
            page=as_int(entry(data, "page", where), f"{where}: 'page'", minimum=0),
            bbox=(x0, y0, x1, y1),
            caption_bbox=(c0, c1, c2, c3),
            mentioned_by=as_strings(entry(data, "mentioned_by", where, []), f"{where}: 'mentioned_by'"),
            region_found=as_bool(entry(data, "region_found", where, True), f"{where}: 'region_found'"),
        )


@dataclass
class Paper:
    """A parsed paper."""

    title: str
    source_path: str
    sha256: str
    page_sizes: list[tuple[float, float]]  # (width, height) in points, per page
    authors: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    sentences: list[Sentence] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    parser_version: str = ""

    @property
    def page_count(self) -> int:
        return len(self.page_sizes)

    @property
    def abstract_sentences(self) -> list[Sentence]:
        return [s for s in self.sentences if self.section_of(s).kind is SectionKind.ABSTRACT]

    def section_of(self, sentence: Sentence) -> Section:
        return self.sections[sentence.section_index]

    def sentences_in(self, section: Section) -> list[Sentence]:
        return self.sentences[section.first_sentence : section.first_sentence + section.sentence_count]

    def sentence_by_id(self, sentence_id: str) -> Sentence:
        index = int(sentence_id.lstrip("s"))
        sentence = self.sentences[index]
        if sentence.id != sentence_id:  # pragma: no cover - ids are built as "s{index}"
            raise KeyError(sentence_id)
        return sentence

    def body_text(self) -> str:
        """All sentences joined by single spaces; Sentence.char_start/char_end index into it."""
        return " ".join(s.text for s in self.sentences)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "title": self.title,
            "authors": list(self.authors),
            "source_path": self.source_path,
            "sha256": self.sha256,
            "parser_version": self.parser_version,
            "page_sizes": [list(p) for p in self.page_sizes],
            "sections": [s.to_dict() for s in self.sections],
            "sentences": [s.to_dict() for s in self.sentences],
            "figures": [f.to_dict() for f in self.figures],
        }

    @classmethod
    def from_dict(cls, data: object) -> Paper:
        """A paper from its JSON: every field checked, and every sentence, rect and figure points at a
        section and a page the paper has (:class:`~core.json_shapes.ShapeError` naming the first that
        does not). Where figures point among the sentences is :meth:`check_links`' job (the sentences of
        a cache entry come apart from the rest)."""
        data = as_object(data, "the paper")
        _check_schema_version(data.get("schema_version", SCHEMA_VERSION))
        paper = cls(
            title=as_string(entry(data, "title", "the paper"), "the paper's 'title'"),
            authors=as_strings(entry(data, "authors", "the paper", []), "the paper's 'authors'"),
            source_path=as_string(entry(data, "source_path", "the paper"), "the paper's 'source_path'"),
            sha256=as_string(entry(data, "sha256", "the paper"), "the paper's 'sha256'"),
            parser_version=as_string(entry(data, "parser_version", "the paper", ""),
                                     "the paper's 'parser_version'"),
            page_sizes=_page_sizes(entry(data, "page_sizes", "the paper")),
            sections=[Section.from_dict(s, f"section {i}") for i, s in _items(data, "sections")],
            sentences=[Sentence.from_dict(s, f"sentence {i}") for i, s in _items(data, "sentences")],
            figures=[Figure.from_dict(f, f"figure {i}") for i, f in _items(data, "figures")],
        )
        paper.check_places()
        return paper

    def check_places(self) -> None:
        """Each sentence sits at its place in the list (id "s{index}"), in a section the paper has (or
        -1: none, a draft's text before its first heading) and on pages it has; each figure too."""
        pages = len(self.page_sizes)
        for i, sentence in enumerate(self.sentences):
            where = f"sentence {i}"
            if sentence.index != i or sentence.id != f"s{i}":
                raise ShapeError(f"{where}: its 'index' and 'id' must be {i} and 's{i}' (its place in the "
                                 f"list), not {sentence.index} and {sentence.id!r}")
            as_index(sentence.section_index, f"{where}: 'section_index'", len(self.sections),
                     "sections of the paper", lowest=-1)
            for page in [*sentence.pages, *(rect.page for rect in sentence.rects)]:
                as_index(page, f"{where}: page", pages, "pages of the paper")
        for i, figure in enumerate(self.figures):
            as_index(figure.page, f"figure {i}: 'page'", pages, "pages of the paper")

    def check_links(self) -> None:
        """Each section's sentences and each figure's mentions are sentences the paper has."""
        count, ids = len(self.sentences), {s.id for s in self.sentences}
        for i, section in enumerate(self.sections):
            if section.first_sentence + section.sentence_count > count:
                raise ShapeError(f"section {i}: its sentences {section.first_sentence}.."
                                 f"{section.first_sentence + section.sentence_count - 1} are not all among "
                                 f"the paper's {count}")
        for i, figure in enumerate(self.figures):
            unknown = [sid for sid in figure.mentioned_by if sid not in ids]
            if unknown:
                raise ShapeError(f"figure {i}: 'mentioned_by' names sentence {unknown[0]!r}, which the "
                                 "paper does not have")

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    @classmethod
    def from_json(cls, text: str) -> Paper:
        """A whole paper from its JSON text, checked (:meth:`from_dict` and :meth:`check_links`)."""
        paper = cls.from_dict(loads(text))
        paper.check_links()
        return paper

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Paper:
        return cls.from_json(Path(path).read_text(encoding="utf-8"))


def _check_schema_version(version: object) -> None:
    if not isinstance(version, int) or isinstance(version, bool):
        raise ShapeError(f"the paper's 'schema_version' must be a whole number, not {kind_of(version)} "
                         f"(this Rhetorica reads version {SCHEMA_VERSION})")
    if version != SCHEMA_VERSION:
        raise ShapeError(f"unsupported paper schema version {version} (this Rhetorica reads version "
                         f"{SCHEMA_VERSION})")


def _items(data: dict[str, Any], key: str) -> enumerate[Any]:
    """The paper's list ``key`` ("sections"), numbered."""
    return enumerate(as_list(entry(data, key, "the paper"), f"the paper's '{key}'"))


def _page_sizes(value: object) -> list[tuple[float, float]]:
    sizes = as_list(value, "the paper's 'page_sizes'")
    return [(w, h) for w, h in (as_numbers(size, f"page {i}'s size", 2) for i, size in enumerate(sizes))]
