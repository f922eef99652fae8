"""Hostile test H: selecting a sentence put it at the very bottom edge of the view while the toolbar's page
number still named the page before (ELMo ``--select 185``: "page 9" in the inspector, "8 of 11" in the
toolbar); now it comes well into view and the page number is its page. The legend's style for a hidden
role had a stray "}" (Qt: "Could not parse stylesheet of object QToolButton" on every toggle)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("pymupdf")

from app.gui.jump_view import target_rect, well_in_view
from app.gui.legend import Legend
from app.gui.palette import RolePalette
from tests.gui_helpers import TIMEOUT_MS, open_window, own_user_folder
from tests.pdf_factory import many_pages_pdf


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_path_factory.mktemp("jump") / "bundle")


@pytest.fixture
def window(qtbot, bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator:  # type: ignore[no-untyped-def]
    own_user_folder(tmp_path, monkeypatch)
    yield from open_window(qtbot, bundle, use_cache=False)


def test_a_selected_sentence_comes_well_into_view_on_the_page_the_toolbar_shows(qtbot, window,  # type: ignore[no-untyped-def]
                                                                                 tmp_path: Path) -> None:
    with qtbot.waitSignal(window.analysisShown, timeout=TIMEOUT_MS):
        assert window.open_path(many_pages_pdf(tmp_path / "long.pdf", 4))
    view, sentences = window.page_view, window.session.paper.sentences
    first_on = {r.page: i for i, s in reversed(list(enumerate(sentences))) for r in s.rects[:1]}
    last_on = {r.page: i for i, s in enumerate(sentences) for r in s.rects[:1]}
    # from the top: the first sentence of page 2 (below the view), the last one of page 1 (above it now),
    # the last of page 3, then back to the first of page 2
    for index in (first_on[1], last_on[0], last_on[2], first_on[1], sentences[-1].index):
        window.session.jump_to_sentence(index)
        qtbot.wait(10)  # the page number follows the scroll bar's signal
        rect = sentences[index].rects[0]
        assert well_in_view(view, target_rect(view, rect.page, (rect.x0, rect.y0, rect.x1, rect.y1))), index
        assert view.current_page() == rect.page and window.page_box.value() == rect.page + 1, index


def test_a_sentence_already_well_in_view_on_the_current_page_does_not_move_the_pages(qtbot, window,  # type: ignore[no-untyped-def]
                                                                                     tmp_path: Path) -> None:
    with qtbot.waitSignal(window.analysisShown, timeout=TIMEOUT_MS):
        assert window.open_path(many_pages_pdf(tmp_path / "long.pdf", 2))
    sentences = window.session.paper.sentences
    window.session.jump_to_sentence(10)
    scrolled = window.page_view.verticalScrollBar().value()
    window.session.jump_to_sentence(11)  # the next line: already in the middle of the view
    assert window.page_view.verticalScrollBar().value() == scrolled
    assert sentences[11].rects[0].page == window.page_view.current_page()


def test_toggling_a_role_in_the_legend_gives_a_style_qt_can_parse(qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import qInstallMessageHandler

    warnings: list[str] = []
    legend = Legend(RolePalette())
    qtbot.addWidget(legend)
    legend.show()
    qtbot.waitExposed(legend)
    previous = qInstallMessageHandler(lambda _mode, _context, message: warnings.append(message))
    try:
        for button in legend.buttons.values():
            button.setChecked(False)  # the role hidden: a dashed, struck-through button
            button.grab()  # polished and painted with its new style
            style = button.styleSheet()
            assert "line-through" in style
            button.setChecked(True)
            button.grab()
    finally:
        qInstallMessageHandler(previous)
    assert not [w for w in warnings if "stylesheet" in w.lower()], warnings
