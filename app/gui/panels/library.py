"""Library panel: the papers in the user's library (issue 12), adding PDFs and removing papers.

The list shows each paper's title, kind, sentence count and date added (sortable, with a filter
box) and the library's totals. "Add files…" and "Add folder…" run
:meth:`core.library.library.Library.add_pdfs` in a background :class:`~app.gui.workers.Worker`
started through the session's job tracker (progress bar and Cancel here, and in the status bar);
"Add this paper" (also in the File menu) adds the open paper, already parsed, with
:meth:`~core.library.library.Library.add_paper`; "Remove" (Delete) removes the selected papers after
a confirmation. Every job opens its own :class:`~core.library.library.Library` in the worker thread
and closes it (SQLite connections belong to the thread that opened them); the list is read on the UI
thread with a short-lived one of its own, and only while the panel is shown. PDFs that cannot be
read (encrypted, scanned, corrupt) are listed with their reasons under a one-line summary.

A damaged library (a damaged database found by a job, by the quick check run in the background
after each listing, or a database that is missing or empty where a library was) is shown as one
message with "Repair library…", which runs :func:`core.library.doctor.repair` (what ``rhetorica
library doctor`` runs) as a background job like the others, and summarises what it recovered.

The panel offers, by name, what the window links (no panel imports another): ``libraryChanged``
(after an add or remove; the Suggestions panel's ``library_changed`` searches again),
``openRequested(path)`` (double-click a PDF paper: the window opens it as File › Open does),
``statusMessage(text)`` and ``file_menu_actions()``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPoint, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QShowEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QToolBar,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.gui.analysis_wait import AnalysisWait
from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.session import Session
from app.gui.widgets import MUTED
from app.gui.workers import Worker
from app.gui.zotero_import import zotero_action
from core.errors import Cancelled, RhetoricaError
from core.jobs import JobContext
from core.model_api import RoleModel

if TYPE_CHECKING:  # pragma: no cover
    from core.analysis import PaperAnalysis
    from core.document import Paper
    from core.library.doctor import RepairReport
    from core.library.library import AddReport
    from core.library.store import LibraryStats, PaperRecord

EMPTY = ("Your library is empty: add PDFs of papers you like; their sentences then appear as "
         "suggestions.")
ALREADY = "already in your library"
COLUMNS = ("Title", "Kind", "Sentences", "Added")
SORT_ROLE = Qt.ItemDataRole.UserRole
ID_ROLE = Qt.ItemDataRole.UserRole + 1
PATH_ROLE = Qt.ItemDataRole.UserRole + 2
KINDS = {"pdf": "PDF", "jsonl": "abstracts"}


def library_folder() -> Path:
    """The user's library folder (``core.paths.library_dir``, read at each call)."""
    from core.paths import library_dir

    return library_dir()


@dataclass(frozen=True)
class Listing:
    papers: list[PaperRecord]
    stats: LibraryStats


def read_listing(folder: Path) -> Listing | None:
    """The papers and totals of the library in ``folder``; None when there is no library there yet
    (nothing is created by looking). A library whose database is missing or empty raises
    :class:`~core.library.store.MissingDatabaseError`, a damaged one
    :class:`~core.library.store.DamagedLibraryError`."""
    from core.library.library import Library
    from core.library.store import database_missing, library_traces

    if database_missing(folder) and not library_traces(folder):
        return None
    with Library(folder) as library:
        return Listing(library.store.papers(), library.stats())


def damage_message(error: BaseException) -> str | None:
    """What the panel says about a damaged library (None: ``error`` is not about damage)."""
    from core.library.store import DamagedLibraryError, MissingDatabaseError

    if isinstance(error, DamagedLibraryError):
        return (f"Your library's database is damaged ({_one_line(error.detail, 100)}). “Repair library…” "
                "keeps every paper that can still be read in a new database (the damaged file is kept).")
    if isinstance(error, MissingDatabaseError):
        return ("Your library's database is missing or empty: its papers are gone from it. “Repair "
                "library…” restores them from a copy an earlier repair kept, or starts the library again "
                "empty.")
    return None


