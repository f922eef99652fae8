"""Alignment panel: the open paper (A) lined up sentence by sentence with a second PDF or the draft (B)
by what each sentence does (issue 13). The panel is only widgets and wiring: the job is
:func:`~app.gui.panels.alignment_job.align_job` (sides and alignment made by ``core.alignment.align_sides``,
as ``rhetorica align`` makes them; the open paper's side from the session's embedded analysis), run by a
:class:`~app.gui.operation.PanelOperation`; the words are in ``alignment_text``, the gap list and pair
table in ``alignment_view``, the top row in ``alignment_controls``, "Side by side" in ``alignment_pages``.
Selecting a pair selects its A sentence on the page and back; a gap jumps to the first sentence of A it
concerns; exports use ``core.alignment.align_export``."""

from __future__ import annotations

import html
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFileDialog, QLabel, QListWidgetItem, QWidget

from app.gui.operation import ANALYSIS, CANCELLED, MODEL, Late, ModelUnavailable, PanelOperation, Ready
from app.gui.panels.alignment_controls import SIDE_BY_SIDE_SHORTCUT, AlignmentControls
from app.gui.panels.alignment_job import AlignOutcome, align_job, cancelled_line, failure_line, refusal
from app.gui.panels.alignment_pages import SideBySide
from app.gui.panels.alignment_text import EXPORTS, gap_target, gaps_basis, summary_html, summary_line
from app.gui.panels.alignment_view import AlignmentResults
from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.save_text import save_text
from app.gui.session import Session
from app.gui.settings import COMPARE, dialog_folder, remember_dialog_folder
from app.gui.widgets import panel_layout, while_alive
from core.document import Paper

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.align_pages import AlignedPagesWindow
    from core.alignment.align import AlignedPair, Alignment, AlignSide
    from core.labelling.analysis import PaperAnalysis

__all__ = ["SIDE_BY_SIDE_SHORTCUT", "AlignmentPanel", "align_job", "gap_target", "gaps_basis", "summary_line"]

NO_PAPER = "Open a paper first: the Alignment view lines it up with a second paper or with your draft."
NO_MODEL = "No model: the alignment needs a model bundle (choose one in File › Settings)."
NO_DRAFT = "The draft is empty: write a few sentences in the Draft pane (Ctrl+D), then compare again."
START = ("Compare the open paper with a second PDF or with your draft: sentences that do the same job are "
         "lined up, and the gap list says what one does that the other does not.")


