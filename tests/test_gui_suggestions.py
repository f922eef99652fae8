"""Suggestions panel: real sentences from a tiny library built here, highlighted formulaic wording,
filters, stale results dropped, empty states, and its wiring into the window (registry, draft, page)."""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("hnswlib")

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.gui.panels import suggestions
from app.gui.panels.suggestion_text import HIGHLIGHT, HIGHLIGHT_TEXT, highlighted_html
from app.gui.panels.suggestions import NO_MODEL, NO_QUERY, SuggestionsPanel
from core.labelling.sentence_context import SentenceContext, context_in_paper
from tests.gui_helpers import function_bundle, no_shipped_model, open_window, show_panel
from tests.paper_factory import make_paper

TIMEOUT_MS = 60_000
ROWS = [  # words from the tiny bundle's vocabulary, so its embeddings mean something
    {"id": "p1", "title": "Parsing scientific text", "sentences": [
        {"text": "Previous work has studied this problem.", "section": "Introduction"},
        {"text": "Our goal is to improve accuracy.", "section": "Introduction"},
        {"text": "We propose a new method for parsing scientific text.", "section": "Method"},
        {"text": "Results show that it works well.", "section": "Results"}]},
    {"id": "p2", "title": "A simple and fast approach", "sentences": [
        {"text": "We propose a simple and fast method.", "section": "Introduction"},
        {"text": "Experiments on two datasets demonstrate large gains.", "section": "Results"},
        {"text": "In conclusion the approach is simple and fast.", "section": "Conclusion"}]},
    {"id": "p3", "title": "Improving accuracy", "sentences": [
        {"text": "Previous work has studied parsing.", "section": "Related work"},
        {"text": "Our goal is to improve parsing of scientific text.", "section": "Introduction"},
        {"text": "Results on two datasets show large gains in accuracy.", "section": "Results"},
        {"text": "The approach is simple.", "section": "Conclusion"}]},
]
TITLES = {row["id"]: row["title"] for row in ROWS}
QUERY = "We propose a new method."


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return function_bundle(tmp_path_factory, "suggest")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user folder of its own; the phrase corpus is only the one a test puts in it (never the
    shipped pack, which another model built)."""
    import core.paths

    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(core.paths, "corpus_dir", lambda: tmp_path / "home" / "corpus")
    return tmp_path / "home"


@pytest.fixture
def library(home: Path, bundle: Path, tmp_path: Path) -> dict[str, tuple[str, str, str]]:
    """The user's library (``$RHETORICA_HOME/library``): text -> (paper id, section, function)."""
    from core.library.library import Library
    from core.paths import library_dir
    from models import load_model

    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    model = load_model(bundle, device="cpu", threads=1)
    with Library(library_dir()) as lib:
        lib.import_jsonl(rows, model)
        return {r.text: (r.paper_id, r.section, r.function)
                for p in lib.store.papers() for r in lib.store.sentences_of(p.paper_id)}


def make_panel(qtbot, model: Path | str) -> Iterator[SuggestionsPanel]:  # type: ignore[no-untyped-def]
    yield from show_panel(qtbot, SuggestionsPanel, model, (440, 700))


def _search(qtbot, panel: SuggestionsPanel, text: str) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(panel.suggestionsShown, timeout=TIMEOUT_MS) as shown:
        panel.set_query(text)
    assert shown.args == [text]


def test_highlighted_html_marks_exactly_the_spans() -> None:
    text = "We propose a <new> method for parsing."
    out = highlighted_html(text, [(0, 10), (19, 25)])
    tint = f"<span style='background-color:{HIGHLIGHT}; color:{HIGHLIGHT_TEXT}; font-weight:600'>"
    assert out == f"{tint}We propose</span> a &lt;new&gt; {tint}method</span> for parsing."
    assert highlighted_html(text, []) == html.escape(text)


