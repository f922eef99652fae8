"""Library panel (listing, adding PDFs in the background with a failure summary, cancel, remove with a
confirmation, the empty state, "Add this paper") and the Suggestions panel's "Insert template" and
"Open source paper", on a tiny library built here with the tiny test bundle."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("hnswlib")

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QMessageBox

from app.gui.panels import library as library_panel
from app.gui.panels.library import EMPTY, LibraryPanel, report_summary
from core.library.library import ALREADY_THERE, AddReport
from core.paths import sample_paper_path
from tests.gui_helpers import function_bundle, no_shipped_model, open_window, own_user_folder, show_panel
from tests.paper_factory import make_paper

TIMEOUT_MS = 180_000  # parsing the 13-page sample in a child process on a busy 2-core machine
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
QUERY = "We propose a new method."


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return function_bundle(tmp_path_factory, "library")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's library folder, in this test's own user folder (no shipped phrase corpus either)."""
    return own_user_folder(tmp_path, monkeypatch)


@pytest.fixture
def sample() -> Path:
    path = sample_paper_path()
    if not path.is_file():
        pytest.skip(f"bundled sample paper absent: {path}")
    return path


@pytest.fixture
def library(folder: Path, bundle: Path, tmp_path: Path) -> Path:
    """Three papers imported from abstracts rows (kind "jsonl")."""
    from core.library.library import Library
    from models import load_model

    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    with Library(folder) as lib:
        lib.import_jsonl(rows, load_model(bundle, device="cpu", threads=1))
    return folder


def pdf_paper(path: Path):  # type: ignore[no-untyped-def]
    """A parsed-looking paper whose source is the PDF ``path`` (sentences in the tiny vocabulary)."""
    from core.document import PageRect, Paper, Section, SectionKind, Sentence

    texts = ["We propose a simple method for parsing.", "Results show large gains in accuracy."]
    sentences = [Sentence(id=f"s{i}", text=t, section_index=0, index=i, pages=[0],
                          rects=[PageRect(0, 72, 100 + 14 * i, 300, 112 + 14 * i)])
                 for i, t in enumerate(texts)]
    return Paper(title="A paper from a PDF", source_path=str(path), sha256="cd" * 32,
                 page_sizes=[(612.0, 792.0)], sentences=sentences,
                 sections=[Section("Introduction", SectionKind.INTRODUCTION, sentence_count=2)])


def make_panel(qtbot, model: Path | str) -> Iterator[LibraryPanel]:  # type: ignore[no-untyped-def]
    yield from show_panel(qtbot, LibraryPanel, model, (900, 320), wait_ms=30_000)


def wait_idle(qtbot, panel: LibraryPanel) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: not panel.busy and not panel.session.tracker.busy, timeout=TIMEOUT_MS)


def stored_titles(folder: Path) -> list[str]:
    from core.library.library import Library

    with Library(folder) as lib:
        return sorted(p.title for p in lib.store.papers())


def broken_pdf(path: Path) -> Path:
    path.write_bytes(b"%PDF-1.7\n" + b"\x00garbage\xff" * 300)
    return path


def test_report_summary_counts_added_duplicates_and_failures() -> None:
    report = AddReport(added=["a", "b"], sentences=120,
                       skipped=[("x.pdf", ALREADY_THERE), ("y.pdf", "y.pdf is encrypted")])
    assert report_summary(report) == ("Added 2 papers (120 sentences) · 1 already in your library · "
                                      "1 could not be read")
    assert report_summary(AddReport(skipped=[("y.pdf", "bad")])) == "No papers added · 1 could not be read"


def test_the_empty_state_invites_adding_pdfs_and_creates_nothing(qtbot, bundle, folder) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle):
        assert panel.stack.currentWidget() is panel.empty and panel.empty_message.text() == EMPTY
        assert "Your library is empty" in EMPTY and "suggestions" in EMPTY
        assert all(button.isEnabled() for button in panel.empty_buttons)
        assert panel.act_add_files.isEnabled() and panel.act_add_folder.isEnabled()
        assert not panel.act_add_current.isEnabled() and not panel.act_remove.isEnabled()  # no paper, no rows
        assert panel.rows() == [] and panel.totals.text() == ""
        assert not folder.exists()  # looking did not create a library


