"""Search panel: "Papers like this one", the library's papers ranked against the open paper on one facet
(issue 13, ``core.search``).

The query is the open paper. "Search" runs one background :class:`~app.gui.workers.Worker` started
through the session's job tracker (progress and Cancel in the status bar, and a Cancel button here):
the open paper's query comes from the session's embedded analysis (``Session.embedded``: the model
does not run on the paper again; a search asked for before it is ready waits for it), then the job
opens its OWN :class:`~core.library.library.Library` (SQLite connections belong to their thread), ranks with
``core.search.search_like`` and closes it. The facet selector (Background / Method / Result / Whole
paper) and k choose what is ranked; changing the facet searches again, and a result that no longer
matches (another facet, another paper, a changed library) is dropped, never shown.

Each result shows its rank, score and title, and under it the best evidence pair (the open paper's
sentence → the library sentence it matched, and their similarity); double-clicking a result whose
library paper came from a PDF that still exists asks the window to open it (``openRequested``, as the
Library panel does). "Export JSON…" writes ``SearchResult.to_dict()`` (the issue's shape). The panel
offers ``library_changed`` (the window links the Library panel's ``libraryChanged`` to it).
"""

from __future__ import annotations

import dataclasses
import html
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
    QStackedWidget,
    QToolButton,
    QWidget,
)

from app.gui.analysis_wait import WAITING, AnalysisWait
from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.session import Session
from app.gui.widgets import ACCENT, MUTED, panel_layout, status_label
from app.gui.workers import Worker
from core.document import Paper
from core.errors import RhetoricaError
from core.jobs import JobContext
from core.model_api import RoleModel

if TYPE_CHECKING:  # pragma: no cover
    from core.analysis import PaperAnalysis
    from core.search import QueryPaper, SearchHit, SearchResult

DEFAULT_K = 20
FACET_CHOICES = (("Background", "background"), ("Method", "method"), ("Result", "result"),
                 ("Whole paper", "all"))
NO_PAPER = "Open a paper first: the Search panel finds the papers of your library most like it."
EMPTY_LIBRARY = ("Your library is empty: add papers in the Library panel or with <code>rhetorica library "
                 "add PDF…</code>, then search again.")
NO_MODEL = "No model: the search needs a model bundle (choose one in File › Settings)."
START = ("Press <b>Search</b> to rank the papers of your library by how much their {facet} is like the "
         "open paper's.")
SEARCHING = "Searching your library…"
CHARS = 220  # an evidence sentence longer than this is cut (the tooltip has it all)


def library_folder() -> Path:
    """The user's library folder (``core.paths.library_dir``, read at each call)."""
    from core.paths import library_dir

    return library_dir()


class EmptyLibrary(RhetoricaError):
    """The library has no papers (or does not exist yet)."""


@dataclass(frozen=True)
class SearchOutcome:
    """What a search job returns: the query it used, the ranking and, per result, the PDF it came from
    when that file still exists ("" otherwise)."""

    query: QueryPaper
    result: SearchResult
    pdfs: dict[str, str] = field(default_factory=dict)


# -- the background job (a worker thread: no Qt here) ----------------------------------------------
def _has_papers(folder: Path) -> bool:
    from core.library.library import Library
    from core.library.store import DATABASE_NAME

    if not (folder / DATABASE_NAME).is_file():
        return False
    with Library(folder) as library:
        return bool(library.store.connection.execute("SELECT 1 FROM papers LIMIT 1").fetchone())


