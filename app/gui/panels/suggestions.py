"""Suggestions panel: real sentences (phrase corpus, the user's library) doing the job of the sentence at hand
(``core.phrasing.suggest``): the selected page sentence, read as the inspector reads it
(``core.phrasing.query_reading``), or the draft's sentence at the cursor with its heading and neighbours. The
search (``core.phrasing.suggestion_sources.find_suggestions``, shared with the CLI) runs in a PanelOperation.
Rows (``suggestion_cards``, ``suggestion_text``, ``suggestion_filters``) come most similar first, with copy,
template and open actions. Signals, no other panel named: ``textInsertRequested``, ``openRequested``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QGuiApplication, QShowEvent
from PySide6.QtWidgets import QMenu, QStackedWidget, QWidget

from app.gui.operation import MODEL, Late, ModelUnavailable, PanelOperation
from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.panels.suggestion_cards import RowActions, SuggestionCard, SuggestionList, row_menu
from app.gui.panels.suggestion_filters import SuggestionFilters
from app.gui.panels.suggestion_text import (
    NO_MODEL,
    NO_QUERY,
    NO_SOURCES,
    ORIGINS,
    broken_library_note,
    failure_message,
    no_results_message,
    query_html,
    reads_as,
    result_status,
    source_pdf,
)
from app.gui.session import Session
from app.gui.status_line import StatusLine
from app.gui.widgets import heading_label, hint_label, panel_layout, while_alive
from core.phrasing.suggestion_sources import (
    Found,
    NoSources,
    SourceFolders,
    SuggestionRequest,
    available_templater,
    find_suggestions,
    source_folders,
)

if TYPE_CHECKING:  # pragma: no cover
    from core.labelling.sentence_context import SentenceContext
    from core.phrasing.query_reading import QueryReading
    from core.phrasing.suggest import Suggestion, SuggestionResult, Templater

DEFAULT_K = 10


class SuggestionsPanel(QWidget):
    suggestionsShown = Signal(str)  # the query whose suggestions are now listed
    textInsertRequested = Signal(str)  # a template to insert in the draft (the window links it)
    openRequested = Signal(str)  # a source paper's PDF to open (the window opens it)

    def __init__(self, session: Session, sources: Callable[[], SourceFolders] | None = None,
                 templater: Callable[[], Templater | None] | None = None) -> None:
        super().__init__()
        self.session = session
        self.k = DEFAULT_K
        # the default phrase corpus and library (one whose database has gone too: the search says so)
        self._sources = sources or partial(source_folders, with_traces=True)
        self._templater = templater or available_templater
        self.query_text = ""
        self.query_context: SentenceContext | None = None  # the heading kind and neighbours it is read with
        self.query_reading: QueryReading | None = None  # the open paper's analysis of it (a page sentence)
        self.origin = ""  # "page" or "draft"
        self._draft_context: Callable[[], SentenceContext | None] | None = None
        self.result: SuggestionResult | None = None
        self.notes: list[str] = []  # about the last result's sources (a broken library left out)
        self._recheck = False  # look at the sources again when shown (hidden, or none were there)
        self.filters = SuggestionFilters()
        self.function, self.section = self.filters.function, self.filters.section
        self.source = self.filters.source
        self.filters.changed.connect(self.refresh)
        self.query_label = heading_label()
        self.list = SuggestionList()
        self.list.currentRowChanged.connect(self.list.expand)
        self.list.copyRequested.connect(lambda: self.copy_sentence())
        self.list.menuRequested.connect(self._show_menu)
        self.message = hint_label(NO_QUERY)
        self.message.setTextFormat(Qt.TextFormat.RichText)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.message)
        self.stack.addWidget(self.list)
        self.status = StatusLine("Stop searching")
        self.op = PanelOperation(self, session, self.status, error_prefix="Suggestions failed")
        panel_layout(self, self.filters, self.query_label, (self.stack, 1), self.status)
        session.sentenceSelected.connect(self._on_sentence_selected)
        session.analysisEmbedded.connect(while_alive(self, lambda _a: self._reread_page_sentence()))
        session.documentClosed.connect(while_alive(self, lambda: self._on_sentence_selected(-1)))
        self.refresh()

    def set_function(self, function_id: str | None) -> None:
        self.function.setCurrentIndex(max(0, self.function.findData(function_id)))

    def set_section_kind(self, kind: str | None) -> None:
        self.section.setCurrentIndex(max(0, self.section.findData(kind)))

    def query(self) -> SuggestionRequest:
        return SuggestionRequest(self.query_text, self.k, self.function.currentData(),
                                 self.section.currentData(), self.query_context, self.query_reading)

    # -- queries --------------------------------------------------------------------------
    def set_query(self, text: str, origin: str = "page", context: SentenceContext | None = None,
                  reading: QueryReading | None = None) -> None:
        """Search for sentences doing the job of ``text`` ("" clears the query), read with ``context`` (the
        heading's kind, the neighbours) unless ``reading`` (the paper's analysis of it; used only when of
        ``text``: ``core.phrasing.suggest``) already says."""
        self.query_text = " ".join(text.split())
        same = context is not None and " ".join(context.text.split()) == self.query_text
        self.query_context = context if same else None
        self.query_reading = reading
        self.origin = origin
        self.refresh()

    def set_draft_context_provider(self, provider: Callable[[], SentenceContext | None]) -> None:
        """Where the draft sentence's context comes from (the draft pane's ``current_context``)."""
        self._draft_context = provider

    def set_draft_sentence(self, text: str) -> None:
        """The draft's sentence at the cursor (the draft pane emits it when typing pauses), read with
        its heading and neighbours when the draft lends them."""
        if text.strip() or self.origin == "draft":
            context = self._draft_context() if self._draft_context is not None and text.strip() else None
            self.set_query(text, "draft", context)

    def _on_sentence_selected(self, index: int) -> None:
        """A page sentence is read as the inspector reads it (``core.phrasing.query_reading.page_query``)."""
        from core.phrasing.query_reading import page_query

        paper = self.session.paper
        if paper is not None and 0 <= index < len(paper.sentences):
            text, context, reading = page_query(paper, self.session.embedded, index)
            self.set_query(text, "page", context, reading)
        elif self.origin == "page":
            self.set_query("", "page")

    def _reread_page_sentence(self) -> None:  # the paper's analysis came after the selection
        if self.origin == "page" and self.query_text:
            self._on_sentence_selected(self.session.selected)

    def refresh(self) -> None:
        """Search again for the current query and filters (any older search is superseded; hidden, the
        search waits until the panel is shown)."""
        self.op.invalidate()
        self._show_query()
        visible = self.isVisible()
        self._recheck = not visible
        if visible and not self._sources():
            self._recheck = True  # a library may be made meanwhile
            self._show_message(NO_SOURCES)
            return
        if not self.query_text:
            self._show_message(NO_QUERY)
            return
        self.op.run(find_suggestions, self.query(), MODEL, Late(self._folders), Late(self._templater_now),
                    label="Finding phrasing suggestions", status="Searching…", defer_hidden=True,
                    on_done=self._on_result, on_error=self._on_error)

    def _folders(self, _ready: object) -> SourceFolders:
        wanted = self.filters.kinds()
        return [(kind, folder) for kind, folder in self._sources() if kind in wanted]

    def _templater_now(self, _ready: object) -> Templater | None:  # read when the search starts
        return self._templater()

    def _on_result(self, found: Found) -> None:
        self.result = found.result
        self.notes = [*map(broken_library_note, found.left_out), *found.notices]
        self._show_query()
        if not found.result.suggestions:
            self._show_message(no_results_message(self.filters.in_use()))
        else:
            self.list.show_items(found.result.suggestions, self._row_actions)  # (cards reused)
            self.stack.setCurrentWidget(self.list)
            self.list.fit_rows()
            self.list.setCurrentRow(0)
            self.list.scrollToTop()
        self.op.set_status(result_status(len(found.result.suggestions), self.op.elapsed(), self.notes))
        self.status.setToolTip("\n".join(self.notes))
        self.suggestionsShown.emit(self.query_text)

    def _on_error(self, error: Exception) -> None:
        if isinstance(error, ModelUnavailable):
            self._show_message(NO_MODEL, keep_status=True)
        elif isinstance(error, NoSources):
            self._recheck = True
            self._show_message(NO_SOURCES)
        else:
            self._show_message(failure_message(error))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)  # (a search asked for while hidden has just started: the operation's)
        if self._recheck and not self.op.busy:
            self.refresh()  # hidden meanwhile, or nothing to search: a library may have been made

    def library_changed(self) -> None:
        """Papers were added or removed: search again (when shown; else when next shown). Nothing else
        is kept: libraries are opened per search, only read-only phrase-corpus packs are cached."""
        self.result = None
        self.refresh()

    # -- display --------------------------------------------------------------------------
    def _show_query(self) -> None:
        if not self.query_text:
            self.query_label.setText("")
            self.query_label.hide()
            return
        reads = (reads_as(self.result.query) if self.result is not None
                 and self.result.query.get("text") == self.query_text else "")
        self.query_label.setText(query_html(self.query_text, ORIGINS.get(self.origin, "the sentence"), reads))
        self.query_label.show()

    def _show_message(self, text: str, keep_status: bool = False) -> None:
        self.list.clear()
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)
        if not keep_status:
            self.op.set_status("")

    def _row_actions(self, row: int) -> RowActions:
        return RowActions(partial(self.copy_sentence, row), partial(self.copy_template, row),
                          partial(self.insert_template, row), partial(self.open_source_paper, row))

    def card(self, row: int) -> SuggestionCard | None:
        return self.list.card(row)

    def rows(self) -> list[Suggestion]:  # the suggestions listed now, in order
        return self.list.suggestions()

    # -- copying --------------------------------------------------------------------------
    def _suggestion(self, row: int | None) -> Suggestion | None:
        if row is None:
            row = self.list.currentRow()
        else:
            self.list.setCurrentRow(row)
        card = self.card(row) if row >= 0 else None
        return card.item if card is not None else None

    def _done(self, text: str, said: str) -> str:
        if text:
            self.op.set_status(said)
        return text

    def copy_sentence(self, row: int | None = None) -> str:
        """Copy a row's sentence (default: the selected row); returns it ("" when none)."""
        item = self._suggestion(row)
        if item is not None:
            QGuiApplication.clipboard().setText(item.text)
        return self._done(item.text if item is not None else "", "Sentence copied.")

    def copy_template(self, row: int | None = None) -> str:
        """Copy a row's template (default: the selected row); returns it ("" when none)."""
        item = self._suggestion(row)
        if item is not None and item.template:
            QGuiApplication.clipboard().setText(item.template)
        return self._done(item.template if item is not None else "", "Template copied.")

    def insert_template(self, row: int | None = None) -> str:
        """Ask for a row's template to be inserted in the draft at its cursor (default: the selected
        row); returns it ("" when none)."""
        item = self._suggestion(row)
        if item is not None and item.template:
            self.textInsertRequested.emit(item.template)
        return self._done(item.template if item is not None else "", "Template inserted in the draft.")

    def open_source_paper(self, row: int | None = None) -> str:
        """Ask for a library row's source PDF to be opened; returns its path ("" when there is none)."""
        item = self._suggestion(row)
        path = source_pdf(item) if item is not None else ""
        if not path:
            self.op.set_status("This sentence's paper has no PDF to open here.")
            return ""
        self.openRequested.emit(path)
        return path

    def row_menu(self, row: int) -> QMenu:
        return row_menu(self, self.card(row), self._row_actions(row))

    def _show_menu(self, row: int, global_pos: QPoint) -> None:
        self.row_menu(row).popup(global_pos)


SPEC = register_panel(PanelSpec(
    id="suggestions", title="Suggestions", factory=SuggestionsPanel, order=45, shortcut="Ctrl+Shift+S",
    description="Real sentences that do the same job as the selected or drafted sentence",
    tab_with="profile", visible=False, remember_visible=True, min_height=420))
