"""Issue 23 in the GUI: the Library panel meets a damaged library (listing it, or by its background
check) and says so once, offering "Repair library…" (the doctor, as a background job); the
Suggestions panel keeps suggesting from the phrase corpus beside a broken library, saying so in its
status line; a damaged index file is rebuilt, never read."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("hnswlib")

from PySide6.QtCore import Qt

from app.gui.panels.library import LibraryPanel
from app.gui.panels.suggestions import SuggestionsPanel
from core.library.store import DATABASE_NAME, INDEX_FILES, damaged_copies
from tests.gui_helpers import function_bundle, own_user_folder, show_panel
from tests.library_damage import PAGE, build_library, root_page, scramble, zero_pages

TIMEOUT_MS = 120_000
LEFT = Qt.MouseButton.LeftButton
PAPERS = 40
QUERY = "We propose a new method."


_SETTLED: list[bool] = []


@pytest.fixture(autouse=True)
def _earlier_tests_settled(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Once, before these tests: let what an earlier test's window left behind finish here (the
    draft pane of tests/test_gui_library.py's window labels its text on a timer after the window
    closed, and the result then meets a deleted editor), not inside these tests."""
    import time

    from app.gui.workers import thread_pool

    if _SETTLED:
        return
    _SETTLED.append(True)
    with qtbot.capture_exceptions():
        until = time.monotonic() + 2.0
        while time.monotonic() < until:
            thread_pool().waitForDone(30_000)
            qtbot.wait(100)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return function_bundle(tmp_path_factory, "damage")


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory, bundle: Path) -> Path:
    from models import load_model

    model = load_model(bundle, device="cpu", threads=1)
    return build_library(tmp_path_factory.mktemp("pristine") / "lib", model, papers=PAPERS)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pristine: Path) -> Path:
    """The user's library: a copy of the pristine one (no phrase corpus unless a test builds one)."""
    return Path(shutil.copytree(pristine, own_user_folder(tmp_path, monkeypatch)))


def library_panel(qtbot, bundle: Path) -> Iterator[LibraryPanel]:  # type: ignore[no-untyped-def]
    yield from show_panel(qtbot, LibraryPanel, bundle, (900, 320), wait_ms=30_000)


def wait_idle(qtbot, panel) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: not getattr(panel, "busy", False) and not panel.session.tracker.busy,
                    timeout=TIMEOUT_MS)


def test_an_emptied_database_is_one_message_and_repair_starts_again_empty(qtbot, bundle, folder) -> None:  # type: ignore[no-untyped-def]
    (folder / DATABASE_NAME).write_bytes(b"")
    for panel in library_panel(qtbot, bundle):
        assert panel.stack.currentWidget() is panel.empty
        assert panel.empty_message.text().startswith("Your library's database is missing or empty")
        assert panel.repair_button.isVisible() and panel.repair_button.isEnabled()
        assert not any(button.isVisible() for button in panel.empty_buttons)
        assert (folder / DATABASE_NAME).stat().st_size == 0  # looking created nothing
        qtbot.mouseClick(panel.repair_button, LEFT)
        wait_idle(qtbot, panel)
        assert panel.summary.text().startswith("Started your library again, empty: its papers were in the")
        assert panel.details_button.isVisible() and not panel.summary_repair.isVisible()
        assert panel.stack.currentWidget() is panel.empty and not panel.repair_button.isVisible()
        assert all(button.isVisible() for button in panel.empty_buttons)
        assert len(damaged_copies(folder)) == 1  # the empty file is kept, not deleted


def test_a_damaged_header_is_met_by_the_list_and_repair_recovers_every_paper(qtbot, bundle, folder) -> None:  # type: ignore[no-untyped-def]
    scramble(folder / DATABASE_NAME, 0, 100)
    for panel in library_panel(qtbot, bundle):
        assert panel.empty_message.text().startswith("Your library's database is damaged (")
        assert panel.repair_button.isVisible()
        changed: list[bool] = []
        panel.libraryChanged.connect(lambda c=changed: c.append(True))
        panel.repair_library()
        wait_idle(qtbot, panel)
        assert panel.summary.text() == (f"Repaired your library: recovered {PAPERS} of {PAPERS} papers "
                                        f"({5 * PAPERS} sentences).")
        assert len(panel.rows()) == PAPERS and changed and panel.damage is None
        details = [panel.details.item(i).text() for i in range(panel.details.count())]
        assert any(line.startswith("kept the old database as ") for line in details)


