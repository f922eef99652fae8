"""The Library panel's "Add files…" and "Add folder…" questions (its toolbar, its empty page and File ›
Add to library): asked in the folder papers were last added from (else the documents folder, never the
process's working folder), which is then remembered; the panel comes to the front, so that the job's
progress and outcome are in sight when the question was asked from the menu."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from app.gui.settings import LIBRARY_ADD, dialog_folder, remember_dialog_folder
from app.gui.widgets import show_dock_of

PDF_FILTER = "PDF files (*.pdf);;All files (*)"


def ask_files(panel: QWidget) -> list[Path]:
    """The PDF files chosen to add ([] when the dialog was cancelled)."""
    paths, _ = QFileDialog.getOpenFileNames(panel, "Add papers to your library", dialog_folder(LIBRARY_ADD),
                                            PDF_FILTER)
    if paths:
        remember_dialog_folder(LIBRARY_ADD, paths[0])
        show_dock_of(panel)
    return [Path(p) for p in paths]


def ask_folder(panel: QWidget) -> list[Path]:
    """The folder chosen to add every PDF of (``[folder]``; [] when the dialog was cancelled)."""
    folder = QFileDialog.getExistingDirectory(panel, "Add every PDF in a folder to your library",
                                              dialog_folder(LIBRARY_ADD))
    if not folder:
        return []
    remember_dialog_folder(LIBRARY_ADD, Path(folder).parent if Path(folder).parent.is_dir() else folder)
    show_dock_of(panel)
    return [Path(folder)]

