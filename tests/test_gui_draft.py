"""Draft pane: typed sentences get role labels inline; the draft is saved and restored."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

from core.drafts import DraftStore
from core.taxonomy.labels import is_confident
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
        prediction = editor.labels[3][1]
        assert tip.startswith(f"<b>{prediction.label}</b>" if is_confident(prediction)
                              else f"<b>uncertain: {prediction.label} ")
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
    from core.draft_checklist import DraftOutline, draft_checklist
    from core.taxonomy.functions import default_taxonomy
    from tests.tiny_bundle import make_tiny_bundle

    bundle = make_tiny_bundle(tmp_path / "functions", functions=True, function_threshold=0.0)
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        window.docks["draft"].show()
        with qtbot.waitSignal(draft.labelled, timeout=TIMEOUT_MS):
            draft.set_text(TEXT)
        editor = draft.editor
        assert len(editor.functions) == len(editor.labels) == 5
        # no headings: the whole draft is checked as the chosen kind, as the language server would
        (section,) = draft_checklist(DraftOutline((), (-1,) * 5), editor.functions, "introduction")
        assert draft.moves.text() == section.line()
        assert draft.moves.text().endswith(
            f"(judged on the {section.judged[0]} of 5 sentences whose function or move is clear)")
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


# -- issue 24.5/24.6: in-context labels, uncertain labels, a checklist on confident labels ---------------
def _weak(label: str = "method", p: float = 0.41, second: str = "result", q: float = 0.35):  # type: ignore[no-untyped-def]
    from core.taxonomy.labels import RolePrediction

    probabilities = dict.fromkeys(ROLES, (1 - p - q) / (len(ROLES) - 2))
    probabilities.update({label: p, second: q})
    return RolePrediction(label, probabilities)


def _sure(label: str = "background"):  # type: ignore[no-untyped-def]
    from core.taxonomy.labels import RolePrediction

    probabilities = dict.fromkeys(ROLES, 0.02)
    probabilities[label] = 0.9
    return RolePrediction(label, probabilities)


HEADED = "Intro one. Intro two.\n\n# Methods\nWe did A. We did B. We did C.\n\n# Results\nX rose."


def test_label_draft_labels_each_heading_section_as_one_document() -> None:
    from app.gui.panels.draft_labelling import label_draft
    from core.jobs import ensure_context
    from tests.test_confidence import RecordingModel

    model = RecordingModel()
    labelled, functions = label_draft(ensure_context(None), HEADED, model)  # type: ignore[arg-type]
    assert model.documents == [(["Intro one.", "Intro two."], None),
                               (["We did A.", "We did B.", "We did C."], "method"), (["X rose."], "result")]
    assert [HEADED[a:b] for (a, b), _ in labelled][2:5] == ["We did A.", "We did B.", "We did C."]
    assert [p.label for _, p in labelled] == ["background"] * 2 + ["method"] * 4
    assert functions is not None and len(functions) == 6


def test_the_draft_shows_uncertain_labels_and_judges_moves_on_confident_ones(  # type: ignore[no-untyped-def]
        qtbot, tmp_path_factory, home: Path) -> None:
    from PySide6.QtGui import QImage

    from app.gui.panels.draft import DraftPanel
    from core.draft_checklist import DraftOutline
    from core.labelling.sentence_context import SentenceContext
    from core.taxonomy.functions import default_taxonomy
    from core.taxonomy.labels import FunctionPrediction
    from tests.gui_helpers import show_panel

    text = "# Introduction\nThe topic matters a lot. We aim to fix it. Maybe a gap remains."
    for panel in show_panel(qtbot, DraftPanel, model_bundle(tmp_path_factory), (700, 400)):
        assert isinstance(panel, DraftPanel)
        panel._label_timer.stop()
        panel.editor.blockSignals(True)
        panel.set_text(text)
        panel.editor.blockSignals(False)
        spans = [(text.index(s), text.index(s) + len(s))
                 for s in ("The topic matters a lot.", "We aim to fix it.", "Maybe a gap remains.")]
        functions = [FunctionPrediction("topic-importance", (("topic-importance", 0.6),)),
                     FunctionPrediction("aim", (("aim", 0.55),)),
                     FunctionPrediction("none", (("gap-neglected", 0.15), ("aim", 0.1)))]
        outline = DraftOutline(("introduction",), (0, 0, 0))
        panel._on_labelled(panel._version, (([(spans[0], _sure()), (spans[1], _sure("objective")),
                                              (spans[2], _weak())], functions), outline))
        editor = panel.editor
        # uncertain: a hatched background and a dotted underline; confident: a flat fill
        styles = [s.format.background().style() for s in editor.extraSelections()]
        assert styles == [Qt.BrushStyle.SolidPattern, Qt.BrushStyle.SolidPattern, Qt.BrushStyle.BDiagPattern]
        tip = editor.tooltip_at(editor.cursorRect(_cursor_at(editor, spans[2][0] + 2)).center())
        assert tip.startswith("<b>uncertain: method 41% or result 35%</b>")
        assert "no clear function" in tip and default_taxonomy().name_of("gap-neglected") in tip
        assert "2 background" not in panel.status.text() and "1 uncertain" in panel.status.text()
        # the checklist: the unclear gap is not counted, and it says on how many sentences it judged
        moves = panel.moves.text()
        assert "✓ why the topic matters" in moves and "✓ an aim statement" in moves
        assert "✗ a gap or problem" in moves
        assert moves.endswith("(judged on the 2 of 3 sentences whose function or move is clear)")
        # the margin chips paint (an uncertain one grey with "?")
        image = QImage(editor.margin.size(), QImage.Format.Format_RGB32)
        editor.margin.render(image)
        # the sentence at the cursor comes with its heading and neighbours
        editor.setTextCursor(_cursor_at(editor, spans[1][0] + 1))
        assert panel.current_context() == SentenceContext(
            "We aim to fix it.", ("The topic matters a lot.",), ("Maybe a gap remains.",), "introduction")
        assert panel.current_sentence() == "We aim to fix it."
        editor.setTextCursor(_cursor_at(editor, 3))  # on the heading line: no sentence yet
        assert panel.current_sentence() == ""


def test_a_resting_cursor_reads_its_context_once_for_the_pane_and_the_suggestions(  # type: ignore[no-untyped-def]
        qtbot, tmp_path_factory, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sentence at the cursor is found once per text and cursor position: the Suggestions panel asks
    for the context right after the pane published the sentence, and the draft is not split again."""
    import core.drafts as drafts
    from app.gui.panels.draft import DraftPanel
    from tests.gui_helpers import show_panel

    calls: list[int] = []
    headings: list[int] = []
    real, real_headings = drafts.context_in_draft, drafts.draft_headings
    monkeypatch.setattr(drafts, "context_in_draft",
                        lambda text, position, headings: calls.append(position) or real(text, position,
                                                                                         headings=headings))
    monkeypatch.setattr(drafts, "draft_headings", lambda text: headings.append(1) or real_headings(text))
    for panel in show_panel(qtbot, DraftPanel, model_bundle(tmp_path_factory), (700, 400)):
        assert isinstance(panel, DraftPanel)
        panel._label_timer.stop()
        panel.set_text(TEXT)
        editor = panel.editor
        editor.setTextCursor(_cursor_at(editor, TEXT.index("Experiments") + 3))
        with qtbot.waitSignal(panel.currentSentenceChanged, timeout=TIMEOUT_MS) as published:
            pass
        assert published.args == ["Experiments on two datasets show large gains."]
        assert panel.current_context() is not None and panel.current_context().section_kind is None
        assert len(calls) == 1
        editor.setTextCursor(_cursor_at(editor, 3))  # moved, same text: its headings are not read again
        assert panel.current_sentence() and len(calls) == 2 and len(headings) == 1
        editor.insertPlainText("x")  # the text changed: read again
        assert panel.current_sentence() and len(calls) == 3 and len(headings) == 2
