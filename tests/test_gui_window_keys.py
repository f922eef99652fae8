"""The window's keys, menus and dialogs (tester K 4, 6, 9, 10; tester L 5, 7): Esc stays with a text box
and names what it cancelled, Ctrl+S saves the draft, Enter opens a library row, Ctrl+Shift+B works with
the Alignment panel hidden, F3 with nothing selected says what it did, the File menu's access keys are
unique, Help › Keyboard shortcuts fits its content, and file dialogs start in a remembered folder."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QFont, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu, QPushButton

from app.gui.session import EMBEDDING
from tests.gui_helpers import open_window
from tests.paper_factory import make_analysis, make_paper


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    (tmp_path / "user").mkdir()
    return tmp_path / "home"


def _window(qtbot):  # type: ignore[no-untyped-def]
    return open_window(qtbot, None, load_model_at_start=False, use_cache=False)


def _active(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)


class _SlowEmbedding:
    """``start_embedded_analysis``'s stand-in: labels at once, then embeds until cancelled."""

    def __init__(self, paper, _model, _ctx=None) -> None:  # type: ignore[no-untyped-def]
        self.analysis = make_analysis(paper)

    def embed(self, ctx):  # type: ignore[no-untyped-def]
        while True:
            ctx.check()
            time.sleep(0.01)


