"""The main window: page view with role overlays, registered dock panels, menus, status bar."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path

from PySide6.QtCore import QByteArray, QMimeData, QPoint, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QGuiApplication,
    QKeySequence,
    QShortcut,
)
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QPlainTextEdit,
    QSpinBox,
    QStackedWidget,
    QTextEdit,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from app.gui import file_writes
from app.gui.banner import Banner
from app.gui.corrections import CorrectionController, SentenceTarget
from app.gui.docks import PanelDocks, on_some_screen
from app.gui.empty_state import EmptyState
from app.gui.escape_key import guard_escape
from app.gui.export_actions import EXPORT_FILTERS, AnalysisExporter
from app.gui.help import HELP_NAME, ShortcutsDialog
from app.gui.job_tracker import JobTracker
from app.gui.jump_view import show_target
from app.gui.legend import Legend
from app.gui.model_holder import ModelHolder, ModelOptions
from app.gui.navigation import SentenceNavigator
from app.gui.page_view import PageView
from app.gui.palette import RolePalette
from app.gui.panels.inspector import role_label_text
from app.gui.panels.registry import (
    AsksBeforeClosing,
    AsksToInsert,
    ChangesLibrary,
    ComparesPapers,
    CopiesItem,
    DraftSource,
    FollowsDraftSentence,
    FollowsLibrary,
    OffersFileActions,
    OffersToolbarActions,
    OpensDrafts,
    OpensPapers,
    RepairsLibrary,
    SaysStatus,
    TakesCorrections,
    TakesDraftContext,
    TakesDraftText,
    TakesText,
)
from app.gui.render_client import RenderClient
from app.gui.save_text import folder_problem
from app.gui.session import OpenDocument, Session
from app.gui.settings import CORRECTIONS, PAPERS, AppSettings
from app.gui.settings_dialog import SettingsDialog, SettingsValues
from app.gui.status import JobStatus
from app.gui.train_dialog import ModelSwitch, TrainDialog
from app.gui.widgets import combo_width_for
from core.cache import AnalysisCache
from core.document import Paper
from core.errors import RhetoricaError
from core.labelling.analysis import PaperAnalysis
from core.library.store import LibraryError
from core.model_api import RoleModel
from core.paths import sample_paper_path
from core.taxonomy.labels import ROLES

MODEL_LOAD_DELAY_MS = 150
MIN_WINDOW_SIDE = 400  # a remembered window smaller than this (or off every screen) opens at the default
STATUS_MS = 5000
CANCELLED_LINES = {  # Session.cancelled's stage -> what the banner says
    "parse": "Reading the paper was cancelled. Its pages stay shown; Resume reads it again.",
    "analysis": "Labelling the roles was cancelled. The pages are shown without roles; Resume labels them.",
    "embedding": "Preparing the paper for Suggestions, Search, Alignment and the library was cancelled. "
                 "Its roles stay shown and can be browsed; Resume (or using one of those panels) "
                 "finishes it.",
}
SIDE_BY_SIDE_KEY = "Ctrl+Shift+B"  # the window's: it works whether or not the Alignment panel is shown
TEXT_WIDGETS = (QPlainTextEdit, QTextEdit, QLineEdit)  # Ctrl+C copies their selection, not a sentence


def _draft_text(draft: DraftSource) -> str:
    return draft.text


def access_keyed(text: str, used: set[str]) -> str:
    """``text`` with an access key (``&``) before its first letter not in ``used`` (which gains it)."""
    for i, char in enumerate(text):
        if char.isalpha() and char.lower() not in used:
            used.add(char.lower())
            return f"{text[:i]}&{text[i:]}"
    return text


class MainWindow(QMainWindow):
    firstPageShown = Signal()
    analysisShown = Signal(int)  # overlay items built for a labelled paper
    errorShown = Signal(str)
    settled = Signal()  # the open request reached a final state (labelled, error, or no model)

    def __init__(self, settings: AppSettings | None = None, model_path: str | None = None,
                 use_cache: bool = True, load_model_at_start: bool = True) -> None:
        super().__init__()
        self._status_about: tuple[str, str | None] = ("", None)  # the last _notify line, and its paper
        self._closing_when_written = False  # "Wait for it": the window closes once the exports are written
        self.settings = settings or AppSettings()
        self.palette_ = RolePalette(self.settings.role_colors, self.settings.opacity)
        self.tracker = JobTracker()
        self._model_override = model_path
        self.models = ModelHolder(self.tracker, self._model_options())
        self.session = Session(self.tracker, self.models, self.palette_,
                               AnalysisCache() if use_cache else None)
        self.corrections = CorrectionController(self.session, parent=self)
        self.model_switch = ModelSwitch(self.settings, self.use_model_path, self._model_in_use, self)
        self.train_window: TrainDialog | None = None
        self.side_by_side_window: object | None = None  # opened by compare_with(..., side_by_side=True)
        self.setWindowTitle("Rhetorica")
        self.setAcceptDrops(True)
        self.resize(1400, 900)

        self.renderer = RenderClient()
        self.renderer.start()  # a child process renders pages; falls back to the UI thread if absent
        self.page_view = PageView(self.palette_, self.renderer)
        self.banner = Banner()
        self.empty = EmptyState()
        self.empty.openRequested.connect(self.open_dialog)
        self.empty.sampleRequested.connect(self.open_sample)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.page_view)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.banner)
        # a damaged analysis-cache entry was computed again: one line, not silence
        self.session.noted.connect(lambda line: self.banner.show_message("warning", line))
        layout.addWidget(self.stack, 1)
        self.setCentralWidget(central)

        self.navigator = SentenceNavigator(self.session, self.palette_, self._notify)
        self.exporter = AnalysisExporter(self, self.session, self.settings, self.banner, self._notify)
        self.dock_panels = PanelDocks(self, self.session, self.settings)
        self.panels = self.dock_panels.panels  # panel id -> widget
        self.docks = self.dock_panels.docks  # panel id -> QDockWidget
        self._build_actions()
        self.dock_panels.build()
        # Esc in the draft, a filter box or a spin box stays there; elsewhere it cancels the jobs
        self.escape_guard = guard_escape(self, self.docks.values())
        self._link_panels()
        self._build_menus()
        self._retire_panel_shortcuts()
        self._build_toolbar()
        self.job_status = JobStatus(self.statusBar(), self.tracker)
        self._connect()
        self._restore()
        self._update_actions()
        if load_model_at_start:
            # after the first paint: importing onnxruntime holds the GIL for a moment
            QTimer.singleShot(MODEL_LOAD_DELAY_MS, self.models.request)

    # -- construction -------------------------------------------------------------------
    def _model_options(self) -> ModelOptions:
        path = self._model_override or self.settings.model_path or None
        return ModelOptions(path=path, device=self.settings.device, threads=self.settings.threads or None)

    def _notify(self, message: str, paper: str | None = None) -> None:
        """``message`` in the status bar for a while; ``paper``: the PDF it is about (default: the open
        one), so that a line about a paper no longer shown can be cleared (:meth:`_drop_stale_status`)."""
        self._status_about = (message, paper or self.session.path)
        self.statusBar().showMessage(message, STATUS_MS)

    def _drop_stale_status(self) -> None:
        """A new paper is shown: a status line about another paper (an export of the previous one that
        finished while this one opened) goes."""
        message, paper = self._status_about
        if paper != self.session.path and message and self.statusBar().currentMessage() == message:
            self.statusBar().clearMessage()

    def _action(self, text: str, slot: Callable[[], object], shortcuts: list[str] | str | None = None,
                tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcuts:
            keys = [shortcuts] if isinstance(shortcuts, str) else shortcuts
            action.setShortcuts([QKeySequence(k) for k in keys])
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        self.addAction(action)  # shortcuts work even when menus are hidden
        return action

    def _build_actions(self) -> None:
        a = self._action
        self.act_open = a("&Open…", self.open_dialog, "Ctrl+O",
                          "Open a PDF")
        self.act_sample = a("Open the sa&mple paper", self.open_sample, None, "Open the bundled sample paper")
        self.act_close = a("&Close paper", self.close_paper, "Ctrl+W")
        kinds = [label.split(" ")[0] for label in EXPORT_FILTERS.values()]
        self.act_export = a("&Export analysis…", self.exporter.dialog, "Ctrl+E",
                            f"Export the roles as {', '.join(kinds[:-1])} or {kinds[-1]}")
        self.act_export_fmt = {
            fmt: a(f"Export as &{label.split(' ')[0]}…", partial(self.exporter.dialog, fmt))
            for fmt, label in EXPORT_FILTERS.items()}
        self.act_settings = a("Setti&ngs…", self.settings_dialog, "Ctrl+,")
        self.act_quit = a("&Quit", self.close, "Ctrl+Q")
        self.act_copy = a("&Copy", self.copy, "Ctrl+C", "Copy the selected text or sentence")
        self.act_zoom_in = a("Zoom &in", self.page_view.zoom_in, ["Ctrl+=", "Ctrl++"])
        self.act_zoom_out = a("Zoom &out", self.page_view.zoom_out, "Ctrl+-")
        self.act_fit = a("&Fit width", self.page_view.fit_width, "Ctrl+0")
        self.act_next_page = a("&Next page", self.page_view.next_page, ["Ctrl+PgDown", "Alt+Down"])
        self.act_prev_page = a("Pre&vious page", self.page_view.prev_page, ["Ctrl+PgUp", "Alt+Up"])
        nav = self.navigator
        self.act_next_sentence = a("&Next sentence", lambda: nav.step(1), "Ctrl+]")
        self.act_prev_sentence = a("&Previous sentence", lambda: nav.step(-1), "Ctrl+[")
        self.act_next_same = a("Next sentence of the &same role", lambda: self.find_same_role(1), "F3")
        self.act_prev_same = a("Pre&vious sentence of the same role", lambda: self.find_same_role(-1),
                               "Shift+F3")
        used: set[str] = set()
        self.act_next_role = {role: a(f"Next {access_keyed(role, used)} sentence",
                                      partial(nav.find_role, role, 1), f"Ctrl+{i + 1}")
                              for i, role in enumerate(ROLES)}
        self.act_cancel = a("&Cancel running jobs", self.cancel_jobs, "Esc",
                            "Stop the running jobs (Esc, unless you are typing in a text box)")
        self.act_side_by_side = a("&Side by side (alignment)", self.side_by_side, SIDE_BY_SIDE_KEY,
                                  "Show the aligned texts next to each other")
        self.act_shortcuts = a("&Keyboard shortcuts", self.show_shortcuts, ["F1", "Ctrl+?"])
        self.act_correct_role = self.corrections.install_shortcuts(self)  # Alt+1…Alt+6
        self.act_export_corrections = a("E&xport corrections…", self.export_corrections_dialog, None,
                                        "Save your corrected labels as JSONL")
        self.act_import_corrections = a("&Import corrections…", self.import_corrections_dialog, None,
                                        "Add corrected labels from a JSONL file to your library")
        self.act_train = a("&Train on my corrections…", self.train_dialog, None,
                           "Train the model on your corrections and compare it with the one in use")
        self.act_rollback = a("&Roll back to the previous model", self.roll_back_model, None,
                              "Use the model in use before the last trained one again")

    def _link_panels(self) -> None:
        """Besides the session, links between panels by the capabilities they declare (the protocols
        of :mod:`app.gui.panels.registry`; no panel is named): the sentence being written (a
        :class:`DraftSource`, the draft) feeds every :class:`FollowsDraftSentence` (the suggestions),
        its text every :class:`TakesDraftText` (the alignment) and its context every
        :class:`TakesDraftContext`; text a panel asks to insert (:class:`AsksToInsert`) goes to the
        :class:`TakesText` panel, shown and in front; a changed library (:class:`ChangesLibrary`)
        reaches every :class:`FollowsLibrary`. :class:`OpensPapers` open a PDF as File › Open does,
        :class:`SaysStatus` messages show in the status bar, and :class:`TakesCorrections` get the
        correction controller."""
        panels = list(self.panels.items())
        for source_id, source in panels:
            others = [(i, p) for i, p in panels if i != source_id]
            if isinstance(source, DraftSource):
                self._link_draft(source, [p for _i, p in others])
            if isinstance(source, AsksToInsert):
                for target_id, target in others:
                    if isinstance(target, TakesText):
                        source.textInsertRequested.connect(partial(self._insert_into, target_id))
            if isinstance(source, ChangesLibrary):
                for _i, target in others:
                    if isinstance(target, FollowsLibrary):
                        source.libraryChanged.connect(target.library_changed)
            if isinstance(source, OpensPapers):
                source.openRequested.connect(self.open_path)
            if isinstance(source, SaysStatus):
                source.statusMessage.connect(self._notify)
            if isinstance(source, TakesCorrections):  # the inspector and the draft: "Correct role/function"
                source.set_corrections(self.corrections)
        for dock in self.docks.values():  # a panel the user turns on comes to the front of its tabs
            dock.toggleViewAction().triggered.connect(lambda on, d=dock: on and d.raise_())

    @staticmethod
    def _link_draft(draft: DraftSource, targets: list[QWidget]) -> None:
        for target in targets:
            if isinstance(target, FollowsDraftSentence):
                draft.currentSentenceChanged.connect(target.set_draft_sentence)
            if isinstance(target, TakesDraftText):
                target.set_draft_provider(partial(_draft_text, draft))
            if isinstance(target, TakesDraftContext):
                target.set_draft_context_provider(draft.current_context)

    def _insert_into(self, panel_id: str, text: str) -> None:
        panel = self.panels[panel_id]
        if isinstance(panel, TakesText):
            self.dock_panels.show_panel(panel_id)
            panel.insert_text(text)

    def _comparer(self) -> tuple[str, ComparesPapers] | None:
        for panel_id, panel in self.panels.items():
            if isinstance(panel, ComparesPapers):
                return panel_id, panel
        return None

    def compare_with(self, path: str, side_by_side: bool = False) -> bool:
        """Open the panel that compares papers (:class:`ComparesPapers`, the alignment) on the open paper
        and the PDF ``path``; with ``side_by_side``, its side-by-side window opens once the alignment is
        listed. False (and a banner) when no panel compares papers or nothing could start."""
        found = self._comparer()
        if found is None:
            self.banner.show_message("error", "No panel here compares two papers.")
            return False
        panel_id, panel = found
        self.dock_panels.show_panel(panel_id)
        if side_by_side:
            def open_pages(_alignment: object) -> None:
                panel.alignmentShown.disconnect(open_pages)
                self.side_by_side_window = panel.open_side_by_side()

            panel.alignmentShown.connect(open_pages)
        return panel.compare_with_pdf(str(path))

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addActions([self.act_open, self.act_sample])
        self.recent_menu = QMenu("Open &recent", self)
        self.recent_menu.aboutToShow.connect(self._refresh_recent)  # files gone since are marked
        file_menu.addMenu(self.recent_menu)
        file_menu.addAction(self.act_close)
        file_menu.addSeparator()
        panel_actions = [action for panel in self.panels.values()  # e.g. "Add this paper to my library"
                         if isinstance(panel, OffersFileActions) for action in panel.file_menu_actions()]
        if panel_actions:
            file_menu.addActions(panel_actions)
            file_menu.addSeparator()
            self.addActions(panel_actions)  # their shortcuts (Ctrl+S: Save draft) work and are in Help
        file_menu.addAction(self.act_export)
        export_menu = file_menu.addMenu("E&xport as")
        export_menu.addActions(list(self.act_export_fmt.values()))
        export_menu.addAction(self.exporter.annotated_pdf_action())  # issue 27.4
        file_menu.addSeparator()
        file_menu.addAction(self.act_settings)
        file_menu.addSeparator()
        file_menu.addAction(self.act_quit)
        edit_menu = bar.addMenu("&Edit")
        edit_menu.addAction(self.act_copy)
        edit_menu.addSeparator()
        edit_menu.addActions([self.act_next_sentence, self.act_prev_sentence, self.act_next_same,
                              self.act_prev_same])
        find_menu = edit_menu.addMenu("&Find next sentence of role")
        find_menu.addActions(list(self.act_next_role.values()))
        view_menu = bar.addMenu("&View")
        view_menu.addActions([self.act_zoom_in, self.act_zoom_out, self.act_fit])
        view_menu.addSeparator()
        view_menu.addActions([self.act_next_page, self.act_prev_page])
        view_menu.addSeparator()
        panels_menu = view_menu.addMenu("&Panels")
        panels_menu.addActions(self.dock_panels.toggle_actions())
        view_menu.addAction(self.act_side_by_side)
        view_menu.addSeparator()
        view_menu.addAction(self.act_cancel)
        tools_menu = bar.addMenu("&Tools")
        correct_menu = tools_menu.addMenu("&Correct the selected sentence's role")
        correct_menu.addActions(self.act_correct_role)
        tools_menu.addSeparator()
        tools_menu.addActions([self.act_export_corrections, self.act_import_corrections])
        tools_menu.addSeparator()
        tools_menu.addActions([self.act_train, self.act_rollback])
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.act_shortcuts)
        self._refresh_recent()

    def _build_toolbar(self) -> None:
        for action, short in ((self.act_zoom_out, "−"), (self.act_zoom_in, "+"), (self.act_fit, "Fit"),
                              (self.act_prev_page, "▲"), (self.act_next_page, "▼")):
            action.setIconText(short)  # compact toolbar buttons; menus keep the full text
            keys = ", ".join(k.toString() for k in action.shortcuts())
            action.setToolTip(f"{action.text().replace('&', '')} ({keys})")
        toolbar = QToolBar("Main")
        toolbar.setObjectName("toolbar-main")
        toolbar.setMovable(False)
        self.addToolBar(toolbar)
        toolbar.addAction(self.act_open)
        toolbar.addSeparator()
        toolbar.addAction(self.act_zoom_out)
        self.zoom_box = QComboBox()
        self.zoom_box.setEditable(True)
        self.zoom_box.addItems([f"{int(z * 100)}%" for z in (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0)])
        self.zoom_box.setFixedWidth(combo_width_for(self.zoom_box, "400%"))
        self.zoom_box.setToolTip("Zoom")
        self.zoom_box.setEditText("")
        self.zoom_box.textActivated.connect(self._zoom_from_text)
        toolbar.addWidget(self.zoom_box)
        toolbar.addAction(self.act_zoom_in)
        toolbar.addAction(self.act_fit)
        toolbar.addSeparator()
        toolbar.addAction(self.act_prev_page)
        self.page_box = QSpinBox()
        self.page_box.setRange(0, 0)
        self.page_box.setToolTip("Page")
        self.page_box.editingFinished.connect(lambda: self.page_view.go_to_page(self.page_box.value() - 1))
        toolbar.addWidget(self.page_box)
        self.page_total = QLabel(" of 0 ")
        toolbar.addWidget(self.page_total)
        toolbar.addAction(self.act_next_page)
        toolbar.addSeparator()
        for panel in self.panels.values():  # panels that offer a one-click action (graphical abstract)
            if isinstance(panel, OffersToolbarActions):
                toolbar.addActions(panel.toolbar_actions())
        self.legend = Legend(self.palette_)
        toolbar.addWidget(self.legend)

    def _connect(self) -> None:
        s = self.session
        s.documentOpened.connect(self._on_document_opened)
        s.documentClosed.connect(self._on_document_closed)
        s.paperReady.connect(self._on_paper_ready)
        s.analysisReady.connect(self._on_analysis_ready)
        s.failed.connect(self._on_failed)
        s.cancelled.connect(self._on_cancelled)
        s.sentenceSelected.connect(self._on_sentence_selected)
        s.jumpRequested.connect(lambda page, bbox: show_target(self.page_view, page, bbox))
        self.models.ready.connect(self._on_model_ready)
        self.models.failed.connect(self._on_model_failed)
        self.models.noticed.connect(self._on_model_notice)
        self.page_view.sentenceClicked.connect(s.select_sentence)
        self.page_view.firstPageShown.connect(self.firstPageShown)
        self.page_view.overlaysBuilt.connect(self._on_overlays_built)
        self.page_view.pageChanged.connect(self._on_page_changed)
        self.page_view.zoomChanged.connect(self._on_zoom_changed)
        self.page_view.textSelected.connect(self._on_text_selected)
        self.page_view.contextMenuRequested.connect(self._page_menu)
        self.palette_.changed.connect(self._save_palette)
        self.corrections.message.connect(self._notify)
        self.corrections.corrected.connect(self._on_corrected)
        self.corrections.libraryFailed.connect(self._on_library_failed)
        recolour = self.corrections.apply_to_overlays
        self.corrections.changed.connect(lambda: recolour(self.page_view.overlay_items))
        self.page_view.overlaysBuilt.connect(lambda _n: recolour(self.page_view.overlay_items))
        self.model_switch.switched.connect(lambda _p: self._update_actions())

    def _restore(self) -> None:
        """The window's remembered size, place and docks, sanitised: a window that would open off
        every screen or at an absurd size opens at the default size instead, and the docks are
        checked by :meth:`PanelDocks.sanitise` (no pile of remembered panels, no lost floating dock)."""
        default_size = self.size()
        geometry = self.settings.geometry
        if geometry is not None and self.restoreGeometry(geometry) \
                and not on_some_screen(self.frameGeometry(), least=MIN_WINDOW_SIDE):
            self._open_at_default_place(default_size)
        state = self.settings.window_state
        if state is None or not self._restore_layout(state):
            QTimer.singleShot(0, self.dock_panels.apply_initial_sizes)  # once the window is laid out
        self.dock_panels.sanitise()

    def _restore_layout(self, state: QByteArray) -> bool:
        """Restore the remembered toolbars and docks; False when ``state`` cannot be restored cleanly (a
        settings file cut short or damaged: Qt then leaves the toolbar out of its area, or the toolbar
        and the status bar unplaced over the menu bar): the default layout is put back and the stored
        state dropped."""
        default = self.saveState()
        if self.restoreState(state) and self._layout_is_sound():
            return True
        self.restoreState(default)
        self.settings.forget_window_state()
        self._notify("The remembered window layout could not be restored; the default layout is used")
        return False

    def _layout_is_sound(self) -> bool:
        """Every toolbar in an area, below the menu bar, and the status bar along the window's bottom."""
        layout = self.layout()
        if layout is not None:
            layout.activate()
        window, menu = self.rect(), self.menuBar().geometry()
        for toolbar in self.findChildren(QToolBar):
            if toolbar.parent() is not self or toolbar.isHidden() or toolbar.isFloating():
                continue
            place = toolbar.geometry()
            if self.toolBarArea(toolbar) == Qt.ToolBarArea.NoToolBarArea or not window.contains(place) \
                    or (not menu.isEmpty() and place.intersects(menu)):
                return False
        status = self.statusBar()
        return status.isHidden() or (status.geometry().bottom() == window.bottom()
                                     and status.width() == window.width())

    def _open_at_default_place(self, size: QSize) -> None:
        """The default size (no larger than the primary screen's free area), centred on that screen."""
        self.setWindowState(Qt.WindowState.WindowNoState)
        screen = QGuiApplication.primaryScreen()
        if screen is None:
            self.resize(size)
            return
        area = screen.availableGeometry()
        frame = QRect(QPoint(0, 0), size.boundedTo(area.size()))
        frame.moveCenter(area.center())
        self.resize(frame.size())
        self.move(frame.topLeft())

    # -- opening ------------------------------------------------------------------------
    def open_path(self, path: str | os.PathLike[str]) -> bool:
        self.banner.dismiss()
        self.empty.show_error("")
        return self.session.open(str(path))

    def open_dialog(self) -> None:
        recent = self.settings.recent_files
        start = str(Path(recent[0]).parent) if recent and Path(recent[0]).parent.is_dir() \
            else self.settings.folder_for(PAPERS)
        path, _ = QFileDialog.getOpenFileName(self, "Open a paper", start, "PDF files (*.pdf);;All files (*)")
        if path:
            self.open_path(path)

    def open_sample(self) -> None:
        self.open_path(sample_paper_path())

    def close_paper(self) -> None:
        self.session.close()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self._dropped_path(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if self._dropped_path(event) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        path = self._dropped_path(event)
        if path is not None:
            event.acceptProposedAction()
            if self._open_dropped_draft(path):
                self.empty.show_error("")  # an earlier drop's error is about another file: stale now
            else:
                self.open_path(path)

    def _open_dropped_draft(self, path: str) -> bool:
        """A draft file (.tex, .md, .docx, .txt) dropped anywhere goes to the draft pane, not the page."""
        from core.draft_formats import DRAFT_SUFFIXES

        if Path(path).suffix.lower() not in DRAFT_SUFFIXES:
            return False
        for panel_id, panel in self.panels.items():
            if isinstance(panel, OpensDrafts):
                self.dock_panels.show_panel(panel_id)
                panel.open_draft(path)
                return True
        return False

    @staticmethod
    def _dropped_path(event: QDragEnterEvent | QDragMoveEvent | QDropEvent) -> str | None:
        mime: QMimeData | None = event.mimeData()
        if mime is None or not mime.hasUrls():
            return None
        for url in mime.urls():
            if url.isLocalFile():
                return url.toLocalFile()
        return None

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        files = self.settings.recent_files
        for i, path in enumerate(files):
            missing = "" if Path(path).is_file() else "  (not found)"
            action = self.recent_menu.addAction(f"&{i + 1}  {Path(path).name.replace('&', '&&')}{missing}")
            action.setToolTip(path)
            action.setStatusTip(path)
            action.triggered.connect(lambda _=False, p=path: self.open_recent(p))
        if not files:
            self.recent_menu.addAction("(none)").setEnabled(False)
        else:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear list", self._clear_recent)

    def open_recent(self, path: str) -> bool:
        """Open a recent file; one that is no longer there is said so and taken off the list."""
        if not Path(path).is_file():
            self.settings.recent_files = [p for p in self.settings.recent_files if p != path]
            self._refresh_recent()
        return self.open_path(path)

    def _clear_recent(self) -> None:
        self.settings.recent_files = []
        self._refresh_recent()

    # -- session events -----------------------------------------------------------------
    def _on_document_opened(self, document: OpenDocument) -> None:
        self.stack.setCurrentWidget(self.page_view)
        self.page_view.set_document(document.doc, document.page_sizes, zoom=self.settings.zoom,
                                     path=document.path)
        self.page_box.setRange(1, len(document.page_sizes))
        self.page_total.setText(f" of {len(document.page_sizes)} ")
        self.setWindowTitle(f"{Path(document.path).name} — Rhetorica")
        self.settings.add_recent(document.path)
        self._refresh_recent()
        name, pages = Path(document.path).name, len(document.page_sizes)
        self.statusBar().showMessage(f"Opened {name}: {pages} pages", 4000)
        self._update_actions()

    def _on_document_closed(self) -> None:
        self.legend.set_counts(None)
        self.page_view.clear()
        self.stack.setCurrentWidget(self.empty)
        self.page_box.setRange(0, 0)
        self.page_total.setText(" of 0 ")
        self.setWindowTitle("Rhetorica")
        self._update_actions()

    def _on_paper_ready(self, paper: Paper) -> None:
        self._drop_stale_status()
        if paper.title:
            self.setWindowTitle(f"{paper.title} — Rhetorica")
        if self.session.analysis is None:
            self.page_view.set_sentences(paper)
        self.statusBar().showMessage(
            f"{len(paper.sentences)} sentences in {len(paper.sections)} sections, "
            f"{len(paper.figures)} figures/tables", 5000)
        if self.models.error is not None:
            self._show_model_error(self.models.error)
        self._update_actions()

    def _on_analysis_ready(self, analysis: PaperAnalysis) -> None:
        counts: dict[str, int] = {}
        for prediction in analysis.roles:
            counts[prediction.label] = counts.get(prediction.label, 0) + 1
        self.legend.set_counts(counts)
        if self.session.paper is not None:
            self.page_view.set_overlays(self.session.paper, analysis)

    def _on_overlays_built(self, count: int) -> None:
        self._drop_stale_status()
        self._update_actions()
        if self.session.analysis is not None:
            self.analysisShown.emit(count)
            self.settled.emit()
        elif self.models.error is not None:
            self.settled.emit()

    def _on_failed(self, stage: str, error: Exception) -> None:
        if stage == "model":
            self._show_model_error(error)
            if self.session.paper is not None and not self.page_view.overlays_pending:
                self.settled.emit()
            return
        titles = {"open": "Cannot open this file", "parse": "Cannot read this paper",
                  "analysis": "Labelling failed"}
        message = f"{titles.get(stage, 'Error')}: {error}"
        if stage == "open" and self.session.document is None:
            self.stack.setCurrentWidget(self.empty)  # no paper: the message goes in the empty state
            self.empty.show_error(message)
            self.banner.dismiss()
        else:
            self.banner.show_message("error", message, [("Open another…", self.open_dialog)])
        self.errorShown.emit(message)
        self.settled.emit()
        self._update_actions()

    def _on_cancelled(self, stage: str) -> None:
        """What stopped, in the banner, and what still works (Resume starts it again)."""
        self.banner.show_message("info", CANCELLED_LINES.get(stage, CANCELLED_LINES["analysis"]),
                                 [("Resume", self._resume)])
        self.settled.emit()

    def _resume(self) -> None:
        self.banner.dismiss()
        self.session.resume()

    def _on_model_ready(self, _model: RoleModel) -> None:
        self.empty.show_notice("")
        self._update_actions()

    def _on_model_notice(self, message: str) -> None:
        """The chosen bundle was refused and the shipped one is in use: say so, once, in the banner."""
        self.banner.show_message("warning", message, [("Settings…", self.settings_dialog)])

    def _on_model_failed(self, error: Exception) -> None:
        self.empty.show_notice(f"No model bundle could be loaded ({error}). Papers still open, "
                               "without roles: choose a bundle in File > Settings.")
        self._show_model_error(error)
        self._update_actions()

    def _show_model_error(self, error: Exception) -> None:
        if self.banner.isVisible() and self.banner.kind == "error":
            return  # a file error is more urgent; the model warning comes back with the next paper
        message = (f"No usable model bundle: {error}. Pages and sections are shown without roles; "
                   "choose a bundle in Settings.")
        self.banner.show_message("warning", message, [("Settings…", self.settings_dialog),
                                                      ("Retry", self.models.retry)])
        self.errorShown.emit(message)

    def _on_sentence_selected(self, index: int) -> None:
        self.page_view.select_sentence(index)
        paper = self.session.paper
        if paper is not None and 0 <= index < len(paper.sentences):
            prediction = self.session.role_of(index)
            # the role in the inspector's words: "background 98%", not a raw 0.98
            role = f" — {' '.join(role_label_text(prediction).split())}" if prediction else ""
            self.statusBar().showMessage(f"Sentence {index + 1} of {len(paper.sentences)}{role}", 5000)
            self.dock_panels.reveal_for_selection()

    def _on_page_changed(self, page: int) -> None:
        if page >= 0 and self.page_box.value() != page + 1:
            self.page_box.blockSignals(True)
            self.page_box.setValue(page + 1)
            self.page_box.blockSignals(False)

    def _on_zoom_changed(self, zoom: float) -> None:
        self.zoom_box.setEditText(f"{zoom * 100:.0f}%")
        self.settings.zoom = self.page_view.preferred_zoom  # 0.0: the next paper fits the width too

    def _zoom_from_text(self, text: str) -> None:
        try:
            value = float(text.strip().rstrip("%")) / 100
        except ValueError:
            return
        self.page_view.set_zoom(value)

    def _page_menu(self, index: int, global_pos: QPoint) -> None:
        menu = QMenu(self)
        if self.page_view.selected_text:
            menu.addAction("Copy selected text", self.copy)
        if index >= 0:
            self.session.select_sentence(index)
            menu.addAction("Copy sentence", partial(self.navigator.copy_sentence, index))
            if self.session.role_of(index) is not None:
                menu.addAction(self.act_next_same)
                menu.addAction(self.act_prev_same)
                menu.addSeparator()
                self.corrections.add_to_menu(menu, index)
        menu.addSeparator()
        menu.addActions([self.act_zoom_in, self.act_zoom_out, self.act_fit])
        menu.popup(global_pos)

    def _on_text_selected(self, text: str) -> None:
        if text:
            self.statusBar().showMessage(f"{len(text)} characters selected — Ctrl+C copies them", 5000)

    def _save_palette(self) -> None:
        self.settings.role_colors = self.palette_.colors()
        self.settings.opacity = self.palette_.opacity

    def _update_actions(self) -> None:
        has_doc = self.session.document is not None
        for action in (self.act_close, self.act_zoom_in, self.act_zoom_out, self.act_fit, self.act_next_page,
                       self.act_prev_page, self.act_next_sentence, self.act_prev_sentence):
            action.setEnabled(has_doc)
        labelled = self.session.analysis is not None
        for action in (self.act_export, *self.act_export_fmt.values(), self.act_next_same,
                       self.act_prev_same, *self.act_next_role.values(), *self.act_correct_role):
            action.setEnabled(labelled)
        self.act_rollback.setEnabled(self.model_switch.can_roll_back)

    # -- commands -----------------------------------------------------------------------
    def copy(self) -> str:
        focus = self.focusWidget()
        if isinstance(focus, TEXT_WIDGETS):  # a panel's text box (or its subclass) copies its own selection
            focus.copy()
            return ""
        if isinstance(focus, CopiesItem):  # a panel's list that copies its selected row
            return str(focus.copy_selected_item())
        fallback = ""
        paper = self.session.paper
        if paper is not None and 0 <= self.session.selected < len(paper.sentences):
            fallback = paper.sentences[self.session.selected].text
        return self.page_view.copy_selection(fallback)

    def cancel_jobs(self) -> list[str]:
        """Cancel the running jobs (Esc, View › Cancel running jobs); the status bar names them."""
        named = self.tracker.cancel_all_named()
        if named:
            self.statusBar().showMessage(f"Cancelled: {'; '.join(dict.fromkeys(named))}", STATUS_MS)
        return named

    def find_same_role(self, step: int) -> int:
        """F3 / Shift+F3: the next / previous sentence of the selected one's role. With none selected
        they start at the first / last sentence and say so (not silence)."""
        paper, session = self.session.paper, self.session
        if session.selected >= 0 or paper is None or not paper.sentences or session.analysis is None:
            return self.navigator.find_role(None, step)
        index = 0 if step > 0 else len(paper.sentences) - 1
        session.jump_to_sentence(index)
        key = "F3" if step > 0 else "Shift+F3"
        role = session.role_of(index)
        of_role = f" ({role.label})" if role is not None else ""
        self._notify(f"No sentence was selected: {key} started at the {'first' if step > 0 else 'last'} "
                     f"sentence{of_role}; press it again for the next of its role")
        return index

    def side_by_side(self) -> object | None:
        """Ctrl+Shift+B: the side-by-side window of the alignment listed by the panel that compares papers
        (:class:`ComparesPapers`), shown or not; with nothing aligned yet, that panel comes to the front
        and the status bar says what to do."""
        found = self._comparer()
        if found is None:
            return None
        panel_id, panel = found
        window = panel.open_side_by_side()
        if window is None:
            self.dock_panels.show_panel(panel_id)
            self._notify("Nothing is aligned yet: compare the paper with a PDF or with the draft first")
        else:
            self.side_by_side_window = window
        return window

    def settings_dialog(self) -> None:
        values = SettingsValues(model_path=self.settings.model_path, device=self.settings.device,
                                threads=self.settings.threads, colors=self.palette_.colors(),
                                opacity=self.palette_.opacity)
        cache = self.session.cache
        dialog = SettingsDialog(values, self, clear_cache=cache.clear if cache is not None else None)
        if dialog.exec():
            self.apply_settings(dialog.values())

    def apply_settings(self, values: SettingsValues) -> None:
        self.settings.model_path = values.model_path
        self.settings.device = values.device
        self.settings.threads = values.threads
        self.palette_.set_colors(values.colors)
        self.palette_.set_opacity(values.opacity)
        if values.model_path:
            self._model_override = None  # an explicit choice replaces the command-line bundle
        if self.models.configure(self._model_options()):
            self.banner.dismiss()
            self.models.request()
            self.session.reanalyze()

    # -- corrections and the models trained on them (issue 15) ----------------------------
    def _on_corrected(self, target: object, field: str, label: str) -> None:
        if field != "role" or not isinstance(target, SentenceTarget):
            return
        if not self.corrections.is_open_paper(target):
            return
        items = self.page_view.overlay_items
        if 0 <= target.position < len(items):
            self.corrections.apply_to_overlays([items[target.position]])

    def _on_library_failed(self, line: str, repairable: bool, asked: bool) -> None:
        """The library could not store or give the corrections: the line in the banner, with the Library
        panel's "Repair library…" when that helps (reading them for a paper just opened does not cover
        a more urgent banner; the status bar says it then)."""
        if not asked and self.banner.isVisible():
            self._notify(line)
            return
        actions = [("Repair library…", self.repair_library)] if repairable else []
        self.banner.show_message("error", line, actions)
        self.errorShown.emit(line)

    def repair_library(self) -> None:
        """The Library panel's "Repair library…", shown in front."""
        for panel_id, panel in self.panels.items():
            if isinstance(panel, RepairsLibrary):
                self.banner.dismiss()
                self.dock_panels.show_panel(panel_id)
                panel.repair_library()
                return

    def export_corrections(self, path: str | Path) -> int:
        """Every correction as JSONL at ``path`` (-1, said in the banner, when ``path`` is a folder or the
        library cannot be read)."""
        if problem := folder_problem(path):
            self.banner.show_message("error", problem)
            return -1
        try:
            return self.corrections.export_to(path)
        except LibraryError as error:
            self.corrections.report(error, "Your corrections were not exported")
            return -1

    def import_corrections(self, path: str | Path) -> int:
        """Add a JSONL file's corrections; a bad file is reported in the banner (returns -1)."""
        try:
            return self.corrections.import_from(path)
        except LibraryError as error:
            self.corrections.report(error, "Your corrections were not imported")
            return -1
        except (RhetoricaError, OSError) as error:
            self.banner.show_message("error", f"Cannot import corrections: {error}")
            return -1

    def export_corrections_dialog(self) -> None:
        """Asks where, in the folder corrections were last exported to or imported from (else the
        documents folder: never the process's working folder)."""
        suggested = str(Path(self.settings.folder_for(CORRECTIONS)) / "corrections.jsonl")
        path, _ = QFileDialog.getSaveFileName(self, "Export corrections", suggested,
                                              "JSON lines (*.jsonl);;All files (*)")
        if path:
            self.settings.remember_folder(CORRECTIONS, path)
            try:
                self.export_corrections(path)
            except OSError as error:  # the chosen file cannot be written
                self.banner.show_message("error", f"Cannot export corrections: {error}")

    def import_corrections_dialog(self) -> None:
        start = self.settings.folder_for(CORRECTIONS)
        path, _ = QFileDialog.getOpenFileName(self, "Import corrections", start,
                                              "JSON lines (*.jsonl);;All files (*)")
        if path:
            self.settings.remember_folder(CORRECTIONS, path)
            self.import_corrections(path)

    def _model_in_use(self) -> str:
        """The bundle the holder loads ("" for the bundled default)."""
        return self.models.options.path or ""

    def _training_bundle(self) -> Path:
        from models.bundle import default_bundle_path

        return Path(self._model_in_use()) if self._model_in_use() else default_bundle_path()

    def use_model_path(self, path: str) -> None:
        """Switch to the bundle ``path`` now ("" = the bundled default): no restart; the open paper is
        labelled again by the new model (cached analyses are by model id)."""
        self.settings.model_path = path
        self._model_override = None
        if self.models.configure(self._model_options()):
            self.banner.dismiss()
            self.models.request()
            self.session.reanalyze()
        self._update_actions()

    def roll_back_model(self) -> bool:
        done = self.model_switch.roll_back()
        self._notify("Rolled back to the previous model" if done else "No previous model to roll back to")
        return done

    def train_dialog(self) -> TrainDialog:
        """Show the one training dialog (a second request while it trains just raises it)."""
        if self.train_window is None:
            self.train_window = TrainDialog(self.corrections, self.tracker, self.model_switch,
                                            self._training_bundle, threads=self.settings.threads or 2,
                                            parent=self)
        elif not self.train_window.running:
            self.train_window.refresh()
        self.train_window.show()
        self.train_window.raise_()
        self.train_window.activateWindow()
        return self.train_window

    def show_shortcuts(self) -> None:
        ShortcutsDialog(self.shortcut_actions(), self).exec()

    def shortcut_actions(self) -> list[QAction]:
        """The window's actions with a key, then the panels' own (Del in the Library's list), each named
        with its panel in Help › Keyboard shortcuts."""
        own = [a for a in self.actions() if any(not s.isEmpty() for s in a.shortcuts())]
        for panel_id, panel in self.panels.items():
            title = self.docks[panel_id].windowTitle() if panel_id in self.docks else panel_id
            for action in panel.findChildren(QAction):
                if action not in own and any(not s.isEmpty() for s in action.shortcuts()):
                    if not action.property(HELP_NAME):
                        action.setProperty(HELP_NAME, f"{action.text()} (in the {title} panel)")
                    own.append(action)
        return own

    def _retire_panel_shortcuts(self) -> None:
        """A panel's own window-wide ``QShortcut`` for a key the window now has an action for (the
        Alignment's Ctrl+Shift+B) would make the key ambiguous, so that neither fires: it is turned off."""
        keys = {key.toString() for action in self.actions() for key in action.shortcuts()}
        for shortcut in self.findChildren(QShortcut):
            if shortcut.key().toString() in keys:
                shortcut.setEnabled(False)

    # -- closing ------------------------------------------------------------------------
    def _panels_may_close(self) -> bool:
        """Panels holding a file's unsaved edits (:class:`AsksBeforeClosing`: the draft pane) ask about
        them first; False: the author chose Cancel."""
        asking = [panel for panel in self.panels.values() if isinstance(panel, AsksBeforeClosing)]
        return all(panel.may_close() for panel in asking)

    def _exports_may_close(self) -> bool:
        """A file still being written (an annotated PDF, a graphical abstract's PNG: ``file_writes``) asks
        first: "Wait for it" (the window closes once it is written), "Quit anyway" (it is cancelled) or
        "Cancel"; False: the window stays open for now."""
        writing = file_writes.files_being_written(self.tracker)
        if not writing:
            return True
        answer = file_writes.ask_while_writing(self, writing)
        if answer == file_writes.WAIT and not self._closing_when_written:
            self._closing_when_written = True
            self.tracker.changed.connect(self._close_when_written)
            self._notify("The window closes once the export is written (Esc cancels it)")
        return answer == file_writes.QUIT

    def _close_when_written(self) -> None:
        if self._closing_when_written and not file_writes.files_being_written(self.tracker):
            self._stop_waiting_to_close()
            QTimer.singleShot(0, self, self.close)  # after the job's own slots (its "Exported …" line)

    def _stop_waiting_to_close(self) -> None:
        if self._closing_when_written:
            self._closing_when_written = False
            self.tracker.changed.disconnect(self._close_when_written)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._exports_may_close() or not self._panels_may_close():
            event.ignore()  # the author cancelled or waits: the window stays as it was
            return
        self._stop_waiting_to_close()
        self.settings.geometry = self.saveGeometry()
        self.settings.window_state = self.saveState()
        self.dock_panels.save()
        self.settings.sync()
        self.tracker.cancel_all()
        self.renderer.stop()
        super().closeEvent(event)