def test_damage_found_by_the_background_check_offers_repair_beside_the_list(qtbot, bundle, folder) -> None:  # type: ignore[no-untyped-def]
    pages = (folder / DATABASE_NAME).stat().st_size // PAGE
    zero_pages(folder / DATABASE_NAME, pages - 3, 1)  # a page of sentences: the list itself reads fine
    for panel in library_panel(qtbot, bundle):
        assert len(panel.rows()) == PAPERS
        wait_idle(qtbot, panel)  # the quick check ran in the background
        assert panel.summary_row.isVisible() and panel.summary_repair.isVisible()
        assert panel.summary.text().startswith("Your library's database is damaged (")
        qtbot.mouseClick(panel.summary_repair, LEFT)
        wait_idle(qtbot, panel)
        text = panel.summary.text()
        assert text.startswith("Repaired your library: recovered ") and "could not be saved" in text
        assert 0 < len(panel.rows()) < PAPERS and not panel.summary_repair.isVisible()


# -- suggestions beside a broken library ----------------------------------------------------------
CORPUS = ["Little attention has been paid to parsing scientific text.",
          "We propose a simple method for parsing scientific text."]


def build_corpus(bundle: Path, tmp_path: Path) -> None:
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

    model = load_model(bundle, device="cpu", threads=1)
    build_pack([Paper("test", "c1", "A corpus paper", [Section("Abstract", "abstract", CORPUS)])], model,
               tmp_path / "home" / "corpus", {"model_id": model.model_id,
                                              "model_sha256": file_sha256(Path(bundle) / "model.onnx")})


def suggestions_panel(qtbot, bundle: Path) -> Iterator[SuggestionsPanel]:  # type: ignore[no-untyped-def]
    yield from show_panel(qtbot, SuggestionsPanel, bundle, (440, 700))


def _search(qtbot, panel: SuggestionsPanel) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(panel.suggestionsShown, timeout=TIMEOUT_MS):
        panel.set_query(QUERY)


@pytest.mark.parametrize("damage", ["damaged sentences", "emptied database", "deleted database"])
def test_corpus_suggestions_go_on_beside_a_broken_library(qtbot, bundle, folder, tmp_path, damage) -> None:  # type: ignore[no-untyped-def]
    build_corpus(bundle, tmp_path)
    if damage == "damaged sentences":  # opens fine; the search meets the damage
        for name in ("sentences", "sentences_by_paper"):
            zero_pages(folder / DATABASE_NAME, root_page(folder, name), 1)
    elif damage == "emptied database":  # cannot be opened at all
        (folder / DATABASE_NAME).write_bytes(b"")
    else:  # gone, its index files and marker still there
        (folder / DATABASE_NAME).unlink()
    for panel in suggestions_panel(qtbot, bundle):
        _search(qtbot, panel)
        assert panel.rows() and {r.source["kind"] for r in panel.rows()} == {"corpus"}
        status = panel.status.text()
        what = "is damaged" if damage == "damaged sentences" else "has lost its database"
        assert not (folder / DATABASE_NAME).exists() or damage != "deleted database"  # nothing created
        assert status.endswith(f"phrase corpus only: your library {what}; repair it in the Library panel")
        assert len(panel.notes) == 1


def test_a_broken_library_alone_says_where_to_repair_it(qtbot, bundle, folder) -> None:  # type: ignore[no-untyped-def]
    for name in ("sentences", "sentences_by_paper"):
        zero_pages(folder / DATABASE_NAME, root_page(folder, name), 1)
    for panel in suggestions_panel(qtbot, bundle):
        panel.set_query(QUERY)
        qtbot.waitUntil(lambda p=panel: "Your library cannot be read" in p.message.text(), timeout=TIMEOUT_MS)
        assert "Repair library…" in panel.message.text()


def test_a_damaged_index_is_rebuilt_not_read_and_the_status_says_so(qtbot, bundle, folder) -> None:  # type: ignore[no-untyped-def]
    index = folder / INDEX_FILES["function"]
    scramble(index, index.stat().st_size // 2, 2048)
    for panel in suggestions_panel(qtbot, bundle):
        _search(qtbot, panel)
        assert panel.rows() and "function.ann is damaged" in panel.status.text()
        _search(qtbot, panel)  # rebuilt and saved: quiet from then on
        assert panel.notes == [] and "damaged" not in panel.status.text()
