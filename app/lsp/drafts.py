"""An open document as the language server reads it: its sentences (each with its character range in
the source), its headings and its paragraphs.

:func:`read_document` is the one place that decides how a text is split: ``core.draft_formats``'s
``parse_draft_text`` (LaTeX through a real parser, Markdown, plain text) when it is installed, else,
for Markdown and plain text, ``core.drafts.draft_sections`` (the draft pane's splitter). A paragraph
is a run of sentences under one heading with no blank line between them in the source; it is the
unit the labeller labels and caches (:mod:`app.lsp.labeller`). A paragraph longer than
``MAX_PARAGRAPH`` sentences (a text with no blank lines) is cut where its own sentences say
(content-defined cuts, so an edit moves at most the cuts next to it, never every cut after it).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import unquote, urlparse

FORMATS = ("tex", "md", "txt")
LANGUAGE_FORMATS = {"latex": "tex", "tex": "tex", "plaintex": "tex", "context": "tex", "markdown": "md",
                    "md": "md", "plaintext": "txt", "text": "txt", "txt": "txt"}
SUFFIX_FORMATS = {".tex": "tex", ".ltx": "tex", ".md": "md", ".markdown": "md", ".txt": "txt", ".text": "txt"}
MAX_PARAGRAPH = 12  # sentences labelled (and cached) together at most
MIN_PIECE = 4  # a content-defined cut leaves at least this many sentences before it
_BLANK_LINE = re.compile(r"(\r\n|\r|\n)[ \t\f\v]*(\r\n|\r|\n)|\\par\b")


class DocumentUnreadable(ValueError):
    """The text cannot be read as its format right now (one line; an unbalanced ``{`` while typing)."""


@dataclass(frozen=True)
class Sentence:
    text: str  # what the model reads (LaTeX markup resolved)
    start: int  # character range in the source
    end: int
    heading: int  # index into Document.headings; -1 before any heading
    section_kind: str | None


@dataclass(frozen=True)
class Heading:
    start: int  # character range of the heading's line in the source
    end: int
    title: str
    section_kind: str | None


@dataclass(frozen=True)
class Document:
    format: str
    sentences: tuple[Sentence, ...]
    headings: tuple[Heading, ...]
    paragraphs: tuple[tuple[int, int], ...]  # [first, end) sentence indices
    reader: str  # which splitter read it ("core.draft_formats" or "core.drafts")

    def sentence_at(self, offset: int) -> int | None:
        """The sentence whose range holds ``offset`` (its end included), or None."""
        for index, sentence in enumerate(self.sentences):
            if sentence.start <= offset <= sentence.end:
                return index
            if sentence.start > offset:
                break
        return None

    def paragraph_of(self, index: int) -> tuple[int, int]:
        for first, end in self.paragraphs:
            if first <= index < end:
                return first, end
        raise IndexError(index)


def format_of(uri: str, language_id: str | None = None) -> str | None:
    """The draft format of an open document: by its language id, else its file suffix; None when it is
    no draft (a Python file the client sends as well)."""
    if language_id and language_id.lower() in LANGUAGE_FORMATS:
        return LANGUAGE_FORMATS[language_id.lower()]
    path = unquote(urlparse(uri).path) if "://" in uri or uri.startswith("file:") else uri
    return SUFFIX_FORMATS.get(PurePosixPath(path).suffix.lower())


def read_document(text: str, fmt: str) -> Document:
    """Sentences, headings and paragraphs of ``text`` read as ``fmt`` ("tex", "md" or "txt");
    :class:`DocumentUnreadable` when it cannot be read as such now."""
    sentences, headings, reader = read_parts(text, fmt)
    return Document(fmt, tuple(sentences), tuple(headings), tuple(paragraphs(text, sentences)), reader)


def read_parts(text: str, fmt: str) -> tuple[list[Sentence], list[Heading], str]:
    """(sentences, headings, which reader) of ``text``: the switch between the readers."""
    if fmt not in FORMATS:
        raise DocumentUnreadable(f"unknown draft format {fmt!r} (use tex, md or txt)")
    try:
        sentences, headings = _with_draft_formats(text, fmt)
        return sentences, headings, "core.draft_formats"
    except ImportError:
        if fmt == "tex":
            raise DocumentUnreadable("LaTeX drafts need core.draft_formats (not installed)") from None
        sentences, headings = _with_core_drafts(text)
        return sentences, headings, "core.drafts"


def _with_draft_formats(text: str, fmt: str) -> tuple[list[Sentence], list[Heading]]:
    from core.draft_formats import parse_draft_text
    from core.errors import RhetoricaError

    try:
        parsed = parse_draft_text(text, fmt, name="this document")
    except RhetoricaError as error:
        raise DocumentUnreadable(str(error)) from None
    heading_files = list(parsed.heading_files) or [None] * len(parsed.headings)
    headings = [Heading(offset, _line_end(text, offset), title.strip(), kind)
                for (offset, title, kind), file in zip(parsed.headings, heading_files, strict=False)
                if file is None]
    starts = [h.start for h in headings]
    sentences = []
    for found in parsed.sentences:
        if found.file is not None or not found.text.strip():
            continue  # an \input file's sentence has no range in this text
        above = [n for n, start in enumerate(starts) if start <= found.start]
        sentences.append(Sentence(found.text, found.start, found.end, above[-1] if above else -1,
                                  found.section_kind))
    return sentences, headings


def _with_core_drafts(text: str) -> tuple[list[Sentence], list[Heading]]:
    from core.drafts import draft_headings, draft_sections

    headings = [Heading(start, end, text[start:end].strip().lstrip("#").strip(), kind)
                for start, end, kind in draft_headings(text)]
    sentences = [Sentence(text[start:end], start, end, number, kind)
                 for start, end, kind, number in draft_sections(text)]
    return sentences, headings


def _line_end(text: str, offset: int) -> int:
    found = _LINE_END_AT.search(text, offset)
    return found.start() if found else len(text)


_LINE_END_AT = re.compile(r"\r|\n")


def paragraphs(text: str, sentences: list[Sentence]) -> list[tuple[int, int]]:
    """[first, end) sentence indices of each paragraph: consecutive sentences under one heading with
    no blank line (or ``\\par``) between them, cut to at most ``MAX_PARAGRAPH`` sentences."""
    runs: list[tuple[int, int]] = []
    first = 0
    for index in range(1, len(sentences) + 1):
        if index == len(sentences) or _breaks(text, sentences[index - 1], sentences[index]):
            runs.extend(_cut(sentences, first, index))
            first = index
    return runs


def _breaks(text: str, before: Sentence, after: Sentence) -> bool:
    return before.heading != after.heading or bool(_BLANK_LINE.search(text, before.end, after.start))


def _cut(sentences: list[Sentence], first: int, end: int) -> list[tuple[int, int]]:
    """A long run cut after sentences whose text hashes to a multiple of ``MIN_PIECE`` (at least
    ``MIN_PIECE`` sentences a piece, at most ``MAX_PARAGRAPH``)."""
    if end - first <= MAX_PARAGRAPH:
        return [(first, end)]
    pieces = []
    start = first
    for index in range(first, end):
        size = index + 1 - start
        digest = hashlib.blake2b(sentences[index].text.encode("utf-8", "surrogatepass"), digest_size=2)
        if size >= MAX_PARAGRAPH or (size >= MIN_PIECE and int.from_bytes(digest.digest()) % MIN_PIECE == 0):
            pieces.append((start, index + 1))
            start = index + 1
    if start < end:
        pieces.append((start, end))
    return pieces