def repair_summary(report: RepairReport) -> str:
    """One line: what "Repair library…" did."""
    salvage = report.salvage
    if report.lost_everything:
        state = report.diagnosis.database.state
        return f"Started your library again, empty: its papers were in the {state} database."
    if salvage is not None:
        total = f" of {salvage.papers_total}" if salvage.papers_total is not None else ""
        lost = f"; {_plural(salvage.papers_lost, 'paper')} could not be saved" if salvage.papers_lost else ""
        return (f"Repaired your library: recovered {salvage.papers_recovered}{total} papers "
                f"({_plural(salvage.sentences_recovered, 'sentence')}){lost}.")
    if report.diagnosis.healthy:
        return "Your library is healthy: nothing to repair."
    return "Repaired your library: its search indexes were rebuilt."


# -- background jobs (worker threads: no Qt here) ----------------------------------------------
def _workers() -> int:
    return max(1, (os.cpu_count() or 2) - 1)


def add_pdfs_job(ctx: JobContext, folder: Path, paths: list[Path], model: RoleModel,
                 workers: int | None = None) -> AddReport:
    """Add the PDFs ``paths`` name to the library in ``folder`` (opened here, in the worker thread).

    Duplicates are found first; several new PDFs go to ``Library.add_pdfs`` (parsed in worker
    processes), a single one is parsed in a child process here, because ``add_pdfs`` parses a lone
    PDF in the calling process and the GUI process runs pymupdf only on its UI thread."""
    from app.gui.pdf_jobs import parse_isolated
    from core.fileio import file_sha256
    from core.library.library import AddReport, Library, find_pdfs

    report = AddReport()
    ctx.progress(0, 1, "looking for PDFs")
    pdfs, report.skipped = find_pdfs(paths)
    with Library(folder) as library:
        todo: list[Path] = []
        for path in pdfs:
            ctx.check()
            try:
                known = library.store.has_sha256(file_sha256(path))
            except OSError as error:
                report.skipped.append((str(path), f"cannot read: {error.strerror or error}"))
                continue
            if known:
                report.record(str(path), "", None)
            else:
                todo.append(path)
        if len(todo) == 1:
            path = todo[0]
            ctx.progress(0, 1, f"reading {path.name}")
            try:
                paper = parse_isolated(ctx, str(path))
            except Cancelled:
                raise
            except (RhetoricaError, OSError) as error:
                report.skipped.append((str(path), str(error)))
            else:
                ctx.progress(0, 1, f"adding {path.name}")
                report.record(str(path), paper.sha256, library.add_paper(paper, model, ctx=ctx))
            ctx.progress(1, 1, f"added {len(report.added)} of 1")
        elif todo:
            ctx.progress(0, len(todo), f"reading {len(todo)} PDFs")
            added = library.add_pdfs(todo, model, ctx, workers=workers or _workers())
            report.added += added.added
            report.skipped += added.skipped
            report.sentences += added.sentences
    return report


def add_paper_job(ctx: JobContext, folder: Path, paper: Paper, model: RoleModel,
                  analysis: PaperAnalysis | None = None) -> int | None:
    """Add an already parsed paper: its sentence count, or None when it was in the library.
    ``analysis``: its embedded analysis (the session's), stored as it is (no model run)."""
    from core.library.library import Library

    with Library(folder) as library:
        if library.store.has_sha256(paper.sha256):
            return None
        ctx.progress(0, 1, f"adding {paper.title or Path(paper.source_path).name}")
        ids = library.add_paper(paper, model, ctx=ctx, analysis=analysis)
        ctx.progress(1, 1, "added")
    return None if ids is None else len(ids)


def check_job(ctx: JobContext, folder: Path) -> Exception | None:
    """The quick check of the library's database run after a listing: the damage as an error
    (shown with :func:`damage_message`), or None when it is sound."""
    from core.library.doctor import diagnose
    from core.library.store import DATABASE_NAME, DamagedLibraryError

    ctx.progress(0, 1, "checking the library")
    health = diagnose(folder, quick=True).database
    if health.state == "damaged":
        return DamagedLibraryError(folder / DATABASE_NAME, "; ".join(health.problems[:1]) or "damaged")
    return None


