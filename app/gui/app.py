"""Creating the QApplication and running the main window (used by ``rhetorica gui``)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from app.gui.main_window import MainWindow
from app.gui.workers import thread_pool


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
    return app  # type: ignore[return-value]


def shutdown(window: MainWindow | None = None, timeout_ms: int = 5000) -> None:
    """Cancel running jobs and wait for the pool so Python never exits under a running thread."""
    if window is not None:
        window.tracker.cancel_all()
    thread_pool().waitForDone(timeout_ms)


def capture(window: MainWindow, out: str | Path, timeout_s: float = 180.0, draft_text: str | None = None,
            settle_ms: int = 400, select: int | None = None, opening: bool = True,
            panels: list[str] | None = None) -> None:
    """Save a screenshot of ``window`` once it has settled (analysis shown, error shown, or timeout)."""
    app = application()
    state = {"paper": False, "draft": draft_text is None, "done": False}
    started = time.monotonic()

    def maybe_shoot() -> None:
        if state["done"]:
            return
        busy = [label for label in window.tracker.labels() if label != "Loading model"]
        timed_out = time.monotonic() - started > timeout_s
        if not timed_out and (not (state["paper"] and state["draft"]) or busy):
            QTimer.singleShot(100, maybe_shoot)
            return
        state["done"] = True
        app.processEvents()
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(out))
        print(f"screenshot saved: {out}" + ("  (timed out waiting)" if timed_out else ""))
        QTimer.singleShot(0, window.close)

    def on_settled() -> None:
        state["paper"] = True
        for panel in panels or []:  # in front of their tab groups once the paper is shown
            window.docks[panel].raise_()
        if select is not None and window.session.paper is not None:
            window.session.jump_to_sentence(select)
        QTimer.singleShot(settle_ms, maybe_shoot)

    window.settled.connect(on_settled)
    if not opening:  # nothing to open: the empty state is the final state
        QTimer.singleShot(settle_ms, on_settled)
    if draft_text is not None:
        draft = window.panels["draft"]
        window.docks["draft"].show()
        dock = window.docks["draft"]
        QTimer.singleShot(50, lambda: window.resizeDocks([dock], [230], Qt.Orientation.Vertical))

        def on_labelled(_n: int) -> None:
            state["draft"] = True
            QTimer.singleShot(settle_ms, maybe_shoot)

        draft.labelled.connect(on_labelled)
        draft.set_text(draft_text)
    QTimer.singleShot(int(timeout_s * 1000) + 1000, maybe_shoot)


class _FirstPaint(QObject):
    def __init__(self, callback: Callable[[], None]) -> None:
        super().__init__()
        self.callback: Callable[[], None] | None = callback

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and self.callback is not None:
            callback, self.callback = self.callback, None
            QTimer.singleShot(0, callback)  # after this paint has finished
        return False


def _on_first_paint(window: MainWindow, callback: Callable[[], None]) -> None:
    probe = _FirstPaint(callback)
    window._first_paint_probe = probe  # type: ignore[attr-defined]
    window.centralWidget().installEventFilter(probe)


def run(pdf: str | None = None, model: str | None = None, screenshot: str | None = None,
        draft_file: str | None = None, select: int | None = None, panels: list[str] | None = None,
        size: tuple[int, int] | None = None, shown_probe: bool = False,
        use_cache: bool = True) -> int:
    app = application()
    window = MainWindow(model_path=model, use_cache=use_cache)
    if size is not None:
        window.resize(*size)
    elif screenshot:
        window.resize(1500, 950)
    for panel in panels or []:
        dock = window.docks.get(panel)
        if dock is None:
            from core.errors import RhetoricaError

            raise RhetoricaError(f"no panel {panel!r}; panels: {', '.join(window.docks)}")
        dock.show()
        dock.raise_()
    window.show()
    if shown_probe:
        # bench: report when the window is first painted (and the PDF's first page, if any), then quit
        def report_shown() -> None:
            print(f"RHETORICA_SHOWN {time.time():.6f}", flush=True)
            if not pdf:
                window.close()

        def report_first_page() -> None:
            print(f"RHETORICA_FIRST_PAGE {time.time():.6f}", flush=True)
            window.close()

        _on_first_paint(window, report_shown)
        window.firstPageShown.connect(report_first_page)
        def report_error(stage: str, error: Exception) -> None:
            if stage in ("open", "parse"):  # a missing model does not stop the pages from showing
                print(f"RHETORICA_ERROR {error}", flush=True)
                window.close()

        window.session.failed.connect(report_error)
    if screenshot:
        draft_text = Path(draft_file).read_text(encoding="utf-8") if draft_file else None
        capture(window, screenshot, draft_text=draft_text, select=select, opening=bool(pdf), panels=panels)
    if pdf:
        window.open_path(pdf)
    code = app.exec()
    shutdown(window)
    return int(code)
