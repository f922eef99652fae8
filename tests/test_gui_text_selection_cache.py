"""Rubber-band text selection takes its text from each page's cached words: one extraction per page
(ahead of the release for the pages on screen), never ``get_textbox`` (150–300 ms a dense page, every
time: releasing a band over a few pages froze the window for 1–2 s)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest

pytest.importorskip("pytestqt")

import shiboken6
from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView

from app.gui import page_words
from app.gui.page_layout import PageLayout
from app.gui.pdf_pages import page_words as extract_words
from app.gui.pdf_pages import words_text
from app.gui.text_selection import TextSelection
from tests.pdf_factory import many_pages_pdf, two_column_pdf


@pytest.fixture
def extractions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pages whose words are extracted, in order; ``get_textbox`` fails the test."""
    pages: list[int] = []

    def counting(doc: pymupdf.Document, index: int):  # type: ignore[no-untyped-def]
        pages.append(index)
        return extract_words(doc, index)

    def no_textbox(*_args: object, **_kwargs: object) -> str:
        raise AssertionError("get_textbox: the slow path")

    monkeypatch.setattr(page_words, "page_words", counting)
    monkeypatch.setattr(pymupdf.Page, "get_textbox", no_textbox)
    return pages


@pytest.fixture
def selection(qtbot, tmp_path: Path) -> Iterator[tuple[QGraphicsView, PageLayout, TextSelection]]:  # type: ignore[no-untyped-def]
    view = QGraphicsView()
    view.setScene(QGraphicsScene(view))
    view.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
    view.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
    view.resize(700, 500)
    view.show()
    qtbot.waitExposed(view)
    doc = pymupdf.open(many_pages_pdf(tmp_path / "many.pdf", 6))
    layout = PageLayout(view)
    layout.lay_out([(612.0, 792.0)] * doc.page_count)
    layout.show_from_top(0.25)  # zoomed out: several pages on screen
    chosen = TextSelection(view, layout)
    chosen.set_document(doc)
    yield view, layout, chosen
    view.close()
    shiboken6.delete(view)
    doc.close()


def test_each_page_is_extracted_once_and_selections_filter_its_words(selection, extractions) -> None:  # type: ignore[no-untyped-def]
    _view, layout, chosen = selection
    everything = layout.page_rect_in_scene(0).united(layout.page_rect_in_scene(2))
    text = chosen.select_text_in(everything)
    assert text.count("A Long Generated Document") == 3 and "sentence 39" in text
    assert sorted(extractions) == [0, 1, 2]
    page = layout.page_rect_in_scene(1)
    assert "A Long Generated Document" in chosen.select_text_in(page.adjusted(0, 0, 0, -600))
    chosen.select_text_in(everything)
    assert sorted(extractions) == [0, 1, 2]  # cached: no page extracted twice
    chosen.set_document(None)  # another document: the cache goes with it
    assert chosen.select_text_in(everything) == ""


def test_a_press_extracts_the_pages_on_screen_before_the_release(qtbot, selection, extractions) -> None:  # type: ignore[no-untyped-def]
    view, layout, chosen = selection
    on_screen = layout.visible_pages(margin=0)
    assert len(on_screen) >= 2
    start = QPoint(5, 5)
    chosen.press(start)
    assert extractions == []  # not at the press itself: one page per event-loop turn
    qtbot.waitUntil(lambda: sorted(extractions) == sorted(on_screen))
    chosen.drag(start + QPoint(20, 20))
    end = QPoint(view.viewport().width() - 5, view.viewport().height() - 5)
    chosen.drag(end)
    assert chosen.release() is None
    assert chosen.selected_text.count("A Long Generated Document") == len(on_screen)
    assert sorted(extractions) == sorted(on_screen)  # the release only filtered cached words


def test_words_text_keeps_lines_and_whole_words(tmp_path: Path) -> None:
    doc = pymupdf.open(two_column_pdf(tmp_path / "two.pdf"))
    words = extract_words(doc, 0)
    text = words_text(words, (60, 55, 560, 120))
    assert text.splitlines()[:2] == ["A Generated Paper About Reading Order", "Ada Lovelace, Charles Babbage"]
    assert words_text(words, (100, 60, 101, 90)).split() == ["Generated"]  # a word touched is taken whole
    assert words_text(words, (0, 0, 10, 10)) == ""
    doc.close()


def test_selecting_after_the_document_changed_uses_the_new_words(selection, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _view, layout, chosen = selection
    first = layout.page_rect_in_scene(0)
    assert "A Long Generated Document" in chosen.select_text_in(first)
    other = pymupdf.open(two_column_pdf(tmp_path / "two.pdf"))
    chosen.set_document(other)
    text = chosen.select_text_in(QRectF(first))
    assert "Reading Order" in text and "Long Generated" not in text
    other.close()
