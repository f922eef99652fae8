"""The window's parts: panels come only from the registry; navigation and export stand alone."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from app.gui.panels import PanelSpec, register_panel, unregister_panel
from tests.gui_helpers import model_bundle, open_window
from tests.paper_factory import make_analysis, make_paper


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def throwaway_panel():  # type: ignore[no-untyped-def]
    made: list[QWidget] = []

    def factory(session) -> QWidget:  # type: ignore[no-untyped-def]
        label = QLabel(f"throwaway for {type(session).__name__}")
        made.append(label)
        return label

    spec = register_panel(PanelSpec(id="throwaway", title="Throwaway", factory=factory,
                                    area=Qt.DockWidgetArea.BottomDockWidgetArea, order=999,
                                    shortcut="Ctrl+Alt+T", visible=False, remember_visible=True,
                                    show_on_selection=True))
    yield spec, made
    unregister_panel("throwaway")


def test_a_registered_panel_gets_a_dock_with_its_toggle_and_shortcut(
        qtbot, home, tmp_path_factory, throwaway_panel) -> None:  # type: ignore[no-untyped-def]
    spec, made = throwaway_panel
    for window in open_window(qtbot, None, load_model_at_start=False):
        assert window.panels["throwaway"] is made[0] and made[0].text() == "throwaway for Session"
        dock = window.docks["throwaway"]
        assert dock.objectName() == "dock-throwaway" and window.dockWidgetArea(dock) == spec.area
        assert not dock.isVisible()
        toggle = dock.toggleViewAction()
        assert toggle in window.dock_panels.toggle_actions() and toggle.text() == "Throwaway panel"
        assert toggle.shortcut().toString() == "Ctrl+Alt+T" and toggle in window.shortcut_actions()
        window.dock_panels.reveal_for_selection()  # show_on_selection
        assert dock.isVisible()
    # remember_visible: it was open when the window closed, so the next window opens it
    for window in open_window(qtbot, None, load_model_at_start=False):
        assert window.docks["throwaway"].isVisible()


def test_navigation_steps_and_finds_roles_on_a_labelled_paper(
        qtbot, home, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    paper = make_paper()  # roles: background, objective, result, method, method, conclusion
    analysis = make_analysis(paper)
    for window in open_window(qtbot, model_bundle(tmp_path_factory), load_model_at_start=False):
        session, nav = window.session, window.navigator
        session.paper, session.analysis = paper, analysis
        assert nav.step(1) == 0 and session.selected == 0  # nothing selected: the first sentence
        assert nav.step(1) == 1 and nav.step(-1) == 0 and nav.step(-1) == 0
        session.select_sentence(3)
        assert nav.find_role(None) == 4  # the next of the selected one's role (method)
        assert nav.find_role(None) == 3  # wraps around
        assert nav.find_role("result", -1) == 2 and nav.find_role("other") == -1
        assert window.statusBar().currentMessage() == "No other sentence in this paper"
        window.palette_.set_visible("background", False)
        assert nav.find_role("background") == 0 and window.palette_.is_visible("background")
        assert nav.copy_sentence(3) == paper.sentences[3].text and nav.copy_sentence(99) == ""


def test_export_writes_each_format_and_refuses_unknown_ones(
        qtbot, home, tmp_path, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    paper = make_paper()
    analysis = make_analysis(paper)
    for window in open_window(qtbot, model_bundle(tmp_path_factory), load_model_at_start=False):
        exporter = window.exporter
        assert exporter.export_to(tmp_path / "x.json") is None  # nothing open yet
        window.session.paper, window.session.analysis = paper, analysis
        assert exporter.suggested_path("csv").endswith("-roles.csv")
        for suffix in ("json", "csv", "md"):
            written = exporter.export_to(tmp_path / f"a.{suffix}")
            assert written is not None and written.read_text(encoding="utf-8").strip()
        assert exporter.export_to(tmp_path / "b.txt", "markdown") is not None  # alias of md
        assert exporter.export_to(tmp_path / "c.docx") is None
        assert "Unknown export format 'docx'" in window.banner.text


def test_copy_in_any_panels_text_box_copies_its_own_selection(
        qtbot, home) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QPlainTextEdit

    class NotesEditor(QPlainTextEdit):  # a panel's own editor class: the window does not name it
        pass

    editor = NotesEditor()
    register_panel(PanelSpec(id="notes", title="Notes", factory=lambda _session: editor, order=998))
    try:
        for window in open_window(qtbot, None, load_model_at_start=False):
            window.session.paper = make_paper()
            window.session.select_sentence(2)
            editor.setPlainText("only these words")
            editor.selectAll()
            window.activateWindow()
            editor.setFocus()
            qtbot.waitUntil(lambda w=window: w.focusWidget() is editor)
            QGuiApplication.clipboard().setText("")
            assert window.copy() == "" and QGuiApplication.clipboard().text() == "only these words"
            editor.clearFocus()  # elsewhere: Ctrl+C copies the selected sentence
            qtbot.waitUntil(lambda w=window: not isinstance(w.focusWidget(), NotesEditor))
            assert window.copy() == window.session.paper.sentences[2].text
    finally:
        unregister_panel("notes")