def test_the_panel_lists_real_sentences_with_their_wording_highlighted(
        qtbot, bundle, library) -> None:  # type: ignore[no-untyped-def]
    from core.phrasing.templates import default_lexicon_path, template_of

    if not default_lexicon_path().is_file():
        pytest.skip(f"formulaic-word lexicon absent: {default_lexicon_path()}")
    for panel in make_panel(qtbot, bundle):
        _search(qtbot, panel, QUERY)
        rows = panel.rows()
        assert 0 < len(rows) <= panel.k and panel.stack.currentWidget() is panel.list
        assert all(r.text in library for r in rows) and QUERY not in [r.text for r in rows]
        assert QUERY in panel.query_label.text() and "the selected sentence" in panel.query_label.text()
        for number, row in enumerate(rows):
            card = panel.card(number)
            assert card is not None
            spans, template = template_of(row.text)
            assert row.spans == spans and row.template == template
            assert card.sentence.text() == highlighted_html(row.text, spans)
            for start, end in spans:  # the formulaic wording sits inside the tinted, bold span
                assert f"font-weight:600'>{html.escape(row.text[start:end])}</span>" in card.sentence.text()
            assert card.template.text() == template
            paper_id, section, _function = library[row.text]
            assert card.source.text() == f"{TITLES[paper_id]} · {section}"
            assert card.match.text().startswith(f"similarity {row.similarity:.2f} · ")
            assert card.match.text().endswith(" · your library")
        assert any(r.spans for r in rows)
        # Copying: the buttons, the context menu and Ctrl+C.
        clipboard = QGuiApplication.clipboard()
        card = panel.card(1)
        assert card is not None
        card.copy_sentence.click()
        assert clipboard.text() == rows[1].text and panel.list.currentRow() == 1
        with_template = next(i for i, r in enumerate(rows) if r.template)
        panel.card(with_template).copy_template.click()  # type: ignore[union-attr]
        assert clipboard.text() == rows[with_template].template
        menu = panel.row_menu(0)
        assert [a.text() for a in menu.actions() if not a.isSeparator()] == [
            "Copy sentence", "Copy template", "Insert template", "Open source paper"]
        menu.actions()[0].trigger()
        assert clipboard.text() == rows[0].text
        panel.list.setCurrentRow(2)
        clipboard.setText("")
        panel.list.setFocus()
        qtbot.keyClick(panel.list, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
        assert clipboard.text() == rows[2].text
        # Insert template asks for the template to go to the draft; these papers came from abstracts
        # rows, not PDFs, so there is no source paper to open.
        inserted: list[str] = []
        panel.textInsertRequested.connect(inserted.append)
        panel.card(with_template).insert_template.click()  # type: ignore[union-attr]
        assert inserted == [rows[with_template].template] and panel.list.currentRow() == with_template
        assert all(not panel.card(i).insert_template.isEnabled()  # type: ignore[union-attr]
                   for i, r in enumerate(rows) if not r.template)
        assert all(not panel.card(i).open_paper.isEnabled() for i in range(len(rows)))  # type: ignore[union-attr]
        assert not menu.actions()[-1].isEnabled() and panel.open_source_paper(0) == ""


def test_filters_by_function_and_by_section(qtbot, bundle, library) -> None:  # type: ignore[no-untyped-def]
    functions = [f for _p, _s, f in library.values()]
    rare = min(set(functions), key=functions.count)  # a function fewer sentences have
    for panel in make_panel(qtbot, bundle):
        _search(qtbot, panel, QUERY)
        assert len({r.function for r in panel.rows()}) > 1  # unfiltered: several functions
        with qtbot.waitSignal(panel.suggestionsShown, timeout=TIMEOUT_MS):
            panel.set_function(rare)
        assert panel.function.currentData() == rare
        rows = panel.rows()
        assert rows and {r.function for r in rows} == {rare}
        assert sorted(r.text for r in rows) == sorted(t for t, (_p, _s, f) in library.items() if f == rare)
        with qtbot.waitSignal(panel.suggestionsShown, timeout=TIMEOUT_MS):
            panel.set_function(None)
        with qtbot.waitSignal(panel.suggestionsShown, timeout=TIMEOUT_MS):
            panel.set_section_kind("result")
        rows = panel.rows()
        assert rows and {r.source["section"] for r in rows} == {"Results"}
        with qtbot.waitSignal(panel.suggestionsShown, timeout=TIMEOUT_MS):
            panel.set_section_kind("abstract")  # no sentence of the library comes from an abstract
        assert panel.rows() == [] and panel.stack.currentWidget() is panel.message
        assert "No suggestions" in panel.message.text() and "abstract" in panel.message.text()


def test_the_phrase_corpus_pack_and_the_library_are_searched_together(
        qtbot, bundle, library, home) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import dataclass

    from core.library.pack import build_pack, file_sha256
    from models import load_model

    @dataclass
    class Section:
        heading: str
        kind: str
        sentences: list[str]

    @dataclass
    class Paper:
        dataset: str
        paper_id: str
        title: str
        sections: list[Section]
        licence: str = "CC-BY-4.0"

    corpus = ["Little attention has been paid to parsing scientific text.",
              "We propose a simple method for parsing scientific text."]
    model = load_model(bundle, device="cpu", threads=1)
    build_pack([Paper("test", "c1", "A corpus paper", [Section("Abstract", "abstract", corpus)])], model,
               home / "corpus", {"model_id": model.model_id,
                                 "model_sha256": file_sha256(Path(bundle) / "model.onnx")})
    for panel in make_panel(qtbot, bundle):
        _search(qtbot, panel, QUERY)
        kinds = {r.source["kind"] for r in panel.rows()}
        assert kinds == {"corpus", "library"}
        row = next(i for i, r in enumerate(panel.rows()) if r.source["kind"] == "corpus")
        assert panel.rows()[row].text in corpus
        assert panel.card(row).source.text() == "A corpus paper · Abstract"  # type: ignore[union-attr]
        assert panel.card(row).match.text().endswith(" · phrase corpus")  # type: ignore[union-attr]
        _search(qtbot, panel, "Results show large gains.")  # the opened pack is reused
        assert panel.rows()
        for index, only in ((1, "corpus"), (2, "library")):  # the source filter
            with qtbot.waitSignal(panel.suggestionsShown, timeout=TIMEOUT_MS):
                panel.source.setCurrentIndex(index)
            assert panel.rows() and {r.source["kind"] for r in panel.rows()} == {only}


def test_a_newer_query_supersedes_an_older_one_whose_result_is_dropped(
        qtbot, bundle, library, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    first, second = "Results show large gains.", QUERY
    gate, started, calls = threading.Event(), threading.Event(), []
    real = suggestions.find_suggestions

    def slow_first(ctx, query, *args):  # type: ignore[no-untyped-def]
        calls.append(query.text)
        if query.text == first:
            started.set()
            gate.wait(30)  # the first search is still running when the second query comes
        return real(ctx, query, *args)

    monkeypatch.setattr(suggestions, "find_suggestions", slow_first)
    for panel in make_panel(qtbot, bundle):
        shown: list[str] = []
        panel.suggestionsShown.connect(shown.append)
        panel.set_query(first)
        qtbot.waitUntil(started.is_set, timeout=TIMEOUT_MS)
        panel.set_query(second, "draft")
        gate.set()
        qtbot.waitUntil(lambda s=shown: s == [second], timeout=TIMEOUT_MS)
        qtbot.waitUntil(lambda p=panel: not p.session.tracker.busy, timeout=TIMEOUT_MS)
        qtbot.wait(50)
        assert shown == [second] and calls == [first, second]
        assert panel.result is not None and panel.result.query["text"] == second
        assert second in panel.query_label.text() and "the draft" in panel.query_label.text()
        assert panel.rows() and all(r.text in library for r in panel.rows())


def test_empty_states(qtbot, bundle, home, tmp_path) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle):  # no corpus, no library
        assert panel.stack.currentWidget() is panel.message
        text = panel.message.text()
        assert "No phrase corpus or library" in text and "rhetorica corpus build" in text
        assert "rhetorica library add" in text
        panel.set_query(QUERY)
        assert "rhetorica library add" in panel.message.text() and not panel.session.tracker.busy
        assert not (home / "library").exists()  # looking did not create a library


def test_empty_states_with_a_library(qtbot, monkeypatch, bundle, library, tmp_path) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle):
        assert panel.message.text() == NO_QUERY and "Select a sentence or type in the draft" in NO_QUERY
        panel.hide()  # hidden: a query waits until the panel is shown
        panel.set_query(QUERY)
        qtbot.wait(100)
        assert not panel.session.tracker.busy and panel.result is None
        with qtbot.waitSignal(panel.suggestionsShown, timeout=TIMEOUT_MS):
            panel.show()
        assert panel.rows()
        panel.set_query("   ")
        assert panel.message.text() == NO_QUERY and panel.rows() == []
    from tests.tiny_bundle import make_tiny_bundle

    other = make_tiny_bundle(tmp_path / "other", seed=3)  # not the model the library was built with
    for panel in make_panel(qtbot, other):
        panel.set_query(QUERY)
        qtbot.waitUntil(lambda p=panel: "Suggestions failed" in p.message.text(), timeout=TIMEOUT_MS)
        assert "the library was built with tiny-test@" in panel.message.text()
        assert "not with the current model" in panel.message.text()
    no_shipped_model(monkeypatch, tmp_path)  # no fallback either: no model at all
    for panel in make_panel(qtbot, tmp_path / "no-such-bundle"):  # the model cannot be loaded
        panel.set_query(QUERY)
        qtbot.waitUntil(lambda p=panel: p.message.text() == NO_MODEL, timeout=TIMEOUT_MS)
        status = panel.status.text()
        assert status.startswith("No model: ") and "\n" not in status and len(status) <= 200


