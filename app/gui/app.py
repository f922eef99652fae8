"""Creating the QApplication and running the main window (used by ``rhetorica gui``)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from app.gui.main_window import MainWindow
from app.gui.screenshot import Screenshot, ScreenshotPlan
from app.gui.workers import cancel_live_workers, wait_for_workers
from core.errors import RhetoricaError


def application() -> QApplication:
    app = QApplication.instance()
    if app is None:
        QGuiApplication.setApplicationName("Rhetorica")
        QGuiApplication.setOrganizationName("Rhetorica")
        QGuiApplication.setApplicationDisplayName("Rhetorica")
        app = QApplication(sys.argv[:1])
        from PySide6.QtGui import QIcon

        from core.paths import resources_dir

        app.setWindowIcon(QIcon(str(resources_dir() / "icons" / "rhetorica.svg")))
    # Qt's stubs type instance() as the QCoreApplication it is declared on; in this process it is
    # the QApplication created here (or by pytest-qt).
    return cast(QApplication, app)


def shutdown(window: MainWindow | None = None, timeout_ms: int = 5000) -> bool:
    """Cancel every running job first (the window's tracked ones, the panels' through the same tracker,
    and any other live worker: the model load, figure thumbnails, ...), then wait for them, so Python
    never exits under a running thread. Jobs check cancellation often (the draft's labelling between
    chunks and model batches), so they stop in time; True when every job did. One that does not emits
    nothing once Qt has deleted its QObjects at exit (``app.gui.workers._emit``)."""
    if window is not None:
        window.tracker.cancel_all()
    cancel_live_workers()
    return wait_for_workers(timeout_ms)


class _FirstPaint(QObject):
    def __init__(self, callback: Callable[[], None], parent: QObject) -> None:
        super().__init__(parent)
        self.callback: Callable[[], None] | None = callback

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and self.callback is not None:
            callback, self.callback = self.callback, None
            QTimer.singleShot(0, callback)  # after this paint has finished
        return False


def _on_first_paint(window: MainWindow, callback: Callable[[], None]) -> None:
    probe = _FirstPaint(callback, window)  # the window owns it (and keeps it alive)
    central = window.centralWidget()
    if central is not None:
        central.installEventFilter(probe)


@dataclass
class GuiRequest:
    """What ``rhetorica gui`` asked for (checked by the command before Qt starts)."""

    pdf: str | None = None
    model: str | None = None
    screenshot: str | None = None  # save the settled window here and quit (on a throwaway profile)
    draft_file: str | None = None  # with ``screenshot``: typed into the draft pane
    select_number: int | None = None  # the sentence to select, counted from 1 as the window shows it
    panels: list[str] = field(default_factory=list)  # shown and raised
    size: tuple[int, int] | None = None
    compare: str | None = None  # a second PDF: the alignment of ``pdf`` with it opens
    side_by_side: bool = False  # ... and its side-by-side window
    shown_probe: bool = False  # ``bench gui``: report the first paint and the first page, then quit
    use_cache: bool = True


def _probe_cold_start(window: MainWindow, pdf: str | None) -> None:
    """bench: report when the window is first painted (and the PDF's first page, if any), then quit."""
    def report_shown() -> None:
        print(f"RHETORICA_SHOWN {time.time():.6f}", flush=True)
        if not pdf:
            window.close()

    def report_first_page() -> None:
        print(f"RHETORICA_FIRST_PAGE {time.time():.6f}", flush=True)
        window.close()

    def report_error(stage: str, error: Exception) -> None:
        if stage in ("open", "parse"):  # a missing model does not stop the pages from showing
            print(f"RHETORICA_ERROR {error}", flush=True)
            window.close()

    _on_first_paint(window, report_shown)
    window.firstPageShown.connect(report_first_page)
    window.session.failed.connect(report_error)


def _compare_when_shown(window: MainWindow, other: str, side_by_side: bool) -> None:
    """Once the open paper has settled, line it up with ``other`` (the interactive ``--compare``)."""
    def start() -> None:
        window.settled.disconnect(start)
        if window.session.paper is not None:
            window.compare_with(other, side_by_side=side_by_side)

    window.settled.connect(start)


def run(request: GuiRequest) -> int:
    """Open the window as ``request`` asks; with a screenshot, on a throwaway profile (the user's saved
    draft and window layout are never read or written)."""
    if request.screenshot:
        from app.gui.throwaway_profile import throwaway_profile

        with throwaway_profile():
            return _run(request)
    return _run(request)


def _grow_corpus_in_background(window: MainWindow) -> None:
    """Issue 28.4: on first use the default phrase corpus grows in the background (the shipped extra
    text labelled once, resumable). Here, not in the window, so tests and screenshots never start it."""
    from app.gui.corpus_growth_job import CorpusGrowth

    growth = CorpusGrowth(window.tracker, window.models, window.statusBar().showMessage)
    growth.setParent(window)  # lives as long as the window; quitting cancels it through the tracker
    growth.start_when_ready()


def _run(request: GuiRequest) -> int:
    app = application()
    window = MainWindow(model_path=request.model, use_cache=request.use_cache)
    if request.size is not None:
        window.resize(*request.size)
    elif request.screenshot:
        window.resize(1500, 950)
    for panel in request.panels:
        if panel not in window.docks:
            window.close()
            raise RhetoricaError(f"no panel {panel!r}; panels: {', '.join(window.docks)}")
        window.dock_panels.show_panel(panel)
    window.show()
    if request.shown_probe:
        _probe_cold_start(window, request.pdf)
    elif not request.screenshot:
        _grow_corpus_in_background(window)
    shot = None
    if request.screenshot:
        draft_text = Path(request.draft_file).read_text(encoding="utf-8") if request.draft_file else None
        shot = Screenshot(window, ScreenshotPlan(
            Path(request.screenshot), panels=list(request.panels), draft_text=draft_text,
            select_number=request.select_number, compare=request.compare,
            side_by_side=request.side_by_side, opening=bool(request.pdf)))
        shot.start()
    elif request.compare and request.pdf:
        _compare_when_shown(window, request.compare, request.side_by_side)
    if request.select_number is not None and shot is None:
        _select_when_shown(window, request.select_number)
    if request.pdf:
        window.open_path(request.pdf)
    code = app.exec()
    shutdown(window)
    if shot is not None and shot.error:
        return 2
    if shot is not None and shot.paper_error:
        return 1  # saved, showing why the paper could not be opened: still a failure for a script
    return int(code)


def _select_when_shown(window: MainWindow, number: int) -> None:
    """Select sentence ``number`` (counted from 1) once the open paper has settled."""
    def select() -> None:
        window.settled.disconnect(select)
        paper = window.session.paper
        if paper is not None and 1 <= number <= len(paper.sentences):
            window.session.jump_to_sentence(number - 1)
        elif paper is not None:
            window.statusBar().showMessage(f"No sentence {number}: this paper has {len(paper.sentences)}")

    window.settled.connect(select)