def test_the_list_shows_each_paper_sorts_and_filters(qtbot, bundle, library) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle):
        assert panel.stack.currentWidget() is panel.table
        assert sorted(r[0] for r in panel.rows()) == sorted(r["title"] for r in ROWS)
        assert {r[1] for r in panel.rows()} == {"abstracts"}
        counts = {r[0]: r[2] for r in panel.rows()}
        assert counts == {r["title"]: len(r["sentences"]) for r in ROWS}
        assert panel.totals.text() == "3 papers · 11 sentences"
        added = panel.proxy.index(0, 3).data()
        assert len(added) == len("2025-01-01 12:00") and added[4] == "-"
        panel.table.sortByColumn(2, Qt.SortOrder.AscendingOrder)  # by sentence count, numerically
        assert [r[2] for r in panel.rows()] == [3, 4, 4]
        panel.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        assert [r[0] for r in panel.rows()] == ["A simple and fast approach", "Improving accuracy",
                                                "Parsing scientific text"]
        panel.filter.setText("ACCURACY")
        assert [r[0] for r in panel.rows()] == ["Improving accuracy"]
        assert panel.totals.text() == "1 of 3 papers shown · 11 sentences"
        panel.filter.setText("nothing like this")
        assert panel.rows() == [] and panel.totals.text().startswith("No paper matches “nothing like this”")
        panel.filter.clear()
        assert len(panel.rows()) == 3