def _labelled_and_embedding(qtbot, window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The session's analysis job has shown the roles and is embedding (until cancelled)."""
    import core.labelling.embedded_analysis as embedded

    monkeypatch.setattr(embedded, "start_embedded_analysis", _SlowEmbedding)
    window.models.model = SimpleNamespace(model_id="tiny@1#abc")
    window.session.paper = make_paper()
    with qtbot.waitSignal(window.session.analysisReady, timeout=20_000):
        assert window.session.request_embedded() is None
    qtbot.waitUntil(lambda: window.tracker.labels() == [EMBEDDING], timeout=5000)


def test_esc_in_the_draft_keeps_the_jobs_and_elsewhere_names_what_it_cancelled(
        qtbot, home, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for window in _window(qtbot):
        _labelled_and_embedding(qtbot, window, monkeypatch)
        _active(qtbot, window)
        window.dock_panels.show_panel("draft")
        editor = window.panels["draft"].editor
        editor.setFocus()
        qtbot.waitUntil(lambda e=editor: QApplication.focusWidget() is e, timeout=5000)
        qtbot.keyClicks(editor, "We study")
        qtbot.keyClick(editor, Qt.Key.Key_Escape)
        assert [worker.is_cancelled for worker, _l, _c in window.tracker.active()] == [False]
        button = window.empty.findChildren(QPushButton)[0]  # not a text box: Esc is the window's Cancel
        button.setFocus()
        qtbot.waitUntil(lambda b=button: QApplication.focusWidget() is b, timeout=5000)
        with qtbot.waitSignal(window.session.cancelled, timeout=20_000) as stopped:
            qtbot.keyClick(button, Qt.Key.Key_Escape)
        assert stopped.args == ["embedding"]
        assert window.statusBar().currentMessage() == f"Cancelled: {EMBEDDING}"
        text = window.banner.text
        assert "Labelling" not in text and "Suggestions, Search" in text and "roles stay shown" in text
        assert window.session.analysis is not None  # the roles are still there


def test_resuming_the_embedding_keeps_the_roles_shown(qtbot, home, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for window in _window(qtbot):
        _labelled_and_embedding(qtbot, window, monkeypatch)
        with qtbot.waitSignal(window.session.cancelled, timeout=20_000):
            window.act_cancel.trigger()
        qtbot.waitUntil(lambda w=window: not w.session.embedding and not w.tracker.busy, timeout=20_000)
        labels = window.session.analysis
        window.banner.actions_box.itemAt(0).widget().click()  # Resume
        assert window.session.analysis is labels and window.session.embedding
        qtbot.waitUntil(lambda w=window: w.tracker.labels() == [EMBEDDING], timeout=5000)
        window.tracker.cancel_all()


def test_ctrl_s_saves_the_opened_draft_and_ctrl_alt_s_saves_it_as(
        qtbot, home, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    draft = tmp_path / "d.md"
    draft.write_text("# Introduction\n\nWe study writing.\n", encoding="utf-8")
    for window in _window(qtbot):
        pane = window.panels["draft"]
        with qtbot.waitSignal(pane.files.openFinished, timeout=20_000):
            pane.open_draft(str(draft))
        _active(qtbot, window)
        pane.editor.setFocus()
        pane.editor.moveCursor(pane.editor.textCursor().MoveOperation.End)
        qtbot.keyClicks(pane.editor, "More.")
        qtbot.keySequence(pane.editor, QKeySequence("Ctrl+S"))
        assert draft.read_text(encoding="utf-8").rstrip().endswith("More.")
        asked: list[str] = []
        monkeypatch.setattr(type(pane.files), "_ask_save_path",
                            lambda _s, suggested, a=asked: a.append(suggested))
        qtbot.keySequence(pane.editor, QKeySequence("Ctrl+Alt+S"))
        assert asked == [str(draft)]


def test_ctrl_shift_b_opens_the_side_by_side_with_the_alignment_panel_hidden(
        qtbot, home) -> None:  # type: ignore[no-untyped-def]
    for window in _window(qtbot):
        panel = window.panels["alignment"]
        assert not window.docks["alignment"].isVisible()
        opened: list[bool] = []
        panel.open_side_by_side = lambda o=opened: o.append(True) or "the window"
        _active(qtbot, window)
        qtbot.keySequence(window, QKeySequence("Ctrl+Shift+B"))
        assert opened == [True] and window.side_by_side_window == "the window"
        panel.open_side_by_side = lambda o=opened: o.append(False)  # nothing aligned: the panel, and a line
        qtbot.keySequence(window, QKeySequence("Ctrl+Shift+B"))
        assert opened == [True, False] and window.docks["alignment"].isVisible()
        assert window.statusBar().currentMessage().startswith("Nothing is aligned yet")


def test_every_key_is_in_help_once_and_the_dialog_fits_a_large_font(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    from app.gui.help import ShortcutsDialog, shortcut_rows

    for window in _window(qtbot):
        rows = dict((keys, name) for name, keys in shortcut_rows(window.shortcut_actions()))
        assert rows["Ctrl+Shift+B"].startswith("Side by side")
        assert rows["Del"] == "Remove (in the Library panel)"
        assert rows["Ctrl+S"] == "Save draft" and rows["Ctrl+Alt+S"] == "Save draft as"
        from PySide6.QtGui import QShortcut

        live = [s.key().toString() for s in window.findChildren(QShortcut) if s.isEnabled()]
        actions = [k.toString() for a in window.shortcut_actions() for k in a.shortcuts()]
        assert len(actions) == len(set(actions)) and not set(live) & set(actions)
        font = QFont(window.font())
        font.setPointSize(16)
        QApplication.setFont(font)
        try:
            dialog = ShortcutsDialog(window.shortcut_actions(), window)
            qtbot.addWidget(dialog)
            dialog.show()
            qtbot.waitExposed(dialog)
            qtbot.waitUntil(lambda d=dialog: not _cut_cells(d.table), timeout=5000)
            assert dialog.table.horizontalScrollBar().maximum() == 0 and dialog.width() > 460
            assert dialog.isSizeGripEnabled() and dialog.table.wordWrap()
            assert dialog.maximumWidth() > dialog.width()  # resizable
        finally:
            QApplication.setFont(QFont())


def _cut_cells(table) -> list[str]:  # type: ignore[no-untyped-def]
    """The texts of the cells that do not fit whole (on one line, or wrapped in the row's height)."""
    flags, metrics, cut = int(Qt.TextFlag.TextWordWrap), table.fontMetrics(), []
    for row in range(table.rowCount()):
        for column in (0, 1):
            box = QRect(0, 0, table.columnWidth(column) - 6, 10_000)  # less its margins
            needed = metrics.boundingRect(box, flags, table.item(row, column).text())
            if needed.width() > box.width() or needed.height() > table.rowHeight(row):
                cut.append(table.item(row, column).text())
    return cut


def _menu_keys(menu: QMenu) -> list[str]:
    keys = []
    for action in menu.actions():
        text = action.text().replace("&&", "")
        if "&" in text:
            keys.append(text[text.index("&") + 1].lower())
    return keys


def test_menus_have_unique_access_keys_and_add_to_library(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    for window in _window(qtbot):
        menus = [a.menu() for a in window.menuBar().actions()]
        while menus:
            menu = menus.pop()
            keys = _menu_keys(menu)
            assert len(keys) == len(set(keys)), (menu.title(), [a.text() for a in menu.actions()])
            menus.extend(a.menu() for a in menu.actions() if a.menu() is not None)
        file_menu = window.menuBar().actions()[0].menu()
        edit_menu = window.menuBar().actions()[1].menu()
        assert all("&" in a.text() for a in edit_menu.actions() if a.text())
        library = window.panels["library"]
        add_menu = next(a.menu() for a in file_menu.actions() if a.text() == "Add to li&brary")
        assert library.act_add_files in add_menu.actions() and library.act_add_folder in add_menu.actions()
        assert "HTML" in window.act_export.toolTip()  # the dialog offers it too


def test_f3_with_nothing_selected_starts_at_the_first_or_last_sentence(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    paper = make_paper()
    for window in _window(qtbot):
        window.session.paper, window.session.analysis = paper, make_analysis(paper)
        window._update_actions()
        window.act_next_same.trigger()
        assert window.session.selected == 0
        assert window.statusBar().currentMessage().startswith("No sentence was selected: F3 started at the "
                                                             "first sentence (background)")
        window.act_next_same.trigger()  # now from the selection: there is no other background sentence
        assert window.session.selected == 0
        window.session.select_sentence(-1)
        window.act_prev_same.trigger()
        assert window.session.selected == len(paper.sentences) - 1
        assert "Shift+F3 started at the last sentence" in window.statusBar().currentMessage()


def test_enter_on_a_library_row_opens_it_and_tab_reaches_the_add_buttons(
        qtbot, home, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from core.library.store import PaperRecord

    pdf = tmp_path / "p.pdf"
    pdf.write_bytes(b"%PDF-1.4\n")
    record = PaperRecord("id1", "ab" * 32, "A paper", str(pdf), "", "pdf", "m", 0.0, 12)
    for window in _window(qtbot):
        panel = window.panels["library"]
        window.dock_panels.show_panel("library")
        panel.table.fill([record])
        panel.stack.setCurrentWidget(panel.table)
        opened: list[str] = []
        panel.openRequested.disconnect()
        panel.openRequested.connect(opened.append)
        _active(qtbot, window)
        panel.table.setFocus()
        panel.table.select_ids(["id1"])
        qtbot.keyClick(panel.table, Qt.Key.Key_Return)
        qtbot.keyClick(panel.table, Qt.Key.Key_Enter)
        assert opened == [str(pdf), str(pdf)]
        buttons = [panel.toolbar.widgetForAction(a) for a in (panel.act_add_files, panel.act_add_folder)]
        assert all(b.focusPolicy() & Qt.FocusPolicy.TabFocus for b in buttons)


def test_file_dialogs_start_in_the_remembered_folder_never_the_working_one(
        qtbot, home, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from app.gui.panels import library_add
    from app.gui.settings import default_folder

    asked: list[tuple[str, str]] = []
    chosen = tmp_path / "exports" / "mine.jsonl"
    chosen.parent.mkdir()

    def save(_parent, title, start, _filter=""):  # type: ignore[no-untyped-def]
        asked.append((title, start))
        return str(chosen), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(save))
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(
        lambda _p, title, start, _f="": asked.append((title, start)) or ([], "")))
    monkeypatch.chdir(tmp_path)
    for window in _window(qtbot):
        monkeypatch.setattr(window, "export_corrections", lambda path: 0)
        monkeypatch.setattr(window, "import_corrections", lambda path: 0)
        window.export_corrections_dialog()
        assert asked[-1][1] == str(Path(default_folder()) / "corrections.jsonl")
        assert Path(asked[-1][1]).is_absolute() and Path(default_folder()) != tmp_path
        window.import_corrections_dialog()  # the folder the export went to
        assert asked[-1][1] == str(chosen.parent)
        window.export_corrections_dialog()
        assert asked[-1][1] == str(chosen.parent / "corrections.jsonl")
        library_add.ask_files(window.panels["library"])
        assert asked[-1][1] == default_folder()
    from app.gui.settings import LIBRARY_ADD, AppSettings

    settings = AppSettings()
    settings.remember_folder(LIBRARY_ADD, tmp_path / "exports" / "a.pdf")
    assert settings.folder_for(LIBRARY_ADD) == str(tmp_path / "exports")
    settings.remember_folder(LIBRARY_ADD, tmp_path / "gone" / "a.pdf")  # a folder no longer there
    assert settings.folder_for(LIBRARY_ADD) == default_folder()
