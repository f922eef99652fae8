"""Hostile test K, problems 1, 3 and 5: the window's panels on a small (or scaled, or large-font) screen.

- The Alignment panel was a bottom dock of its own beside the Draft tabs, its row of controls 778 px
  wide: it painted over the Sentence and Suggestions panels and the window grew past the screen. It is
  now a tab of the Draft group, and the rows of controls of Alignment, Suggestions, Search and
  Graphical abstract wrap (:mod:`app.gui.flow_layout`) instead of making their panels (658, 506, 472 px)
  and so the window wide.
- The Outline's section names collapsed to "Sec" beside a fixed 90 px bar column; the empty window's
  drag-and-drop hint was cut at both ends at a large font; the status bar's job label left the status
  message no room."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QLabel, QStatusBar, QToolButton, QWidget

from app.gui.flow_layout import FlowLayout
from tests.gui_helpers import open_window, own_user_folder

PANEL_MAX_MIN_WIDTH = 400  # at the default font, no panel needs more (the tester measured 472 to 778)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own_user_folder(tmp_path, monkeypatch)


def _overlaps(window) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """Pairs of docks in front of their tab groups whose rectangles overlap."""
    shown = [(i, d) for i, d in window.docks.items()
             if d.isVisible() and not d.isFloating() and not d.visibleRegion().isEmpty()]
    return [(a, b) for k, (a, da) in enumerate(shown) for b, db in shown[k + 1:]
            if da.geometry().intersects(db.geometry())]


def test_showing_every_panel_neither_overlaps_nor_widens_the_window(qtbot) -> None:  # type: ignore[no-untyped-def]
    for window in open_window(qtbot, None, load_model_at_start=False):
        window.resize(1100, 700)
        qtbot.wait(50)
        width = window.width()
        for panel_id in ("suggestions", "draft", "alignment", "search", "graphical_abstract"):
            window.docks[panel_id].toggleViewAction().trigger()
            qtbot.wait(100)
            assert window.width() == width, panel_id
            assert not _overlaps(window), panel_id
        assert window.docks["draft"] in window.tabifiedDockWidgets(window.docks["alignment"])


def test_no_panel_asks_for_a_wide_window(qtbot) -> None:  # type: ignore[no-untyped-def]
    for window in open_window(qtbot, None, load_model_at_start=False):
        wide = {i: d.minimumSizeHint().width() for i, d in window.docks.items()
                if d.minimumSizeHint().width() > PANEL_MAX_MIN_WIDTH}
        assert not wide


def test_a_row_of_controls_wraps_instead_of_overlapping(qtbot) -> None:  # type: ignore[no-untyped-def]
    from app.gui.panels.alignment_controls import AlignmentControls

    controls = AlignmentControls(0.7)
    qtbot.addWidget(controls)
    assert isinstance(controls.layout(), FlowLayout)
    narrow = controls.minimumSizeHint().width()
    assert narrow < 250
    one_row = controls.sizeHint().height()
    controls.resize(narrow, controls.layout().heightForWidth(narrow))
    controls.show()
    qtbot.waitExposed(controls)
    assert controls.height() > 2 * one_row  # three rows or more
    buttons = [b for b in controls.findChildren(QToolButton) if b.isVisible()]
    boxes = [QRect(b.mapTo(controls, b.rect().topLeft()), b.size()) for b in buttons]
    assert all(controls.rect().contains(box) for box in boxes)
    assert not [(a, b) for k, a in enumerate(boxes) for b in boxes[k + 1:] if a.intersects(b)]


def test_the_outline_keeps_room_for_the_section_names(qtbot) -> None:  # type: ignore[no-untyped-def]
    from app.gui.panels.outline import OutlineTree

    tree = OutlineTree()
    qtbot.addWidget(tree)
    tree.resize(170, 300)
    tree.show()
    qtbot.waitExposed(tree)
    header = tree.header()
    assert header.sectionSize(0) >= tree.viewport().width() // 2
    assert header.sectionSize(0) + header.sectionSize(1) + header.sectionSize(2) <= tree.viewport().width()


def test_the_empty_window_wraps_its_drop_hint(qtbot) -> None:  # type: ignore[no-untyped-def]
    from app.gui.empty_state import DROP_HINT, EmptyState

    empty = EmptyState()
    qtbot.addWidget(empty)
    hint = next(label for label in empty.findChildren(QLabel) if label.text() == DROP_HINT)
    assert hint.wordWrap()


def test_the_empty_window_big_lines_grow_with_a_large_font(qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QApplication

    from app.gui.empty_state import HINT, EmptyState

    before = QFont(QApplication.font())
    font = QFont(before)
    font.setPointSize(16)
    QApplication.setFont(font)
    try:
        empty = EmptyState()
        qtbot.addWidget(empty)
    finally:
        QApplication.setFont(before)  # the font the later tests expect (QFont() is another one)
    hint = next(label for label in empty.findChildren(QLabel) if label.text() == HINT)
    size = int(hint.styleSheet().split("font-size:")[1].split("pt")[0])
    assert size >= 16  # not the fixed 12 pt under a 16 pt text


def test_the_job_label_leaves_the_status_message_room(qtbot) -> None:  # type: ignore[no-untyped-def]
    from app.gui.job_tracker import JobTracker
    from app.gui.status import JobStatus

    holder = QWidget()
    qtbot.addWidget(holder)
    bar = QStatusBar(holder)
    bar.resize(900, 30)
    status = JobStatus(bar, JobTracker())
    text = "Labelling rhetorical roles: embedding the sentences of a very long paper title " * 3
    status.label.setText(text)
    holder.show()
    qtbot.waitExposed(holder)
    assert status.label.text() == text  # all of it is kept (and in the tooltip when cut)
    assert status.label.maximumWidth() < 600
    assert status.label.sizeHint().width() > status.label.width()  # cut to its width
    assert text in status.label.toolTip()


def test_a_fixed_combo_box_is_as_wide_as_its_text_at_a_large_font(qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QComboBox

    from app.gui.widgets import combo_width_for

    widths = []
    for size in (9, 16):
        combo = QComboBox()
        combo.setEditable(True)
        font = QFont(combo.font())
        font.setPointSize(size)
        combo.setFont(font)
        qtbot.addWidget(combo)
        width = combo_width_for(combo, "400%")
        combo.setFixedWidth(width)
        combo.setEditText("400%")
        combo.show()
        qtbot.waitExposed(combo)
        assert combo.lineEdit().width() >= combo.fontMetrics().horizontalAdvance("400%")
        widths.append(width)
    assert widths[1] > widths[0]
