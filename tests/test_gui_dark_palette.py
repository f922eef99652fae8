"""Hostile test K, problems 2 and 11: under a dark palette the suggestion sentences were near-white text on
a forced white background, the greys (#777, #555, #666) of the panels' secondary text had little
contrast on a dark window, and the draft's left margin was a white strip. Colours now come from the
palette (:func:`app.gui.widgets.muted`, ``faint``, ``soft_selection``), or are set in pairs where a fixed
background stays (the highlighted formulaic wording)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from app.gui.palette import RolePalette


def dark_palette() -> QPalette:
    """The tester's dark palette (dark.py)."""
    palette = QPalette()
    role = QPalette.ColorRole
    for which, rgb in ((role.Window, (45, 45, 45)), (role.WindowText, (230, 230, 230)),
                       (role.Base, (30, 30, 30)), (role.AlternateBase, (50, 50, 50)),
                       (role.Text, (230, 230, 230)),
                       (role.Button, (55, 55, 55)), (role.ButtonText, (230, 230, 230)),
                       (role.Highlight, (42, 130, 218)), (role.HighlightedText, (0, 0, 0)),
                       (role.PlaceholderText, (150, 150, 150))):
        palette.setColor(which, QColor(*rgb))
    return palette


@pytest.fixture
def dark(qapp) -> Iterator[QPalette]:  # type: ignore[no-untyped-def]
    before = QApplication.palette()
    QApplication.setPalette(dark_palette())
    try:
        yield QApplication.palette()
    finally:
        QApplication.setPalette(before)


def _luminance(color: QColor) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())


def contrast(a: QColor, b: QColor) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _style_color(widget: QWidget) -> QColor:
    """The ``color:`` of a widget's style sheet."""
    style = widget.styleSheet()
    start = style.index("color:") + len("color:")
    return QColor(style[start:].split(";")[0].strip())


def test_the_suggestion_list_follows_a_dark_palette(qtbot, dark) -> None:  # type: ignore[no-untyped-def]
    from app.gui.panels.suggestion_cards import SuggestionList

    rows = SuggestionList()
    qtbot.addWidget(rows)
    rows.resize(300, 200)
    rows.show()
    qtbot.waitExposed(rows)
    background = rows.viewport().grab().toImage().pixelColor(150, 100)
    assert background.lightnessF() < 0.3  # not the white it forced
    assert contrast(background, dark.color(QPalette.ColorRole.Text)) > 7


def test_the_highlighted_wording_sets_its_text_colour_too() -> None:
    from app.gui.panels.suggestion_text import HIGHLIGHT, HIGHLIGHT_TEXT, highlighted_html

    out = highlighted_html("We propose a method.", [(0, 10)])
    assert f"background-color:{HIGHLIGHT}; color:{HIGHLIGHT_TEXT}" in out
    assert contrast(QColor(HIGHLIGHT), QColor(HIGHLIGHT_TEXT)) > 7


def test_secondary_text_reads_on_a_dark_window(qtbot, dark) -> None:  # type: ignore[no-untyped-def]
    from app.gui.empty_state import EmptyState
    from app.gui.widgets import hint_label, muted_color, status_label

    window = dark.color(QPalette.ColorRole.Window)
    assert contrast(muted_color(), window) > 4.5
    empty = EmptyState()
    qtbot.addWidget(empty)
    labels = [hint_label("Nothing yet."), status_label("Done."),
              *[label for label in empty.findChildren(QLabel) if "color:" in label.styleSheet()
                and label not in (empty.error, empty.notice)]]
    assert len(labels) >= 5
    for label in labels:
        assert contrast(_style_color(label), window) > 4.5, label.text()


def test_a_light_palette_keeps_its_greys() -> None:
    from app.gui.widgets import MUTED, muted_color

    light = QPalette()
    light.setColor(QPalette.ColorRole.Window, QColor("#efefef"))
    light.setColor(QPalette.ColorRole.WindowText, QColor("#000000"))
    assert contrast(muted_color(light), QColor("#efefef")) > 4.5
    assert abs(muted_color(light).lightnessF() - QColor(MUTED).lightnessF()) < 0.06


def test_the_draft_margin_follows_a_dark_palette(qtbot) -> None:  # type: ignore[no-untyped-def]
    from app.gui.panels.draft_editor import DraftEditor

    editor = DraftEditor(RolePalette())
    editor.setPalette(dark_palette())
    qtbot.addWidget(editor)
    editor.resize(400, 200)
    editor.show()
    qtbot.waitExposed(editor)
    margin = editor.margin.grab().toImage().pixelColor(editor.margin.width() // 2, 100)
    assert margin.lightnessF() < 0.3  # not the near-white strip it was
