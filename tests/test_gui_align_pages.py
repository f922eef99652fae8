"""The side-by-side Alignment view (issue 13): partners and the scroll-in-step target (pure), the view
built from two generated PDFs or a paper and a draft (selection, scrolling in step, the links), and the
Alignment panel's "Side by side" window after a real alignment with the tiny bundle."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pymupdf
import pytest

pytest.importorskip("pytestqt")

from app.gui.align_pages import AlignedPagesView, ListSide, PageSide, SideSource, partner_rows, step_target
from app.gui.palette import RolePalette
from app.gui.panels.alignment import SIDE_BY_SIDE_SHORTCUT, AlignmentPanel
from core.alignment.align import AlignedPair, Alignment, AlignSentence, AlignSettings, AlignSide
from tests.gui_helpers import function_bundle, show_panel
from tests.paper_factory import LABELS, make_paper

TIMEOUT_MS = 180_000
DRAFT = ("# Abstract\nPrevious work has studied this problem. Our goal is to improve accuracy.\n"
         "We propose a new method for parsing scientific text. Results show that it works well.\n"
         "# Method\nWe propose a simple and fast method.\n"
         "# Conclusion\nIn conclusion the approach is simple and fast.\n")
# A 1 ↔ B 1,2 is one-to-many, A 3,4 ↔ B 3 many-to-one; A 2 and B 4 are left over.
PAIRS = [((0,), (0,)), ((1,), (1, 2)), ((3, 4), (3,)), ((5,), (5,))]


def _side(texts: list[str], kind: str, title: str) -> AlignSide:
    sentences = [AlignSentence(t, "", "", LABELS[i % len(LABELS)], "") for i, t in enumerate(texts)]
    empty = np.zeros((len(texts), 2), dtype=np.float32)
    return AlignSide(title, sentences, empty, empty.copy(), "", kind)


def make_alignment(b_kind: str = "pdf") -> Alignment:
    texts = [s.text for s in make_paper().sentences]
    pairs = [AlignedPair(a, b, 0.8, LABELS[a[0]], "", "section") for a, b in PAIRS]
    return Alignment(_side(texts, "pdf", "Paper A"), _side(texts, b_kind, "Paper B"), pairs, [2], [4],
                     AlignSettings())


def pdf_of(paper_path: Path) -> Path:
    """Three Letter pages with each sentence of ``make_paper`` written where its rectangle is."""
    paper = make_paper()
    doc = pymupdf.open()
    for _ in paper.page_sizes:
        doc.new_page(width=612, height=792)
    for sentence in paper.sentences:
        r = sentence.rects[0]
        doc[r.page].insert_text((r.x0, r.y1 - 2), sentence.text[:50], fontsize=9)
    doc.save(paper_path)
    doc.close()
    return paper_path


def show_view(qtbot, tmp_path: Path, *, draft: bool = False) -> Iterator[AlignedPagesView]:  # type: ignore[no-untyped-def]
    from app.gui.pdf_pages import open_for_view

    path = pdf_of(tmp_path / "paper.pdf")
    a = SideSource(make_paper(), open_for_view(path), None, None, owns_doc=True)
    b = SideSource() if draft else SideSource(make_paper(), open_for_view(path), None, None, owns_doc=True)
    view = AlignedPagesView(make_alignment("draft" if draft else "pdf"), RolePalette(), a, b)
    qtbot.addWidget(view)
    view.resize(900, 500)
    view.show()
    qtbot.waitExposed(view)
    for side in (view.side_a, view.side_b):
        if isinstance(side, PageSide):
            qtbot.waitUntil(lambda s=side: not s.view.overlays_pending and bool(s.view.overlay_items))
    try:
        yield view
    finally:
        view.close_sources()


# -- pure functions ---------------------------------------------------------------------------------
def test_partner_rows_for_one_to_one_one_to_many_and_unaligned() -> None:
    alignment = make_alignment()
    assert partner_rows(alignment, "a", 0) == [0]
    assert partner_rows(alignment, "a", 1) == [1, 2]  # one-to-many
    assert partner_rows(alignment, "b", 2) == [1] and partner_rows(alignment, "b", 1) == [1]
    assert partner_rows(alignment, "a", 3) == [3] == partner_rows(alignment, "a", 4)
    assert partner_rows(alignment, "b", 3) == [3, 4]
    assert partner_rows(alignment, "a", 2) == [] and partner_rows(alignment, "b", 4) == []  # unaligned
    with pytest.raises(ValueError):
        partner_rows(alignment, "c", 0)


def test_step_target_picks_the_partner_of_the_aligned_sentence_nearest_the_centre() -> None:
    alignment = make_alignment()
    assert step_target(alignment, "a", {0: 10.0, 1: 120.0, 3: 400.0}, 150.0) == (1, 1)
    assert step_target(alignment, "a", {0: 10.0, 1: 120.0, 3: 170.0}, 150.0) == (3, 3)
    assert step_target(alignment, "a", {2: 150.0, 5: 300.0}, 150.0) == (5, 5)  # 2 has no partner
    assert step_target(alignment, "b", {3: 150.0}, 150.0) == (3, 3)  # many-to-one: the first of A's
    assert step_target(alignment, "a", {2: 150.0}, 150.0) is None
    assert step_target(alignment, "b", {}, 150.0) is None


# -- the view -------------------------------------------------------------------------------------
def test_selecting_a_sentence_on_a_selects_its_partners_on_b(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    for view in show_view(qtbot, tmp_path):
        assert isinstance(view.side_a, PageSide) and isinstance(view.side_b, PageSide)
        view.select("a", 1)
        assert view.selected == {"a": [1], "b": [1, 2]}
        assert view.selected_pair is view.alignment.pairs[1]
        chosen = {item.index for item in view.side_b.view.overlay_items if item.selected}
        assert chosen == {1, 2}
        assert {item.index for item in view.side_a.view.overlay_items if item.selected} == {1}
        # clicking on B (the page view's signal) selects the pair from the other end
        view.side_b.view.sentenceClicked.emit(3)
        assert view.selected == {"a": [3, 4], "b": [3]} and "A 4, 5 ↔ B 4" in view.detail.text()
        view.select("a", 2)  # unaligned: only itself
        assert view.selected == {"a": [2], "b": []} and view.selected_pair is None
        assert "no partner" in view.detail.text()
        # hovering a B sentence lights its partners on A
        view.hover("b", 0)
        assert view.hovered_pair is view.alignment.pairs[0]
        assert {i.index for i in view.side_a.view.overlay_items if i.hovered} == {0}


def test_scrolling_a_moves_b_in_step_unless_the_toggle_is_off(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    for view in show_view(qtbot, tmp_path):
        a, b = view.side_a, view.side_b
        bar_a = a.view.verticalScrollBar()  # type: ignore[attr-defined]
        bar_b = b.view.verticalScrollBar()  # type: ignore[attr-defined]
        assert bar_a.maximum() > 0 and view.in_step.isChecked()
        # bring A's sentence 3 (page 2) to the middle: B's partner comes level with it
        middle = a.viewport().height() / 2
        bar_a.setValue(bar_a.value() + round(a.y_of(3) - middle))
        assert bar_b.value() > 0
        assert abs(b.y_of(3) - a.y_of(3)) <= 2
        assert view.link_count() > 0
        links = view.canvas.links()
        assert all(0 <= link.y_a <= view.canvas.height() and 0 <= link.y_b <= view.canvas.height()
                   for link in links)
        assert any(link.a == 3 and link.b == 3 for link in links)
        # B scrolled by hand brings A along too; no loop (the values settle)
        before = bar_a.value()
        bar_b.setValue(0)
        assert bar_a.value() != before
        # with the toggle off, B stays where it is
        view.in_step.setChecked(False)
        kept = bar_b.value()
        bar_a.setValue(bar_a.maximum())
        assert bar_b.value() == kept
        # the selected pair's link is the strong one
        view.in_step.setChecked(True)
        view.select("a", 5)
        strong = [link for link in view.canvas.links() if link.strong]
        assert [(link.a, link.b) for link in strong] == [(5, 5)]
        view.grab()  # paints without error


def test_a_draft_side_is_a_list_and_links_go_to_its_rows(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    for view in show_view(qtbot, tmp_path, draft=True):
        assert isinstance(view.side_a, PageSide) and isinstance(view.side_b, ListSide)
        rows = view.side_b.list  # type: ignore[attr-defined]
        assert rows.count() == 6
        rows.itemClicked.emit(rows.item(2))
        assert view.selected == {"a": [1], "b": [1, 2]}
        assert rows.item(2).font().bold() and not rows.item(0).font().bold()
        view.select("a", 0)
        assert view.link_count() > 0
        assert any(link.a == 0 and link.b == 0 and link.strong for link in view.canvas.links())


# -- the panel ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return function_bundle(tmp_path_factory, "align-pages")


def test_the_panel_opens_the_side_by_side_window_after_an_alignment(qtbot, bundle) -> None:  # type: ignore[no-untyped-def]
    for panel in show_panel(qtbot, AlignmentPanel, bundle, (900, 600), paper=make_paper()):
        assert not panel.side_by_side.isEnabled() and panel.open_side_by_side() is None
        assert SIDE_BY_SIDE_SHORTCUT in panel.side_by_side.toolTip()  # the key is the window's action
        with qtbot.waitSignal(panel.alignmentShown, timeout=TIMEOUT_MS):
            assert panel.compare_with_draft(DRAFT)
        qtbot.waitUntil(lambda p=panel: not p.busy, timeout=TIMEOUT_MS)
        assert panel.side_by_side.isEnabled()
        panel.side_by_side.click()
        window = panel.pages_window
        assert window is not None and window.isVisible() and not window.isModal()
        view = window.view
        # no open PDF in this session and a draft for B: both sides are lists
        assert isinstance(view.side_a, ListSide) and isinstance(view.side_b, ListSide)
        pair = panel.alignment.pairs[0]  # type: ignore[union-attr]
        view.select("a", pair.a_indices[0])
        assert view.selected["b"] == list(pair.b_indices)
        assert view.link_count() > 0
        panel.clear()  # the paper changed: the window goes
        assert panel.pages_window is None


# -- rendering off the UI thread ------------------------------------------------------------------
def test_the_side_by_side_pages_render_in_the_shared_render_process(qtbot, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Both page sides ask the application's render process for their pages (heavy pages used to
    render here, on the UI thread, for seconds); nothing renders on this thread."""
    import dataclasses
    from types import SimpleNamespace

    from PySide6.QtWidgets import QWidget

    from app.gui import pdf_pages, render_client
    from app.gui.panels.alignment_pages import pages_window
    from tests.fake_render_client import FakeRenderClient

    def no_ui_thread_render(*_args: object) -> None:
        raise AssertionError("a page rendered on the UI thread")

    monkeypatch.setattr(pdf_pages.BandedRender, "step", no_ui_thread_render)
    client = FakeRenderClient()
    monkeypatch.setattr(render_client, "shared_client", lambda: client)
    path_a, path_b = pdf_of(tmp_path / "a.pdf"), pdf_of(tmp_path / "b.pdf")
    doc_a = pymupdf.open(path_a)
    paper = make_paper()
    session = SimpleNamespace(document=SimpleNamespace(path=str(path_a), doc=doc_a), paper=paper,
                              analysis=None, palette=RolePalette())
    parent = QWidget()
    qtbot.addWidget(parent)
    second = (dataclasses.replace(paper, source_path=str(path_b)), None)
    window, note = pages_window(parent, session, make_alignment(), True, second)  # type: ignore[arg-type]
    assert note == ""
    window.show()
    qtbot.waitExposed(window)
    try:
        assert isinstance(window.view.side_a, PageSide) and isinstance(window.view.side_b, PageSide)
        assert window.view.side_a.view.uses_render_server and window.view.side_b.view.uses_render_server
        assert sorted(path for _, path in client.opened) == sorted([str(path_a), str(path_b)])
        tokens = {path: token for token, path in client.opened}
        qtbot.waitUntil(lambda: {t for t, _, _ in client.requests} == set(tokens.values()))
        token_a, page, scale = next(r for r in client.requests if r[0] == tokens[str(path_a)])
        client.reply(token_a, page, scale)
        assert window.view.side_a.view.is_sharp(page) and not window.view.side_b.view.has_pixmap(page)
    finally:
        window.close()
    assert sorted(client.closed) == sorted(tokens.values())  # the process lets go of both documents
    doc_a.close()
