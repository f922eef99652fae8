"""Hostile test C: what the window says. File names and errors are plain text in the banner and the
empty state (a name with HTML tags was rendered as markup); a folder is "a folder, not a PDF file";
the status bar gives a sentence's role as the inspector does ("objective 90%", not "(0.90)"); a
draft dropped after a refused file clears that file's stale error; the Search panel names the Library
panel's repair for a damaged library, not a command; ``gui --screenshot`` of a paper that cannot be
opened saves the window showing why, and exits non-zero."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QLabel

from core.library.store import DamagedLibraryError, MissingDatabaseError
from tests.gui_helpers import open_window, own_user_folder, show_panel
from tests.paper_factory import make_analysis, make_paper

HTML_NAME = '<h1 style="font-size:90px;color:green">PAID!<h1>.pdf'


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_path_factory.mktemp("window-messages") / "bundle")


@pytest.fixture
def window(qtbot, bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator:  # type: ignore[no-untyped-def]
    own_user_folder(tmp_path, monkeypatch)
    yield from open_window(qtbot, bundle, use_cache=False, load_model_at_start=False)


def drop(window, path: Path) -> None:  # type: ignore[no-untyped-def]
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    window.dropEvent(QDropEvent(QPointF(300, 300), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                Qt.KeyboardModifier.NoModifier))


def shown_as_plain_text(label: QLabel, name: str) -> bool:
    """The label shows ``name`` with its tags, at the normal font size (no 90 px heading: one line of
    text and the label's padding)."""
    return (label.textFormat() == Qt.TextFormat.PlainText and name in label.text()
            and label.heightForWidth(3000) < 70)


def test_file_names_are_plain_text_in_the_empty_state_and_the_banner(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / HTML_NAME).write_bytes(b"")
    window.open_path(tmp_path / HTML_NAME)
    assert window.empty.error.isVisibleTo(window) and shown_as_plain_text(window.empty.error, HTML_NAME)
    window.banner.show_message("error", f"Cannot read this paper: {HTML_NAME}")
    assert shown_as_plain_text(window.banner.message, HTML_NAME)
    window.empty.show_notice(f"No model bundle could be loaded ({HTML_NAME})")
    assert shown_as_plain_text(window.empty.notice, HTML_NAME)


def test_a_folder_is_said_to_be_a_folder(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "adir.pdf"
    folder.mkdir()
    window.open_path(folder)
    assert window.empty.error.text() == f"Cannot open this file: {folder}: this is a folder, not a PDF file"


def test_a_dropped_draft_clears_the_stale_error_of_an_earlier_drop(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "pic.svg").write_text("<svg/>", encoding="utf-8")
    (tmp_path / "draft.txt").write_text("We propose a new method.", encoding="utf-8")
    drop(window, tmp_path / "pic.svg")
    assert "not a PDF file" in window.empty.error.text() and window.empty.error.isVisibleTo(window)
    drop(window, tmp_path / "draft.txt")
    assert window.empty.error.text() == "" and not window.empty.error.isVisibleTo(window)


def test_the_status_bar_gives_the_role_as_a_percentage(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    paper = make_paper()
    window.session.paper = paper
    window.session.analysis = make_analysis(paper)
    window.session.select_sentence(1)
    message = window.statusBar().currentMessage()
    assert message == f"Sentence 2 of {len(paper.sentences)} — objective 90%", message


@pytest.mark.parametrize("error", [DamagedLibraryError(Path("/lib/library.sqlite3"), "not a database"),
                                   MissingDatabaseError(Path("/lib"), "missing")])
def test_search_offers_the_library_panels_repair_not_a_command(qtbot, bundle: Path, error: Exception) -> None:  # type: ignore[no-untyped-def]
    from app.gui.panels.search import SearchPanel

    for panel in show_panel(qtbot, SearchPanel, bundle, (900, 500)):
        panel._on_error(error)
        text = panel.message.text()
        assert "Repair library…" in text and "Library panel" in text
        assert "rhetorica library doctor" not in text


def test_a_screenshot_of_a_paper_that_cannot_be_opened_fails(tmp_path: Path, bundle: Path) -> None:
    folder, out = tmp_path / "adir.pdf", tmp_path / "shot.png"
    folder.mkdir()
    env = {**os.environ, "RHETORICA_HOME": str(tmp_path / "home"), "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-m", "app", "gui", str(folder), "--model", str(bundle),
                           "--screenshot", str(out), "--size", "900x600"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert out.is_file() and "screenshot saved" in proc.stdout  # the window, showing why
    assert "rhetorica: error: the paper could not be opened:" in proc.stderr
    assert "this is a folder, not a PDF file" in proc.stderr


def test_status_lines_and_the_library_message_are_plain_text(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The library panel's totals line shows the user's filter words and its folder, the empty page a damaged
    library's path: neither is markup."""
    from app.gui.panels.library_feedback import EmptyPage
    from app.gui.widgets import status_label

    label = status_label(f"No paper matches “{HTML_NAME}”")
    page = EmptyPage(lambda: None, lambda: None, lambda: None)
    qtbot.addWidget(label)
    qtbot.addWidget(page)
    assert label.textFormat() == Qt.TextFormat.PlainText
    assert page.message.textFormat() == Qt.TextFormat.PlainText