def repair_job(ctx: JobContext, folder: Path) -> RepairReport:
    """"Repair library…": the doctor's repair (what ``rhetorica library doctor`` runs)."""
    from core.library.doctor import repair

    return repair(folder, ctx)


def remove_job(ctx: JobContext, folder: Path, paper_ids: list[str]) -> tuple[int, int]:
    """Remove papers: (papers removed, sentences removed)."""
    from core.library.library import Library

    sentences = 0
    with Library(folder) as library:
        for number, paper_id in enumerate(paper_ids):
            ctx.check()
            ctx.progress(number, len(paper_ids), "removing papers")
            sentences += library.remove(paper_id)
        ctx.progress(len(paper_ids), len(paper_ids), "removed")
    return len(paper_ids), sentences


# -- text ---------------------------------------------------------------------------------------
def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def failures(report: AddReport) -> list[tuple[str, str]]:
    """The (source, reason) of the PDFs that could not be added (duplicates are not failures)."""
    from core.library.library import ALREADY_THERE

    return [(source, reason) for source, reason in report.skipped if reason != ALREADY_THERE]


def report_summary(report: AddReport) -> str:
    """One line: "Added 2 papers (512 sentences) · 1 already in your library · 1 could not be read"."""
    parts = [f"Added {_plural(len(report.added), 'paper')} ({_plural(report.sentences, 'sentence')})"
             if report.added else "No papers added"]
    duplicates = len(report.skipped) - len(failures(report))
    if duplicates:
        parts.append(f"{duplicates} {ALREADY}")
    if failures(report):
        parts.append(f"{len(failures(report))} could not be read")
    return " · ".join(parts)


def detail_line(source: str, reason: str) -> str:
    """"name.pdf: reason" (the reason without the path it repeats, in the panel's words)."""
    from core.library.library import ALREADY_THERE

    for prefix in (f"{source}: ", f"{source} "):
        if reason.startswith(prefix):
            reason = reason[len(prefix):]
            break
    return f"{Path(source).name}: {ALREADY if reason == ALREADY_THERE else reason}"


def added_text(timestamp: float) -> str:
    try:
        return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return ""


def _one_line(text: str, limit: int = 240) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class _Item(QStandardItem):
    """A read-only cell that sorts by its ``SORT_ROLE`` value."""

    def __init__(self, text: str, key: object) -> None:
        super().__init__(text)
        self.setEditable(False)
        self.setData(key, SORT_ROLE)


