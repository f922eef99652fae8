"""The language server's work without the protocol: label a document version, judge its sections,
find suggestions for a sentence and say it all in words. :mod:`app.lsp.server` calls it from two
worker threads (labelling; suggestions, whose SQLite sources stay on the thread that opened them);
``rhetorica bench lsp`` and the tests call it directly.

The model is loaded once by the caller and handed in; the suggestion sources (phrase corpus, library)
are opened on first use and kept until the settings name other ones.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
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
    from core.phrasing.suggest import Source, SuggestionResult

MAX_CHARS = 2_000_000  # a longer text is not labelled (one diagnostic says so)
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
        self._sources: list[Source] | None = None
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
        saying why there are none)."""
        from core.errors import RhetoricaError
        from core.phrasing.suggest import suggest

        k = self.settings.suggestions
        if k == 0:
            return None, ""
        try:
            sources = self._open_sources()
        except (RhetoricaError, OSError) as error:
            return None, f"no suggestions: {' '.join(str(error).split())}"
        if not sources:
            return None, self._sources_note
        context = self.context_of(labelled, index)
        key = (context, k, self._sources_key)
        with self._lock:
            if key in self._suggestions:
                self._suggestions.move_to_end(key)
                return self._suggestions[key], ""
        try:
            result = suggest(context.text, self.model, sources, k, templater=_templater(), context=context)
        except (RhetoricaError, OSError) as error:
            return None, f"no suggestions: {' '.join(str(error).split())}"
        with self._lock:
            self._suggestions[key] = result
            while len(self._suggestions) > SUGGESTION_CACHE:
                self._suggestions.popitem(last=False)
        return result, ""

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

    def _open_sources(self) -> list[Source]:
        from core.paths import corpus_dir, library_dir
        from core.phrasing.suggest import has_sentences, open_source

        settings = self.settings
        key = (settings.sources, settings.corpus, settings.library)
        if self._sources is not None and key == self._sources_key:
            return self._sources
        self.close()
        wanted = [("corpus", settings.corpus or corpus_dir()), ("library", settings.library or library_dir())]
        folders = [(kind, folder) for kind, folder in wanted
                   if settings.sources in (kind, "all") and has_sentences(folder)]
        self._sources_note = (
            "no suggestions: suggestions are off (sources: none)" if settings.sources == "none"
            else "no suggestions: build the phrase corpus with 'rhetorica corpus build' or add papers with "
                 "'rhetorica library add PDF…'")
        opened: list[Source] = []
        try:
            for kind, folder in folders:
                opened.append(open_source(kind, folder, self.model))
        except BaseException:
            for source in opened:
                source.library.close()
            raise
        self._sources, self._sources_key = opened, key
        return opened

    def close(self) -> None:
        """Close the suggestion sources (they are opened again when needed)."""
        for source in self._sources or []:
            source.library.close()
        self._sources = None
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


def _templater() -> Any:
    try:
        from core.phrasing.templates import default_lexicon_path, template_of
    except ImportError:  # pragma: no cover - the templater ships with core
        return None
    return template_of if default_lexicon_path().is_file() else None
