"""Hostile test C, problem 3: a remembered window layout (``window/state``) cut short or damaged left
the main toolbar as a 640×480 block over the menu bar and the status bar in the top-left corner. Such
a state is now thrown away: the default layout is used and the stored state dropped; a sound state is
still restored."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtWidgets import QToolBar

from app.gui.settings import AppSettings
from tests.gui_helpers import open_window, own_user_folder


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own_user_folder(tmp_path, monkeypatch)


def saved_state(qtbot) -> bytes:  # type: ignore[no-untyped-def]
    """The state a normal run saves on closing, with the inspector moved to the left."""
    for window in open_window(qtbot, None, load_model_at_start=False):
        window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, window.docks["inspector"])
    state = AppSettings().window_state
    assert state is not None
    return bytes(state.data())


def laid_out_soundly(window) -> bool:  # type: ignore[no-untyped-def]
    toolbar = window.findChild(QToolBar, "toolbar-main")
    status, menu = window.statusBar().geometry(), window.menuBar().geometry()
    return (window.toolBarArea(toolbar) == Qt.ToolBarArea.TopToolBarArea
            and toolbar.geometry().top() >= menu.bottom() and toolbar.width() == window.width()
            and status.bottom() == window.rect().bottom() and status.width() == window.width())


@pytest.mark.parametrize("cut", [0.5, 0.9, None])
def test_a_damaged_window_state_gives_the_default_layout(qtbot, cut: float | None) -> None:  # type: ignore[no-untyped-def]
    good = saved_state(qtbot)
    settings = AppSettings()
    settings.window_state = QByteArray(good[: int(len(good) * cut)] if cut else b"\x00\x00\x00\xffgarbage!!")
    settings.sync()
    for window in open_window(qtbot, None, load_model_at_start=False):
        qtbot.waitUntil(lambda w=window: laid_out_soundly(w))
        assert window.dockWidgetArea(window.docks["inspector"]) == Qt.DockWidgetArea.RightDockWidgetArea
        assert AppSettings().window_state is None  # dropped, not tried again next time
        assert "default layout" in window.statusBar().currentMessage()


def test_a_sound_window_state_is_restored(qtbot) -> None:  # type: ignore[no-untyped-def]
    good = saved_state(qtbot)
    for window in open_window(qtbot, None, load_model_at_start=False):
        qtbot.waitUntil(lambda w=window: laid_out_soundly(w))
        assert window.dockWidgetArea(window.docks["inspector"]) == Qt.DockWidgetArea.LeftDockWidgetArea
        assert AppSettings().window_state is not None and bytes(AppSettings().window_state.data()) == good
        assert "default layout" not in window.statusBar().currentMessage()
