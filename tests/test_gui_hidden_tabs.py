"""Hostile test K, problem 7: Tab landed on the Figures list while it was a tab hidden behind the Rhetorical
profile (Qt keeps such a dock "visible", moved out of the window), and the focus seemed to vanish. A
focus that reaches a widget out of the window now moves on to the next widget on screen; a panel
brought to the front with its shortcut keeps the focus it was given."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget

from app.gui.hidden_tabs import out_of_window
from tests.gui_helpers import open_window, own_user_folder


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own_user_folder(tmp_path, monkeypatch)


def _suggestions_behind_the_profile(qtbot, window) -> QWidget:  # type: ignore[no-untyped-def]
    """Suggestions shown, then the profile brought in front of it: its function filter (shown, enabled,
    in Qt's Tab chain) lies out of the window."""
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    window.dock_panels.show_panel("suggestions")
    qtbot.wait(50)
    window.docks["profile"].raise_()
    combo = window.panels["suggestions"].function
    qtbot.waitUntil(lambda: out_of_window(window, combo))
    assert combo.isVisible() and combo.isEnabled()
    return combo


def test_tab_does_not_stop_in_a_panel_behind_another_tab(qtbot) -> None:  # type: ignore[no-untyped-def]
    for window in open_window(qtbot, None, load_model_at_start=False):
        combo = _suggestions_behind_the_profile(qtbot, window)
        combo.setFocus(Qt.FocusReason.TabFocusReason)  # where Qt's Tab chain took it
        qtbot.waitUntil(lambda c=combo: QApplication.focusWidget() is not c)
        now = QApplication.focusWidget()
        assert now is not None and now.window() is window and not out_of_window(window, now)


def test_a_panel_brought_to_the_front_keeps_its_focus(qtbot) -> None:  # type: ignore[no-untyped-def]
    for window in open_window(qtbot, None, load_model_at_start=False):
        _suggestions_behind_the_profile(qtbot, window)
        target = window.dock_panels.focus_panel("suggestions")
        assert target is not None and window.panels["suggestions"].isAncestorOf(target)
        qtbot.wait(100)
        assert QApplication.focusWidget() is target