def search_job(ctx: JobContext, folder: Path, paper: Paper, model: RoleModel, facet: str, k: int,
               query: QueryPaper | None = None, analysis: PaperAnalysis | None = None) -> SearchOutcome:
    """Rank the library in ``folder`` against ``paper`` on ``facet``; ``query``: the paper already
    made a query by an earlier search; ``analysis``: the paper's embedded analysis (the session's),
    else the paper is analysed here. The library is opened and closed here."""
    from core.analysis import analyze_paper
    from core.library.library import Library
    from core.search import query_from_analysis, search_like

    ctx.progress(0, 1, "opening the library")
    if not _has_papers(folder):
        raise EmptyLibrary(f"the library {folder} is empty")
    with Library(folder) as library:  # the open paper is in the library: its id, so it is never listed
        paper_id = paper.sha256 if paper.sha256 and library.store.has_sha256(paper.sha256) else ""
    if query is None:
        if analysis is None or analysis.embeddings is None:
            ctx.progress(0, 1, "analysing the open paper")
            analysis = analyze_paper(paper, model, ctx, with_embeddings=True)
        ctx.check()
        query = query_from_analysis(paper, analysis, paper_id=paper_id)
    elif query.paper_id != (paper_id or paper.source_path):
        # kept from an earlier search, and the paper was added to (or removed from) the library since
        query = dataclasses.replace(query, paper_id=paper_id or paper.source_path)
    # a paper with no sentence of the facet's roles is searched with all its sentences (core says so)
    ctx.check()
    ctx.progress(0, 1, "ranking the library's papers")
    with Library(folder) as library:
        result = search_like(library, query, facet, k=k)
        pdfs: dict[str, str] = {}
        for hit in result.results:
            record = library.store.paper(hit.paper_id)
            source = record.source if record is not None and record.kind == "pdf" else ""
            pdfs[hit.paper_id] = source if source and Path(source).is_file() else ""
    ctx.progress(1, 1, f"{len(result.results)} papers")
    return SearchOutcome(query, result, pdfs)


