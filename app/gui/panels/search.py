"""Search panel: "Papers like this one", the library's papers ranked against the open paper on one facet
(issue 13, ``core.phrasing.search``).

The query is the open paper. "Search" runs :func:`~app.gui.panels.search_job.search_job` through the
panel's :class:`~app.gui.operation.PanelOperation` (the job tracker's progress and Cancel in the status
bar; progress, Cancel and errors in the panel's status line): the open paper's query comes from the
session's embedded analysis (``Session.embedded``: the model does not run on the paper again; a search
asked for before it is ready waits for it), then the job opens its OWN library (SQLite connections
belong to their thread), ranks with ``core.phrasing.search.search_like`` and closes it. The facet selector
(Background / Method / Result / Whole paper) and k choose what is ranked; changing the facet searches
again, and a result that no longer matches (another facet, another paper, a changed library) is
dropped, never shown.

Each result shows its rank, score and title, and under it the best evidence pair; double-clicking a
result whose library paper came from a PDF that still exists asks the window to open it
(``openRequested``). "Export JSON…" writes ``SearchResult.to_dict()``. The panel offers
``library_changed`` (the window links the Library panel's ``libraryChanged`` to it): a shown ranking is
searched again, at once when the panel is shown, else when it is next shown.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QLabel, QListWidgetItem, QSpinBox, QWidget

from app.gui.flow_layout import control_group, flow_row
from app.gui.operation import (
    ANALYSIS,
    MODEL,
    AnalysisUnavailable,
    Late,
    ModelUnavailable,
    PanelOperation,
    Ready,
)
from app.gui.panel_choices import remember
from app.gui.panels.library_text import damage_message
from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.panels.search_job import EmptyLibrary, SearchOutcome, library_folder, search_job
from app.gui.panels.search_view import FACET_CHOICES, ResultList, facet_name, heading_html
from app.gui.save_text import save_text
from app.gui.session import Session
from app.gui.widgets import MessageStack, heading_label, one_line, panel_layout, tool_button, while_alive
from core.document import Paper

if TYPE_CHECKING:  # pragma: no cover
    from core.phrasing.search import QueryPaper

__all__ = ["EmptyLibrary", "SearchOutcome", "SearchPanel", "library_folder", "search_job"]

DEFAULT_K = 20
NO_PAPER = "Open a paper first: the Search panel finds the papers of your library most like it."
EMPTY_LIBRARY = ("Your library is empty: add papers in the Library panel or with <code>rhetorica library "
                 "add PDF…</code>, then search again.")
NO_MODEL = "No model: the search needs a model bundle (choose one in File › Settings)."
START = ("Press <b>Search</b> to rank the papers of your library by how much their {facet} is like the "
         "open paper's.")
SEARCHING = "Searching your library…"


class SearchPanel(QWidget):
    resultsShown = Signal(object)  # the SearchResult now listed
    openRequested = Signal(str)  # a library paper's PDF to open (the window opens it)
    statusMessage = Signal(str)  # shown in the window's status bar

    def __init__(self, session: Session, folder: Callable[[], Path] | None = None) -> None:
        super().__init__()
        self.session = session
        self._folder = folder or library_folder
        self.outcome: SearchOutcome | None = None
        self._query: tuple[Paper, str, QueryPaper] | None = None  # the open paper analysed, kept
        self.op = PanelOperation(self, session, error_prefix="Search failed")
        self.op.line.cancel_button.setToolTip("Stop the search")
        self.status, self.cancel_button = self.op.line.label, self.op.line.cancel_button
        self.op.busyChanged.connect(self._on_busy)
        self.list = ResultList()
        self.list.itemActivated.connect(self._on_activated)  # a double-click, or Enter
        self.stack = MessageStack(self.list)
        self.message = self.stack.message
        self.heading = heading_label()
        panel_layout(self, self._top_row(), self.heading, (self.stack, 1), self.op.line)
        session.documentOpened.connect(while_alive(self, lambda _d: self.clear()))
        session.documentClosed.connect(self.clear)
        session.paperReady.connect(while_alive(self, lambda _p: self._show_start()))
        self._show_start()

    def _top_row(self) -> QWidget:
        """The facet and the number of papers (both remembered), "Search" and "Export JSON…", in a row that
        wraps in a narrow panel."""
        self.search_button = tool_button("Search", "Rank the papers of your library against the open paper")
        self.search_button.clicked.connect(lambda: self.search())
        self.facet = remember(QComboBox(), "facet")
        self.facet.setToolTip("What to compare: the background (and aims), the method, the results (and "
                              "conclusions), or the whole paper")
        for name, value in FACET_CHOICES:
            self.facet.addItem(name, value)
        self.facet.currentIndexChanged.connect(lambda _i: self._on_facet_changed())
        self.k = remember(QSpinBox(), "top")
        self.k.setRange(1, 500)
        self.k.setValue(DEFAULT_K)
        self.k.setToolTip("How many papers to list")
        self.export_button = tool_button("Export JSON…", "Save the results as JSON")
        self.export_button.clicked.connect(lambda: self.export())
        self.export_button.setEnabled(False)
        top = QWidget()
        flow_row(top, control_group(QLabel("Like this paper, for its"), self.facet),
                 control_group(QLabel("top"), self.k, self.search_button), control_group(self.export_button))
        return top

    # -- state ----------------------------------------------------------------------------
    @property
    def folder(self) -> Path:
        return self._folder()

    @property
    def facet_value(self) -> str:
        return str(self.facet.currentData())

    @property
    def busy(self) -> bool:
        """A search runs or waits for the model or the paper's analysis."""
        return self.op.busy

    def set_facet(self, facet: str) -> None:
        """Choose the facet ("background", "method", "result" or "all"); a shown result is searched again."""
        self.facet.setCurrentIndex(max(0, self.facet.findData(facet)))

    # -- searching ------------------------------------------------------------------------
    def search(self, defer_hidden: bool = False) -> bool:
        """Rank the library against the open paper on the chosen facet (in the background); with
        ``defer_hidden``, a hidden panel searches when it is next shown."""
        paper = self.session.paper
        self._drop_result()
        if paper is None or not paper.sentences:
            self.op.invalidate()
            self.stack.show_message(NO_PAPER)
            return False
        kept_query = Late(partial(self._kept_query, paper))
        self.op.run(search_job, self.folder, paper, MODEL, self.facet_value, self.k.value(), kept_query,
                    ANALYSIS, needs_analysis=True, defer_hidden=defer_hidden, status="Searching…",
                    label="Finding papers like this one", on_done=partial(self._on_result, paper=paper),
                    on_error=self._on_error)
        if self.op.busy:
            self.stack.show_message(SEARCHING)
        elif self.op.deferred:
            self._show_start()
        return self.op.busy or self.op.deferred

    def _kept_query(self, paper: Paper, ready: Ready) -> QueryPaper | None:
        kept, model = self._query, ready.model
        if kept is not None and model is not None and kept[0] is paper and kept[1] == model.model_id:
            return kept[2]
        return None

    def cancel(self) -> None:
        """Stop a running search (its result, if any, is dropped)."""
        self.op.cancel()

    def library_changed(self) -> None:
        """Papers were added to or removed from the library: a listed ranking is stale; search again
        (now when shown, else when the panel is next shown)."""
        had = self.outcome is not None or self.op.busy or self.op.deferred
        self._drop_result()
        if had:
            self.search(defer_hidden=True)

    def clear(self) -> None:
        """Forget the results and the analysed query (the open paper changed or closed)."""
        self.op.invalidate()
        self._query = None
        self._drop_result()
        self.op.set_status("")
        self._show_start()

    def _drop_result(self) -> None:
        self.outcome = None
        self.list.clear()
        self.heading.hide()
        self.export_button.setEnabled(False)

    def _on_facet_changed(self) -> None:
        if self.outcome is not None or self.op.busy or self.op.deferred:
            self.search(defer_hidden=self.op.deferred)
        else:
            self._drop_result()
            self._show_start()

    # -- what the job sends back ------------------------------------------------------------
    def _on_result(self, outcome: SearchOutcome, *, paper: Paper) -> None:
        model = self.op.ready.model
        if paper is self.session.paper and model is not None:
            self._query = (paper, model.model_id, outcome.query)  # the analysis stays good for this paper
        self.show_outcome(outcome)
        self.op.set_status(f"{len(outcome.result.results)} of {outcome.result.candidates} papers · "
                           f"{self.op.elapsed():.1f} s")

    def _on_error(self, error: Exception) -> None:
        if isinstance(error, ModelUnavailable):
            self.stack.show_message(NO_MODEL)
            return
        if isinstance(error, EmptyLibrary):
            self.stack.show_message(EMPTY_LIBRARY)
        elif isinstance(error, AnalysisUnavailable):
            self.stack.show_message(html.escape(one_line(error)))
            return
        else:  # a damaged library: the Library panel's words and its repair, not a command to type
            damage = damage_message(error)
            failed = f"Search failed. {damage} Open the Library panel to repair it." if damage else \
                f"Search failed: {error}"
            self.stack.show_message(html.escape(one_line(failed, 400)))
        self.op.set_status("")

    def _on_busy(self, busy: bool) -> None:
        if busy:
            self.stack.show_message(SEARCHING)
        elif self.outcome is None and self.message.text() == SEARCHING:
            self._show_start()  # cancelled, or a stale search ended: say what to do

    # -- display --------------------------------------------------------------------------
    def _show_start(self) -> None:
        if self.op.busy:
            return
        if self.session.paper is None:
            self.stack.show_message(NO_PAPER)
        elif self.outcome is None:
            self.stack.show_message(START.format(facet=html.escape(facet_name(self.facet_value).lower())))

    def show_outcome(self, outcome: SearchOutcome) -> None:
        """List a search's results (best first) under a heading naming the query."""
        self.outcome = outcome
        self.heading.setText(heading_html(outcome.result.query))
        self.heading.show()
        self.list.fill(outcome)
        self.export_button.setEnabled(True)
        if outcome.result.results:
            self.stack.show_content()
        else:
            self.stack.show_message("No other paper in your library.")
        self.resultsShown.emit(outcome.result)

    def rows(self) -> list[tuple[int, float, str]]:
        """The listed results: (rank, score, title)."""
        if self.outcome is None:
            return []
        return [(rank, hit.score, hit.title) for rank, hit in enumerate(self.outcome.result.results, 1)]

    # -- actions --------------------------------------------------------------------------
    def _on_activated(self, item: QListWidgetItem) -> None:
        self.open_result(self.list.row(item))

    def open_result(self, row: int) -> bool:
        """Ask the window to open result ``row``'s PDF (when it came from one that still exists)."""
        if self.outcome is None or not 0 <= row < len(self.outcome.result.results):
            return False
        hit = self.outcome.result.results[row]
        pdf = self.outcome.pdfs.get(hit.paper_id, "")
        if pdf and Path(pdf).is_file():
            self.openRequested.emit(pdf)
            return True
        self.statusMessage.emit("This paper has no PDF to open (it was imported from abstracts, or its file "
                                "has moved).")
        return False

    def export(self, path: str | Path | None = None) -> str:
        """Save the results as JSON (``SearchResult.to_dict()``) at ``path`` (None: ask); returns the path
        written ("" when nothing was)."""
        if self.outcome is None:
            return ""
        text = json.dumps(self.outcome.result.to_dict(), ensure_ascii=False, indent=2)
        saved = save_text(self, text, path, title="Export the search results as JSON",
                          suggested=f"papers-like-{self.outcome.result.query.facet}.json",
                          file_filter="JSON (*.json)")
        if saved.message:
            self.op.set_status(saved.message)
        if saved.path:
            self.statusMessage.emit(f"Search results saved as {saved.path}")
        return saved.path

    def to_dict(self) -> dict[str, Any] | None:
        return None if self.outcome is None else self.outcome.result.to_dict()


SPEC = register_panel(PanelSpec(
    id="search", title="Search", factory=SearchPanel, area=Qt.DockWidgetArea.BottomDockWidgetArea,
    order=65, shortcut="Ctrl+Shift+K", description="Papers like this one: the library ranked against the "
    "open paper by background, method or result", tab_with="draft", visible=False, remember_visible=True,
    height=320))
