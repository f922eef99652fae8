"""The page view's units on their own (offscreen): layout and zoom, rendering and its cache, overlays,
text selection; and the page view that wires them together."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

pytest.importorskip("pytestqt")

import pymupdf
import shiboken6
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QGuiApplication, QImage
from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsScene, QGraphicsView, QWidget

from app.gui import page_rendering, sentence_overlays
from app.gui.page_layout import MAX_ZOOM, MIN_ZOOM, PAGE_GAP, PageLayout
from app.gui.page_rendering import PageRendering
from app.gui.page_view import PageView
from app.gui.palette import RolePalette
from app.gui.sentence_overlays import SentenceOverlays, role_tooltip
from app.gui.text_selection import TextSelection
from tests.fake_render_client import FakeRenderClient
from tests.paper_factory import LABELS, make_analysis, make_paper
from tests.pdf_factory import many_pages_pdf, two_column_pdf

SIZES = [(612.0, 792.0), (300.0, 400.0), (612.0, 792.0)]
W = TypeVar("W", bound=QWidget)


@pytest.fixture
def show(qtbot) -> Iterator[Callable[..., QWidget]]:  # type: ignore[no-untyped-def]
    """Shows widgets for the test and deletes them right after it.

    A unit and its view refer to each other, so without this the garbage collector would delete the
    view whenever it runs, possibly in the middle of a later paint event.
    """
    shown: list[QWidget] = []

    def show_widget(widget: W, width: int = 500, height: int = 300) -> W:
        shown.append(widget)
        widget.resize(width, height)
        widget.show()
        qtbot.waitExposed(widget)
        return widget

    yield show_widget
    for widget in shown:
        widget.close()
        shiboken6.delete(widget)


@pytest.fixture
def make_view(show) -> Callable[..., QGraphicsView]:  # type: ignore[no-untyped-def]
    """A bare view set up like the page view (top-aligned, no transformation anchor, bar always on)."""

    def make(width: int = 500, height: int = 300) -> QGraphicsView:
        view = QGraphicsView()
        view.setScene(QGraphicsScene(view))
        view.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        view.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        return show(view, width, height)

    return make


@pytest.fixture
def doc(tmp_path: Path) -> Iterator[pymupdf.Document]:
    document = pymupdf.open(many_pages_pdf(tmp_path / "many.pdf", 8))
    yield document
    document.close()


# -- PageLayout ------------------------------------------------------------------------------
def test_layout_places_pages_in_a_centred_strip(make_view) -> None:  # type: ignore[no-untyped-def]
    view = make_view()
    layout = PageLayout(view)
    pages = layout.lay_out(SIZES)
    assert layout.page_count == len(pages) == 3 and [p.index for p in pages] == [0, 1, 2]
    assert layout.page_origin(0) == QPointF(0, PAGE_GAP)
    assert layout.page_origin(1) == QPointF((612 - 300) / 2, PAGE_GAP + 792 + PAGE_GAP)
    assert layout.page_origin(2) == QPointF(0, PAGE_GAP + 792 + PAGE_GAP + 400 + PAGE_GAP)
    assert layout.page_rect_in_scene(1) == QRectF(156, 820, 300, 400)
    assert view.scene().sceneRect() == QRectF(-PAGE_GAP, 0, 612 + 2 * PAGE_GAP, 1234 + 792 + PAGE_GAP)
    assert all(p.scene() is view.scene() for p in pages)
    layout.clear()
    assert layout.page_count == 0 and layout.visible_pages() == [] and layout.current_page() == -1


def test_layout_zoom_fit_steps_and_clamps(make_view) -> None:  # type: ignore[no-untyped-def]
    view = make_view()
    layout = PageLayout(view)
    layout.lay_out(SIZES)
    zooms: list[float] = []
    layout.zoomChanged.connect(zooms.append)
    layout.show_from_top(0.0)  # fit width
    fit = (view.viewport().width() - 4) / (612 + 2 * PAGE_GAP)
    assert layout.zoom == pytest.approx(fit) and zooms == [pytest.approx(fit)]
    assert view.transform().m11() == pytest.approx(fit)
    view.resize(700, 300)  # fit width follows the view's size (the owner forwards its resizes)
    layout.on_resized()
    assert layout.zoom == pytest.approx((view.viewport().width() - 4) / 640) and layout.zoom > fit
    layout.set_zoom(1.0)
    layout.zoom_in()
    assert layout.zoom == pytest.approx(1.1)
    layout.zoom_out()
    layout.zoom_out()
    assert layout.zoom == pytest.approx(0.9)
    layout.set_zoom(100)
    assert layout.zoom == MAX_ZOOM
    layout.set_zoom(0.01)
    assert layout.zoom == MIN_ZOOM
    view.resize(500, 300)  # a fixed zoom stays
    layout.on_resized()
    assert layout.zoom == MIN_ZOOM
    layout.fit_width()
    assert layout.zoom == pytest.approx((view.viewport().width() - 4) / 640)


def test_layout_visible_pages_and_navigation(make_view) -> None:  # type: ignore[no-untyped-def]
    view = make_view(500, 300)
    layout = PageLayout(view)
    layout.lay_out(SIZES)
    pages_seen: list[int] = []
    moved: list[bool] = []
    layout.pageChanged.connect(pages_seen.append)
    layout.viewportChanged.connect(lambda: moved.append(True))
    layout.show_from_top(1.0)
    assert moved and pages_seen[-1] == 0
    assert layout.visible_pages(margin=0) == [0]
    assert layout.visible_pages() == [0, 1]  # visible first, then the margin
    layout.go_to_page(2)
    assert layout.current_page() == 2 and pages_seen[-1] == 2
    assert layout.visible_pages(margin=0) == [2] and layout.visible_pages() == [2, 1]
    layout.go_to_page(99)  # clamped
    assert layout.current_page() == 2
    layout.prev_page()  # at the top of page 2: to page 1
    assert layout.current_page() == 1
    layout.next_page()
    assert layout.current_page() == 2
    layout.show_rect(0, (72, 700, 300, 720))  # near the bottom of page 0
    area = view.mapToScene(view.viewport().rect()).boundingRect()
    assert area.contains(QRectF(72, PAGE_GAP + 700, 228, 20)) and layout.current_page() == 0
    layout.show_rect(1, None)  # the page top
    assert layout.current_page() == 1
    layout.show_rect(7, None)  # no such page: nothing happens
    assert layout.current_page() == 1


# -- PageRendering ---------------------------------------------------------------------------
def _rendering(make_view, doc: pymupdf.Document, client=None):  # type: ignore[no-untyped-def]
    view = make_view(500, 300)
    layout = PageLayout(view)
    rendering = PageRendering(layout, client, lambda: 1.0, view)
    layout.viewportChanged.connect(rendering.schedule_visible)
    rendering.open(doc, "doc.pdf")
    layout.lay_out([(612.0, 792.0)] * doc.page_count)
    return layout, rendering


def _current(layout: PageLayout, index: int, scale: float = 1.0) -> bool:
    return layout.pages[index].pixmap is not None and layout.pages[index].pixmap_scale == scale


def test_rendering_fallback_renders_near_pages_and_evicts(qtbot, make_view, doc, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(page_rendering, "PIXMAP_CACHE_PAGES", 3)
    layout, rendering = _rendering(make_view, doc)
    assert not rendering.uses_render_server
    layout.show_from_top(1.0)
    qtbot.waitUntil(lambda: _current(layout, 0) and _current(layout, 1), timeout=20_000)
    pixmap = layout.pages[0].pixmap
    assert pixmap is not None and (pixmap.width(), pixmap.height()) == (612, 792)  # one pixel a point
    assert not any(rendering.has_pixmap(i) for i in range(2, 8)) and rendering.renders == 2
    layout.go_to_page(5)
    qtbot.waitUntil(lambda: all(_current(layout, i) for i in (4, 5, 6)), timeout=20_000)
    assert rendering.renders == 5
    assert not rendering.has_pixmap(0) and not rendering.has_pixmap(1)  # least recently rendered: dropped
    layout.set_zoom(1.5)  # a new zoom re-renders at the new scale
    assert rendering.scale() == 1.5
    qtbot.waitUntil(lambda: _current(layout, 5, 1.5), timeout=20_000)
    rendering.clear()
    assert not rendering.has_pixmap(99)


def test_rendering_through_the_render_process(qtbot, make_view, doc) -> None:  # type: ignore[no-untyped-def]
    client = FakeRenderClient()
    layout, rendering = _rendering(make_view, doc, client)
    assert rendering.uses_render_server
    token = client.opened[-1][0]
    assert client.opened == [(token, "doc.pdf")]
    layout.show_from_top(1.0)
    qtbot.waitUntil(lambda: len(client.requests) == 2)
    assert client.requests == [(token, 0, 1.0), (token, 1, 1.0)]
    image = QImage(612, 792, QImage.Format.Format_RGB888)
    client.pageRendered.emit(token - 1, 0, 1.0, image)  # a reply for an earlier document
    assert not rendering.has_pixmap(0)
    client.pageRendered.emit(token, 0, 1.0, image)
    assert _current(layout, 0) and rendering.renders == 1
    client.pageRendered.emit(token, 1, 2.0, image)  # rendered for another zoom: asked again
    assert not rendering.has_pixmap(1)
    qtbot.waitUntil(lambda: client.requests[-1] == (token, 1, 1.0) and len(client.requests) == 3)
    client.available = client.is_ready = False
    client.stopped.emit()  # the process died: pages render here
    qtbot.waitUntil(lambda: _current(layout, 1), timeout=20_000)
    assert len(client.requests) == 3


# -- SentenceOverlays ------------------------------------------------------------------------
def _overlays(make_view):  # type: ignore[no-untyped-def]
    view = make_view()
    layout = PageLayout(view)
    paper = make_paper()
    layout.lay_out(paper.page_sizes)
    palette = RolePalette()
    overlays = SentenceOverlays(view.scene(), layout, palette, view)
    return paper, layout, palette, overlays


def test_overlays_built_on_the_pages_then_labelled_in_place(qtbot, make_view) -> None:  # type: ignore[no-untyped-def]
    paper, layout, palette, overlays = _overlays(make_view)
    overlays.select(2)  # before the items exist
    with qtbot.waitSignal(overlays.built) as built:
        overlays.set_overlays(paper, None)
        assert overlays.pending and overlays.items == []  # nothing built until the event loop turns
    assert built.args == [len(paper.sentences)] and not overlays.pending
    items = overlays.items
    assert [i.index for i in items] == list(range(len(paper.sentences)))
    assert all(i.role is None and i.scene() is not None for i in items)
    assert [i.selected for i in items] == [i.index == 2 for i in items]
    for sentence, item in zip(paper.sentences, items, strict=True):
        r = sentence.rects[0]
        origin = layout.page_origin(r.page)
        expected = QRectF(origin.x() + r.x0 - 0.5, origin.y() + r.y0 - 0.5, r.x1 - r.x0 + 1, r.y1 - r.y0 + 1)
        assert item.shape().boundingRect() == expected
    analysis = make_analysis(paper)
    with qtbot.waitSignal(overlays.built):
        overlays.set_overlays(paper, analysis)
    assert overlays.items == items  # the same items, now coloured
    assert [i.role for i in items] == LABELS
    assert "<b>objective</b>" in items[1].toolTip() and "Abstract" in items[1].toolTip()
    assert all(i.isVisible() for i in items)
    palette.set_visible("method", False)
    assert [i.isVisible() for i in items] == [label != "method" for label in LABELS]
    overlays.select(4)
    assert [i.selected for i in items] == [i.index == 4 for i in items]


def _item_colours(item) -> set[int]:  # type: ignore[no-untyped-def]
    """The distinct colours an overlay item paints inside its own rectangle, on white."""
    from PySide6.QtGui import QPainter
    from PySide6.QtWidgets import QStyleOptionGraphicsItem

    bounds = item.shape().boundingRect()
    image = QImage(int(bounds.width()) + 1, int(bounds.height()) + 1, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    painter.translate(-bounds.x(), -bounds.y())
    item.paint(painter, QStyleOptionGraphicsItem(), None)
    painter.end()
    inside = [image.pixel(x, y) for x in range(2, image.width() - 2) for y in range(2, image.height() - 2)]
    return set(inside)


def test_an_uncertain_label_is_drawn_hatched_with_its_runner_up(qtbot, make_view) -> None:  # type: ignore[no-untyped-def]
    from core.taxonomy.labels import ROLES, UNCERTAIN_BELOW, RolePrediction

    paper, _layout, _palette, overlays = _overlays(make_view)
    analysis = make_analysis(paper)
    probabilities = dict.fromkeys(ROLES, 0.06)
    probabilities.update(method=0.41, result=0.35)
    weak = RolePrediction("method", probabilities)
    assert weak.confidence < UNCERTAIN_BELOW
    roles = list(analysis.roles)
    roles[1] = weak
    analysis = dataclasses.replace(analysis, roles=roles)
    with qtbot.waitSignal(overlays.built):
        overlays.set_overlays(paper, analysis)
    items = overlays.items
    assert items[1].uncertain and not any(i.uncertain for k, i in enumerate(items) if k != 1)
    assert items[1].toolTip().startswith("<b>uncertain</b>: method 41% or result 35%")
    assert items[0].toolTip().startswith("<b>background</b> — 90% confident")
    assert len(_item_colours(items[0])) == 1  # a flat fill
    assert len(_item_colours(items[1])) >= 2  # hatched: lines in the role colour over a faint fill
    # a correction (probability 1) is drawn plainly
    items[1].set_role("result", 1.0, "<b>result</b> — your correction")
    assert not items[1].uncertain and len(_item_colours(items[1])) == 1


def test_overlays_for_another_paper_replace_the_items(qtbot, make_view, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sentence_overlays, "OVERLAY_CHUNK", 2)
    paper, _layout, _palette, overlays = _overlays(make_view)
    counts: list[int] = []
    overlays.built.connect(counts.append)
    overlays.set_overlays(paper, None)
    qtbot.waitUntil(lambda: counts == [6])
    old = overlays.items
    other = dataclasses.replace(paper, sentences=paper.sentences[:3])
    overlays.set_overlays(other, make_analysis(other))
    assert all(i.scene() is None for i in old)  # removed at once
    qtbot.waitUntil(lambda: counts == [6, 3])
    assert len(overlays.items) == 3 and not {id(i) for i in overlays.items} & {id(i) for i in old}
    overlays.clear()
    assert overlays.items == [] and not overlays.pending


def test_role_tooltip_escapes_the_heading() -> None:
    paper = make_paper()
    sections = [dataclasses.replace(paper.sections[0], heading="Cats < Dogs & <b>"), *paper.sections[1:]]
    paper = dataclasses.replace(paper, sections=sections)
    tip = role_tooltip(paper, paper.sentences[0], make_analysis(paper))
    assert tip.startswith("<b>background</b> — ") and "<i>Cats &lt; Dogs &amp; &lt;b&gt;</i>" in tip


# -- TextSelection ---------------------------------------------------------------------------
def _selection(make_view, tmp_path: Path):  # type: ignore[no-untyped-def]
    view = make_view(700, 500)
    layout = PageLayout(view)
    doc = pymupdf.open(two_column_pdf(tmp_path / "two.pdf"))
    layout.lay_out([(612.0, 792.0)])
    layout.show_from_top(1.0)
    selection = TextSelection(view, layout)
    selection.set_document(doc)
    return view, layout, selection


def _selection_items(view: QGraphicsView) -> list[QGraphicsRectItem]:
    return [i for i in view.scene().items() if isinstance(i, QGraphicsRectItem)]


def test_select_text_in_a_scene_rect_and_clear(make_view, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view, layout, selection = _selection(make_view, tmp_path)
    announced: list[str] = []
    selection.textSelected.connect(announced.append)
    origin = layout.page_origin(0)
    text = selection.select_text_in(QRectF(origin.x() + 60, origin.y() + 55, 500, 65))
    assert "A Generated Paper About Reading Order" in text and "Ada Lovelace" in text
    assert "Left sentence" not in text
    assert selection.selected_text == text and announced == [text]
    assert len(_selection_items(view)) == 1 and _selection_items(view)[0].zValue() == 2
    assert selection.select_text_in(QRectF(-200, -200, 50, 50)) == ""  # outside the page
    assert _selection_items(view) == [] and announced == [text, "", ""]
    selection.select_text_in(QRectF(origin.x() + 60, origin.y() + 55, 500, 65))
    selection.clear_selection()
    assert selection.selected_text == "" and _selection_items(view) == [] and announced[-1] == ""
    selection.clear()
    assert selection.select_text_in(QRectF(origin.x(), origin.y(), 612, 792)) == ""  # no document


def test_drag_selects_text_and_a_click_is_handed_back(make_view, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view, layout, selection = _selection(make_view, tmp_path)
    origin = layout.page_origin(0)
    start = view.mapFromScene(QPointF(origin.x() + 60, origin.y() + 55))
    end = view.mapFromScene(QPointF(origin.x() + 560, origin.y() + 120))
    selection.press(start)
    assert selection.pressed
    selection.drag(start + QPoint(2, 1))  # under the threshold: still a click
    assert selection.release() == start and not selection.pressed and selection.selected_text == ""
    selection.press(start)
    selection.drag(start + QPoint(20, 20))
    selection.drag(end)
    assert selection.release() is None
    assert "A Generated Paper About Reading Order" in selection.selected_text
    assert selection.copy() == selection.selected_text == QGuiApplication.clipboard().text()
    selection.clear_selection()
    assert selection.copy("fallback") == "fallback" == QGuiApplication.clipboard().text()
    assert selection.release() is None  # no press: nothing happens


# -- PageView: the units wired together ------------------------------------------------------
def test_page_view_forwards_the_units_signals(qtbot, show, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view = show(PageView(RolePalette()), 700, 500)
    doc = pymupdf.open(many_pages_pdf(tmp_path / "many.pdf", 3))
    with qtbot.waitSignals([view.zoomChanged, view.pageChanged, view.firstPageShown], timeout=20_000):
        view.set_document(doc, [(612.0, 792.0)] * 3, zoom=0.0)
    assert view.page_count == 3 and view.zoom == pytest.approx((view.viewport().width() - 4) / 640)
    assert view.has_pixmap(0) and view.renders >= 1 and view.is_sharp(0)
    paper = make_paper()
    with qtbot.waitSignal(view.overlaysBuilt) as built:
        view.set_overlays(paper, make_analysis(paper))
    assert built.args == [len(view.overlay_items)] == [6] and not view.overlays_pending
    with qtbot.waitSignal(view.sentenceClicked) as clicked:
        item = view.overlay_items[1]
        pos = view.mapFromScene(item.shape().boundingRect().center())
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert clicked.args == [1] and view.sentence_at(pos) == 1
    with qtbot.waitSignal(view.textSelected) as selected:
        view.select_text_in(view.page_rect_in_scene(0).adjusted(0, 0, 0, -700))
    assert "A Long Generated Document" in selected.args[0] == view.selected_text
    with qtbot.waitSignal(view.pageChanged) as changed:
        view.go_to_page(2)
    assert changed.args == [2] == [view.current_page()]
    view.clear()
    assert view.page_count == 0 and view.overlay_items == [] and view.selected_text == ""
    doc.close()
