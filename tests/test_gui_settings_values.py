"""Hostile test C: numbers and lists read from settings.ini are checked like the Settings dialog checks
what it takes. ``model/threads`` stays in the dialog's 0–64 (100000 made loading the model hang, a
huge one gave a raw pybind error); ``overlay/opacity=nan`` falls back to the default (it hid every
highlight); junk recent-file entries are dropped and a recent file that is gone is marked in File ›
Open recent and taken off the list when clicked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

from app.gui.palette import DEFAULT_OPACITY
from app.gui.settings import MAX_THREADS, AppSettings
from tests.gui_helpers import open_window, own_user_folder


def settings_file(tmp_path: Path, text: str) -> AppSettings:
    path = tmp_path / "settings.ini"
    path.write_text(text, encoding="utf-8")
    return AppSettings(QSettings(str(path), QSettings.Format.IniFormat))


@pytest.mark.parametrize(("stored", "read"), [("100000", MAX_THREADS), ("2147483648", MAX_THREADS),
                                              ("123456789012345678901", MAX_THREADS), ("-5", 0), ("8", 8),
                                              ("eight", 0)])
def test_threads_from_the_file_stay_in_the_dialogs_range(tmp_path: Path, stored: str, read: int) -> None:
    assert settings_file(tmp_path, f"[model]\nthreads={stored}\n").threads == read


@pytest.mark.parametrize(("stored", "read"), [("nan", DEFAULT_OPACITY), ("-nan", DEFAULT_OPACITY),
                                              ("inf", DEFAULT_OPACITY), ("0.5", 0.5), ("7", 1.0)])
def test_an_opacity_that_is_not_a_number_falls_back_to_the_default(tmp_path: Path, stored: str,
                                                                   read: float) -> None:
    assert settings_file(tmp_path, f"[overlay]\nopacity={stored}\n").opacity == read


def test_junk_recent_files_are_dropped(tmp_path: Path) -> None:
    good = str(tmp_path / "paper.pdf")
    settings = settings_file(tmp_path, "")
    settings.q.setValue("files/recent", json.dumps(
        [7, "", "relative.pdf", good, "/tmp/a\nb.pdf", "/tmp/\u202egnp.pdf", None]))
    assert settings.recent_files == [good]


def test_a_recent_file_that_is_gone_is_marked_and_pruned(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    own_user_folder(tmp_path, monkeypatch)
    here, gone = tmp_path / "here.pdf", tmp_path / "gone & lost.pdf"
    here.write_bytes(b"%PDF-1.4\n")
    AppSettings().recent_files = [str(gone), str(here)]
    for window in open_window(qtbot, None, load_model_at_start=False):
        window.recent_menu.aboutToShow.emit()
        texts = [a.text() for a in window.recent_menu.actions() if a.text()]
        assert texts[:2] == ["&1  gone && lost.pdf  (not found)", "&2  here.pdf"]
        window.recent_menu.actions()[0].trigger()
        assert "file not found" in window.empty.error.text()
        assert AppSettings().recent_files == [str(here)]
        assert next(a.text() for a in window.recent_menu.actions() if a.text()) == "&1  here.pdf"
