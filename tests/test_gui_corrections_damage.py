"""Hostile test C, problem 2: corrections meet a damaged or missing library database. A correction
(Alt+1…6, "Correct…"), the corrections read for the open paper, Tools › Export corrections… and
"Train on my corrections…" each say in one line, with the Library panel's words and its "Repair
library…", that nothing was saved or read; none raises in a slot, none vanishes silently."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from core.library.corrections import Correction, Corrections
from core.library.library import Library
from core.library.store import DATABASE_NAME
from tests.gui_helpers import open_window, own_user_folder
from tests.paper_factory import make_analysis, make_paper

DAMAGED = "Your library's database is damaged"
MISSING = "Your library's database is missing or empty"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_path_factory.mktemp("corrections-damage") / "bundle")


def library_with_a_correction(folder: Path, damage: str) -> Path:
    """A library holding one correction, then its database's header overwritten or the file deleted."""
    folder.mkdir(parents=True, exist_ok=True)
    with Library(folder) as library:
        Corrections(library.store).add(Correction(doc_id="cd" * 32, text="A sentence.", field="role",
                                                  corrected="result", predicted="other"))
    database = folder / DATABASE_NAME
    if damage == "missing":
        database.unlink()
    else:
        data = bytearray(database.read_bytes())
        data[:16] = b"NOT A DATABASE!!"
        database.write_bytes(bytes(data))
    return database


@pytest.fixture(params=["header", "missing"])
def window(request, qtbot, bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator:  # type: ignore[no-untyped-def]
    folder = own_user_folder(tmp_path, monkeypatch)
    library_with_a_correction(folder, request.param)
    for win in open_window(qtbot, bundle, use_cache=False, load_model_at_start=False):
        paper = make_paper()
        win.session.paper = paper
        win.session.analysis = make_analysis(paper)
        win._update_actions()
        win.expected = DAMAGED if request.param == "header" else MISSING
        yield win


def banner_buttons(window) -> list[str]:  # type: ignore[no-untyped-def]
    box = window.banner.actions_box
    return [box.itemAt(i).widget().text() for i in range(box.count())]


def test_a_correction_the_library_cannot_store_is_said_with_repair(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    assert window.corrections.corrected_label(1) is None  # read for the open paper: no raise
    window.banner.dismiss()
    window.session.selected = 1
    window.act_correct_role[0].trigger()  # Alt+1
    assert window.banner.text.startswith(f"Your correction was not saved: {window.expected}")
    assert "Repair library…" in window.banner.text and "\n" not in window.banner.text
    assert banner_buttons(window) == ["Repair library…"]
    assert window.corrections.correct_role(2, "result") is None
    assert window.corrections.corrected_label(2) is None


def test_export_and_training_say_the_library_cannot_be_read(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "corrections.jsonl"
    assert window.export_corrections(out) == -1 and not out.exists()
    assert window.banner.text.startswith(f"Your corrections were not exported: {window.expected}")
    assert banner_buttons(window) == ["Repair library…"]
    window.banner.dismiss()
    dialog = window.train_dialog()  # opens, saying why there is nothing to count
    assert dialog.isVisible() and not dialog.train_button.isEnabled()
    counts = html.unescape(dialog.counts.text())
    assert counts.startswith(f"Your corrections cannot be read: {window.expected}")
    assert window.banner.text.startswith("Your corrections cannot be read")
    assert not dialog.start()
    dialog.close()


def test_repair_library_runs_the_library_panels_repair(qtbot, window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    library = window.panels["library"]
    asked: list[bool] = []
    monkeypatch.setattr(library, "repair_library", lambda: asked.append(True))
    window.corrections.correct_role(1, "result")
    assert banner_buttons(window) == ["Repair library…"]
    window.banner.actions_box.itemAt(0).widget().click()
    assert asked == [True] and window.docks["library"].isVisible() and not window.banner.isVisible()
