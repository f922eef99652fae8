"""Search panel ("Papers like this one", issue 13): the open paper ranked against a tiny library built here
with the tiny test bundle, per facet, in the background; stale results dropped, the empty states, the JSON
export, opening a result's PDF, and the window's wiring (View menu, shortcut, the library's changes)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

from app.gui.panels.search import EMPTY_LIBRARY, NO_PAPER, SearchPanel, search_job
from core.document import PageRect, Paper, Section, SectionKind, Sentence
from core.taxonomy.labels import RolePrediction
from tests.gui_helpers import function_bundle, open_window, own_user_folder, show_panel
from tests.paper_factory import make_paper

TIMEOUT_MS = 180_000
QUERY_SHA = "ab" * 32  # make_paper()'s: the open paper, also stored in the library
LIBRARY = [  # (sha256, title, [(text, role)]): words of the tiny bundle's vocabulary
    ("01" * 32, "Parsing scientific text", [
        ("Previous work has studied this problem.", "background"),
        ("We propose a new method for parsing scientific text.", "method"),
        ("Results show that it works well.", "result")]),
    ("02" * 32, "A simple and fast approach", [
        ("Our goal is to improve accuracy.", "objective"),
        ("We propose a simple and fast method.", "method"),
        ("In conclusion the approach is simple and fast.", "conclusion")]),
    ("03" * 32, "Only a method", [
        ("We propose a method for parsing.", "method")]),
]
ROLE_OF = {text: role for _sha, _title, rows in LIBRARY for text, role in rows}
QUERY_ROLES = ["background", "objective", "result", "method", "method", "conclusion"]  # make_paper's


def query_roles(paper: Paper) -> list[str]:
    return [QUERY_ROLES[i % len(QUERY_ROLES)] for i in range(len(paper.sentences))]


def text_paper(sha: str, title: str, texts: list[str], source: str = "") -> Paper:
    sentences = [Sentence(id=f"s{i}", text=t, section_index=0, index=i, pages=[0],
                          rects=[PageRect(0, 72, 100 + 14 * i, 300, 112 + 14 * i)])
                 for i, t in enumerate(texts)]
    return Paper(title=title, source_path=source or f"/nowhere/{sha[:6]}.pdf", sha256=sha,
                 page_sizes=[(612.0, 792.0)], sentences=sentences,
                 sections=[Section("Introduction", SectionKind.INTRODUCTION, sentence_count=len(texts))])


def relabel(monkeypatch: pytest.MonkeyPatch, query_roles: Callable[[Paper], list[str]]) -> None:
    """Fixed role labels (the tiny bundle's are arbitrary): library sentences by ``ROLE_OF``, the query's
    by ``query_roles``; the embeddings stay the model's."""
    import core.labelling.analysis

    real = core.labelling.analysis.analyze_paper

    real_label = core.labelling.analysis.label_paper

    def roles_of(paper, analysis):  # type: ignore[no-untyped-def]
        texts = [s.text for s in paper.sentences]
        labels = [ROLE_OF[t] for t in texts] if all(t in ROLE_OF for t in texts) else query_roles(paper)
        return [RolePrediction(label, r.probabilities)
                for label, r in zip(labels, analysis.roles, strict=True)]

    def fixed(paper, model, ctx=None, **kwargs):  # type: ignore[no-untyped-def]
        analysis = real(paper, model, ctx, **kwargs)
        return dataclasses.replace(analysis, roles=roles_of(paper, analysis))

    def fixed_labels(paper, model, ctx=None):  # type: ignore[no-untyped-def]
        labelled = real_label(paper, model, ctx)  # the session's embedded analysis of the open paper
        labelled.analysis.roles = roles_of(paper, labelled.analysis)
        return labelled

    monkeypatch.setattr(core.labelling.analysis, "analyze_paper", fixed)
    monkeypatch.setattr(core.labelling.analysis, "label_paper", fixed_labels)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return function_bundle(tmp_path_factory, "search")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return own_user_folder(tmp_path, monkeypatch)


@pytest.fixture
def pdf(tmp_path: Path) -> Path:
    """A PDF file one library paper came from (double-clicking it opens it)."""
    from tests.pdf_factory import two_column_pdf

    return two_column_pdf(tmp_path / "parsing.pdf")


@pytest.fixture
def library(folder: Path, bundle: Path, pdf: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Three papers (the first from ``pdf``) and the open paper itself, labelled by ``relabel``."""
    from core.library.library import Library
    from models import load_model

    relabel(monkeypatch, query_roles)
    model = load_model(bundle, device="cpu", threads=1)
    with Library(folder) as lib:
        for number, (sha, title, rows) in enumerate(LIBRARY):
            source = str(pdf) if number == 0 else ""
            lib.add_paper(text_paper(sha, title, [t for t, _r in rows], source), model)
        lib.add_paper(make_paper(QUERY_SHA), model)
    return folder


def make_panel(qtbot, model: Path | str, paper: Paper | None = None) -> Iterator[SearchPanel]:  # type: ignore[no-untyped-def]
    yield from show_panel(qtbot, SearchPanel, model, (900, 500), paper=paper)


def run_search(qtbot, panel: SearchPanel, facet: str | None = None) -> None:  # type: ignore[no-untyped-def]
    if facet is not None and facet != panel.facet_value:
        panel.set_facet(facet)  # a facet change searches again only when something was shown
    if not panel.busy:
        assert panel.search()
    wait_idle(qtbot, panel)


def wait_idle(qtbot, panel: SearchPanel) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: not panel.busy and not panel.session.tracker.busy, timeout=TIMEOUT_MS)


def test_results_are_listed_best_first_without_the_query_paper(qtbot, bundle, library) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle, make_paper(QUERY_SHA)):
        assert panel.stack.currentWidget() is panel.message and "Search" in panel.message.text()
        assert not panel.export_button.isEnabled() and panel.k.value() == 20
        with qtbot.waitSignal(panel.resultsShown, timeout=TIMEOUT_MS):
            run_search(qtbot, panel, "method")
        outcome = panel.outcome
        assert outcome is not None and outcome.result.query.facet == "method"
        hits = outcome.result.results
        assert {h.paper_id for h in hits} == {sha for sha, _t, _r in LIBRARY}  # each has a method sentence
        assert QUERY_SHA not in {h.paper_id for h in hits}  # the open paper is in the library: never listed
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert outcome.result.query.facet_sentences == [s.text for s, r in zip(
            make_paper().sentences, QUERY_ROLES, strict=True) if r == "method"]
        assert panel.rows() == [(i, h.score, h.title) for i, h in enumerate(hits, 1)]
        assert panel.stack.currentWidget() is panel.list and panel.list.count() == len(hits)
        card = panel.list.itemWidget(panel.list.item(0)).text()
        best = hits[0].evidence[0]
        assert card.startswith("<span") and "1.</span>" in card and f"score {hits[0].score:.3f}" in card
        assert f"→ {best.similarity:.2f}:" in card and best.matched_sentence in card
        assert "Papers like" in panel.heading.text() and "method" in panel.heading.text()
        assert panel.export_button.isEnabled() and panel.status.text().startswith(f"{len(hits)} of 3 papers")
        # k limits the list.
        panel.k.setValue(1)
        run_search(qtbot, panel)
        assert len(panel.rows()) == 1 and panel.list.count() == 1


def test_a_facet_change_searches_again_and_drops_the_stale_result(qtbot, bundle, library) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle, make_paper(QUERY_SHA)):
        run_search(qtbot, panel, "method")
        method = panel.outcome
        assert method is not None
        shown: list[str] = []
        panel.resultsShown.connect(lambda r, s=shown: s.append(r.query.facet))
        panel.set_facet("result")  # searches again at once; the method ranking is gone meanwhile
        assert panel.busy and panel.outcome is None and panel.list.count() == 0
        assert not panel.export_button.isEnabled() and not panel.heading.isVisible()
        panel.set_facet("background")  # changed again before the result search finished
        wait_idle(qtbot, panel)
        assert shown == ["background"]  # the result facet's answer (stale) was never shown
        background = panel.outcome
        assert background is not None and background.result.query.facet == "background"
        # every other paper is ranked (issue 26.5), "Only a method" (no background sentence) too
        assert {h.paper_id for h in background.result.results} == {sha for sha, _t, _r in LIBRARY}
        assert background.query is method.query  # the open paper was analysed once
        # Another paper opened: the results go.
        panel.session.documentOpened.emit(object())
        assert panel.outcome is None and panel.list.count() == 0 and not panel.busy


def test_the_open_paper_without_sentences_of_the_facet_falls_back_to_all(
        qtbot, bundle, library, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    relabel(monkeypatch, lambda paper: ["background"] * len(paper.sentences))
    for panel in make_panel(qtbot, bundle, make_paper("ef" * 32)):
        run_search(qtbot, panel, "method")  # no method sentence: searched with all of them, and said so
        assert panel.outcome is not None and panel.outcome.result.query.fallback
        assert len(panel.outcome.result.query.facet_sentences) == len(panel.session.paper.sentences)
        assert "It has no method sentences: all its sentences were used." in panel.heading.text()
        # the library's QUERY_SHA paper has the same sentences under another sha256: the same paper, left out
        assert {h.paper_id for h in panel.outcome.result.results} == {sha for sha, _t, _r in LIBRARY}
        run_search(qtbot, panel, "all")  # the whole paper: every sentence counts
        assert panel.outcome is not None and len(panel.rows()) == 3


def test_empty_library_and_no_paper_states(qtbot, bundle, folder) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle, None):
        assert panel.message.text() == NO_PAPER and not panel.search() and not panel.busy
        panel.session.paper = make_paper()
        panel.session.paperReady.emit(panel.session.paper)
        assert "Press <b>Search</b>" in panel.message.text()
        run_search(qtbot, panel, "all")
        assert panel.message.text() == EMPTY_LIBRARY and panel.outcome is None
        assert "Library panel" in EMPTY_LIBRARY and "rhetorica library add" in EMPTY_LIBRARY
        assert not folder.exists()  # looking did not create a library
        panel.session.paper = None
        panel.session.documentClosed.emit()
        assert panel.message.text() == NO_PAPER


def test_export_writes_the_issue_json_and_double_click_opens_a_pdf(
        qtbot, bundle, library, pdf, tmp_path) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle, make_paper(QUERY_SHA)):
        run_search(qtbot, panel, "method")
        target = tmp_path / "out" / "results.json"
        target.parent.mkdir()
        assert panel.export(target) == str(target)
        data = json.loads(target.read_text(encoding="utf-8"))
        assert data == panel.outcome.result.to_dict()  # type: ignore[union-attr]
        assert set(data) == {"query", "results"}
        assert set(data["query"]) == {"paper_id", "title", "facet", "facet_sentences", "fallback"}
        assert data["query"]["facet"] == "method" and data["query"]["paper_id"] == QUERY_SHA
        first = data["results"][0]
        assert set(first) == {"paper_id", "title", "score", "evidence"}
        assert set(first["evidence"][0]) == {"query_sentence", "matched_sentence", "similarity"}
        opened: list[str] = []
        messages: list[str] = []
        panel.openRequested.connect(opened.append)
        panel.statusMessage.connect(messages.append)
        rows = {hit.paper_id: i for i, hit in enumerate(panel.outcome.result.results)}  # type: ignore[union-attr]
        from_pdf = rows[LIBRARY[0][0]]
        item = panel.list.item(from_pdf)
        rect = panel.list.visualItemRect(item)
        assert panel.outcome.pdfs[LIBRARY[0][0]] == str(pdf)  # type: ignore[union-attr]
        qtbot.mouseClick(panel.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.mouseDClick(panel.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        assert opened == [str(pdf)]
        assert not panel.open_result(rows[LIBRARY[1][0]])  # its PDF does not exist
        assert opened == [str(pdf)] and "no PDF to open" in messages[-1]


def test_the_job_reuses_a_query_and_closes_its_library(bundle, library) -> None:  # type: ignore[no-untyped-def]
    from core.jobs import JobContext
    from models import load_model

    model = load_model(bundle, device="cpu", threads=1)
    first = search_job(JobContext(), library, make_paper(QUERY_SHA), model, "all", 2)
    assert len(first.result.results) == 2 and first.query.paper_id == QUERY_SHA
    again = search_job(JobContext(), library, make_paper(QUERY_SHA), model, "result", 5, first.query)
    assert again.query is first.query and again.result.query.facet == "result"
    assert again.pdfs[LIBRARY[1][0]] == ""
    # A query kept from before the open paper was added to the library still leaves it out.
    before = dataclasses.replace(first.query, paper_id="/tmp/test.pdf")
    later = search_job(JobContext(), library, make_paper(QUERY_SHA), model, "all", 5, before)
    assert later.query.paper_id == QUERY_SHA and QUERY_SHA not in {h.paper_id for h in later.result.results}


def test_the_window_wires_the_search_panel(qtbot, bundle, library, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.pdf_factory import hyphen_pdf

    paper_pdf = hyphen_pdf(tmp_path / "open-me.pdf")
    for window in open_window(qtbot, bundle):
        panel, dock = window.panels["search"], window.docks["search"]
        assert isinstance(panel, SearchPanel) and dock.objectName() == "dock-search"
        assert not dock.isVisible()  # hidden on first start
        toggle = dock.toggleViewAction()
        assert toggle.text() == "Search panel" and toggle.shortcut().toString() == "Ctrl+Shift+K"
        view_menu = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "View")
        panels_menu = next(a.menu() for a in view_menu.actions() if a.menu() is not None
                           and a.text().replace("&", "") == "Panels")
        assert toggle in panels_menu.actions()
        shortcuts = [a.shortcut().toString() for a in window.findChildren(type(toggle))]
        assert shortcuts.count("Ctrl+Shift+K") == 1  # no other action has it
        toggle.trigger()
        assert dock.isVisible() and panel.message.text() == NO_PAPER
        with qtbot.waitSignal(window.session.paperReady, timeout=TIMEOUT_MS):
            window.open_path(paper_pdf)
        assert "Press <b>Search</b>" in panel.message.text()
        run_search(qtbot, panel, "all")
        assert panel.outcome is not None and len(panel.rows()) == 4  # the generated PDF is not in the library
        # The library panel's changes reach the panel: it searches again.
        with qtbot.waitSignal(panel.resultsShown, timeout=TIMEOUT_MS):
            window.panels["library"].libraryChanged.emit()
            assert panel.outcome is None
        wait_idle(qtbot, panel)
        # Double-clicking a PDF result opens it in the window.
        rows = {hit.paper_id: i for i, hit in enumerate(panel.outcome.result.results)}  # type: ignore[union-attr]
        with qtbot.waitSignal(window.session.paperReady, timeout=TIMEOUT_MS):
            assert panel.open_result(rows[LIBRARY[0][0]])
        assert panel.outcome is None  # another paper is open: the results were for the last one

