"""Alignment panel: the open paper (A) lined up sentence by sentence with a second paper or the draft
(B) by what each sentence does (issue 13, ``core.align``).

"Compare with PDF…" asks for a second PDF; "Compare with draft" takes the draft pane's text (the
window hands the panel a way to read it, :meth:`AlignmentPanel.set_draft_provider`; no panel names
another). The work runs in one background :class:`~app.gui.workers.Worker` started through the
session's job tracker (progress and Cancel in the status bar, and a Cancel button here): the open paper's
side comes from the session's embedded analysis (``Session.embedded``: the model does not run on it
again; a comparison asked for before it is ready waits for it), the second PDF is read from the analysis
cache or parsed in a child process (``parse_cached``: pymupdf never runs in a thread of this process) and
given its own embedded analysis (cached too, ``core.embedded_analysis``), and the two sides are aligned
(``core.align.align``, which also attaches the gap report).

The panel shows a summary line, the gap list (clicking a gap jumps to the first sentence of the open
paper it concerns) and the aligned pairs (A sentence | score | B sentence, tinted by the pair's role),
with filters by role and function. Selecting a pair selects its A sentence on the page; selecting a
sentence on the page selects its pair. JSON, Markdown and HTML exports use ``core.align_export``.

"Side by side" (Ctrl+Shift+B) opens :class:`~app.gui.align_pages.AlignedPagesWindow`, a non-modal window
with both texts next to each other, scrolling in step, links drawn between aligned sentences: a side
with a PDF shows its pages (the open paper's document, or the second PDF opened here for rendering only;
the job keeps the parsed second paper and its analysis for the overlays), the draft shows as a list.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.gui.analysis_wait import WAITING, AnalysisWait
from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.session import Session
from app.gui.widgets import MUTED, panel_layout, status_label
from app.gui.workers import Worker
from core.document import Paper
from core.errors import RhetoricaError
from core.functions import default_taxonomy
from core.jobs import JobContext
from core.labels import NO_FUNCTION, ROLES
from core.model_api import RoleModel

if TYPE_CHECKING:  # pragma: no cover
    from core.align import AlignedPair, Alignment, AlignSide
    from core.align_gaps import GapItem
    from core.analysis import PaperAnalysis
    from core.cache import AnalysisCache

NO_PAPER = "Open a paper first: the Alignment view lines it up with a second paper or with your draft."
NO_MODEL = "No model: the alignment needs a model bundle (choose one in File › Settings)."
NO_DRAFT = "The draft is empty: write a few sentences in the Draft pane (Ctrl+D), then compare again."
START = ("Compare the open paper with a second PDF or with your draft: sentences that do the same job are "
         "lined up, and the gap list says what one does that the other does not.")
EXPORTS = {"json": ("JSON", "JSON (*.json)"), "md": ("Markdown", "Markdown (*.md)"),
           "html": ("HTML", "HTML page (*.html)")}
CELL_CHARS = 260  # longer sentences are cut in the table (the tooltip has all of it)


SIDE_BY_SIDE_SHORTCUT = "Ctrl+Shift+B"


def _side(ctx: JobContext, paper: Paper, model: RoleModel, kind: str) -> Any:
    """A side analysed here (the draft; the open paper when no embedded analysis is handed in)."""
    from core.align import side_from_paper
    from core.analysis import analyze_paper

    analysis = analyze_paper(paper, model, ctx, with_embeddings=True, with_function_vectors=True)
    return side_from_paper(paper, analysis, kind=kind)


def _pdf_side(ctx: JobContext, path: str, model: RoleModel, cache: AnalysisCache | None,
              keep: dict[str, Any]) -> Any:
    """The side of a second PDF: its paper and embedded analysis from the cache, or made (and cached)."""
    from app.gui.pdf_jobs import parse_cached
    from core.align import side_from_paper
    from core.embedded_analysis import embedded_analysis

    ctx.progress(0, 1, f"reading {Path(path).name}")
    second, sha, _cached = parse_cached(ctx, path, cache)
    if not second.sentences:
        raise RhetoricaError(f"{Path(path).name}: no text found in the PDF (a scanned paper?)")
    second.source_path = path
    ctx.progress(0, 1, "analysing the second text")
    analysis = embedded_analysis(second, model, cache=cache, sha256=sha, ctx=ctx).analysis
    keep.update(paper=second, analysis=analysis)
    return side_from_paper(second, analysis, kind="pdf")


def align_job(ctx: JobContext, paper: Paper, other: tuple[str, str], model: RoleModel,
              function_weight: float = 0.7, side_a: AlignSide | None = None,
              side_b: AlignSide | None = None, keep: dict[str, Any] | None = None,
              analysis_a: PaperAnalysis | None = None, cache: AnalysisCache | None = None) -> Alignment:
    """The worker's job: both sides (``other`` is ("pdf", path) or ("draft", text)) and their alignment;
    ``side_a``/``side_b``: sides from an earlier comparison (not read or analysed again); ``analysis_a``:
    the open paper's embedded analysis (else it is analysed here); ``cache``: where the second PDF's
    paper and analysis are looked up and kept. ``keep``, when given, receives the second PDF's parsed
    paper ("paper") and its analysis ("analysis") for display."""
    from core.align import align, paper_from_text, side_from_paper

    kind, value = other
    if side_a is None and analysis_a is not None and analysis_a.embedded:
        side_a = side_from_paper(paper, analysis_a, kind="pdf")
    elif side_a is None:
        ctx.progress(0, 1, "analysing the open paper")
        side_a = _side(ctx, paper, model, "pdf")
    a = side_a
    ctx.check()
    if side_b is None and kind == "pdf":
        kept: dict[str, Any] = {}
        side_b = _pdf_side(ctx, value, model, cache, kept)
        if keep is not None:
            keep.update(kept)
    elif side_b is None:
        second = paper_from_text(value, title="Draft", source="draft")
        if not second.sentences:
            raise RhetoricaError("the draft has no sentences")
        ctx.progress(0, 1, "analysing the second text")
        side_b = _side(ctx, second, model, kind)
    b = side_b
    assert b is not None  # given, or made from the second text just above
    ctx.check()
    if a.function.shape[1] != b.function.shape[1] or a.content.shape[1] != b.content.shape[1]:
        raise RhetoricaError("the two texts were embedded differently: analyse them with the same model")
    ctx.progress(0, 1, "aligning")
    alignment = align(a, b, function_weight=function_weight)
    ctx.progress(1, 1, f"{len(alignment.pairs)} aligned pairs")
    return alignment


def gaps_basis(alignment: Alignment) -> str:
    """Rich text after the gaps' title: " · judged on 31 confident sentences of 40 (A), 52 of 70 (B)"
    (uncertain labels are left out of the gap report; "" for a report that does not say)."""
    judged = alignment.gaps.judged
    if not all(side in judged for side in ("a", "b")):
        return ""
    from core.labels import judged_on

    a, b = judged["a"], judged["b"]
    return (f" <span style='color:{MUTED}'>· {html.escape(judged_on(a['functions'], a['sentences']))} (A), "
            f"{b['functions']} of {b['sentences']} (B)</span>")


def summary_line(alignment: Alignment) -> str:
    """"12 aligned pairs · A 40% / B 75% aligned · 3 gaps" (plain text)."""
    cover_a, cover_b = alignment.coverage
    gaps = len(alignment.gaps.items)
    return (f"{len(alignment.pairs)} aligned pair{'s' if len(alignment.pairs) != 1 else ''} · "
            f"A {100 * cover_a:.0f}% / B {100 * cover_b:.0f}% of sentences aligned · "
            f"{gaps} gap{'s' if gaps != 1 else ''}")


def gap_target(alignment: Alignment, item: GapItem) -> int:
    """The first sentence of A a gap concerns: for a gap of B, A's first sentence with that function
    (in that section kind); for a gap of A, A's first sentence of that section kind (where it lacks the
    function). -1 when there is none."""
    sentences = alignment.a.sentences
    kind = item.section_kind
    in_kind = [i for i, s in enumerate(sentences) if not kind or s.section_kind == kind]
    if item.present_in == "a" and item.function:
        doing = [i for i in in_kind if sentences[i].function == item.function]
        return doing[0] if doing else -1
    return in_kind[0] if in_kind else -1


def _clip(text: str) -> str:
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


class AlignmentPanel(QWidget):
    alignmentShown = Signal(object)  # the Alignment now listed
    statusMessage = Signal(str)  # shown in the window's status bar

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.alignment: Alignment | None = None
        self.function_weight = 0.7
        self._draft_provider: Callable[[], str] | None = None
        self._worker: Worker | None = None
        self._generation = 0
        self._waiting: tuple[str, str] | None = None  # a comparison waiting for the model
        self._started = 0.0
        self._syncing = False
        self._side_a: tuple[Paper, str, AlignSide] | None = None  # the open paper's side, kept for reuse
        self._side_b: tuple[tuple[str, str], str, AlignSide] | None = None  # the last second text's side
        self._last: tuple[str, str] | None = None  # the last comparison asked for
        self._paper_b: dict[str, Any] = {}  # the second PDF's parsed paper and analysis (for the pages)
        self.pages_window: Any = None  # the side-by-side window (app.gui.align_pages), when open

        self.compare_pdf = _button("Compare with PDF…", "Align the open paper with a second PDF")
        self.compare_pdf.clicked.connect(lambda: self.compare_with_pdf())
        self.compare_draft = _button("Compare with draft", "Align the open paper with the Draft pane's text")
        self.compare_draft.clicked.connect(lambda: self.compare_with_draft())
        self.compare_draft.setEnabled(False)
        self.cancel_button = _button("Cancel", "Stop the alignment")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.hide()
        self.side_by_side = _button("Side by side", "Show both texts next to each other, scrolling in step, "
                                    f"with links between aligned sentences ({SIDE_BY_SIDE_SHORTCUT})")
        self.side_by_side.clicked.connect(lambda: self.open_side_by_side())
        self.side_by_side.setEnabled(False)
        self.side_by_side_shortcut = QShortcut(QKeySequence(SIDE_BY_SIDE_SHORTCUT), self)
        self.side_by_side_shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        self.side_by_side_shortcut.activated.connect(lambda: self.open_side_by_side())
        self.weight = QDoubleSpinBox()
        self.weight.setRange(0.0, 1.0)
        self.weight.setSingleStep(0.1)
        self.weight.setDecimals(2)
        self.weight.setValue(self.function_weight)
        self.weight.setToolTip("Weight of what sentences do (function view) against what they are about "
                               "(content view); changing it aligns the same two texts again")
        self.weight.valueChanged.connect(self.set_function_weight)
        self.export_buttons: dict[str, QToolButton] = {}
        top = QHBoxLayout()
        top.setContentsMargins(6, 4, 6, 0)
        top.setSpacing(4)
        top.addWidget(self.compare_pdf)
        top.addWidget(self.compare_draft)
        top.addWidget(self.cancel_button)
        top.addWidget(self.side_by_side)
        top.addStretch(1)
        top.addWidget(QLabel("Function weight"))
        top.addWidget(self.weight)
        top.addSpacing(8)
        top.addWidget(QLabel("Export"))
        for fmt, (name, _filter) in EXPORTS.items():
            button = _button(name, f"Save the alignment as {name}")
            button.clicked.connect(lambda _c=False, f=fmt: self.export(f))
            button.setEnabled(False)
            self.export_buttons[fmt] = button
            top.addWidget(button)

        self.summary = QLabel(START)
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setStyleSheet("padding: 2px 6px;")

        self.gap_list = QListWidget()
        self.gap_list.setWordWrap(True)
        self.gap_list.setToolTip("What one text does that the other does not; click to go to the open paper")
        self.gap_list.itemClicked.connect(self._on_gap_clicked)
        self.gap_list.itemActivated.connect(self._on_gap_clicked)
        gaps_box = QWidget()
        gaps_layout = QVBoxLayout(gaps_box)
        gaps_layout.setContentsMargins(0, 0, 0, 0)
        gaps_layout.setSpacing(1)
        self.gaps_title = QLabel("<b>Gaps</b>")
        self.gaps_title.setStyleSheet("padding: 0 6px;")
        gaps_layout.addWidget(self.gaps_title)
        gaps_layout.addWidget(self.gap_list)

        self.role = QComboBox()
        self.role.setToolTip("Only pairs with this shared role")
        self.role.addItem("All roles", None)
        for role in ROLES:
            self.role.addItem(role, role)
        self.function = QComboBox()
        self.function.setToolTip("Only pairs with this shared function")
        self.function.addItem("All functions", None)
        self.role.currentIndexChanged.connect(lambda _i: self.apply_filters())
        self.function.currentIndexChanged.connect(lambda _i: self.apply_filters())
        filters = QHBoxLayout()
        filters.setContentsMargins(6, 0, 6, 0)
        filters.addWidget(QLabel("<b>Aligned pairs</b>"))
        filters.addStretch(1)
        filters.addWidget(QLabel("Role"))
        filters.addWidget(self.role, 1)
        filters.addWidget(QLabel("Function"))
        filters.addWidget(self.function, 2)

        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["A: this paper", "similarity", "B"])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(True)
        self.table.verticalHeader().hide()
        self.table.setStyleSheet("QTableWidget::item:selected { background: #cfe0f7; color: black; }")
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.itemSelectionChanged.connect(self._on_row_selected)
        pairs_box = QWidget()
        pairs_layout = QVBoxLayout(pairs_box)
        pairs_layout.setContentsMargins(0, 0, 0, 0)
        pairs_layout.setSpacing(1)
        pairs_layout.addLayout(filters)
        pairs_layout.addWidget(self.table)

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(gaps_box)
        self.splitter.addWidget(pairs_box)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 3)
        self.status = status_label()
        panel_layout(self, top, self.summary, (self.splitter, 1), self.status)
        self._show_results(False)

        session.documentClosed.connect(self.clear)
        session.documentOpened.connect(lambda _d: self.clear())
        session.sentenceSelected.connect(self._on_sentence_selected)
        session.models.ready.connect(self._on_model_ready)
        session.models.failed.connect(self._on_model_failed)
        self._analysis = AnalysisWait(session, self._on_analysis_ready, self._on_analysis_failed)
        self._after_analysis: tuple[str, str] | None = None  # a comparison waiting for the paper's analysis

    # -- inputs ---------------------------------------------------------------------------
    def set_draft_provider(self, provider: Callable[[], str]) -> None:
        """How to read the draft's text (the window passes the draft pane's ``text``)."""
        self._draft_provider = provider
        self.compare_draft.setEnabled(True)

    def compare_with_pdf(self, path: str | None = None) -> bool:
        """Align the open paper with the PDF at ``path`` (None: ask with a file dialog)."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Compare with a PDF", "", "PDF files (*.pdf)")
            if not path:
                return False
        return self.compare(("pdf", str(path)))

    def compare_with_draft(self, text: str | None = None) -> bool:
        """Align the open paper with ``text`` (None: the draft pane's text)."""
        if text is None:
            text = self._draft_provider() if self._draft_provider is not None else ""
        if not text.strip():
            self._message(NO_DRAFT)
            return False
        return self.compare(("draft", text))

    def compare(self, other: tuple[str, str]) -> bool:
        """Start aligning the open paper with ``other`` (("pdf", path) or ("draft", text))."""
        paper = self.session.paper
        if paper is None or not paper.sentences:
            self._message(NO_PAPER)
            return False
        self.cancel()
        self._generation += 1
        model = self.session.models.request()
        if model is None:
            if self.session.models.state == "failed":
                self._no_model(self.session.models.error)
                return False
            self._waiting = other
            self.status.setText("Loading the model…")
            self.cancel_button.show()
            return True
        self._waiting = None
        kept, kept_b = self._side_a, self._side_b
        side_a = kept[2] if kept is not None and kept[0] is paper and kept[1] == model.model_id else None
        analysis_a = self._analysis.request() if side_a is None else None
        if side_a is None and analysis_a is None:  # compare() again when the session's analysis arrives
            self._after_analysis = other
            self.status.setText(WAITING)
            self.cancel_button.show()
            return True
        self._last = other
        generation = self._generation
        side_b = kept_b[2] if kept_b is not None and kept_b[:2] == (other, model.model_id) else None
        keep: dict[str, Any] = {}
        worker = Worker(align_job, paper, other, model, self.function_weight, side_a, side_b, keep,
                        analysis_a, self.session.cache, name="align")
        worker.progress.connect(self._on_progress)
        worker.result.connect(lambda r, g=generation, p=paper, o=other, m=model.model_id, k=keep:
                              self._on_result(g, r, p, o, m, k))
        worker.error.connect(lambda e, g=generation: self._on_error(g, e))
        worker.cancelled.connect(lambda g=generation: self._on_cancelled(g))
        worker.finished.connect(lambda w=worker: self._on_finished(w))
        self._worker = worker
        self._started = time.monotonic()
        what = Path(other[1]).name if other[0] == "pdf" else "the draft"
        self.status.setText(f"Aligning with {what}…")
        self.cancel_button.show()
        self.session.tracker.start(worker, "Aligning two papers")
        return True

    def set_function_weight(self, weight: float) -> None:
        """Weigh the function view by ``weight`` (0..1); the shown alignment is made again with it (both
        sides are kept, so only the alignment itself runs)."""
        self.function_weight = min(1.0, max(0.0, float(weight)))
        if self.weight.value() != self.function_weight:
            self.weight.setValue(self.function_weight)  # emits again; the next call does the work
            return
        if self.alignment is not None and self._last is not None and self.session.paper is not None:
            self.compare(self._last)

    def cancel(self) -> None:
        """Stop a running alignment (its result, if any, is dropped)."""
        if self._waiting is not None or self._after_analysis is not None:
            self._waiting = self._after_analysis = None
            self._analysis.cancel()
            self.cancel_button.hide()
            self.status.setText("Cancelled.")
        if self._worker is not None:
            self._worker.cancel()

    @property
    def busy(self) -> bool:
        """An alignment runs or waits for the model or the paper's analysis."""
        return self._worker is not None or self._waiting is not None or self._after_analysis is not None

    # -- worker callbacks -----------------------------------------------------------------
    def _on_progress(self, done: int, total: int, message: str) -> None:
        if self._worker is not None and not self._worker.is_cancelled:
            share = f" {100 * done // total}%" if total > 1 else ""
            self.status.setText(f"{message[:1].upper()}{message[1:]}{share}…" if message else "Aligning…")

    def _on_finished(self, worker: Worker) -> None:
        if worker is self._worker:
            self._worker = None
            self.cancel_button.hide()

    def _on_result(self, generation: int, alignment: Alignment, paper: Paper, other: tuple[str, str],
                   model_id: str, keep: dict[str, Any] | None = None) -> None:
        if generation != self._generation:
            return
        if keep:  # a second PDF parsed just now (else the side was reused, and so is its paper)
            self._paper_b = dict(keep)
        elif other[0] != "pdf":
            self._paper_b = {}
        self._side_a = (paper, model_id, alignment.a)
        self._side_b = (other, model_id, alignment.b)
        self.show_alignment(alignment)
        self.status.setText(f"Aligned in {time.monotonic() - self._started:.1f} s.")

    def _on_error(self, generation: int, error: Exception) -> None:
        if generation == self._generation:
            self.status.setText(_one_line(f"Alignment failed: {error}"))

    def _on_cancelled(self, generation: int) -> None:
        if generation == self._generation:
            self.status.setText("Cancelled.")

    def _on_model_ready(self, _model: RoleModel) -> None:
        if self._waiting is not None:
            other, self._waiting = self._waiting, None
            self.compare(other)

    def _on_model_failed(self, error: Exception) -> None:
        if self._waiting is not None:
            self._waiting = None
            self.cancel_button.hide()
            self._no_model(error)

    def _on_analysis_ready(self) -> None:
        if self._after_analysis is not None:
            other, self._after_analysis = self._after_analysis, None
            self.compare(other)

    def _on_analysis_failed(self, message: str) -> None:
        if self._after_analysis is not None:
            self._after_analysis = None
            self.cancel_button.hide()
            self.status.setText(_one_line(message))

    def _no_model(self, error: object) -> None:
        self._message(NO_MODEL)
        self.status.setText(_one_line(f"No model: {error}"))

    # -- display --------------------------------------------------------------------------
    def clear(self) -> None:
        """Forget the alignment (the open paper changed or closed); a running one is stopped."""
        self.cancel()
        self._generation += 1
        self.alignment = None
        self._side_a = None
        self._side_b = None
        self._last = None
        self._paper_b = {}
        self.close_side_by_side()
        self.table.setRowCount(0)
        self.gap_list.clear()
        self.summary.setText(START)
        self.status.setText("")
        self._show_results(False)

    def _message(self, text: str) -> None:
        self.summary.setText(html.escape(text))
        self.status.setText("")

    def _show_results(self, shown: bool) -> None:
        self.splitter.setVisible(shown)
        for button in self.export_buttons.values():
            button.setEnabled(shown)
        self.side_by_side.setEnabled(shown)

    def show_alignment(self, alignment: Alignment) -> None:
        """List ``alignment``: summary, gaps and pairs (filters kept when they still apply)."""
        self.alignment = alignment
        b_title = alignment.b.title or "the second text"
        self.summary.setText(f"<span style='color:{MUTED}'>A: this paper · B: {html.escape(b_title)}</span>"
                             f"<br><b>{html.escape(summary_line(alignment))}</b>")
        self.gap_list.clear()
        self._fill_gaps(alignment)
        self._fill_functions(alignment)
        self._fill_table(alignment)
        self._show_results(True)
        self.apply_filters()
        if self.pages_window is not None:  # an open side-by-side window follows the new alignment
            self.open_side_by_side()
        self.alignmentShown.emit(alignment)

    def _fill_gaps(self, alignment: Alignment) -> None:
        """The most important gaps first (``GapReport.top``), the rest after a "more" row; what was
        not judged (a side whose headings were not recognised) in the title's tooltip."""
        report = alignment.gaps
        rest = report.more()
        for item in [*report.top(), *rest]:
            if rest and item is rest[0]:
                divider = QListWidgetItem(f"{len(rest)} more, less important:")
                divider.setFlags(Qt.ItemFlag.NoItemFlags)
                self.gap_list.addItem(divider)
            row = QListWidgetItem(item.text)
            row.setData(Qt.ItemDataRole.UserRole, item)
            target = gap_target(alignment, item)
            row.setToolTip(f"Go to sentence {target + 1} of the open paper" if target >= 0
                           else "No sentence of the open paper to go to")
            self.gap_list.addItem(row)
        if not report.items:
            self.gap_list.addItem("No gaps: both do the same things per section.")
        self.gaps_title.setText(f"<b>Gaps</b> ({len(report.items)}){gaps_basis(alignment)}")
        self.gaps_title.setToolTip("\n".join([report.note, *(f"Not judged: {c}" for c in report.caveats)]))

    def _fill_functions(self, alignment: Alignment) -> None:
        kept = self.function.currentData()
        taxonomy = default_taxonomy()
        present = sorted({p.function for p in alignment.pairs if p.function and p.function != NO_FUNCTION})
        self.function.blockSignals(True)
        self.function.clear()
        self.function.addItem("All functions", None)
        for function in present:
            try:
                name = taxonomy.name_of(function)
            except Exception:  # an id the shipped taxonomy does not know
                name = function
            self.function.addItem(name, function)
        self.function.setCurrentIndex(max(0, self.function.findData(kept)))
        self.function.blockSignals(False)

    def _fill_table(self, alignment: Alignment) -> None:
        from core.align import method_text

        palette = self.session.palette
        self.table.setRowCount(0)
        self.table.setRowCount(len(alignment.pairs))
        for row, pair in enumerate(alignment.pairs):
            a_text = " ".join(alignment.a.sentences[i].text for i in pair.a_indices)
            b_text = " ".join(alignment.b.sentences[j].text for j in pair.b_indices)
            doing = pair.function if pair.function and pair.function != NO_FUNCTION else ""
            tip = (f"{pair.role or 'mixed roles'}" + (f" · {doing}" if doing else "")
                   + f" · {method_text(pair.method, explained=True)}")
            fill = QBrush(palette.fill(pair.role, 0.28)) if pair.role else QBrush()
            for column, text in enumerate((_clip(a_text), f"{pair.shown_score:.2f}", _clip(b_text))):
                cell = QTableWidgetItem(text)
                cell.setData(Qt.ItemDataRole.UserRole, pair)
                full = a_text if column == 0 else b_text if column == 2 else ""
                cell.setToolTip(f"{tip}\n\n{full}".strip())
                if pair.role:
                    cell.setBackground(fill)
                if column == 1:
                    cell.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                    cell.setForeground(QBrush(QColor(MUTED)))
                self.table.setItem(row, column, cell)
        self.table.resizeRowsToContents()

    def apply_filters(self) -> None:
        """Hide the pairs the role and function filters leave out."""
        if self.alignment is None:
            return
        role, function = self.role.currentData(), self.function.currentData()
        for row, pair in enumerate(self.alignment.pairs):
            hidden = ((role is not None and pair.role != role)
                      or (function is not None and pair.function != function))
            self.table.setRowHidden(row, hidden)
        shown = self.visible_pairs()
        if role is not None or function is not None:
            self.status.setText(f"{len(shown)} of {len(self.alignment.pairs)} pairs shown")

    def set_role(self, role: str | None) -> None:
        self.role.setCurrentIndex(max(0, self.role.findData(role)))

    def set_function(self, function: str | None) -> None:
        self.function.setCurrentIndex(max(0, self.function.findData(function)))

    def visible_pairs(self) -> list[AlignedPair]:
        """The pairs listed and not filtered out, in order."""
        if self.alignment is None:
            return []
        return [p for row, p in enumerate(self.alignment.pairs) if not self.table.isRowHidden(row)]

    # -- navigation -----------------------------------------------------------------------
    def _a_is_open_paper(self) -> bool:
        paper = self.session.paper
        return (self.alignment is not None and paper is not None
                and len(paper.sentences) == len(self.alignment.a.sentences))

    def _on_row_selected(self) -> None:
        if self._syncing or self.alignment is None:
            return
        rows = self.table.selectionModel().selectedRows()
        if not rows or not self._a_is_open_paper():
            return
        pair = self.alignment.pairs[rows[0].row()]
        self._syncing = True
        try:
            self.session.jump_to_sentence(pair.a_indices[0])
        finally:
            self._syncing = False

    def _on_sentence_selected(self, index: int) -> None:
        """A sentence selected on the page selects its pair (when it has one and the row is shown)."""
        if self._syncing or self.alignment is None or not self._a_is_open_paper():
            return
        for row, pair in enumerate(self.alignment.pairs):
            if index in pair.a_indices and not self.table.isRowHidden(row):
                self._syncing = True
                try:
                    self.table.selectRow(row)
                    item = self.table.item(row, 0)
                    if item is not None:
                        self.table.scrollToItem(item)
                finally:
                    self._syncing = False
                return

    def _on_gap_clicked(self, row: QListWidgetItem) -> None:
        item = row.data(Qt.ItemDataRole.UserRole)
        if item is None or self.alignment is None:
            return
        target = gap_target(self.alignment, item)
        if target >= 0 and self._a_is_open_paper():
            self.session.jump_to_sentence(target)

    # -- side by side --------------------------------------------------------------------
    def open_side_by_side(self) -> Any:
        """Open (or refresh) the side-by-side window for the shown alignment; returns it (None: nothing
        aligned). The open paper shows its pages when it is the session's open document, the second PDF
        when it can be opened for rendering; otherwise (the draft) a side is a list of its sentences."""
        from app.gui.align_pages import AlignedPagesWindow, SideSource
        from app.gui.pdf_pages import open_for_view

        alignment = self.alignment
        if alignment is None:
            return None
        self.close_side_by_side()
        document, paper = self.session.document, self.session.paper
        a = SideSource()
        if document is not None and paper is not None and self._a_is_open_paper():
            analysis = self.session.analysis
            a = SideSource(paper, document.doc, analysis, None)
        b = SideSource()
        paper_b = self._paper_b.get("paper")
        if alignment.b.kind == "pdf" and paper_b is not None:
            try:
                doc = open_for_view(paper_b.source_path or alignment.b.source)
            except RhetoricaError as error:
                self.status.setText(_one_line(f"B shown as a list: {error}"))
            else:
                b = SideSource(paper_b, doc, self._paper_b.get("analysis"), None, owns_doc=True)
        window = AlignedPagesWindow(alignment, self.session.palette, a, b, self)
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        window.destroyed.connect(lambda _o=None, w=window: self._forget_window(w))
        self.pages_window = window
        window.show()
        window.raise_()
        return window

    def close_side_by_side(self) -> None:
        window, self.pages_window = self.pages_window, None
        if window is not None:
            window.close()

    def _forget_window(self, window: Any) -> None:
        if self.pages_window is window:
            self.pages_window = None

    # -- exports --------------------------------------------------------------------------
    def export(self, fmt: str, path: str | Path | None = None) -> str:
        """Save the alignment as ``fmt`` ("json", "md" or "html") at ``path`` (None: ask); returns the
        path written ("" when nothing was)."""
        from core.align_export import alignment_to_html, alignment_to_json, alignment_to_markdown
        from core.fileio import atomic_write_text

        if self.alignment is None or fmt not in EXPORTS:
            return ""
        name, file_filter = EXPORTS[fmt]
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, f"Export the alignment as {name}", f"alignment.{fmt}",
                                                  file_filter)
            if not path:
                return ""
        render = {"json": alignment_to_json, "md": alignment_to_markdown, "html": alignment_to_html}[fmt]
        text = render(self.alignment)
        try:
            atomic_write_text(path, text if text.endswith("\n") else text + "\n")
        except OSError as error:
            self.status.setText(_one_line(f"Cannot write {path}: {error}"))
            return ""
        self.status.setText(f"Saved {Path(path).name}.")
        self.statusMessage.emit(f"Alignment saved as {path}")
        return str(path)


def _button(text: str, tip: str) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    return button


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


SPEC = register_panel(PanelSpec(
    id="alignment", title="Alignment", factory=AlignmentPanel, area=Qt.DockWidgetArea.BottomDockWidgetArea,
    order=55, shortcut="Ctrl+Shift+A", description="Line the open paper up with a second paper or the draft",
    visible=False, remember_visible=True, height=300))
