"""Suggestions panel: real sentences from the phrase corpus and the user's library that do the same
rhetorical job as the sentence at hand (issue 12, ``core.suggest``).

The query is the sentence selected on the page (``Session.sentenceSelected``) or the draft's sentence
at the cursor (the draft pane's ``currentSentenceChanged``, emitted 600 ms after typing stops, so
typing never waits). The query is labelled in the context it has (``core.sentence_context``): a page
sentence with its section's kind and neighbours, a draft sentence with its heading's kind and the
draft sentences around it (the window lends the draft's ``current_context`` to
``set_draft_context_provider``), so the role and function it "reads as" are the in-context ones (an
uncertain role says so, with the runner-up). The search runs in a background
:class:`~app.gui.workers.Worker` started through
the session's job tracker; the worker opens its own :class:`~core.library.library.Library` objects
(SQLite connections belong to the thread that opened them) and closes them. A newer query cancels the
running search and starts once it has stopped; a result that belongs to an older query is dropped.
The panel searches only while it is shown: a query that arrives while it is hidden runs when it is
shown again.

Rows are listed most similar first. Each shows the sentence with its formulaic wording highlighted
(``core.templates``), its source (a title a reader can use, ``core.source_titles``, and the section)
and a line with the similarity, the stored function and whether it is from the phrase corpus or the
user's library; the selected row also shows the template in a muted line and its buttons ("Copy
sentence", "Copy template", "Insert template", "Open paper"), so the other rows stay short and
several show at once. The buttons' actions are also in each row's context menu; Ctrl+C copies the
selected row's sentence. The panel names no other panel: "Insert template"
emits ``textInsertRequested(text)`` (the window hands it to the draft pane's ``insert_text``), "Open
paper" emits ``openRequested(path)`` (the window opens it as File › Open does; offered only for a
library paper added from a PDF that is still where it was), and the window calls
``library_changed()`` when the Library panel adds or removes papers (the search runs again).
"""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QPoint, QSize, Qt, Signal
from PySide6.QtGui import (
    QContextMenuEvent,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.session import Session
from app.gui.widgets import MUTED, hint_label, panel_layout, status_label
from app.gui.workers import Worker
from core.document import SectionKind
from core.errors import RhetoricaError
from core.functions import default_taxonomy
from core.jobs import JobContext
from core.labels import NO_FUNCTION, ROLES
from core.model_api import RoleModel
from core.source_titles import source_title

if TYPE_CHECKING:  # pragma: no cover
    from core.sentence_context import SentenceContext
    from core.suggest import Source, Suggestion, SuggestionResult, Templater

DEFAULT_K = 10
HIGHLIGHT = "#fbe7a1"  # background of the formulaic wording
TITLE_CHARS = 44  # a source's title and section fit one line of a card in a dock of ~440 px
KIND_WORDS = {"corpus": "phrase corpus", "library": "your library"}
NO_SOURCES = ("No phrase corpus or library yet: build the phrase corpus with <code>rhetorica corpus build"
              "</code> or add papers with <code>rhetorica library add PDF…</code>; suggestions come from "
              "them.")
NO_QUERY = ("Select a sentence or type in the draft: sentences from real papers that do the same job "
            "appear here.")
NO_MODEL = "No model: suggestions need a model bundle (choose one in File › Settings)."
ORIGINS = {"page": "the selected sentence", "draft": "the draft"}
SourceFolders = list[tuple[str, Path]]  # (kind: "corpus" | "library", folder)


@dataclass(frozen=True)
class SuggestionQuery:
    text: str
    k: int = DEFAULT_K
    function: str | None = None  # a filter on the suggestions
    section_kind: str | None = None  # a filter on the suggestions (not the query's own kind)
    context: SentenceContext | None = None  # what the query is labelled with (None: alone)


def default_sources() -> SourceFolders:
    """The default phrase corpus and the user's library, where they exist (never created here); a
    library whose database has gone is one too (the search then says so, beside the corpus)."""
    from core.library.store import library_traces
    from core.paths import corpus_dir, library_dir
    from core.suggest import has_sentences

    wanted = [("corpus", corpus_dir()), ("library", library_dir())]
    return [(kind, folder) for kind, folder in wanted
            if has_sentences(folder) or (kind == "library" and library_traces(folder))]


def default_templater() -> Templater | None:
    """The formulaic-span extractor, or None when its lexicon is not there."""
    try:
        from core.templates import default_lexicon_path, template_of
    except ImportError:  # pragma: no cover - the templater ships with core
        return None
    return template_of if default_lexicon_path().is_file() else None


# Phrase-corpus packs are read-only and thread-safe, and reading one takes a while (10^5 sentences):
# opened once per (folder, manifest version, model) and kept. Libraries are not: SQLite connections
# belong to the thread that opened them, so each search opens its own and closes them.
_PACKS: dict[tuple[str, str, int, str], Source] = {}
_PACKS_LOCK = threading.Lock()


def _open_source(kind: str, folder: Path, model: RoleModel) -> tuple[Source, bool]:
    """(the source, whether the caller must close it)."""
    from core.library.pack import MANIFEST, is_pack
    from core.suggest import open_source

    if not is_pack(folder):
        return open_source(kind, folder, model), True
    key = (kind, str(folder), (folder / MANIFEST).stat().st_mtime_ns, model.model_id)
    with _PACKS_LOCK:
        if key not in _PACKS:
            for old in [k for k in _PACKS if k[:2] == key[:2]]:  # an older build of this pack
                _PACKS.pop(old).library.close()
            _PACKS[key] = open_source(kind, folder, model)  # refuses a pack of another model
        return _PACKS[key], False


@dataclass
class Found:
    """A search's answer, with what the user should know about its sources (a broken library left
    out, an index the library rebuilt): one line each."""

    result: SuggestionResult
    notes: list[str] = field(default_factory=list)


def broken_library_note(error: Exception) -> str:
    """The status line for a library left out of a search because it cannot be read."""
    from core.library.store import DamagedLibraryError, MissingDatabaseError

    if isinstance(error, DamagedLibraryError):
        what = "is damaged"
    elif isinstance(error, MissingDatabaseError):
        what = "has lost its database"
    else:
        what = f"cannot be read ({_one_line(str(error), 100)})"
    return f"phrase corpus only: your library {what}; repair it in the Library panel"


def find_suggestions(ctx: JobContext, query: SuggestionQuery, model: RoleModel, folders: SourceFolders,
                     templater: Templater | None) -> Found:
    """The worker's job: open the sources in this thread, search them, close the libraries. A library
    that is damaged (or whose database is gone) is left out, with a note, while another source
    answers: the phrase corpus keeps suggesting beside a broken library."""
    from contextlib import ExitStack

    from core.library.store import LibraryError

    notes: list[str] = []
    with ExitStack() as stack:
        sources = []
        for kind, folder in folders:
            ctx.check()
            try:
                source, owned = _open_source(kind, folder, model)
            except LibraryError as error:
                if kind != "library" or len(folders) == 1:
                    raise
                notes.append(broken_library_note(error))
                continue
            if owned:
                stack.callback(source.library.close)
            sources.append(source)
        ctx.check()
        ctx.progress(0, 1, "finding phrasing suggestions")
        try:
            result = _suggest(query, model, sources, templater)
        except LibraryError as error:
            rest = [source for source in sources if source.kind != "library"]
            if not rest or len(rest) == len(sources):
                raise
            notes.append(broken_library_note(error))
            sources = rest
            result = _suggest(query, model, sources, templater)
        _attach_paths(result, sources)
        notes += [note for source in sources for note in getattr(source.library, "notices", [])]
        ctx.progress(1, 1, f"{len(result.suggestions)} suggestions")
    return Found(result, notes)


def _suggest(query: SuggestionQuery, model: RoleModel, sources: Sequence[Source],
             templater: Templater | None) -> SuggestionResult:
    """``core.suggest.suggest``; a failure that a library of another model explains says so."""
    from core.library.store import LibraryError
    from core.suggest import suggest

    try:
        return suggest(query.text, model, sources, query.k, function=query.function,
                       section_kind=query.section_kind, templater=templater, context=query.context)
    except LibraryError:
        raise
    except Exception as error:
        raise _model_mismatch(sources, model) or error from error


def _attach_paths(result: SuggestionResult, sources: Sequence[Source]) -> None:
    """Give each library suggestion whose paper was added from a PDF that PDF's path
    (``source["path"]``), read while the library is open in this thread."""
    from core.library.store import LibraryError

    libraries = [source.library for source in sources if source.kind == "library"]
    for item in result.suggestions:
        if item.source.get("kind") != "library":
            continue
        for library in libraries:
            try:
                paper = library.paper(item.source.get("paper_id", ""))
            except LibraryError:  # a damaged row: the suggestion stays, without "Open paper"
                break
            if paper is not None:
                if paper.kind == "pdf" and paper.source:
                    item.source["path"] = paper.source
                break


def source_pdf(item: Suggestion) -> str:
    """The PDF a library suggestion comes from, when it is still there ("" otherwise)."""
    path = item.source.get("path", "")
    if item.source.get("kind") != "library" or not path:
        return ""
    try:
        return path if Path(path).is_file() else ""
    except OSError:
        return ""


def _model_mismatch(sources: Sequence[Source], model: RoleModel) -> RhetoricaError | None:
    """A clear error when a library was built with other models than ``model`` (its vectors do not
    compare with the query's), else None. (A pack checks its model itself when it is opened.)"""
    from core.library.store import LibraryError

    for source in sources:
        store = getattr(source.library, "store", None)
        try:
            built_with = sorted(store.stats().models) if store is not None else []
        except LibraryError:
            continue
        if built_with and model.model_id not in built_with:
            return RhetoricaError(f"the {source.kind} was built with {', '.join(built_with)}, not with the "
                                  f"current model {model.model_id}: choose that model in File › Settings, or "
                                  "add the papers again with this one")
    return None


def highlighted_html(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` as rich text with each (start, end) span bold on a tinted background."""
    parts: list[str] = []
    cursor = 0
    for start, end in sorted(spans):
        start, end = max(start, cursor, 0), min(end, len(text))
        if end <= start:
            continue
        parts.append(html.escape(text[cursor:start]))
        parts.append(f"<span style='background-color:{HIGHLIGHT}; font-weight:600'>"
                     f"{html.escape(text[start:end])}</span>")
        cursor = end
    parts.append(html.escape(text[cursor:]))
    return "".join(parts)


def source_text(item: Suggestion) -> str:
    """Where the sentence comes from: "Title · Section" (plain text; the title is the source's own or a
    label saying what it is, ``core.source_titles``, never a bare id; cut to one line of a card)."""
    source = item.source
    title = source.get("title") or source_title(None, source.get("paper_id", ""), source.get("kind", ""))
    if len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1].rstrip() + "…"
    return f"{title} · {source.get('section') or 'no section'}"


def match_text(item: Suggestion) -> str:
    """"similarity 0.83 · Claiming the topic matters · corpus" (plain text: the score, the stored
    function and whether the sentence is from the phrase corpus or the user's library)."""
    parts = [f"similarity {item.similarity:.2f}"]
    if item.function and item.function != NO_FUNCTION:
        parts.append(default_taxonomy().name_of(item.function))
    parts.append(KIND_WORDS.get(item.source.get("kind", ""), item.source.get("kind", "")))
    return " · ".join(p for p in parts if p)


class SuggestionCard(QWidget):
    """One row: the highlighted sentence, its source and similarity; on the selected row also its
    template and its buttons (copy the sentence or the template, insert the template in the draft,
    open the source paper). The other rows stay short, so that several show at once."""

    def __init__(self, item: Suggestion) -> None:
        super().__init__()
        self.item = item
        self.sentence = QLabel(highlighted_html(item.text, item.spans))
        self.sentence.setTextFormat(Qt.TextFormat.RichText)
        self.sentence.setWordWrap(True)
        self.template = QLabel(item.template)
        self.template.setTextFormat(Qt.TextFormat.PlainText)
        self.template.setWordWrap(True)
        self.template.setStyleSheet(f"color: {MUTED}; font-style: italic;")
        self.template.setToolTip("The template: the formulaic wording kept, the content replaced by slots")
        self.source = QLabel(source_text(item))
        self.source.setTextFormat(Qt.TextFormat.PlainText)
        self.source.setWordWrap(True)
        self.source.setStyleSheet(f"color: {MUTED}; font-size: 9pt;")
        self.source.setToolTip(item.source.get("title", ""))
        self.match = QLabel(match_text(item))
        self.match.setTextFormat(Qt.TextFormat.PlainText)
        self.match.setWordWrap(True)  # wraps rather than being cut beside the buttons
        self.match.setStyleSheet(f"color: {MUTED}; font-size: 9pt;")
        self.copy_sentence = _small_button("Copy sentence", "Copy this sentence")
        self.copy_template = _small_button("Copy template", "Copy this sentence's template")
        self.copy_template.setEnabled(bool(item.template))
        self.insert_template = _small_button("Insert template", "Insert this template in the draft at its "
                                             "cursor")
        self.insert_template.setEnabled(bool(item.template))
        self.source_path = source_pdf(item)
        self.open_paper = _small_button("Open paper", "Open the paper this sentence comes from\n"
                                        + self.source_path)
        self.open_paper.setEnabled(bool(self.source_path))
        self.buttons = QWidget()
        buttons = QHBoxLayout(self.buttons)
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.setSpacing(2)
        buttons.addStretch(1)
        for button in (self.copy_sentence, self.copy_template, self.insert_template, self.open_paper):
            buttons.addWidget(button)
        if item.template:
            self.sentence.setToolTip(f"Template: {item.template}")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 4)
        layout.setSpacing(2)
        layout.addWidget(self.sentence)
        layout.addWidget(self.template)
        layout.addWidget(self.source)
        layout.addWidget(self.match)
        layout.addWidget(self.buttons)
        self.expanded = True
        self.set_expanded(False)

    def set_expanded(self, expanded: bool) -> None:
        """Show the template and the buttons (the selected row) or only the sentence, its source and
        similarity (the other rows)."""
        self.expanded = expanded
        self.template.setVisible(expanded and bool(self.item.template))
        self.buttons.setVisible(expanded)
        self.open_paper.setVisible(bool(self.source_path))  # library papers added from a PDF only


def _small_button(text: str, tip: str) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setAutoRaise(True)
    button.setStyleSheet("QToolButton { font-size: 9pt; padding: 1px 4px; color: #1f4e8c; }"
                         "QToolButton:disabled { color: #aaa; }")
    return button


class SuggestionList(QListWidget):
    """The rows; Ctrl+C copies the selected row's sentence (taken before the window's Copy)."""

    copyRequested = Signal()
    menuRequested = Signal(int, QPoint)  # row, global position

    def __init__(self) -> None:
        super().__init__()
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setStyleSheet("QListWidget { background: white; }"
                           "QListWidget::item { border-bottom: 1px solid #e6e6e6; }"
                           "QListWidget::item:selected { background: #e4eefc; }"
                           "QListWidget::item:hover:!selected { background: #f6f8fb; }")

    def event(self, event: QEvent) -> bool:
        if (event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent)
                and event.matches(QKeySequence.StandardKey.Copy) and self.currentRow() >= 0):
            event.accept()  # the key comes here instead of triggering the window's Copy action
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copyRequested.emit()
            event.accept()
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        item = self.itemAt(self.viewport().mapFromGlobal(event.globalPos()))
        if item is not None:
            self.setCurrentItem(item)
            self.menuRequested.emit(self.row(item), event.globalPos())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_rows()

    def fit_rows(self) -> None:
        """Give each row the height its wrapped text needs at the current width."""
        width = max(120, self.viewport().width())
        for row in range(self.count()):
            item = self.item(row)
            card = self.itemWidget(item)
            if card is not None:
                item.setSizeHint(QSize(width, card.heightForWidth(width)))

    def copy_selected_item(self) -> str:
        """Copy the selected row's sentence (the window's Edit › Copy asks the focused widget)."""
        self.copyRequested.emit()
        return ""


class SuggestionsPanel(QWidget):
    suggestionsShown = Signal(str)  # the query whose suggestions are now listed
    textInsertRequested = Signal(str)  # a template to insert in the draft (the window links it)
    openRequested = Signal(str)  # a source paper's PDF to open (the window opens it)

    def __init__(self, session: Session, sources: Callable[[], SourceFolders] | None = None,
                 templater: Callable[[], Templater | None] | None = None) -> None:
        super().__init__()
        self.session = session
        self.k = DEFAULT_K
        self._sources = sources or default_sources
        self._templater = templater or default_templater
        self.query_text = ""
        self.query_context: SentenceContext | None = None  # the heading kind and neighbours it is read with
        self.origin = ""  # "page" or "draft"
        self._draft_context: Callable[[], SentenceContext | None] | None = None
        self.result: SuggestionResult | None = None
        self.notes: list[str] = []  # about the last result's sources (a broken library left out)
        self._generation = 0
        self._worker: Worker | None = None
        self._pending = False  # a newer query waits for the cancelled search to stop
        self._dirty = False  # something changed while the panel was hidden: refresh when shown
        self._no_sources = False  # the "nothing to search" message is up: look again when shown
        self._waiting_for_model = False
        self._started = 0.0

        self.function = QComboBox()
        self.function.setToolTip("Only sentences with this communicative function")
        self._fill_functions()
        self.section = QComboBox()
        self.section.setToolTip("Only sentences from this kind of section")
        self.section.addItem("All sections", None)
        for kind in SectionKind:
            self.section.addItem(kind.value.replace("-", " "), kind.value)
        self.source = QComboBox()
        self.source.setToolTip("Search the phrase corpus, your library, or both")
        for label, kinds in (("Corpus and library", ("corpus", "library")), ("Phrase corpus", ("corpus",)),
                             ("My library", ("library",))):
            self.source.addItem(label, kinds)
        self.function.currentIndexChanged.connect(lambda _i: self.refresh())
        self.section.currentIndexChanged.connect(lambda _i: self.refresh())
        self.source.currentIndexChanged.connect(lambda _i: self.refresh())
        filters = QHBoxLayout()
        filters.setContentsMargins(6, 4, 6, 0)
        filters.addWidget(QLabel("Function"))
        filters.addWidget(self.function, 3)
        filters.addWidget(QLabel("Section"))
        filters.addWidget(self.section, 2)
        filters.addWidget(self.source, 2)

        self.query_label = QLabel("")
        self.query_label.setTextFormat(Qt.TextFormat.RichText)
        self.query_label.setWordWrap(True)
        self.query_label.setStyleSheet("padding: 2px 6px;")
        self.list = SuggestionList()
        self.list.currentRowChanged.connect(self._expand)
        self.list.copyRequested.connect(lambda: self.copy_sentence())
        self.list.menuRequested.connect(self._show_menu)
        self.message = hint_label(NO_QUERY)
        self.message.setTextFormat(Qt.TextFormat.RichText)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.message)
        self.stack.addWidget(self.list)
        self.status = status_label()
        panel_layout(self, filters, self.query_label, (self.stack, 1), self.status)

        session.sentenceSelected.connect(self._on_sentence_selected)
        session.documentClosed.connect(self._on_document_closed)
        session.models.ready.connect(self._on_model_ready)
        session.models.failed.connect(self._on_model_failed)
        self.refresh()

    # -- filters --------------------------------------------------------------------------
    def _fill_functions(self) -> None:
        self.function.addItem("All functions", None)
        try:
            taxonomy = default_taxonomy()
        except Exception as error:  # a broken taxonomy file must not take the panel down
            self.function.setToolTip(f"No function filter: {error}")
            return
        for role in ROLES:
            infos = taxonomy.of_role(role)
            if not infos:
                continue
            self.function.insertSeparator(self.function.count())
            for info in infos:
                self.function.addItem(info.name, info.id)
                self.function.setItemData(self.function.count() - 1, f"{role}: {info.description}",
                                          Qt.ItemDataRole.ToolTipRole)

    def set_function(self, function_id: str | None) -> None:
        self.function.setCurrentIndex(max(0, self.function.findData(function_id)))

    def set_section_kind(self, kind: str | None) -> None:
        self.section.setCurrentIndex(max(0, self.section.findData(kind)))

    def query(self) -> SuggestionQuery:
        return SuggestionQuery(self.query_text, self.k, self.function.currentData(),
                               self.section.currentData(), self.query_context)

    # -- queries --------------------------------------------------------------------------
    def set_query(self, text: str, origin: str = "page", context: SentenceContext | None = None) -> None:
        """Search for sentences doing the job of ``text`` ("" clears the query); ``context`` (the
        heading's kind and the neighbouring sentences) is what its role and function are read with."""
        self.query_text = " ".join(text.split())
        same = context is not None and " ".join(context.text.split()) == self.query_text
        self.query_context = context if same else None
        self.origin = origin
        self.refresh()

    def set_draft_context_provider(self, provider: Callable[[], SentenceContext | None]) -> None:
        """Where the draft sentence's context comes from (the window lends the draft pane's
        ``current_context``)."""
        self._draft_context = provider

    def set_draft_sentence(self, text: str) -> None:
        """The draft's sentence at the cursor (the draft pane emits it when typing pauses), read with
        its heading and neighbours when the draft lends them."""
        if text.strip() or self.origin == "draft":
            context = self._draft_context() if self._draft_context is not None and text.strip() else None
            self.set_query(text, "draft", context)

    def _on_sentence_selected(self, index: int) -> None:
        from core.sentence_context import context_in_paper

        paper = self.session.paper
        if paper is not None and 0 <= index < len(paper.sentences):
            self.set_query(paper.sentences[index].text, "page", context_in_paper(paper, index))
        elif self.origin == "page":
            self.set_query("", "page")

    def _on_document_closed(self) -> None:
        if self.origin == "page":
            self.set_query("", "page")

    def refresh(self) -> None:
        """Search again for the current query and filters (any older search is superseded)."""
        self._generation += 1
        self._pending = False
        self._waiting_for_model = False
        if self._worker is not None:
            self._worker.cancel()
        self._show_query()
        if not self.isVisible():
            self._dirty = True  # hidden: nothing is looked at or searched until the panel is shown
            return
        self._dirty = False
        self._no_sources = not self._sources()
        if self._no_sources:
            self._show_message(NO_SOURCES)
            return
        if not self.query_text:
            self._show_message(NO_QUERY)
            return
        if self._worker is not None:
            self._pending = True  # starts when the cancelled search has stopped
            self.status.setText("Searching…")
            return
        self._start()

    def _start(self) -> None:
        model = self.session.models.request()
        if model is None:
            if self.session.models.state == "failed":
                self._show_message(NO_MODEL)
                self.status.setText(_one_line(f"No model: {self.session.models.error}"))
            else:
                self._waiting_for_model = True
                self.status.setText("Loading the model…")
            return
        wanted = self.source.currentData() or ("corpus", "library")
        folders = [(kind, folder) for kind, folder in self._sources() if kind in wanted]
        generation = self._generation
        worker = Worker(find_suggestions, self.query(), model, folders, self._templater(), name="suggestions")
        worker.result.connect(lambda r, g=generation: self._on_result(g, r))
        worker.error.connect(lambda e, g=generation: self._on_error(g, e))
        worker.cancelled.connect(lambda g=generation: self._on_cancelled(g))
        worker.finished.connect(lambda w=worker: self._on_finished(w))
        self._worker = worker
        self._started = time.monotonic()
        self.status.setText("Searching…")
        self.session.tracker.start(worker, "Finding phrasing suggestions")

    def _on_finished(self, worker: Worker) -> None:
        if worker is self._worker:
            self._worker = None
        if self._pending and self._worker is None:
            self._pending = False
            self._start()

    def _on_result(self, generation: int, found: Found) -> None:
        if generation != self._generation:
            return  # an older query's answer: a newer one is on its way
        result = found.result
        self.result = result
        self.notes = found.notes
        self._show_query()
        self.list.clear()
        if not result.suggestions:
            filters = [combo.currentText() for combo in (self.function, self.section)
                       if combo.currentIndex() > 0]
            hint = (f" with the filters ({html.escape(', '.join(filters))}): try “All”" if filters
                    else ": add more papers to your library")
            self._show_message(f"No suggestions for this sentence{hint}.")
        else:
            for suggestion in result.suggestions:
                self._add_row(suggestion)
            self.stack.setCurrentWidget(self.list)
            self.list.fit_rows()
            self.list.setCurrentRow(0)
            self.list.scrollToTop()
        seconds = time.monotonic() - self._started
        count = len(result.suggestions)
        counted = f"{count} suggestion{'s' if count != 1 else ''}"
        status = " · ".join([counted, f"{seconds:.1f} s", *found.notes])
        self.status.setText(_one_line(status))
        self.status.setToolTip("\n".join(found.notes))
        self.suggestionsShown.emit(self.query_text)

    def _on_error(self, generation: int, error: Exception) -> None:
        from core.library.store import DamagedLibraryError, MissingDatabaseError

        if generation != self._generation:
            return
        if isinstance(error, (DamagedLibraryError, MissingDatabaseError)):
            self._show_message(html.escape(_one_line(f"Your library cannot be read: repair it in the Library "
                                                     f"panel (Repair library…). {error}", 400)))
        else:
            self._show_message(html.escape(_one_line(f"Suggestions failed: {error}")))
        self.status.setText("")

    def _on_cancelled(self, generation: int) -> None:
        if generation == self._generation and not self._pending:
            self.status.setText("Cancelled.")

    def _on_model_ready(self, _model: RoleModel) -> None:
        if self._waiting_for_model:
            self.refresh()

    def _on_model_failed(self, error: Exception) -> None:
        if self._waiting_for_model:
            self._waiting_for_model = False
            self._show_message(NO_MODEL)
            self.status.setText(_one_line(f"No model: {error}"))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._dirty or self._no_sources:
            self.refresh()  # a query arrived while hidden, or a library may have been made meanwhile

    def library_changed(self) -> None:
        """Papers were added to or removed from the library: the listed suggestions may name removed
        papers or miss new ones, so search again (when shown; else when next shown). Nothing else is
        kept: libraries are opened per search, and only read-only phrase-corpus packs are cached."""
        self.result = None
        self.refresh()

    # -- display --------------------------------------------------------------------------
    def _show_query(self) -> None:
        if not self.query_text:
            self.query_label.setText("")
            self.query_label.hide()
            return
        shown = self.query_text if len(self.query_text) <= 160 else self.query_text[:159] + "…"
        doing = ""
        if self.result is not None and self.result.query.get("text") == self.query_text:
            doing = f"<br><span style='color:{MUTED}'>{reads_as(self.result.query)}</span>"
        where = ORIGINS.get(self.origin, "the sentence")
        self.query_label.setText(f"<span style='color:{MUTED}'>For {where}:</span> “{html.escape(shown)}”"
                                 f"{doing}")
        self.query_label.show()

    def _show_message(self, text: str) -> None:
        self.list.clear()
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)
        self.status.setText("")

    def _add_row(self, suggestion: Suggestion) -> None:
        item = QListWidgetItem(self.list)
        card = SuggestionCard(suggestion)
        row = self.list.count() - 1
        card.copy_sentence.clicked.connect(lambda _c=False, r=row: self.copy_sentence(r))
        card.copy_template.clicked.connect(lambda _c=False, r=row: self.copy_template(r))
        card.insert_template.clicked.connect(lambda _c=False, r=row: self.insert_template(r))
        card.open_paper.clicked.connect(lambda _c=False, r=row: self.open_source_paper(r))
        self.list.setItemWidget(item, card)

    def _expand(self, current: int) -> None:
        """The selected row shows its template and buttons; the others stay short."""
        for row in range(self.list.count()):
            card = self.card(row)
            if card is not None and card.expanded != (row == current):
                card.set_expanded(row == current)
        self.list.fit_rows()

    def card(self, row: int) -> SuggestionCard | None:
        item = self.list.item(row)
        widget = self.list.itemWidget(item) if item is not None else None
        return widget if isinstance(widget, SuggestionCard) else None

    def rows(self) -> list[Suggestion]:
        """The suggestions listed now, in order."""
        cards = [self.card(row) for row in range(self.list.count())]
        return [card.item for card in cards if card is not None]

    # -- copying --------------------------------------------------------------------------
    def _suggestion(self, row: int | None) -> Suggestion | None:
        if row is None:
            row = self.list.currentRow()
        else:
            self.list.setCurrentRow(row)
        card = self.card(row) if row >= 0 else None
        return card.item if card is not None else None

    def copy_sentence(self, row: int | None = None) -> str:
        """Copy a row's sentence (default: the selected row); returns it ("" when none)."""
        item = self._suggestion(row)
        if item is None:
            return ""
        QGuiApplication.clipboard().setText(item.text)
        self.status.setText("Sentence copied.")
        return item.text

    def copy_template(self, row: int | None = None) -> str:
        """Copy a row's template (default: the selected row); returns it ("" when none)."""
        item = self._suggestion(row)
        if item is None or not item.template:
            return ""
        QGuiApplication.clipboard().setText(item.template)
        self.status.setText("Template copied.")
        return item.template

    def insert_template(self, row: int | None = None) -> str:
        """Ask for a row's template to be inserted in the draft at its cursor (default: the selected
        row); returns it ("" when none)."""
        item = self._suggestion(row)
        if item is None or not item.template:
            return ""
        self.textInsertRequested.emit(item.template)
        self.status.setText("Template inserted in the draft.")
        return item.template

    def open_source_paper(self, row: int | None = None) -> str:
        """Ask for a library row's source PDF to be opened; returns its path ("" when there is none)."""
        item = self._suggestion(row)
        path = source_pdf(item) if item is not None else ""
        if not path:
            self.status.setText("This sentence's paper has no PDF to open here.")
            return ""
        self.openRequested.emit(path)
        return path

    def row_menu(self, row: int) -> QMenu:
        menu = QMenu(self)
        card = self.card(row)
        has_template = card is not None and bool(card.item.template)
        menu.addAction("Copy sentence", partial(self.copy_sentence, row))
        menu.addAction("Copy template", partial(self.copy_template, row)).setEnabled(has_template)
        menu.addSeparator()
        menu.addAction("Insert template", partial(self.insert_template, row)).setEnabled(has_template)
        opener = menu.addAction("Open source paper", partial(self.open_source_paper, row))
        opener.setEnabled(card is not None and bool(source_pdf(card.item)))
        return menu

    def _show_menu(self, row: int, global_pos: QPoint) -> None:
        self.row_menu(row).popup(global_pos)


def reads_as(query: dict[str, str]) -> str:
    """Rich text: what the model reads the query as, in the context it had: "reads as: Stating the aim
    (objective) · with its heading (introduction) and 2+2 neighbouring sentences"; an uncertain role
    names its runner-up ("uncertain: method (0.41) or result (0.35)"), a function below the threshold
    is "no clear function"."""
    function = query.get("function", "")
    role = query.get("role", "")
    role_shown = query.get("role_text") or role
    name = default_taxonomy().name_of(function) if function and function != NO_FUNCTION else ""
    if name:
        text = f"reads as: {html.escape(name)} ({html.escape(role_shown)})"
    else:
        text = f"reads as: {html.escape(role_shown)}"
        text += "; no clear function" if function == NO_FUNCTION else ""
    context = query.get("context", "")
    return text + (f" · {html.escape(context)}" if context else "")


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


SPEC = register_panel(PanelSpec(
    id="suggestions", title="Suggestions", factory=SuggestionsPanel, order=45, shortcut="Ctrl+Shift+S",
    description="Real sentences that do the same job as the selected or drafted sentence",
    tab_with="profile", visible=False, remember_visible=True, min_height=420))
