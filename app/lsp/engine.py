"""The language server's work without the protocol: label a document version, judge its sections,
find suggestions for a sentence and say it all in words. :mod:`app.lsp.server` calls it from two
worker threads (labelling; suggestions, whose SQLite sources stay on the thread that opened them);
``rhetorica bench lsp`` and the tests call it directly.

The model is loaded once by the caller and handed in; the suggestion sources (phrase corpus, library)
are :mod:`core.phrasing.suggestion_sources`' (the same folders, opening and search as ``rhetorica
suggest`` and the GUI's Suggestions panel), opened on first use and kept while the settings lead to the
same folders.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.lsp.drafts import Document, DocumentUnreadable, read_document
from app.lsp.incremental import reread
from app.lsp.labeller import LabelRun, ParagraphLabeller, SentenceLabel
from app.lsp.positions import PositionMap
from app.lsp.presenting import hover_markdown
from app.lsp.settings import LspSettings
from app.lsp.summary import SectionCheck, section_checks

if TYPE_CHECKING:  # pragma: no cover
    from core.labelling.sentence_context import SentenceContext
    from core.model_api import RoleModel
    from core.phrasing.suggest import SuggestionResult
    from core.phrasing.suggestion_sources import OpenSources

MAX_CHARS = 2_000_000  # a longer text is not labelled (one diagnostic says so)
# Nor is a text with a longer line: reading LaTeX takes time quadratic in a line's length (a 2 MB
# line, a minute per edit); 100,000 characters read in a fraction of a second.
MAX_LINE_CHARS = 100_000
SUGGESTION_CACHE = 256
NEIGHBOURS = 2  # a suggestion query's neighbours on each side, within its paragraph


@dataclass(frozen=True)
class LabelledDocument:
    """One version of a document with its labels (``error``: why it has none)."""

    text: str
    format: str
    positions: PositionMap
    document: Document | None = None
    labels: tuple[SentenceLabel, ...] = ()
    checks: tuple[SectionCheck, ...] = ()
    run: LabelRun | None = None
    error: str | None = None
    error_offset: int = 0
    spliced: bool = False  # read by re-reading the edited paragraph only
    read_seconds: float = 0.0  # reading the text (sentences, headings)
    seconds: float = 0.0  # reading, labelling and the checklist

    def sentence_at(self, offset: int) -> int | None:
        return self.document.sentence_at(offset) if self.document is not None and self.labels else None


class DraftEngine:
    def __init__(self, model: RoleModel, settings: LspSettings | None = None) -> None:
        self.model = model
        self.settings = settings or LspSettings()
        self.labeller = ParagraphLabeller(model)
        self._opened: OpenSources | None = None
        self._closing = ExitStack()  # closes the opened libraries
        self._sources_key: tuple[Any, ...] | None = None
        self._sources_note = ""
        self._suggestions: OrderedDict[tuple[Any, ...], SuggestionResult] = OrderedDict()
        self._lock = threading.Lock()

    # -- labelling ------------------------------------------------------------------------------
    def label(self, text: str, fmt: str, encoding: str = "utf-16",
              previous: LabelledDocument | None = None) -> LabelledDocument:
        """Label one version of a document. With ``previous`` (the same document's last labelled
        version) an edit inside one paragraph re-reads that paragraph only (:mod:`app.lsp.incremental`)."""
        started = time.perf_counter()
        positions = PositionMap(text, encoding)
        if len(text) > MAX_CHARS:
            return LabelledDocument(text, fmt, positions, error=f"this document is too large to label "
                                    f"({len(text):,} characters; at most {MAX_CHARS:,})")
        longest, line = positions.longest_line()
        if longest > MAX_LINE_CHARS:
            return LabelledDocument(text, fmt, positions, error=f"line {line + 1} is too long to label "
                                    f"({longest:,} characters; at most {MAX_LINE_CHARS:,} a line)",
                                    error_offset=positions.line_bounds(line)[0])
        document = None
        if previous is not None and previous.document is not None and previous.format == fmt:
            document = reread(previous.document, previous.text, text)
        spliced = document is not None
        if document is None:
            try:
                document = read_document(text, fmt)
            except DocumentUnreadable as error:
                return LabelledDocument(text, fmt, positions, error=str(error),
                                        error_offset=_offset_of(error, text))
        read_seconds = time.perf_counter() - started
        run = self.labeller.label(document)
        checks: tuple[SectionCheck, ...] = ()
        if self.settings.checklist:
            checks = tuple(section_checks(document, run.labels, self.settings.checklist_kind))
        return LabelledDocument(text, fmt, positions, document, run.labels, checks, run, spliced=spliced,
                                read_seconds=read_seconds, seconds=time.perf_counter() - started)

    # -- suggestions (call from one thread: the sources are SQLite connections) ----------------------
    def context_of(self, labelled: LabelledDocument, index: int) -> SentenceContext:
        """The sentence with up to ``NEIGHBOURS`` sentences a side from its paragraph and its kind."""
        from core.labelling.sentence_context import SentenceContext

        assert labelled.document is not None
        sentences = labelled.document.sentences
        first, end = labelled.document.paragraph_of(index)
        before = tuple(s.text for s in sentences[max(first, index - NEIGHBOURS):index])
        after = tuple(s.text for s in sentences[index + 1:min(end, index + 1 + NEIGHBOURS)])
        return SentenceContext(sentences[index].text, before, after, sentences[index].section_kind)

    def suggestions(self, labelled: LabelledDocument, index: int) -> tuple[SuggestionResult | None, str]:
        """(the top ``settings.suggestions`` suggestions for sentence ``index``, or None with a note
        saying why there are none; with suggestions, the note names a library left out because it
        cannot be read)."""
        from core.errors import RhetoricaError
        from core.phrasing.suggestion_sources import SuggestionRequest, available_templater, search

        k = self.settings.suggestions
        if k == 0:
            return None, ""
        try:
            opened = self._open_sources()
        except (RhetoricaError, OSError) as error:
            return None, _no_suggestions(error)
        if not opened.sources:
            return None, self._sources_note
        context = self.context_of(labelled, index)
        key = (context, k, self._sources_key)
        with self._lock:
            if key in self._suggestions:
                self._suggestions.move_to_end(key)
                return self._suggestions[key], _left_out_note(opened)
        try:
            result = search(opened, SuggestionRequest(context.text, k, context=context), self.model,
                            available_templater())
        except (RhetoricaError, OSError) as error:
            return None, _no_suggestions(error)
        with self._lock:
            self._suggestions[key] = result
            while len(self._suggestions) > SUGGESTION_CACHE:
                self._suggestions.popitem(last=False)
        return result, _left_out_note(opened)

    def hover(self, labelled: LabelledDocument, index: int) -> str:
        """The hover's Markdown for sentence ``index`` (suggestions included)."""
        result, note = self.suggestions(labelled, index)
        return hover_markdown(labelled.labels[index], self.describe_context(labelled, index), result, note)

    @staticmethod
    def describe_context(labelled: LabelledDocument, index: int) -> str:
        assert labelled.document is not None
        first, end = labelled.document.paragraph_of(index)
        kind = labelled.document.sentences[index].section_kind
        where = f"under a heading of kind {kind}" if kind else "with no heading above it"
        size = end - first
        return f"in its paragraph ({size} sentence{'s' if size != 1 else ''}) {where}"

    def _open_sources(self) -> OpenSources:
        """The settings' sources: ``core.phrasing.suggestion_sources.source_folders`` (the folders that
        hold sentences, looked for at each query as ``rhetorica suggest`` does: a library added or a
        phrase corpus grown since is read) opened with ``opened_sources`` (a library that cannot be read
        is left out while the phrase corpus answers), kept open while the folders stay the same."""
        from core.phrasing.suggestion_sources import ADD_SOURCES, opened_sources, source_folders

        settings = self.settings
        folders = source_folders(settings.sources, _folder(settings.corpus), _folder(settings.library))
        key = (settings.sources, tuple(folders))
        if self._opened is not None and key == self._sources_key:
            return self._opened
        self.close()
        self._sources_note = ("no suggestions: suggestions are off (sources: none)"
                              if settings.sources == "none" else f"no suggestions: {ADD_SOURCES}")
        closing = ExitStack()
        self._opened = closing.enter_context(opened_sources(folders, self.model))
        self._closing, self._sources_key = closing, key
        return self._opened

    def close(self) -> None:
        """Close the suggestion sources (they are opened again when needed; phrase-corpus packs stay in
        ``core.phrasing.suggestion_sources.PACKS``)."""
        self._closing.close()
        self._opened = None
        self._sources_key = None
        with self._lock:
            self._suggestions.clear()


def _offset_of(error: Exception, text: str) -> int:
    """Where an unreadable text goes wrong, when the message names a line ("… line 12 …")."""
    import re

    found = re.search(r"\bline (\d+)\b", str(error))
    if not found:
        return 0
    line = int(found.group(1)) - 1
    positions = PositionMap(text)
    return positions.line_bounds(min(max(line, 0), positions.line_count - 1))[0]


def _folder(setting: str | None) -> Path | None:
    return Path(setting) if setting else None


def _no_suggestions(error: Exception) -> str:
    return f"no suggestions: {' '.join(str(error).split())}"


def _left_out_note(opened: OpenSources) -> str:
    """The first library left out of the suggestions because it cannot be read ("" when none)."""
    return "".join(f"suggestions from the phrase corpus only: {' '.join(str(error).split())}"
                   for error in opened.left_out[:1])