def test_add_files_runs_in_the_background_and_summarises_failures(
        qtbot, bundle, folder, sample, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    broken = broken_pdf(tmp_path / "broken.pdf")
    chosen = [str(sample), str(broken)]
    monkeypatch.setattr(library_panel.QFileDialog, "getOpenFileNames",
                        staticmethod(lambda *a, **k: (chosen, "PDF files (*.pdf)")))
    for panel in make_panel(qtbot, bundle):
        changed: list[bool] = []
        panel.libraryChanged.connect(lambda c=changed: c.append(True))
        tracker, jobs = panel.session.tracker, []
        tracker.changed.connect(lambda t=tracker, j=jobs: j.extend(t.labels()))
        panel.act_add_files.trigger()
        assert panel.busy and panel.progress_row.isVisible() and panel.cancel_button.isEnabled()
        assert "loading the model" in panel.progress_label.text()  # the job waits for the model
        assert not panel.act_add_files.isEnabled() and not panel.empty_buttons[0].isEnabled()
        wait_idle(qtbot, panel)
        assert "Adding 2 files to the library" in jobs  # through the job tracker (status bar, Esc)
        assert not panel.progress_row.isVisible() and panel.act_add_files.isEnabled()
        assert panel.report is not None and len(panel.report.added) == 1
        assert panel.summary_row.isVisible()
        summary = panel.summary.text()
        assert summary.startswith("Added 1 paper (") and summary.endswith(" · 1 could not be read")
        assert panel.details_button.isVisible() and not panel.details.isVisible()
        panel.details_button.click()
        assert panel.details.isVisible() and panel.details.count() == 1
        assert panel.details.item(0).text().startswith("broken.pdf: ")
        assert changed == [True]
        ((title, kind, count, _paper_id),) = panel.rows()  # the list was read again
        assert kind == "PDF" and count > 50 and title
        assert stored_titles(folder) == [title]
        assert panel.totals.text() == f"1 paper · {count:,} sentences"
        # The same PDF again: nothing new, and the summary says why.
        chosen[:] = [str(sample)]
        panel.act_add_files.trigger()
        wait_idle(qtbot, panel)
        assert panel.summary.text() == "No papers added · 1 already in your library"
        assert changed == [True] and len(panel.rows()) == 1


def test_add_folder_finds_pdfs_in_subfolders(qtbot, bundle, folder, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tests.pdf_factory import two_column_pdf

    papers = tmp_path / "papers"
    (papers / "nested").mkdir(parents=True)
    two_column_pdf(papers / "nested" / "generated.PDF")
    (papers / "notes.txt").write_text("not a paper", encoding="utf-8")
    (tmp_path / "nothing").mkdir()
    chosen = [str(papers)]
    monkeypatch.setattr(library_panel.QFileDialog, "getExistingDirectory",
                        staticmethod(lambda *a, **k: chosen[0]))
    for panel in make_panel(qtbot, bundle):
        panel.act_add_folder.trigger()
        wait_idle(qtbot, panel)
        assert panel.summary.text().startswith("Added 1 paper (") and not panel.details_button.isVisible()
        assert [r[0] for r in panel.rows()] == ["A Generated Paper About Reading Order"]
        chosen[0] = str(tmp_path / "nothing")
        panel.act_add_folder.trigger()
        wait_idle(qtbot, panel)
        assert panel.summary.text() == "No papers added · 1 could not be read"
        assert panel.details.item(0).text() == "nothing: no PDF files in this folder"
        broken_pdf(papers / "nested" / "broken.pdf")  # one new PDF, and it cannot be read
        chosen[0] = str(papers)
        panel.act_add_folder.trigger()
        wait_idle(qtbot, panel)
        assert panel.summary.text() == "No papers added · 1 already in your library · 1 could not be read"
        details = sorted(panel.details.item(i).text() for i in range(panel.details.count()))
        assert details[0].startswith("broken.pdf: ") and not details[0].startswith(f"broken.pdf: {papers}")
        assert details[1] == "generated.PDF: already in your library"


def test_cancel_stops_the_add_and_keeps_the_library_as_it_was(
        qtbot, bundle, library, sample, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    gate, started = threading.Event(), threading.Event()
    real = library_panel.add_pdfs_job

    def held(ctx, *args, **kwargs):  # type: ignore[no-untyped-def]
        started.set()
        gate.wait(30)  # still running when Cancel is pressed
        return real(ctx, *args, **kwargs)

    monkeypatch.setattr(library_panel, "add_pdfs_job", held)
    before = stored_titles(library)
    for panel in make_panel(qtbot, bundle):
        changed: list[bool] = []
        panel.libraryChanged.connect(lambda c=changed: c.append(True))
        panel.add_paths([sample])
        qtbot.waitUntil(started.is_set, timeout=TIMEOUT_MS)
        assert panel.progress_row.isVisible()
        qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
        assert panel.progress_label.text() == "Cancelling…" and not panel.cancel_button.isEnabled()
        gate.set()
        wait_idle(qtbot, panel)
        assert panel.summary.text().startswith("Cancelled.") and not panel.progress_row.isVisible()
        assert panel.report is None and changed == [True]
        assert stored_titles(library) == before and len(panel.rows()) == 3
        assert panel.act_add_files.isEnabled()


def test_remove_asks_first_then_removes_the_selected_papers(
        qtbot, bundle, library, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    answers: list[QMessageBox.StandardButton] = []
    asked: list[str] = []

    def question(_parent, _title, text, *_args):  # type: ignore[no-untyped-def]
        asked.append(text)
        return answers.pop(0)

    monkeypatch.setattr(library_panel.QMessageBox, "question", staticmethod(question))
    for panel in make_panel(qtbot, bundle):
        changed: list[bool] = []
        panel.libraryChanged.connect(lambda c=changed: c.append(True))
        ids = {r[0]: r[3] for r in panel.rows()}
        panel.select_ids([ids["Improving accuracy"]])
        assert panel.selected_ids() == [ids["Improving accuracy"]] and panel.act_remove.isEnabled()
        answers.append(QMessageBox.StandardButton.No)
        panel.activateWindow()
        panel.table.setFocus()
        qtbot.waitUntil(panel.table.hasFocus)
        qtbot.keyClick(panel.table, Qt.Key.Key_Delete)  # Delete asks ...
        assert len(asked) == 1 and "“Improving accuracy”" in asked[0] and "not deleted" in asked[0]
        assert not panel.busy and len(panel.rows()) == 3  # ... and No keeps it
        answers.append(QMessageBox.StandardButton.Yes)
        panel.act_remove.trigger()
        wait_idle(qtbot, panel)
        assert sorted(r[0] for r in panel.rows()) == ["A simple and fast approach", "Parsing scientific text"]
        assert stored_titles(library) == ["A simple and fast approach", "Parsing scientific text"]
        assert panel.summary.text() == "Removed 1 paper (4 sentences)." and changed == [True]
        assert panel.totals.text() == "2 papers · 7 sentences"
        panel.select_ids(list(ids.values()))  # two left to select
        assert len(panel.selected_ids()) == 2
        answers.append(QMessageBox.StandardButton.Yes)
        panel.remove_selected()
        assert "Remove 2 papers" in asked[-1]
        wait_idle(qtbot, panel)
        assert panel.rows() == [] and panel.stack.currentWidget() is panel.empty
        assert stored_titles(library) == []


def test_add_this_paper_adds_the_open_paper_once(qtbot, bundle, folder) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle):
        menu_action = panel.file_menu_actions()[0]
        assert menu_action.text() == "Add this paper to my &library" and not menu_action.isEnabled()
        paper = make_paper()
        panel.session.paper = paper
        panel.session.paperReady.emit(paper)
        assert menu_action.isEnabled() and panel.act_add_current.isEnabled()
        messages: list[str] = []
        panel.statusMessage.connect(messages.append)
        menu_action.trigger()
        wait_idle(qtbot, panel)
        assert panel.summary.text() == f"Added “{paper.title}” to your library (6 sentences)."
        assert [r[:3] for r in panel.rows()] == [(paper.title, "PDF", 6)]
        menu_action.trigger()  # already there: a friendly message, nothing added
        wait_idle(qtbot, panel)
        assert panel.summary.text() == f"“{paper.title}” is already in your library."
        assert messages[-1] == panel.summary.text() and len(panel.rows()) == 1
        panel.session.close()
        panel.session.paper = None
        panel.session.documentClosed.emit()
        assert not menu_action.isEnabled()


def test_a_missing_model_is_explained(qtbot, monkeypatch, folder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    no_shipped_model(monkeypatch, tmp_path)  # no fallback either: no model at all
    for panel in make_panel(qtbot, tmp_path / "no-such-bundle"):
        panel.add_paths([tmp_path])
        qtbot.waitUntil(lambda p=panel: p.summary_row.isVisible(), timeout=TIMEOUT_MS)
        assert panel.summary.text().startswith("No model: ") and "Settings" in panel.summary.text()
        assert not panel.busy and not panel.progress_row.isVisible()


def test_the_window_wires_the_library_and_the_suggestion_actions(
        qtbot, bundle, library, sample, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from core.library.library import Library
    from core.phrasing.templates import default_lexicon_path
    from models import load_model

    if not default_lexicon_path().is_file():
        pytest.skip(f"formulaic-word lexicon absent: {default_lexicon_path()}")
    pdf = tmp_path / "from-a-pdf.pdf"
    shutil.copy(sample, pdf)
    with Library(library) as lib:  # one paper added from a PDF, beside the three from abstracts
        lib.add_paper(pdf_paper(pdf), load_model(bundle, device="cpu", threads=1))
    for window in open_window(qtbot, bundle):
        panel, dock = window.panels["library"], window.docks["library"]
        assert isinstance(panel, LibraryPanel) and dock.objectName() == "dock-library"
        assert not dock.isVisible()  # hidden on first start
        toggle = dock.toggleViewAction()
        assert toggle.text() == "Library panel" and toggle.shortcut().toString() == "Ctrl+Shift+L"
        file_menu = window.menuBar().actions()[0].menu()
        assert panel.act_add_current_menu in file_menu.actions()
        with qtbot.waitSignal(panel.listed, timeout=TIMEOUT_MS):
            toggle.trigger()
        assert len(panel.rows()) == 4
        # Suggestions: search, then the row actions.
        suggestions = window.panels["suggestions"]
        window.docks["suggestions"].show()
        with qtbot.waitSignal(suggestions.suggestionsShown, timeout=TIMEOUT_MS):
            suggestions.set_query(QUERY)
        # A changed library makes the suggestions search again (what they list may be gone).
        with qtbot.waitSignal(suggestions.suggestionsShown, timeout=TIMEOUT_MS) as shown:
            panel.libraryChanged.emit()
            assert suggestions.result is None and suggestions.status.text() == "Searching…"
        assert shown.args == [QUERY]
        rows = suggestions.rows()
        from_pdf = [i for i, r in enumerate(rows) if r.source["paper_id"] == "cd" * 32]
        from_rows = [i for i, r in enumerate(rows) if r.source["paper_id"] != "cd" * 32]
        assert from_pdf and from_rows
        for i in from_rows:  # imported from abstracts: no PDF to open
            card = suggestions.card(i)
            assert not card.open_paper.isEnabled() and card.open_paper.isHidden()
            opener = [a for a in suggestions.row_menu(i).actions() if a.text() == "Open source paper"]
            assert len(opener) == 1 and not opener[0].isEnabled()
        card = suggestions.card(from_pdf[0])
        assert card.open_paper.isEnabled() and not card.open_paper.isHidden()
        assert rows[from_pdf[0]].source["path"] == str(pdf)
        menu = suggestions.row_menu(from_pdf[0])
        assert [a.text() for a in menu.actions() if a.text()] == ["Copy sentence", "Copy template",
                                                                  "Insert template", "Open source paper"]
        assert all(a.isEnabled() for a in menu.actions() if a.text() == "Open source paper")
        with qtbot.waitSignal(window.session.documentOpened, timeout=TIMEOUT_MS):
            card.open_paper.click()  # opened as File › Open does
        assert window.session.path == str(pdf) and window.stack.currentWidget() is window.page_view
        # Insert template: into the draft at its cursor, the draft shown, the first slot selected.
        row = next(i for i, r in enumerate(rows) if "[CONTENT]" in r.template)
        draft = window.panels["draft"]
        draft.set_text("Intro sentence.")
        cursor = draft.editor.textCursor()
        cursor.setPosition(len("Intro sentence."))
        draft.editor.setTextCursor(cursor)
        assert not window.docks["draft"].isVisible()
        suggestions.card(row).insert_template.click()
        template = rows[row].template
        assert window.docks["draft"].isVisible()
        assert draft.text == f"Intro sentence. {template}"
        assert draft.editor.textCursor().selectedText() == "[CONTENT]"
        draft.editor.moveCursor(QTextCursor.MoveOperation.End)
        menu = suggestions.row_menu(row)
        next(a for a in menu.actions() if a.text() == "Insert template").trigger()
        assert draft.text == f"Intro sentence. {template} {template}"
        cursor = draft.editor.textCursor()  # the new copy's slot is selected
        assert cursor.selectedText() == "[CONTENT]"
        assert cursor.selectionStart() > len(f"Intro sentence. {template}")
        cursor.setPosition(0)
        draft.editor.setTextCursor(cursor)
        draft.insert_text("Previous work has studied this problem.")  # before a word: a space after it
        assert draft.text.startswith("Previous work has studied this problem. Intro sentence.")
        # The source PDF moved away: nothing to open.
        pdf.unlink()
        opener = [a for a in suggestions.row_menu(from_pdf[0]).actions() if a.text() == "Open source paper"]
        assert not opener[0].isEnabled()
        assert suggestions.open_source_paper(from_pdf[0]) == ""
