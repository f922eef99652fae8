"""Draft pane: typed sentences get role labels inline; the draft is saved and restored."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

from core.drafts import DraftStore
from models.roles import ROLES
from tests.gui_helpers import TIMEOUT_MS, model_bundle, open_window

TEXT = ("Previous work has studied citation recommendation. Our goal is to improve accuracy. "
        "We propose a new method based on e.g. graph embeddings (Fig. 2). "
        "Experiments on two datasets show large gains.\n\nIn conclusion, the approach is simple and fast.")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return model_bundle(tmp_path_factory)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_typed_sentences_are_labelled_and_saved(qtbot, bundle: Path, home: Path) -> None:  # type: ignore[no-untyped-def]
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        window.docks["draft"].show()
        editor = draft.editor
        editor.setFocus()
        with qtbot.waitSignal(draft.labelled, timeout=TIMEOUT_MS) as labelled:
            qtbot.keyClicks(editor, TEXT[:120])  # typed, debounced
            editor.insertPlainText(TEXT[120:])
        assert labelled.args[0] == 5
        assert [c.selectedText().replace("\u2029", "\n") for c, _ in editor.labels] == [
            "Previous work has studied citation recommendation.", "Our goal is to improve accuracy.",
            "We propose a new method based on e.g. graph embeddings (Fig. 2).",
            "Experiments on two datasets show large gains.",
            "In conclusion, the approach is simple and fast."]
        assert all(p.label in ROLES for _, p in editor.labels)
        assert len(editor.extraSelections()) == 5
        # the label under the cursor of the 4th sentence is that sentence's
        position = TEXT.index("Experiments") + 3
        assert editor.label_at(position) is editor.labels[3][1]
        cursor = editor.textCursor()
        cursor.setPosition(position)
        tip = editor.tooltip_at(editor.cursorRect(cursor).center())
        assert tip.startswith(f"<b>{editor.labels[3][1].label}</b>")
        qtbot.waitUntil(lambda: DraftStore().load() == TEXT, timeout=10_000)  # autosaved, debounced
        # editing drops stale labels' meaning: typing more triggers a new round
        with qtbot.waitSignal(draft.labelled, timeout=TIMEOUT_MS) as again:
            editor.moveCursor(editor.textCursor().MoveOperation.End)
            qtbot.keyClicks(editor, " Results show it works well.")
        assert again.args[0] == 6
        qtbot.keyClick(editor, Qt.Key.Key_Backspace)


def test_draft_is_restored_after_restart(qtbot, bundle: Path, home: Path) -> None:  # type: ignore[no-untyped-def]
    DraftStore().save(TEXT)
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        assert draft.text == TEXT
        qtbot.waitUntil(lambda d=draft: len(d.editor.labels) == 5, timeout=TIMEOUT_MS)


def test_draft_shows_functions_and_the_move_checklist(qtbot, tmp_path: Path, home: Path):  # type: ignore[no-untyped-def]
    from core.functions import default_taxonomy
    from core.moves import check_moves, describe_checks
    from tests.tiny_bundle import make_tiny_bundle

    bundle = make_tiny_bundle(tmp_path / "functions", functions=True, function_threshold=0.0)
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        window.docks["draft"].show()
        with qtbot.waitSignal(draft.labelled, timeout=TIMEOUT_MS):
            draft.set_text(TEXT)
        editor = draft.editor
        assert len(editor.functions) == len(editor.labels) == 5
        found = [f.label for f in editor.functions if f is not None]
        assert draft.moves.text() == describe_checks(check_moves(found, "introduction"), "introduction")
        draft.checklist_kind.setCurrentText("conclusion")
        assert draft.moves.text().startswith("conclusion: ")
        # The tooltip names the sentence's function.
        position = editor.labels[1][0].selectionStart() + 2
        function = editor.function_at(position)
        assert function is not None
        tip = editor.tooltip_at(editor.cursorRect(_cursor_at(editor, position)).center())
        assert default_taxonomy().get(function.label).name in tip


def _cursor_at(editor, position):  # type: ignore[no-untyped-def]
    cursor = editor.textCursor()
    cursor.setPosition(position)
    return cursor
