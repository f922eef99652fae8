"""Rendering pages: the render process serves several views at once (each view's document under its own
token, open until the view closes it), and the UI-thread fallback stops banding a page whose bands
each cost about as much as the whole page."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

pytest.importorskip("pytestqt")

from app.gui import render_client
from app.gui.pdf_pages import BandedRender, render_page
from app.gui.render_client import RenderClient, shared_client
from tests.pdf_factory import many_pages_pdf, two_column_pdf


def test_the_render_process_keeps_each_views_document_until_it_is_closed(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first = str(many_pages_pdf(tmp_path / "many.pdf", 2))
    second = str(two_column_pdf(tmp_path / "two.pdf"))
    client = RenderClient()
    with qtbot.waitSignal(client.ready, timeout=60_000):
        assert client.start()
    try:
        assert shared_client() is client  # the side-by-side window finds it here
        pages: list[tuple[int, int]] = []
        client.pageRendered.connect(lambda token, page, _scale, _image: pages.append((token, page)))
        client.open(101, first)
        client.open(102, second)  # a second view's document: the first stays open
        client.render(101, 1, 0.5)
        client.render(102, 0, 0.5)
        qtbot.waitUntil(lambda: sorted(pages) == [(101, 1), (102, 0)], timeout=60_000)
        client.close(101)  # that view is done: its requests are dropped, the other's still served
        client.render(101, 0, 0.5)
        client.render(102, 0, 0.5)
        qtbot.waitUntil(lambda: len(pages) == 3, timeout=60_000)
        assert pages[-1] == (102, 0)  # requests are served in order: 101's was dropped
    finally:
        client.stop()
    assert shared_client() is None


def test_shared_client_is_none_before_any_render_process_starts(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(render_client, "_SHARED", None)
    assert shared_client() is None


def test_banding_stops_on_a_page_whose_bands_are_slow(qtbot, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    doc = pymupdf.open(many_pages_pdf(tmp_path / "many.pdf", 1))
    cheap = BandedRender(doc, 0, 2.0)
    steps = 0
    while not cheap.step():
        steps += 1
    assert steps > 10  # cheap bands: many short steps
    monkeypatch.setattr(BandedRender, "SLOW_BAND_S", 0.0)  # every band is "slow"
    job = BandedRender(doc, 0, 2.0)
    assert not job.step()  # the display list
    assert not job.step()  # the first band, found slow
    assert job.step()  # the rest of the page in one go
    assert job.bands_done == 2 and job.done
    whole = render_page(doc, 0, 2.0)
    assert job.image.size() == whole.size() and job.image == cheap.image == whole  # the same pixels
    doc.close()