class LibraryPanel(QWidget):
    libraryChanged = Signal()  # papers were added or removed
    openRequested = Signal(str)  # a PDF to open as File › Open does
    statusMessage = Signal(str)  # a short message for the window's status bar
    listed = Signal(int)  # the list was (re)read: how many papers

    def __init__(self, session: Session, folder: Callable[[], Path] | None = None) -> None:
        super().__init__()
        self.session = session
        self._folder = folder or library_folder
        self.listing: Listing | None = None
        self.report: AddReport | None = None
        self._job: Worker | None = None
        self._waiting: Callable[[RoleModel], None] | None = None  # a job waiting for the model
        self._dirty = True  # read the list when the panel is next shown
        self.damage: str | None = None  # the last damage met (cleared by a repair)
        self._check: Worker | None = None  # the background quick check of the database
        self._checked: tuple[object, ...] | None = None  # the database state last checked

        self.act_add_files = self._action("Add files…", self.add_files_dialog,
                                          "Add PDF files of papers to your library")
        self.act_add_folder = self._action("Add folder…", self.add_folder_dialog,
                                           "Add every PDF in a folder (and its subfolders)")
        self.act_add_zotero = zotero_action(self)  # app/gui/zotero_import.py: Zotero's PDFs, incrementally
        self.act_add_current = self._action("Add this paper", self.add_current_paper,
                                            "Add the open paper to your library")
        self.act_remove = self._action("Remove", self.remove_selected,
                                       "Remove the selected papers from your library (Delete)")
        self.act_remove.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.act_remove.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.act_open = self._action("Open", self.open_selected, "Open the paper's PDF")
        # The File menu's copy of "Add this paper" (its own text; enabled with the panel's one).
        self.act_add_current_menu = self._action("Add this paper to my &library", self.add_current_paper,
                                                 "Add the open paper to your library (its sentences "
                                                 "then appear as suggestions)")

        toolbar = QToolBar()
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        toolbar.setStyleSheet("QToolBar { border: none; spacing: 2px; padding: 1px 2px; }")
        toolbar.addActions([self.act_add_files, self.act_add_folder, self.act_add_zotero,
                            self.act_add_current])
        toolbar.addSeparator()
        toolbar.addAction(self.act_remove)
        self.toolbar = toolbar
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter papers")
        self.filter.setToolTip("Show only the papers whose title or kind contains this text")
        self.filter.setClearButtonEnabled(True)
        self.filter.setMaximumWidth(240)
        self.filter.textChanged.connect(self._on_filter)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 6, 0)
        top.addWidget(toolbar, 1)
        top.addWidget(self.filter)

        self.model = QStandardItemModel(0, len(COLUMNS), self)
        self.model.setHorizontalHeaderLabels(list(COLUMNS))
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.table = QTreeView()
        self.table.setModel(self.proxy)
        self.table.setRootIsDecorated(False)
        self.table.setUniformRowHeights(True)
        self.table.setAlternatingRowColors(True)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(3, Qt.SortOrder.DescendingOrder)  # newest first
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._show_menu)
        self.table.doubleClicked.connect(lambda _index: self.open_selected())
        self.table.addAction(self.act_remove)
        header = self.table.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_actions())

        self.empty_message = QLabel(EMPTY)
        self.empty_message.setWordWrap(True)
        self.empty_message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_message.setStyleSheet("color: #666; padding: 12px 16px 4px 16px;")
        add_files = QPushButton("Add PDF files…")
        add_files.clicked.connect(self.add_files_dialog)
        add_folder = QPushButton("Add a folder…")
        add_folder.clicked.connect(self.add_folder_dialog)
        self.empty_buttons = (add_files, add_folder)
        self.repair_button = QPushButton("Repair library…")
        self.repair_button.setToolTip("Check your library and salvage what can be read (the old database "
                                      "file is kept)")
        self.repair_button.clicked.connect(self.repair_library)
        self.repair_button.hide()
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(add_files)
        buttons.addWidget(add_folder)
        buttons.addWidget(self.repair_button)
        buttons.addStretch(1)
        self.empty = QWidget()
        empty_layout = QVBoxLayout(self.empty)
        empty_layout.addStretch(1)
        empty_layout.addWidget(self.empty_message)
        empty_layout.addLayout(buttons)
        empty_layout.addStretch(2)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.table)

        self.progress_label = QLabel("")
        self.progress_label.setStyleSheet(f"color: {MUTED};")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(240)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(14)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop adding (papers already added stay)")
        self.cancel_button.clicked.connect(self.cancel)
        self.progress_row = QWidget()
        row = QHBoxLayout(self.progress_row)
        row.setContentsMargins(6, 0, 6, 0)
        row.addWidget(self.progress_label, 1)
        row.addWidget(self.progress)
        row.addWidget(self.cancel_button)
        self.progress_row.hide()

        self.summary = QLabel("")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        self.details_button = QToolButton()
        self.details_button.setText("Details")
        self.details_button.setCheckable(True)
        self.details_button.setAutoRaise(True)
        self.details_button.setStyleSheet("QToolButton { color: #1f4e8c; }")
        self.details_button.toggled.connect(self._set_details_visible)
        dismiss = QToolButton()
        dismiss.setText("✕")
        dismiss.setAutoRaise(True)
        dismiss.setToolTip("Dismiss")
        dismiss.clicked.connect(self.dismiss_summary)
        self.summary_repair = QToolButton()
        self.summary_repair.setText("Repair library…")
        self.summary_repair.setAutoRaise(True)
        self.summary_repair.setStyleSheet("QToolButton { color: #1f4e8c; font-weight: 600; }")
        self.summary_repair.setToolTip(self.repair_button.toolTip())
        self.summary_repair.clicked.connect(self.repair_library)
        self.summary_repair.hide()
        self.summary_row = QWidget()
        row = QHBoxLayout(self.summary_row)
        row.setContentsMargins(6, 0, 2, 0)
        row.addWidget(self.summary, 1)
        row.addWidget(self.summary_repair)
        row.addWidget(self.details_button)
        row.addWidget(dismiss)
        self.summary_row.hide()
        self.details = QListWidget()
        self.details.setMaximumHeight(90)
        self.details.setStyleSheet("QListWidget { font-size: 9pt; }")
        self.details.hide()

        self.totals = QLabel("")
        self.totals.setStyleSheet(f"color: {MUTED}; padding: 2px 6px;")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.progress_row)
        layout.addWidget(self.summary_row)
        layout.addWidget(self.details)
        layout.addWidget(self.totals)

        session.paperReady.connect(lambda _paper: self._update_actions())
        session.documentClosed.connect(self._update_actions)
        session.models.ready.connect(self._on_model_ready)
        session.models.failed.connect(self._on_model_failed)
        self._analysis = AnalysisWait(session, self._on_analysis_ready, self._on_analysis_failed)
        self._update_actions()

    def _action(self, text: str, slot: Callable[[], object], tip: str) -> QAction:
        action = QAction(text, self)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def file_menu_actions(self) -> list[QAction]:
        """What the window puts in its File menu."""
        return [self.act_add_current_menu, self.act_add_zotero]

    @property
    def folder(self) -> Path:
        return self._folder()

    @property
    def busy(self) -> bool:
        return self._job is not None or self._waiting is not None

    # -- the list -----------------------------------------------------------------------------
    def refresh(self) -> None:
        """Read the list again (now when shown, else when the panel is next shown)."""
        if not self.isVisible():
            self._dirty = True
            return
        self._dirty = False
        try:
            self.listing = read_listing(self.folder)
        except (RhetoricaError, OSError) as error:
            self.listing = None
            self._fill([])
            self.damage = damage_message(error)
            self.empty_message.setText(self.damage or _one_line(f"Cannot read your library: {error}"))
            self._show_repair(self.damage is not None)
            self.stack.setCurrentWidget(self.empty)
            self.totals.setText(str(self.folder))
            return
        self._fill(self.listing.papers if self.listing else [])
        self.listed.emit(self.model.rowCount())
        if self.listing is not None:
            self._start_check()

    def _show_repair(self, damaged: bool) -> None:
        """Offer "Repair library…" (and not "Add…" on the empty page) while the library is damaged."""
        self.repair_button.setVisible(damaged)
        for button in self.empty_buttons:
            button.setVisible(not damaged)

    def _database_state(self) -> tuple[object, ...]:
        from core.library.store import DATABASE_NAME

        state: list[object] = [str(self.folder)]
        for name in (DATABASE_NAME, f"{DATABASE_NAME}-wal"):
            try:
                info = (self.folder / name).stat()
                state += [info.st_size, info.st_mtime_ns, info.st_ino]
            except OSError:
                state.append(None)
        return tuple(state)

    def _start_check(self) -> None:
        """Quick-check the database in the background, once per state of its files."""
        state = self._database_state()
        if self._check is not None or self.busy or state == self._checked:
            return
        self._checked = state
        worker = Worker(check_job, self.folder, name="library check")
        worker.result.connect(self._on_checked)
        worker.finished.connect(lambda w=worker: self._on_check_finished(w))
        self._check = worker
        self.session.tracker.start(worker, "Checking the library")

    def _on_check_finished(self, worker: Worker) -> None:
        if worker is self._check:
            self._check = None

    def _on_checked(self, problem: Exception | None) -> None:
        if problem is None or self.busy:
            return
        self.damage = damage_message(problem)
        self._show_summary(self.damage or str(problem), repair=True)

    def _fill(self, papers: list[PaperRecord]) -> None:
        selected = set(self.selected_ids())
        self.model.removeRows(0, self.model.rowCount())
        for paper in papers:
            source = Path(paper.source) if paper.kind == "pdf" and paper.source else None
            title = _Item(paper.title or (source.name if source else paper.paper_id), "")
            title.setData((paper.title or "").casefold(), SORT_ROLE)
            title.setData(paper.paper_id, ID_ROLE)
            title.setData(str(source) if source else "", PATH_ROLE)
            tip = [paper.title or "untitled", f"id {paper.paper_id[:16]}",
                   f"source: {paper.source}" if paper.source else "", f"model: {paper.model_id}",
                   paper.note]
            title.setToolTip("\n".join(t for t in tip if t))
            kind = _Item(KINDS.get(paper.kind, paper.kind), paper.kind)
            count = _Item(f"{paper.sentence_count:,}", paper.sentence_count)
            count.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            added = _Item(added_text(paper.added), paper.added)
            self.model.appendRow([title, kind, count, added])
        self.proxy.sort(self.proxy.sortColumn(), self.proxy.sortOrder())
        self.empty_message.setText(EMPTY)
        self._show_repair(False)
        self.stack.setCurrentWidget(self.table if papers else self.empty)
        if selected:
            self.select_ids(selected)
        self._show_totals()
        self._update_actions()

    def _show_totals(self) -> None:
        if self.listing is None or not self.listing.papers:
            self.totals.setText("")
            self.totals.setToolTip(str(self.folder))
            return
        stats = self.listing.stats
        papers, sentences = _plural(stats.papers, "paper"), _plural(stats.sentences, "sentence")
        text = f"{papers} · {sentences}"
        wanted, shown = self.filter.text().strip(), self.proxy.rowCount()
        if wanted:
            text = (f"{shown} of {papers} shown · {sentences}" if shown
                    else f"No paper matches “{wanted}” · {text}")
        self.totals.setText(text)
        self.totals.setToolTip(f"{self.folder}\n{stats.database_bytes / 1e6:.1f} MB")

    def _on_filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text.strip())
        self._show_totals()

    def rows(self) -> list[tuple[str, str, int, str]]:
        """The rows as shown (filtered and sorted): (title, kind, sentences, paper id)."""
        out = []
        for row in range(self.proxy.rowCount()):
            title = self.proxy.index(row, 0)
            out.append((str(title.data()), str(self.proxy.index(row, 1).data()),
                        int(self.proxy.index(row, 2).data(SORT_ROLE)), str(title.data(ID_ROLE))))
        return out

    def selected_ids(self) -> list[str]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [str(self.proxy.index(row, 0).data(ID_ROLE)) for row in rows]

    def select_ids(self, paper_ids: set[str] | Sequence[str]) -> None:
        wanted = set(paper_ids)
        selection = self.table.selectionModel()
        selection.clearSelection()
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            if index.data(ID_ROLE) in wanted:
                selection.setCurrentIndex(index, QItemSelectionModel.SelectionFlag.NoUpdate)
                selection.select(index, flags)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._dirty:
            self.refresh()

    # -- actions ------------------------------------------------------------------------------
    def _update_actions(self) -> None:
        idle = not self.busy
        for action in (self.act_add_files, self.act_add_folder, self.act_add_zotero):
            action.setEnabled(idle)
        for button in (*self.empty_buttons, self.repair_button, self.summary_repair):
            button.setEnabled(idle)
        can_add = idle and self.session.paper is not None
        self.act_add_current.setEnabled(can_add)
        self.act_add_current_menu.setEnabled(can_add)
        selected = self.selected_ids()
        self.act_remove.setEnabled(idle and bool(selected))
        self.act_open.setEnabled(len(selected) == 1 and bool(self._selected_path()))

    def _selected_path(self) -> str:
        rows = self.table.selectionModel().selectedRows()
        if len(rows) != 1:
            return ""
        path = str(self.proxy.index(rows[0].row(), 0).data(PATH_ROLE) or "")
        return path if path and Path(path).is_file() else ""

    def _show_menu(self, pos: QPoint) -> None:
        index = self.table.indexAt(pos)
        if index.isValid() and not self.table.selectionModel().isRowSelected(index.row(), QModelIndex()):
            self.select_ids([str(self.proxy.index(index.row(), 0).data(ID_ROLE))])
        self._update_actions()
        menu = QMenu(self)
        menu.addActions([self.act_open, self.act_remove])
        menu.popup(self.table.viewport().mapToGlobal(pos))

    def open_selected(self) -> None:
        path = self._selected_path()
        if path:
            self.openRequested.emit(path)
        elif len(self.selected_ids()) == 1:
            self.statusMessage.emit("This paper has no PDF to open (it was imported from abstracts, or "
                                    "its file has moved).")

    def add_files_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Add papers to your library", "",
                                                "PDF files (*.pdf);;All files (*)")
        if paths:
            self.add_paths([Path(p) for p in paths])

    def add_folder_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add every PDF in a folder to your library")
        if folder:
            self.add_paths([Path(folder)])

    def add_paths(self, paths: Sequence[Path]) -> None:
        """Add the PDFs (files, or folders searched recursively) in the background."""
        if self.busy or not paths:
            return
        folder, paths = self.folder, list(paths)
        what = paths[0].name if len(paths) == 1 else f"{len(paths)} files"
        self._with_model(lambda model: self._start(
            Worker(add_pdfs_job, folder, paths, model, name="library add"), f"Adding {what} to the library",
            self._on_added), f"Adding {what}…")

    def add_current_paper(self) -> None:
        """Add the open paper (already parsed) in the background with the session's embedded analysis
        (waited for when it is not ready yet: the model never runs on the open paper again); a
        duplicate is only reported."""
        paper = self.session.paper
        if self.busy or paper is None:
            return
        folder = self.folder
        self._with_model(lambda model: self._add_with_analysis(folder, paper, model), "Adding the paper…")

    def _add_with_analysis(self, folder: Path, paper: Paper, model: RoleModel) -> None:
        analysis = self._analysis.request()
        if analysis is None:
            self._waiting = lambda model, f=folder, p=paper: self._add_with_analysis(f, p, model)
            self._show_progress("Adding the paper… (waiting for the paper's analysis)")
            self._update_actions()
            return
        self._start(Worker(add_paper_job, folder, paper, model, analysis, name="library add paper"),
                    "Adding the paper to the library", lambda count: self._on_paper_added(paper, count))

    def _on_analysis_ready(self) -> None:
        model = self.session.models.model
        if self._waiting is not None and model is not None:
            start, self._waiting = self._waiting, None
            start(model)

    def _on_analysis_failed(self, message: str) -> None:
        if self._waiting is not None:
            self._waiting = None
            self._job_done()
            self._show_summary(_one_line(message))

    def remove_selected(self) -> None:
        """Remove the selected papers after asking."""
        ids = self.selected_ids()
        if self.busy or not ids:
            return
        titles = {pid: title for title, _kind, _n, pid in self.rows()}
        one = len(ids) == 1
        named = f"“{titles.get(ids[0], ids[0])}”" if one else _plural(len(ids), "paper")
        answer = QMessageBox.question(
            self, "Remove from your library",
            f"Remove {named} from your library?\n\n{'Its' if one else 'Their'} sentences will no longer "
            f"appear as suggestions. The PDF {'file itself is' if one else 'files themselves are'} "
            "not deleted.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        if answer != QMessageBox.StandardButton.Yes:
            return
        self._start(Worker(remove_job, self.folder, ids, name="library remove"),
                    f"Removing {_plural(len(ids), 'paper')}", self._on_removed)

    def repair_library(self) -> None:
        """Check the library and repair it in the background (the doctor: damaged indexes rebuilt,
        the readable papers of a damaged database salvaged into a new one, the old file kept)."""
        if self.busy:
            return
        self._start(Worker(repair_job, self.folder, name="library repair"), "Repairing the library",
                    self._on_repaired)

    def cancel(self) -> None:
        if self._job is not None:
            self._job.cancel()
            self.progress_label.setText("Cancelling…")
            self.cancel_button.setEnabled(False)
        elif self._waiting is not None:
            self._waiting = None
            self._job_done()
            self._show_summary("Cancelled.")

    # -- jobs ---------------------------------------------------------------------------------
    def _with_model(self, start: Callable[[RoleModel], None], message: str) -> None:
        model = self.session.models.request()
        if model is not None:
            start(model)
            return
        if self.session.models.state == "failed":
            # the advice first: a long error (two bundles refused) is clipped, never the advice
            self._show_summary(_one_line("No model: choose a model bundle in File › Settings "
                                         f"({self.session.models.error})"))
            return
        self._waiting = start
        self._show_progress(f"{message} (loading the model)")
        self._update_actions()

    def _on_model_ready(self, model: RoleModel) -> None:
        if self._waiting is not None:
            start, self._waiting = self._waiting, None
            start(model)

    def _on_model_failed(self, error: Exception) -> None:
        if self._waiting is not None:
            self._waiting = None
            self._job_done()
            self._show_summary(_one_line(f"No model: choose a model bundle in File › Settings ({error})"))

    def _start(self, worker: Worker, label: str, on_result: Callable[[Any], None]) -> None:
        self.dismiss_summary()
        worker.progress.connect(self._on_progress)
        worker.result.connect(on_result)
        worker.error.connect(self._on_error)
        worker.cancelled.connect(self._on_cancelled)
        worker.finished.connect(lambda w=worker: self._on_finished(w))
        self._job = worker
        self._show_progress(f"{label}…")
        self._update_actions()
        self.session.tracker.start(worker, label)

    def _show_progress(self, text: str) -> None:
        self.progress_label.setText(text)
        self.progress.setRange(0, 0)  # busy until the first progress report
        self.cancel_button.setEnabled(True)
        self.progress_row.show()

    def _on_progress(self, done: int, total: int, message: str) -> None:
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(min(done, total))
        if message:
            self.progress_label.setText(message[:1].upper() + message[1:] + "…" * (done < total))

    def _on_added(self, report: AddReport) -> None:
        self.report = report
        summary = report_summary(report)
        self._show_summary(summary, [detail_line(source, reason) for source, reason in report.skipped])
        self.statusMessage.emit(summary)
        if report.added:
            self.libraryChanged.emit()

    def _on_paper_added(self, paper: Paper, count: int | None) -> None:
        title = paper.title or Path(paper.source_path).name
        if count is None:
            message = f"“{title}” is {ALREADY}."
        else:
            message = f"Added “{title}” to your library ({_plural(count, 'sentence')})."
            self.libraryChanged.emit()
        self._show_summary(message)
        self.statusMessage.emit(message)

    def _on_removed(self, result: tuple[int, int]) -> None:
        papers, sentences = result
        message = f"Removed {_plural(papers, 'paper')} ({_plural(sentences, 'sentence')})."
        self._show_summary(message)
        self.statusMessage.emit(message)
        self.libraryChanged.emit()

    def _on_repaired(self, report: RepairReport) -> None:
        summary = repair_summary(report)
        self.damage = None
        self._checked = None  # the new database is checked again when it is listed
        self._show_summary(summary, [*report.diagnosis.lines(), *report.lines()])
        self.statusMessage.emit(summary)
        self.libraryChanged.emit()

    def _on_error(self, error: Exception) -> None:
        damage = damage_message(error)
        if damage is not None:
            self.damage = damage
            self._show_summary(damage, repair=True)
            self.statusMessage.emit(damage)
        else:
            self._show_summary(_one_line(f"Failed: {error}"))
        self.libraryChanged.emit()  # part of it may have happened

    def _on_cancelled(self) -> None:
        self._show_summary("Cancelled. Papers added before the cancel stay in your library.")
        self.libraryChanged.emit()

    def _on_finished(self, worker: Worker) -> None:
        if worker is self._job:
            self._job = None
            self._job_done()

    def _job_done(self) -> None:
        self.progress_row.hide()
        self._update_actions()
        self.refresh()

    def _show_summary(self, text: str, details: Sequence[str] = (), repair: bool = False) -> None:
        self.summary.setText(text)
        self.summary_repair.setVisible(repair)
        self.details.clear()
        self.details.addItems(list(details))
        self.details_button.setVisible(bool(details))
        self.details_button.setChecked(False)
        self.details.hide()
        self.summary_row.show()

    def _set_details_visible(self, on: bool) -> None:
        self.details.setVisible(on)

    def dismiss_summary(self) -> None:
        self.summary_row.hide()
        self.details.hide()
        self.details_button.setChecked(False)


SPEC = register_panel(PanelSpec(
    id="library", title="Library", factory=LibraryPanel, area=Qt.DockWidgetArea.BottomDockWidgetArea,
    order=60, shortcut="Ctrl+Shift+L", description="The papers in your library: add PDFs, remove papers",
    tab_with="draft", visible=False, remember_visible=True))
