"""Page pixmaps: the cache is bounded by bytes as well as pages (600 % zoom used to keep about 1 GB),
pixmaps of an old zoom go when the zoom changes, and views sharing one render process each get a
token of their own and close their document there when done."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest

pytest.importorskip("pytestqt")

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView

from app.gui import page_rendering
from app.gui.page_layout import PageLayout
from app.gui.page_rendering import PageRendering, pixmap_bytes
from tests.fake_render_client import FakeRenderClient
from tests.pdf_factory import many_pages_pdf

PAGE_BYTES = 612 * 792 * 4  # one page at 100 %, as a 32-bit pixmap


@pytest.fixture
def doc(tmp_path: Path) -> Iterator[pymupdf.Document]:
    document = pymupdf.open(many_pages_pdf(tmp_path / "many.pdf", 8))
    yield document
    document.close()


@pytest.fixture
def views(qtbot) -> Iterator[list[QGraphicsView]]:  # type: ignore[no-untyped-def]
    made: list[QGraphicsView] = []
    yield made
    for view in made:
        view.close()
        shiboken6.delete(view)


def _rendering(qtbot, views, doc, client):  # type: ignore[no-untyped-def]
    view = QGraphicsView()
    views.append(view)
    view.setScene(QGraphicsScene(view))
    view.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
    view.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
    view.resize(500, 300)
    view.show()
    qtbot.waitExposed(view)
    layout = PageLayout(view)
    rendering = PageRendering(layout, client, lambda: 1.0, view)
    layout.viewportChanged.connect(rendering.schedule_visible)
    rendering.open(doc, "doc.pdf")
    layout.lay_out([(612.0, 792.0)] * doc.page_count)
    return layout, rendering


def _settle(qtbot, client: FakeRenderClient, layout: PageLayout, rendering: PageRendering) -> None:  # type: ignore[no-untyped-def]
    """Answer every request of ``rendering`` (as the render process would) until the pages near the
    viewport are sharp."""
    token = client.opened[-1][0]
    answered: set[int] = set()

    def answer_all() -> bool:
        for n, (request_token, index, scale) in enumerate(client.requests):
            if n not in answered and request_token == token:
                answered.add(n)
                client.reply(token, index, scale, round(612 * scale), round(792 * scale))
        return all(rendering.is_sharp(i) for i in layout.visible_pages())

    qtbot.waitUntil(answer_all)


def test_the_pixmap_cache_keeps_to_its_byte_budget(qtbot, views, doc, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(page_rendering, "PIXMAP_CACHE_BYTES", 3 * PAGE_BYTES)  # three pages at 100 %
    client = FakeRenderClient()
    layout, rendering = _rendering(qtbot, views, doc, client)
    layout.show_from_top(1.0)
    for page in range(8):  # scroll through the paper, every page rendered as it comes near
        layout.go_to_page(page)
        _settle(qtbot, client, layout, rendering)
        assert rendering.cached_bytes <= 3 * PAGE_BYTES
    cached = [i for i in range(8) if rendering.has_pixmap(i)]
    assert len(cached) == 3 and 7 in cached  # the pages near the end, where the view is
    assert rendering.cached_bytes == sum(pixmap_bytes(layout.pages[i].pixmap) for i in cached)


def test_the_pages_near_the_viewport_stay_even_over_the_budget(qtbot, views, doc, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(page_rendering, "PIXMAP_CACHE_BYTES", PAGE_BYTES // 2)  # less than one page
    client = FakeRenderClient()
    layout, rendering = _rendering(qtbot, views, doc, client)
    layout.show_from_top(1.0)
    _settle(qtbot, client, layout, rendering)
    near = layout.visible_pages()
    assert near == [0, 1] and all(rendering.is_sharp(i) for i in near)  # shown, not evicted and asked again
    qtbot.wait(20)
    assert len(client.requests) == 2


def test_a_zoom_change_drops_the_pixmaps_of_the_old_zoom(qtbot, views, doc) -> None:  # type: ignore[no-untyped-def]
    client = FakeRenderClient()
    layout, rendering = _rendering(qtbot, views, doc, client)
    layout.show_from_top(1.0)
    for page in (0, 3, 6):
        layout.go_to_page(page)
        _settle(qtbot, client, layout, rendering)
    assert all(rendering.has_pixmap(i) for i in range(8))
    before = rendering.cached_bytes
    layout.set_zoom(2.0)  # e.g. 600 % back to fit width: the other pages' pixmaps go now
    near = set(layout.visible_pages())
    assert near and all(rendering.has_pixmap(i) for i in near)  # shown (scaled) until re-rendered
    assert not any(rendering.has_pixmap(i) for i in range(8) if i not in near)
    assert rendering.cached_bytes == len(near) * PAGE_BYTES < before


def test_views_sharing_a_render_process_have_tokens_of_their_own(qtbot, views, doc) -> None:  # type: ignore[no-untyped-def]
    client = FakeRenderClient()
    layout_a, rendering_a = _rendering(qtbot, views, doc, client)
    layout_b, rendering_b = _rendering(qtbot, views, doc, client)
    (token_a, _), (token_b, _) = client.opened
    assert token_a != token_b
    layout_a.show_from_top(1.0)
    layout_b.show_from_top(1.0)
    qtbot.waitUntil(lambda: {t for t, _, _ in client.requests} == {token_a, token_b})
    client.reply(token_b, 0, 1.0)  # B's page reaches B only
    assert rendering_b.is_sharp(0) and not rendering_a.has_pixmap(0)
    rendering_a.open(doc, "other.pdf")  # a new document: the old one is closed in the process
    assert client.closed == [token_a] and client.opened[-1][1] == "other.pdf"
    rendering_b.clear()
    assert client.closed == [token_a, token_b]
    rendering_b.clear()  # once
    assert client.closed == [token_a, token_b]
