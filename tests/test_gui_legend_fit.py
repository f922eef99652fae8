"""Hostile test K, problems 5 and 7: the role legend (colour key, counts, opacity) fell into the toolbar's
"»" overflow at 1024 px, and its six buttons looked the same with and without the keyboard focus. The
legend now asks for its full form but makes do with a compact one (names without counts, then short
names) that the toolbar keeps on screen; a focused button has a solid frame."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow, QToolBar

from app.gui.legend import FORMS, Legend
from app.gui.palette import RolePalette
from core.taxonomy.labels import ROLES

COUNTS = {"background": 38, "objective": 11, "method": 166, "result": 53, "conclusion": 20, "other": 15}


def _toolbar_window(qtbot, width: int) -> tuple[QMainWindow, Legend]:  # type: ignore[no-untyped-def]
    window = QMainWindow()
    qtbot.addWidget(window)
    toolbar = QToolBar()
    window.addToolBar(toolbar)
    for name in ("Open", "−", "+", "Fit", "▲", "▼", "Graphical abstract"):
        toolbar.addAction(name)
    legend = Legend(RolePalette())
    legend.set_counts(COUNTS)
    toolbar.addWidget(legend)
    window.resize(width, 300)
    window.show()
    qtbot.waitExposed(window)
    return window, legend


def test_the_legend_stays_on_a_narrow_toolbar(qtbot) -> None:  # type: ignore[no-untyped-def]
    _window, legend = _toolbar_window(qtbot, 760)
    qtbot.waitUntil(lambda: legend.isVisible())
    assert legend.form() != FORMS[0]
    needed = sum(b.sizeHint().width() for b in legend.buttons.values())
    assert needed <= legend.width()  # every button whole
    for role in ROLES:
        assert str(COUNTS[role]) in legend.buttons[role].toolTip()


def test_the_legend_shows_everything_when_there_is_room(qtbot) -> None:  # type: ignore[no-untyped-def]
    _window, legend = _toolbar_window(qtbot, 1600)
    qtbot.waitUntil(lambda: legend.form() == FORMS[0])
    assert legend.buttons["method"].text() == "method 166" and legend.opacity_label.isVisible()


def test_a_focused_legend_button_looks_different(qtbot) -> None:  # type: ignore[no-untyped-def]
    legend = Legend(RolePalette())
    qtbot.addWidget(legend)
    legend.show()
    qtbot.waitExposed(legend)
    for shown in (True, False):
        button = legend.buttons["result"]
        button.setChecked(shown)
        assert "QToolButton:focus" in button.styleSheet()
        plain = button.grab().toImage()
        legend.activateWindow()
        button.setFocus(Qt.FocusReason.TabFocusReason)
        qtbot.waitUntil(button.hasFocus)
        assert button.grab().toImage() != plain
        button.clearFocus()