class AlignmentPanel(QWidget):
    alignmentShown = Signal(object)  # the Alignment now listed
    statusMessage = Signal(str)  # shown in the window's status bar

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.alignment: Alignment | None = None
        self.function_weight = 0.7
        self._draft_provider: Callable[[], str] | None = None
        self._side_a: tuple[Paper, str, AlignSide] | None = None  # the open paper's side, kept for reuse
        self._side_b: tuple[tuple[str, str], str, AlignSide] | None = None  # the last second text's side
        self._last: tuple[str, str] | None = None  # the last comparison asked for
        self._second: tuple[Paper, PaperAnalysis | None] | None = None  # the second PDF (for the pages)
        self.pages = SideBySide(self, session)
        self._syncing = False  # a pair selected here moves the page's selection: not back to the table
        self.op = PanelOperation(self, session, error_prefix="Alignment failed")
        self.op.line.cancel_button.setToolTip("Stop the alignment")
        self.op.cancelled.connect(lambda: self._message(cancelled_line(self._last), CANCELLED))
        self.status, self.cancel_button = self.op.line.label, self.op.line.cancel_button
        self.summary = QLabel(START)
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setStyleSheet("padding: 2px 6px;")
        self.summary.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.results = AlignmentResults()
        self.splitter = self.results
        self.table, self.gap_list = self.results.table, self.results.gap_list
        self.role, self.function = self.results.role, self.results.function
        self.results.pairSelected.connect(self._on_pair_selected)
        self.results.gapActivated.connect(self._on_gap_clicked)
        self.results.filtered.connect(lambda shown, total: self.op.set_status(f"{shown} of {total} pairs "
                                                                              "shown"))
        self.controls = AlignmentControls(self.function_weight)
        self.compare_draft, self.side_by_side = self.controls.compare_draft, self.controls.side_by_side
        self.weight = self.controls.weight
        self.export_buttons = self.controls.export_buttons
        self.controls.comparePdf.connect(lambda: self.compare_with_pdf())
        self.controls.compareDraft.connect(lambda: self.compare_with_draft())
        self.controls.sideBySide.connect(lambda: self.open_side_by_side())
        self.controls.exportAs.connect(lambda fmt: self.export(fmt))
        self.weight.valueChanged.connect(self.set_function_weight)
        # (with no results listed, the room left goes under the summary, not into the wrapped controls)
        panel_layout(self, self.controls, self.summary, (self.results, 1), self.op.line).insertStretch(3, 0)
        self._show_results(False)
        session.documentClosed.connect(self.clear)
        session.documentOpened.connect(while_alive(self, lambda _d: self.clear()))
        session.sentenceSelected.connect(self._on_sentence_selected)

    # -- inputs ---------------------------------------------------------------------------
    def set_draft_provider(self, provider: Callable[[], str]) -> None:
        """How to read the draft's text (the window passes the draft pane's ``text``)."""
        self._draft_provider = provider
        self.compare_draft.setEnabled(True)

    def compare_with_pdf(self, path: str | None = None) -> bool:
        """Align the open paper with the PDF at ``path`` (None: ask with a file dialog)."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Compare with a PDF", dialog_folder(COMPARE),
                                                  "PDF files (*.pdf)")
            if not path:
                return False
            remember_dialog_folder(COMPARE, path)
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
        problem = NO_PAPER if paper is None or not paper.sentences else refusal(other)
        if problem or paper is None:
            self.op.invalidate()
            self._message(problem)
            return False
        self._last = other
        kept_a = self._side_a is not None and self._side_a[0] is paper
        what = Path(other[1]).name if other[0] == "pdf" else "the draft"
        self.op.run(align_job, paper, other, MODEL, self.function_weight, Late(partial(self._kept_a, paper)),
                    Late(partial(self._kept_b, other)), None if kept_a else ANALYSIS, self.session.cache,
                    needs_analysis=not kept_a, label="Aligning two papers", status=f"Aligning with {what}…",
                    on_done=partial(self._on_result, paper=paper, other=other),
                    on_error=partial(self._on_error, other))
        return self.op.busy

    def _kept_a(self, paper: Paper, ready: Ready) -> AlignSide | None:
        kept = self._side_a
        model = ready.model
        return kept[2] if kept and model and kept[0] is paper and kept[1] == model.model_id else None

    def _kept_b(self, other: tuple[str, str], ready: Ready) -> AlignSide | None:
        kept = self._side_b
        model = ready.model
        return kept[2] if kept and model and kept[:2] == (other, model.model_id) else None

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
        self.op.cancel()

    @property
    def busy(self) -> bool:
        """An alignment runs or waits for the model or the paper's analysis."""
        return self.op.busy

    # -- what the job sends back ------------------------------------------------------------
    def _on_result(self, outcome: AlignOutcome, *, paper: Paper, other: tuple[str, str]) -> None:
        alignment = outcome.alignment
        if outcome.paper_b is not None:  # a second PDF read just now (else its side was reused)
            self._second = (outcome.paper_b, outcome.analysis_b)
        elif other[0] != "pdf":
            self._second = None
        model_id = self.op.ready.model.model_id if self.op.ready.model is not None else ""
        self._side_a = (paper, model_id, alignment.a)
        self._side_b = (other, model_id, alignment.b)
        self.show_alignment(alignment)
        self.op.set_status(f"Aligned in {self.op.elapsed():.1f} s.")

    def _on_error(self, other: tuple[str, str], error: Exception) -> None:
        """A comparison that failed: the summary says why, in place of any earlier alignment."""
        if isinstance(error, ModelUnavailable):
            self._message(NO_MODEL, self.status.text())  # the status line says why
        else:
            self._message(failure_line(other, error))

    # -- display --------------------------------------------------------------------------
    def clear(self) -> None:
        """Forget the alignment (the open paper changed or closed); a running one is stopped."""
        self.op.invalidate()
        self._side_a = self._side_b = self._last = None
        self._message(START)

    def _message(self, text: str, status: str = "") -> None:
        """``text`` in place of the listed alignment: none stays as the answer to a comparison not made."""
        self.alignment = self._second = None
        self.close_side_by_side()
        self.results.clear()
        self._show_results(False)
        self.summary.setText(html.escape(text))
        self.op.set_status(status)

    def _show_results(self, shown: bool) -> None:
        self.results.setVisible(shown)
        self.controls.set_results_shown(shown)

    def show_alignment(self, alignment: Alignment) -> None:
        """List ``alignment``: summary, gaps and pairs (filters kept when they still apply)."""
        self.alignment = alignment
        self.summary.setText(summary_html(alignment))
        self.results.show_alignment(alignment, self.session.palette)
        self._show_results(True)
        if self.pages_window is not None:  # an open side-by-side window follows the new alignment
            self.open_side_by_side()
        self.alignmentShown.emit(alignment)

    def apply_filters(self) -> None:
        """Hide the pairs the role and function filters leave out."""
        self.results.apply_filters()

    def set_role(self, role: str | None) -> None:
        self.role.setCurrentIndex(max(0, self.role.findData(role)))

    def set_function(self, function: str | None) -> None:
        self.function.setCurrentIndex(max(0, self.function.findData(function)))

    def visible_pairs(self) -> list[AlignedPair]:
        """The pairs listed and not filtered out, in order."""
        return self.results.visible_pairs()

    # -- navigation -----------------------------------------------------------------------
    def _a_is_open_paper(self) -> bool:
        paper = self.session.paper
        return (self.alignment is not None and paper is not None
                and len(paper.sentences) == len(self.alignment.a.sentences))

    def _on_pair_selected(self, row: int) -> None:
        if self.alignment is not None and self._a_is_open_paper():
            self._syncing = True
            try:
                self.session.jump_to_sentence(self.alignment.pairs[row].a_indices[0])
            finally:
                self._syncing = False

    def _on_sentence_selected(self, index: int) -> None:
        """A sentence selected on the page selects its pair (when it has one and the row is shown)."""
        if not self._syncing and self._a_is_open_paper():
            self.results.select_pair_of(index)

    def _on_gap_clicked(self, row: QListWidgetItem) -> None:
        item = row.data(Qt.ItemDataRole.UserRole)
        if item is None or self.alignment is None:
            return
        target = gap_target(self.alignment, item)
        if target >= 0 and self._a_is_open_paper():
            self.session.jump_to_sentence(target)

    # -- side by side and exports -----------------------------------------------------------
    @property
    def pages_window(self) -> AlignedPagesWindow | None:
        """The side-by-side window, when open."""
        return self.pages.window

    def open_side_by_side(self) -> AlignedPagesWindow | None:
        """Open (or refresh) the side-by-side window for the shown alignment; returns it (None: nothing
        aligned)."""
        if self.alignment is None:
            return None
        window, note = self.pages.open(self.alignment, self._a_is_open_paper(), self._second)
        if note:
            self.op.set_status(note)
        return window

    def close_side_by_side(self) -> None:
        self.pages.close()

    def export(self, fmt: str, path: str | Path | None = None) -> str:
        """Save the alignment as ``fmt`` ("json", "md" or "html") at ``path`` (None: ask); returns the
        path written ("" when nothing was)."""
        from core.alignment.align_export import alignment_to_html, alignment_to_json, alignment_to_markdown

        if self.alignment is None or fmt not in EXPORTS:
            return ""
        name, file_filter = EXPORTS[fmt]
        render = {"json": alignment_to_json, "md": alignment_to_markdown, "html": alignment_to_html}[fmt]
        saved = save_text(self, render(self.alignment), path, title=f"Export the alignment as {name}",
                          suggested=f"alignment.{fmt}", file_filter=file_filter)
        if saved.message:
            self.op.set_status(saved.message)
        if saved.path:
            self.statusMessage.emit(f"Alignment saved as {saved.path}")
        return saved.path


SPEC = register_panel(PanelSpec(
    id="alignment", title="Alignment", factory=AlignmentPanel, area=Qt.DockWidgetArea.BottomDockWidgetArea,
    order=55, shortcut="Ctrl+Shift+A", description="Line the open paper up with a second paper or the draft",
    tab_with="draft", visible=False, remember_visible=True, height=380))  # a tab: not a dock beside the draft