# -- text ------------------------------------------------------------------------------------------
def _clip(text: str, limit: int = CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _one_line(text: str, limit: int = 200) -> str:
    return _clip(str(text), limit)


def facet_name(facet: str) -> str:
    return next((name for name, value in FACET_CHOICES if value == facet), facet)


def result_html(rank: int, hit: SearchHit, openable: bool) -> str:
    """A result card: rank, score and title; under it the best evidence pair."""
    title = html.escape(hit.title or "(untitled)")
    pdf = (f" <span style='color:{ACCENT}; font-size:8pt'>PDF</span>" if openable else "")
    lines = [f"<span style='color:{MUTED}'>{rank}.</span>&nbsp; <b>{title}</b>{pdf}"
             f"&nbsp;&nbsp;<span style='color:{MUTED}'>score {hit.score:.3f}</span>"]
    if hit.evidence:
        best = hit.evidence[0]
        mine = html.escape(_clip(best.query_sentence))
        lines.append(f"<span style='color:{MUTED}'>this paper:</span> {mine}"
                     f"<br><span style='color:{MUTED}'>→ {best.similarity:.2f}:</span> "
                     f"<i>{html.escape(_clip(best.matched_sentence))}</i>")
    return "<br>".join(lines)


def result_tooltip(hit: SearchHit, pdf: str) -> str:
    pairs = "\n\n".join(f"{e.similarity:.2f}  {_clip(e.query_sentence, 300)}\n"
                        f"   → {_clip(e.matched_sentence, 300)}" for e in hit.evidence)
    where = (f"Double-click to open {Path(pdf).name}" if pdf
             else "No PDF to open (imported, or its file moved)")
    return f"{hit.title}\n{hit.paper_id}\n\n{pairs}\n\n{where}".strip()


class _Results(QListWidget):
    """Result cards (rich text, wrapped to the list's width)."""

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_rows()

    def fit_rows(self) -> None:
        width = max(160, self.viewport().width() - 4)
        for row in range(self.count()):
            item = self.item(row)
            card = self.itemWidget(item)
            if card is not None:
                item.setSizeHint(QSize(width, card.heightForWidth(width) + 2))


class SearchPanel(QWidget):
    resultsShown = Signal(object)  # the SearchResult now listed
    openRequested = Signal(str)  # a library paper's PDF to open (the window opens it)
    statusMessage = Signal(str)  # shown in the window's status bar

    def __init__(self, session: Session, folder: Callable[[], Path] | None = None) -> None:
        super().__init__()
        self.session = session
        self._folder = folder or library_folder
        self.outcome: SearchOutcome | None = None
        self._worker: Worker | None = None
        self._generation = 0
        self._waiting = False  # a search waiting for the model
        self._pending = False  # a search to start when the cancelled one has stopped
        self._dirty = False  # search again when next shown (the library changed while hidden)
        self._query: tuple[Paper, str, QueryPaper] | None = None  # the open paper analysed, kept
        self._started = 0.0

        self.search_button = _button("Search", "Rank the papers of your library against the open paper")
        self.search_button.clicked.connect(lambda: self.search())
        self.cancel_button = _button("Cancel", "Stop the search")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.hide()
        self.facet = QComboBox()
        self.facet.setToolTip("What to compare: the background (and aims), the method, the results (and "
                              "conclusions), or the whole paper")
        for name, value in FACET_CHOICES:
            self.facet.addItem(name, value)
        self.facet.currentIndexChanged.connect(lambda _i: self._on_facet_changed())
        self.k = QSpinBox()
        self.k.setRange(1, 500)
        self.k.setValue(DEFAULT_K)
        self.k.setToolTip("How many papers to list")
        self.export_button = _button("Export JSON…", "Save the results as JSON")
        self.export_button.clicked.connect(lambda: self.export())
        self.export_button.setEnabled(False)
        top = QHBoxLayout()
        top.setContentsMargins(6, 4, 6, 0)
        top.setSpacing(4)
        top.addWidget(QLabel("Like this paper, for its"))
        top.addWidget(self.facet)
        top.addSpacing(6)
        top.addWidget(QLabel("top"))
        top.addWidget(self.k)
        top.addWidget(self.search_button)
        top.addWidget(self.cancel_button)
        top.addStretch(1)
        top.addWidget(self.export_button)

        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.RichText)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setStyleSheet(f"color: {MUTED}; padding: 12px 16px;")
        self.list = _Results()
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setStyleSheet("QListWidget::item { border-bottom: 1px solid #e4e4e4; }"
                                "QListWidget::item:selected { background: #cfe0f7; }")
        self.list.itemActivated.connect(self._on_activated)  # a double-click, or Enter
        self.stack = QStackedWidget()
        self.stack.addWidget(self.message)
        self.stack.addWidget(self.list)
        self.heading = QLabel("")
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.heading.setStyleSheet("padding: 2px 6px;")
        self.heading.hide()
        self.status = status_label()
        panel_layout(self, top, self.heading, (self.stack, 1), self.status)

        session.documentOpened.connect(lambda _d: self.clear())
        session.documentClosed.connect(self.clear)
        session.paperReady.connect(lambda _p: self._show_start())
        session.models.ready.connect(self._on_model_ready)
        session.models.failed.connect(self._on_model_failed)
        self._analysis = AnalysisWait(session, self.search, self._on_analysis_failed)
        self._show_start()

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
        return self._worker is not None or self._waiting or self._analysis.waiting

    def set_facet(self, facet: str) -> None:
        """Choose the facet ("background", "method", "result" or "all"); a shown result is searched again."""
        self.facet.setCurrentIndex(max(0, self.facet.findData(facet)))

    # -- searching ------------------------------------------------------------------------
    def search(self) -> bool:
        """Rank the library against the open paper on the chosen facet (in the background)."""
        paper = self.session.paper
        self._drop_result()
        if paper is None or not paper.sentences:
            self._show_message(NO_PAPER)
            return False
        if self._worker is not None:  # the running search is stale: start when it has stopped
            self._worker.cancel()
            self._pending = True
            self._show_busy("Searching…")
            return True
        model = self.session.models.request()
        if model is None:
            if self.session.models.state == "failed":
                self._no_model(self.session.models.error)
                return False
            self._waiting = True
            self._show_busy("Loading the model…")
            return True
        self._waiting = False
        analysis = self._analysis.request()
        if analysis is None:  # search() again when the session's embedded analysis arrives
            self._show_busy(WAITING)
            return True
        facet, k, folder = self.facet_value, self.k.value(), self.folder
        kept = self._query
        query = kept[2] if kept is not None and kept[0] is paper and kept[1] == model.model_id else None
        generation = self._generation
        worker = Worker(search_job, folder, paper, model, facet, k, query, analysis, name="search")
        worker.progress.connect(lambda d, t, m, g=generation: self._on_progress(g, d, t, m))
        worker.result.connect(lambda r, g=generation, p=paper, m=model.model_id: self._on_result(g, r, p, m))
        worker.error.connect(lambda e, g=generation: self._on_error(g, e))
        worker.cancelled.connect(lambda g=generation: self._on_cancelled(g))
        worker.finished.connect(lambda w=worker: self._on_finished(w))
        self._worker = worker
        self._started = time.monotonic()
        self._show_busy("Searching…")
        self.session.tracker.start(worker, "Finding papers like this one")
        return True

    def cancel(self) -> None:
        """Stop a running search (its result, if any, is dropped)."""
        self._pending = False
        if self._waiting or self._analysis.waiting:
            self._waiting = False
            self._analysis.cancel()
            self.cancel_button.hide()
            self.status.setText("Cancelled.")
        if self._worker is not None:
            self._worker.cancel()

    def library_changed(self) -> None:
        """Papers were added to or removed from the library: a listed ranking is stale; search again
        (now when shown, else when the panel is next shown)."""
        had = self.outcome is not None or self._worker is not None
        self._drop_result()
        if not had:
            return
        if self.isVisible():
            self.search()
        else:
            self._dirty = True
            self._show_start()

    def clear(self) -> None:
        """Forget the results and the analysed query (the open paper changed or closed)."""
        self.cancel()
        self._query = None
        self._dirty = False
        self._drop_result()
        self.status.setText("")
        self._show_start()

    def _drop_result(self) -> None:
        self._generation += 1
        self.outcome = None
        self.list.clear()
        self.heading.hide()
        self.export_button.setEnabled(False)

    def _on_facet_changed(self) -> None:
        if self.outcome is not None or self.busy:
            self.search()
        else:
            self._drop_result()
            self._show_start()

    # -- worker callbacks -----------------------------------------------------------------
    def _on_progress(self, generation: int, done: int, total: int, message: str) -> None:
        if generation == self._generation and message:
            share = f" {100 * done // total}%" if total > 1 else ""
            self.status.setText(f"{message[:1].upper()}{message[1:]}{share}…")

    def _on_result(self, generation: int, outcome: SearchOutcome, paper: Paper, model_id: str) -> None:
        if paper is self.session.paper:
            self._query = (paper, model_id, outcome.query)  # the analysis stays good for this paper
        if generation != self._generation or outcome.result.query.facet != self.facet_value:
            return  # stale: another facet, paper or library was asked for since
        self.show_outcome(outcome)
        self.status.setText(f"{len(outcome.result.results)} of {outcome.result.candidates} papers · "
                            f"{time.monotonic() - self._started:.1f} s")

    def _on_error(self, generation: int, error: Exception) -> None:
        if generation != self._generation:
            return
        if isinstance(error, EmptyLibrary):
            self._show_message(EMPTY_LIBRARY)
        else:
            self._show_message(html.escape(_one_line(f"Search failed: {error}")))
        self.status.setText("")

    def _on_cancelled(self, generation: int) -> None:
        if generation == self._generation and not self._pending:
            self.status.setText("Cancelled.")
            self._show_start()

    def _on_finished(self, worker: Worker) -> None:
        if worker is self._worker:
            self._worker = None
            self.cancel_button.hide()
        if self._pending and self._worker is None:
            self._pending = False
            self.search()
        elif self._worker is None and self.outcome is None and self.message.text() == SEARCHING:
            self._show_start()  # cancelled, or a stale search ended: say what to do

    def _on_model_ready(self, _model: RoleModel) -> None:
        if self._waiting:
            self._waiting = False
            self.search()

    def _on_model_failed(self, error: Exception) -> None:
        if self._waiting:
            self._waiting = False
            self.cancel_button.hide()
            self._no_model(error)

    def _on_analysis_failed(self, message: str) -> None:
        self.cancel_button.hide()
        self._show_message(html.escape(_one_line(message)))

    def _no_model(self, error: object) -> None:
        self._show_message(NO_MODEL)
        self.status.setText(_one_line(f"No model: {error}"))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._dirty:
            self._dirty = False
            self.search()

    # -- display --------------------------------------------------------------------------
    def _show_message(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)
        self.cancel_button.setVisible(self._worker is not None or self._waiting)

    def _show_start(self) -> None:
        if self.busy:
            return
        if self.session.paper is None:
            self._show_message(NO_PAPER)
        elif self.outcome is None:
            self._show_message(START.format(facet=html.escape(facet_name(self.facet_value).lower())))

    def _show_busy(self, text: str) -> None:
        self.status.setText(text)
        self.cancel_button.show()
        self._show_message(SEARCHING)

    def show_outcome(self, outcome: SearchOutcome) -> None:
        """List a search's results (best first) under a heading naming the query."""
        self.outcome = outcome
        result = outcome.result
        query = result.query
        facet = html.escape(facet_name(query.facet).lower())
        title = html.escape(query.title)
        self.heading.setText(f"<span style='color:{MUTED}'>Papers like</span> <b>{title}</b> "
                             f"<span style='color:{MUTED}'>for its {facet}"
                             f" ({len(query.facet_sentences)} sentences)</span>"
                             + (f"<br><span style='color:{MUTED}'>It has no {facet} sentences: all its "
                                "sentences were used.</span>" if query.fallback else ""))
        self.heading.show()
        self.list.clear()
        for rank, hit in enumerate(result.results, 1):
            pdf = outcome.pdfs.get(hit.paper_id, "")
            item = QListWidgetItem()
            item.setData(Qt.ItemDataRole.UserRole, hit.paper_id)
            item.setToolTip(result_tooltip(hit, pdf))
            card = QLabel(result_html(rank, hit, bool(pdf)))
            card.setTextFormat(Qt.TextFormat.RichText)
            card.setWordWrap(True)
            card.setStyleSheet("padding: 4px 6px; background: transparent;")
            card.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
            self.list.addItem(item)
            self.list.setItemWidget(item, card)
        self.export_button.setEnabled(True)
        if result.results:
            self.stack.setCurrentWidget(self.list)
            self.list.fit_rows()
            self.list.scrollToTop()
        else:
            self._show_message("No other paper in your library.")
        self.resultsShown.emit(result)

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
        from PySide6.QtWidgets import QFileDialog

        from core.fileio import atomic_write_text

        if self.outcome is None:
            return ""
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export the search results as JSON",
                                                  f"papers-like-{self.outcome.result.query.facet}.json",
                                                  "JSON (*.json)")
            if not path:
                return ""
        text = json.dumps(self.outcome.result.to_dict(), ensure_ascii=False, indent=2) + "\n"
        try:
            atomic_write_text(path, text)
        except OSError as error:
            self.status.setText(_one_line(f"Cannot write {path}: {error}"))
            return ""
        self.status.setText(f"Saved {Path(path).name}.")
        self.statusMessage.emit(f"Search results saved as {path}")
        return str(path)

    def to_dict(self) -> dict[str, Any] | None:
        return None if self.outcome is None else self.outcome.result.to_dict()


def _button(text: str, tip: str) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    return button


SPEC = register_panel(PanelSpec(
    id="search", title="Search", factory=SearchPanel, area=Qt.DockWidgetArea.BottomDockWidgetArea,
    order=65, shortcut="Ctrl+Shift+K", description="Papers like this one: the library ranked against the "
    "open paper by background, method or result", tab_with="draft", visible=False, remember_visible=True,
    height=320))
