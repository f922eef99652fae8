"""Draft pane with draft files (issue 27.1): File › Open draft…, drag and drop, recent drafts, the
parsed text shown and labelled, saving back only where lossless, else "Save draft as…"."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QDropEvent

from core.drafts import DraftStore
from tests.gui_helpers import TIMEOUT_MS, model_bundle, open_window

FIXTURE = Path(__file__).parent / "fixtures" / "drafts" / "latex_paper"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return model_bundle(tmp_path_factory)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    shutil.copytree(FIXTURE, tmp_path / "paper")
    return tmp_path / "paper"


def test_open_label_save_back_and_save_as(qtbot, bundle: Path, project: Path,  # type: ignore[no-untyped-def]
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    main = project / "main.tex"
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        texts = [a.text() for a in window.menuBar().actions()[0].menu().actions()]
        assert {"Open &draft…", "Open recent dra&ft", "&Save draft", "Save draft &as…"} <= set(texts)
        draft.set_text("My typed notes.")
        monkeypatch.setattr(draft.files, "_ask_open_path", lambda: str(main))
        asked: list[str] = []
        monkeypatch.setattr(draft.files, "_ask_unsaved", lambda q, asked=asked: asked.append(q) or "discard")
        with qtbot.waitSignal(draft.labelled, timeout=TIMEOUT_MS, check_params_cb=lambda n: n == 20):
            assert draft.open_draft_dialog()  # the parsed sentences, not the LaTeX
        assert asked == ["Save the draft in the pane before opening main.tex?"]
        assert window.docks["draft"].isVisible()
        assert draft.text.startswith("# Abstract\n\nCapacitive soil moisture probes are cheap")
        assert "\\cite" not in draft.text and "[2, 3]" in draft.text
        assert draft.status.text().startswith("Opened main.tex (LaTeX): 20 sentences; 2 included files")
        assert DraftStore().load("before-open") == "My typed notes."  # the typed text is kept
        first = draft.editor.labels[0][0].selectedText()
        assert first == ("Capacitive soil moisture probes are cheap, but their readings drift with "
                         "temperature [1].")
        # a text edit is written back into the LaTeX source
        draft.set_text(draft.text.replace("The aim of this paper is", "Our aim is"))
        assert draft.save_draft()
        assert "Our aim is to remove that dependence" in main.read_text(encoding="utf-8")
        assert "\\cite{allen1998,smith2015}" in main.read_text(encoding="utf-8")
        assert draft.status.text() == "Saved main.tex"
        # an edit of a citation placeholder is not lossless: "Save draft as…" a Markdown file
        draft.set_text(draft.text.replace("holds [2, 3].", "holds [2]."))
        target = project.parent / "copy.md"
        monkeypatch.setattr(draft.files, "_ask_save_path", lambda suggested, target=target: str(target))
        before = main.read_text(encoding="utf-8")
        assert draft.save_draft()
        assert main.read_text(encoding="utf-8") == before
        assert "holds [2]." in target.read_text(encoding="utf-8")
        assert draft.opened is not None and draft.opened.path == target and draft.opened.format == "md"
        assert [a.toolTip() for a in draft.recent_drafts_menu.actions()] == [str(target), str(main)]


def _shows(draft, line: str):  # type: ignore[no-untyped-def]
    """A check that the pane's status line shows ``line`` (alone or before a labelling's summary)."""
    return lambda: line in draft.status.text()


def test_drop_a_draft_and_bad_drafts_are_one_line(qtbot, bundle: Path, project: Path,  # type: ignore[no-untyped-def]
                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "bad.tex"
    bad.write_text("\\section{Intro}\nUnclosed {group.\n", encoding="utf-8")
    note = tmp_path / "note.md"
    note.write_text("# Results\n\nThe yield **rose** by 12% [@lee].\n", encoding="utf-8")
    for window in open_window(qtbot, bundle):
        draft = window.panels["draft"]
        window.docks["draft"].show()
        draft.set_text("Kept text.")
        with qtbot.waitSignal(draft.files.openFinished, timeout=TIMEOUT_MS) as done:
            draft.open_draft(str(bad))
        assert done.args == [False]
        # said at once, and kept before the labelling's lines ("Loading the model…" may come first)
        said = f"{bad}, line 2: unbalanced group: this '{{' is never closed"
        qtbot.waitUntil(_shows(draft, said), timeout=TIMEOUT_MS)
        assert draft.text == "Kept text." and draft.opened is None
        with qtbot.waitSignal(draft.files.openFinished, timeout=TIMEOUT_MS) as done:
            draft.open_draft(str(tmp_path / "gone.docx"))
        assert done.args == [False]
        qtbot.waitUntil(_shows(draft, f"{tmp_path / 'gone.docx'}: no such file"), timeout=TIMEOUT_MS)
        monkeypatch.setattr(draft.files, "_ask_unsaved", lambda question: "discard")
        mime = QMimeData()
        mime.setUrls([QUrl.fromLocalFile(str(note))])
        event = QDropEvent(QPoint(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                           Qt.KeyboardModifier.NoModifier)
        with qtbot.waitSignal(draft.files.openFinished, timeout=TIMEOUT_MS) as done:
            draft.editor.dropEvent(event)
        assert done.args == [True]
        assert draft.text == note.read_text(encoding="utf-8")  # Markdown is shown as it is
        qtbot.waitUntil(lambda d=draft: [c.selectedText() for c, _ in d.editor.labels]
                        == ["The yield **rose** by 12% [@lee]."], timeout=TIMEOUT_MS)
        draft.set_text(draft.text + "\nIt fell later.\n")
        assert draft.save_draft()
        assert note.read_text(encoding="utf-8").endswith("It fell later.\n")
