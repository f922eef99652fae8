"""The document model: plain dataclasses, JSON-serialisable both ways.

A :class:`Paper` holds its sentences in one flat list in reading order; each
:class:`Section` points at the contiguous range of sentences it contains, and
each :class:`Figure` lists the ids of the sentences that mention it.  Nothing
here knows about PDFs, Qt or models.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

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
    def from_list(cls, values: list[float]) -> PageRect:
        page, x0, y0, x1, y1 = values
        return cls(int(page), float(x0), float(y0), float(x1), float(y1))


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
    def from_dict(cls, data: dict[str, Any]) -> Sentence:
        data = dict(data)
        data["rects"] = [PageRect.from_list(r) for r in data.get("rects", [])]
        return cls(**data)


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
    def from_dict(cls, data: dict[str, Any]) -> Section:
        data = dict(data)
        data["kind"] = SectionKind(data["kind"])
        return cls(**data)


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
    def from_dict(cls, data: dict[str, Any]) -> Figure:
        data = dict(data)
        data["bbox"] = tuple(data["bbox"])
        data["caption_bbox"] = tuple(data.get("caption_bbox", (0.0, 0.0, 0.0, 0.0)))
        return cls(**data)


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
    def from_dict(cls, data: dict[str, Any]) -> Paper:
        version = data.get("schema_version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise ValueError(f"unsupported paper schema version {version} (expected {SCHEMA_VERSION})")
        return cls(
            title=data["title"],
            authors=list(data.get("authors", [])),
            source_path=data["source_path"],
            sha256=data["sha256"],
            parser_version=data.get("parser_version", ""),
            page_sizes=[(float(w), float(h)) for w, h in data["page_sizes"]],
            sections=[Section.from_dict(s) for s in data["sections"]],
            sentences=[Sentence.from_dict(s) for s in data["sentences"]],
            figures=[Figure.from_dict(f) for f in data["figures"]],
        )

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    @classmethod
    def from_json(cls, text: str) -> Paper:
        return cls.from_dict(json.loads(text))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Paper:
        return cls.from_json(Path(path).read_text(encoding="utf-8"))