def test_the_window_registers_the_panel_and_feeds_it_the_draft_and_the_page(
        qtbot, bundle, library) -> None:  # type: ignore[no-untyped-def]
    for window in open_window(qtbot, bundle):
        panel, dock = window.panels["suggestions"], window.docks["suggestions"]
        assert isinstance(panel, SuggestionsPanel) and dock.objectName() == "dock-suggestions"
        toggle = dock.toggleViewAction()
        assert toggle.text() == "Suggestions panel" and toggle.shortcut().toString() == "Ctrl+Shift+S"
        assert toggle in window.dock_panels.toggle_actions() and not dock.isVisible()
        toggle.trigger()  # shown, and in front of the profile and figures it is tabbed with
        assert dock in window.tabifiedDockWidgets(window.docks["profile"])
        qtbot.waitUntil(lambda p=panel: p.isVisible() and not p.visibleRegion().isEmpty())
        qtbot.waitUntil(lambda w=window: w.panels["profile"].visibleRegion().isEmpty())
        # The draft's sentence at the cursor, once typing pauses.
        window.docks["draft"].show()
        editor = window.panels["draft"].editor
        editor.setFocus()
        with qtbot.waitSignal(panel.suggestionsShown, timeout=TIMEOUT_MS) as shown:
            qtbot.keyClicks(editor, "Our goal is to improve accuracy. We propose a new method")
        assert shown.args == ["We propose a new method"] and panel.origin == "draft" and panel.rows()
        # read with the draft sentence before it (no heading: kind unknown), lent by the window
        assert panel.query_context == SentenceContext("We propose a new method",
                                                      ("Our goal is to improve accuracy.",), (), None)
        # The sentence selected on the page.
        window.session.paper = make_paper()
        with qtbot.waitSignal(panel.suggestionsShown, timeout=TIMEOUT_MS) as shown:
            window.session.select_sentence(1)
        assert shown.args == [window.session.paper.sentences[1].text] and panel.origin == "page"
        assert panel.query_context == context_in_paper(window.session.paper, 1, neighbours=None)
        # Edit › Copy with the list focused copies the selected suggestion.
        panel.list.setCurrentRow(0)
        window.activateWindow()
        panel.list.setFocus()
        qtbot.waitUntil(lambda w=window, p=panel: w.focusWidget() is p.list)
        QGuiApplication.clipboard().setText("")
        window.copy()
        assert QGuiApplication.clipboard().text() == panel.rows()[0].text
        # Ctrl+C on the list: the list takes the key before the window's Copy action (the page sentence).
        panel.list.setCurrentRow(1)
        QGuiApplication.clipboard().setText("")
        qtbot.keyClick(panel.list, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
        assert QGuiApplication.clipboard().text() == panel.rows()[1].text


def test_several_cards_show_most_similar_first_and_only_the_selected_one_opens(
        qtbot, bundle, library) -> None:  # type: ignore[no-untyped-def]
    # issue 26: the panel showed one card, unsorted; now the rows are most similar first and only the
    # selected row shows its template and buttons, so a dock of the panel's height shows several
    for panel in show_panel(qtbot, SuggestionsPanel, bundle, (440, 420)):
        _search(qtbot, panel, QUERY)
        rows = panel.rows()
        assert len(rows) >= 4
        assert [r.similarity for r in rows] == sorted((r.similarity for r in rows), reverse=True)
        cards = [panel.card(i) for i in range(len(rows))]
        assert panel.list.currentRow() == 0
        assert [c.buttons.isVisible() for c in cards] == [True] + [False] * (len(rows) - 1)  # type: ignore[union-attr]
        assert not any(c.template.isVisible() for c in cards[1:])  # type: ignore[union-attr]
        assert all(c.source.isVisible() and c.match.isVisible() for c in cards)  # type: ignore[union-attr]
        viewport = panel.list.viewport().rect()
        shown = [i for i in range(len(rows))
                 if viewport.contains(panel.list.visualItemRect(panel.list.item(i)))]
        assert len(shown) >= 3, (shown, viewport.height())
        panel.list.setCurrentRow(2)
        assert cards[2].buttons.isVisible() and not cards[0].buttons.isVisible()  # type: ignore[union-attr]
        height = panel.list.item(2).sizeHint().height()
        assert height > panel.list.item(0).sizeHint().height()  # the opened row is the taller one
