"""Library panel: the papers in the user's library (issue 12), adding PDFs and removing papers.

The list (``library_table``) is read on the UI thread, only while the panel is shown, then the database
is quick-checked in the background (``library_check``). Adding files, a folder, from Zotero
(``app/gui/zotero_import.py``) or the open paper (with the session's embedded analysis: no model run),
removing (asks first) and repairing are jobs (``library_jobs``) of the panel's
:class:`~app.gui.operation.PanelOperation`, one at a time; each ends in one line with details
(``library_text``, ``library_feedback``). The window links ``libraryChanged`` (the Suggestions panel
searches again), ``openRequested(path)``, ``statusMessage(text)`` and ``file_menu_actions()``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QStackedWidget, QWidget  # noqa: F401 (tests)

from app.gui import library_jobs as jobs
from app.gui.library_jobs import add_pdfs_job
from app.gui.operation import ANALYSIS, MODEL, PanelOperation
from app.gui.panels import library_text as words
from app.gui.panels.library_actions import LibraryTop
from app.gui.panels.library_add import ask_files, ask_folder
from app.gui.panels.library_check import DatabaseCheck
from app.gui.panels.library_feedback import EmptyPage, SummaryBar
from app.gui.panels.library_table import LibraryTable
from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.session import Session
from app.gui.status_line import StatusLine
from app.gui.widgets import one_line, panel_layout, status_label, while_alive
from core.errors import RhetoricaError

if TYPE_CHECKING:  # pragma: no cover
    from core.library.doctor import RepairReport
    from core.library.library import AddReport

EMPTY, report_summary = words.EMPTY, words.report_summary  # (their home is library_text)
WAITS = {"model": "loading the model", "analysis": "waiting for the paper's analysis"}


class LibraryPanel(QWidget):
    libraryChanged = Signal()  # papers were added or removed
    openRequested = Signal(str)  # a PDF to open as File › Open does
    statusMessage = Signal(str)  # a short message for the window's status bar
    listed = Signal(int)  # the list was (re)read: how many papers

    def __init__(self, session: Session, folder: Callable[[], Path] | None = None) -> None:
        super().__init__()
        self.session = session
        self._folder = folder or jobs.library_folder
        self.listing: jobs.Listing | None = None
        self.report: AddReport | None = None
        self._dirty = True  # read the list when the panel is next shown
        self.damage: str | None = None  # the last damage met (cleared by a repair)
        self._cancelling = False  # Cancel was pressed: say so when the job has stopped
        top = LibraryTop(self)
        self.toolbar, self.filter, self.act_open = top.toolbar, top.filter, top.open
        self.act_add_files, self.act_add_folder, self.act_remove = top.add_files, top.add_folder, top.remove
        self.act_add_current, self.act_add_current_menu = top.add_current, top.add_current_menu
        self.act_add_zotero, self.add_menu = top.add_zotero, top.add_menu
        self.filter.textChanged.connect(self._on_filter)
        self.table = LibraryTable()
        self.proxy = self.table.proxy
        self.table.customContextMenuRequested.connect(self._show_menu)
        self.table.activated.connect(lambda _index: self.open_selected())  # Enter, or a double-click
        self.table.addAction(self.act_remove)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_actions())
        self.empty = EmptyPage(self.add_files_dialog, self.add_folder_dialog, self.repair_library)
        self.empty_message, self.empty_buttons = self.empty.message, self.empty.add_buttons
        self.repair_button = self.empty.repair_button
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.table)
        self.progress_row = StatusLine("Stop (papers already added stay)")
        self.progress_label, self.cancel_button = self.progress_row.label, self.progress_row.cancel_button
        self.progress_row.hide()
        self.op = PanelOperation(self, session, self.progress_row)
        self.op.busyChanged.connect(self._on_busy)
        self.progress_row.cancelRequested.connect(self._on_cancel_pressed)  # after the operation's cancel
        self.check = DatabaseCheck(self, session)
        self.check.damaged.connect(self._on_damaged)
        self.summary_row = SummaryBar(self.repair_library)
        self.summary, self.details = self.summary_row.summary, self.summary_row.details
        self.details_button, self.summary_repair = self.summary_row.details_button, self.summary_row.repair
        self.totals = status_label()
        panel_layout(self, top, (self.stack, 1), self.progress_row, self.summary_row, self.totals)
        session.paperReady.connect(while_alive(self, lambda _paper: self._update_actions()))
        session.documentClosed.connect(self._update_actions)
        self._update_actions()

    def file_menu_actions(self) -> list[QAction]:
        """What the window puts in its File menu: "Add this paper…" and "Add to library ▸"."""
        return [self.act_add_current_menu, self.add_menu.menuAction()]

    @property
    def folder(self) -> Path:
        return self._folder()

    @property
    def busy(self) -> bool:
        return self.op.busy

    # -- the list -----------------------------------------------------------------------------
    def refresh(self) -> None:
        """Read the list again (now when shown, else when the panel is next shown)."""
        self._dirty = not self.isVisible()
        if self._dirty:
            return
        try:
            self.listing = jobs.read_listing(self.folder)
        except (RhetoricaError, OSError) as error:
            self.listing = None
            self.damage = words.damage_message(error)
            self._show_list([], self.damage or one_line(f"Cannot read your library: {error}", 240))
            self.totals.setText(str(self.folder))
            return
        self._show_list(self.listing.papers if self.listing else [], words.EMPTY)
        self.listed.emit(len(self.listing.papers) if self.listing else 0)
        if self.listing is not None:
            self.check.start(self.folder, unless=lambda: self.busy)

    def _show_list(self, papers: Sequence[Any], empty: str) -> None:
        self.table.fill(papers)
        self.empty.message.setText(empty)
        self.empty.show_repair(empty == self.damage)
        self.stack.setCurrentWidget(self.table if papers else self.empty)
        self._show_totals()
        self._update_actions()

    def _on_damaged(self, problem: Exception) -> None:
        self.damage = words.damage_message(problem)
        self.summary_row.say(self.damage or str(problem), repair=True)

    def _show_totals(self) -> None:
        self.totals.setToolTip(str(self.folder))
        stats = self.listing.stats if self.listing is not None and self.listing.papers else None
        self.totals.setText(words.totals_text(stats, self.filter.text().strip(), self.proxy.rowCount())
                            if stats is not None else "")
        if stats is not None:
            self.totals.setToolTip(f"{self.folder}\n{stats.database_bytes / 1e6:.1f} MB")

    def _on_filter(self, text: str) -> None:
        self.table.filter_text(text)
        self._show_totals()

    def rows(self) -> list[tuple[str, str, int, str]]:  # as shown: (title, kind, sentences, paper id)
        return self.table.rows()

    def selected_ids(self) -> list[str]:
        return self.table.selected_ids()

    def select_ids(self, paper_ids: set[str] | Sequence[str]) -> None:  # (the table's selection)
        self.table.select_ids(paper_ids)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._dirty:
            self.refresh()

    # -- actions ------------------------------------------------------------------------------
    def _update_actions(self) -> None:
        idle = not self.busy
        for act in (self.act_add_files, self.act_add_folder, self.act_add_zotero):
            act.setEnabled(idle)
        self.empty.set_enabled(idle)
        self.summary_repair.setEnabled(idle)
        for act in (self.act_add_current, self.act_add_current_menu):
            act.setEnabled(idle and self.session.paper is not None)
        selected = self.selected_ids()
        self.act_remove.setEnabled(idle and bool(selected))
        self.act_open.setEnabled(len(selected) == 1 and bool(self.table.selected_path()))

    def _show_menu(self, pos: QPoint) -> None:
        self.table.select_row_at(self.table.indexAt(pos))
        self._update_actions()
        menu = QMenu(self)
        menu.addActions([self.act_open, self.act_remove])
        menu.popup(self.table.viewport().mapToGlobal(pos))

    def open_selected(self) -> None:
        path = self.table.selected_path()
        if path:
            self.openRequested.emit(path)
        elif len(self.selected_ids()) == 1:
            self.statusMessage.emit(words.NO_PDF)

    def add_files_dialog(self) -> None:
        self.add_paths(ask_files(self))  # library_add: in the folder last added from

    def add_folder_dialog(self) -> None:
        self.add_paths(ask_folder(self))

    def add_paths(self, paths: Sequence[Path]) -> None:
        """Add the PDFs (files, or folders searched recursively) in the background."""
        if self.busy or not paths:
            return
        what = paths[0].name if len(paths) == 1 else f"{len(paths)} files"
        self.run_job(add_pdfs_job, self.folder, list(paths), MODEL, label=f"Adding {what} to the library",
                     waiting=f"Adding {what}…", on_done=self._on_added)

    def add_current_paper(self) -> None:
        """Add the open paper (already parsed) with the session's embedded analysis (waited for when it
        is not ready yet: the model never runs on the open paper again); a duplicate is only reported."""
        paper = self.session.paper
        if self.busy or paper is None:
            return
        title = paper.title or Path(paper.source_path).name
        self.run_job(jobs.add_paper_job, self.folder, paper, MODEL, ANALYSIS, needs_analysis=True,
                     label="Adding the paper to the library", waiting="Adding the paper…",
                     on_done=lambda count: self._say(words.paper_added_outcome(title, count)))

    def remove_selected(self) -> None:
        """Remove the selected papers after asking."""
        ids = self.selected_ids()
        if self.busy or not ids:
            return
        titles = {pid: title for title, _kind, _n, pid in self.rows()}
        answer = QMessageBox.question(
            self, "Remove from your library", words.removal_question([titles.get(i, i) for i in ids]),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        if answer == QMessageBox.StandardButton.Yes:
            label = f"Removing {words.plural(len(ids), 'paper')}"
            self.run_job(jobs.remove_job, self.folder, ids, label=label, needs_model=False,
                         on_done=lambda result: self._say(words.removed_outcome(result)))

    def repair_library(self) -> None:
        """Check the library and repair it in the background (the doctor: damaged indexes rebuilt,
        the readable papers of a damaged database salvaged into a new one, the old file kept)."""
        if not self.busy:
            self.run_job(jobs.repair_job, self.folder, label="Repairing the library", needs_model=False,
                         on_done=self._on_repaired)

    def cancel(self) -> None:
        self.progress_row.cancelRequested.emit()  # the operation's cancel, then the panel's words

    # -- jobs ---------------------------------------------------------------------------------
    def run_job(self, fn: Callable[..., Any], *args: Any, label: str, on_done: Callable[[Any], object],
                waiting: str = "", needs_model: bool = True, needs_analysis: bool = False) -> None:
        """Run ``fn(ctx, *args)`` as the panel's job (``MODEL``/``ANALYSIS`` filled when it starts); its
        outcome, a failure or a cancel is said in the summary line."""
        self.summary_row.dismiss()
        self.op.run(fn, *args, label=label, status=f"{label}…", needs_model=needs_model,
                    needs_analysis=needs_analysis, on_done=on_done, on_error=lambda error: self._say(
                        words.failed_outcome(error)), on_cancelled=lambda: self._say(words.CANCELLED_OUTCOME))
        if self.op.waiting_for in WAITS:
            self.op.set_status(f"{waiting or label + '…'} ({WAITS[self.op.waiting_for]})")

    def show_summary(self, text: str, details: Sequence[str] = (), repair: bool = False) -> None:
        self.summary_row.say(text, details, repair)

    def _say(self, outcome: words.Outcome) -> None:
        if outcome.repair:
            self.damage = outcome.text
        self.summary_row.say(outcome.text, outcome.details, outcome.repair)
        if outcome.announce:
            self.statusMessage.emit(outcome.text)
        if outcome.changed:
            self.libraryChanged.emit()

    def _on_busy(self, busy: bool) -> None:
        self.progress_row.setVisible(busy)
        self.cancel_button.setEnabled(True)
        self._update_actions()
        if not busy:
            if self._cancelling:
                self._cancelling = False
                self._say(words.CANCELLED_OUTCOME)
            self.refresh()

    def _on_cancel_pressed(self) -> None:
        if self.op.worker is not None:  # it stops at its next check: said when it has
            self._cancelling = True
            self.progress_label.setText("Cancelling…")
            self.cancel_button.setEnabled(False)
        elif not self._cancelling:
            self.summary_row.say("Cancelled.")

    def _on_added(self, report: AddReport) -> None:
        self.report = report
        self._say(words.added_outcome(report))

    def _on_repaired(self, report: RepairReport) -> None:
        self.damage = None
        self.check.forget()  # the new database is checked again when it is listed
        self._say(words.repaired_outcome(report))


SPEC = register_panel(PanelSpec(
    id="library", title="Library", factory=LibraryPanel, area=Qt.DockWidgetArea.BottomDockWidgetArea,
    order=60, shortcut="Ctrl+Shift+L", description="The papers in your library: add PDFs, remove papers",
    tab_with="draft", visible=False, remember_visible=True))
