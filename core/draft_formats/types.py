"""The boundary types of :mod:`core.draft_formats` (plain dataclasses, no parsing here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

FORMATS = ("tex", "md", "txt", "docx")


@dataclass(frozen=True)
class DraftSentence:
    """One sentence of a draft. ``text`` reads cleanly (citations as "[1]", math as text, no markup);
    ``start``/``end`` are its character range in the source text (``ParsedDraft.source``, or the
    included file named by ``file``); ``heading`` is the heading it is under and ``section_kind`` that
    heading's kind (a ``core.document.SectionKind`` value), both None before any heading."""

    text: str
    start: int
    end: int
    heading: str | None
    section_kind: str | None
    file: str | None = None  # None: the main source; else the \input file, relative to the project folder


@dataclass(frozen=True)
class Span:
    """A run of ``ParsedDraft.plain`` (``[plain_start, plain_end)``) made from the source range
    ``[source_start, source_end)`` of ``file`` (None: the main source). ``verbatim``: the run is the
    source characters themselves (one to one), so an edit inside it can be written back."""

    plain_start: int
    plain_end: int
    source_start: int
    source_end: int
    file: str | None
    verbatim: bool


@dataclass(frozen=True)
class ParsedDraft:
    """A parsed draft. ``headings`` are (source offset, heading text, section kind) in reading order
    (``heading_files`` says, for each, the included file it is in, None: the main source;
    ``heading_levels`` its depth; ``sentence_headings`` the heading index of each sentence, -1 before any).
    ``source`` is the text the offsets refer to: the file's text (``.tex``, ``.md``, ``.txt``) or, for a
    ``.docx``, the extracted text. ``plain`` is the readable text a draft pane shows: the source itself for
    ``.md``/``.txt``; for ``.tex`` and ``.docx`` a Markdown rendering (``#`` heading lines, citations as
    "[1]", math as text); ``spans`` map it back to the source. ``files`` holds the text of every
    ``\\input`` file read (relative path → text); ``warnings`` what was skipped, one line each."""

    format: str
    sentences: list[DraftSentence]
    headings: list[tuple[int, str, str | None]]
    source: str = ""
    plain: str = ""
    title: str | None = None
    path: Path | None = None
    project_root: Path | None = None
    heading_files: list[str | None] = field(default_factory=list)
    heading_levels: list[int] = field(default_factory=list)  # 1 = top level, 2 = below it ...
    sentence_headings: list[int] = field(default_factory=list)  # per sentence: its heading's index, -1 none
    spans: list[Span] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def text_of(self, sentence: DraftSentence) -> str:
        """The source characters of ``sentence`` (markup included)."""
        text = self.source if sentence.file is None else self.files.get(sentence.file, "")
        return text[sentence.start:sentence.end]
