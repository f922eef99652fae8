"""A panel's "Export …" of a text (JSON, Markdown, HTML): ask where when no path is given, write it
atomically, and say what happened in one line."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from app.gui.widgets import one_line


@dataclass(frozen=True)
class Saved:
    """What ``save_text`` did: ``path`` written ("" when nothing was) and a one-line ``message`` ("" when
    the user cancelled the dialog)."""

    path: str
    message: str


def folder_problem(path: str | os.PathLike[str]) -> str:
    """The line saying that the export target ``path`` is an existing folder (a save dialog returns one
    when a folder's name is typed), so nothing is written there; "" when it is not a folder."""
    return f"Cannot export to {path}: it is a folder; choose a file name." if Path(path).is_dir() else ""


def save_text(parent: QWidget, text: str, path: str | Path | None, *, title: str, suggested: str,
              file_filter: str) -> Saved:
    """Write ``text`` (with a final newline) to ``path``; None: ask with a save dialog first."""
    from core.fileio import atomic_write_text

    if path is None:
        path, _ = QFileDialog.getSaveFileName(parent, title, suggested, file_filter)
        if not path:
            return Saved("", "")
    if problem := folder_problem(path):
        return Saved("", problem)
    try:
        atomic_write_text(path, text if text.endswith("\n") else text + "\n")
    except OSError as error:
        return Saved("", one_line(f"Cannot write {path}: {error}"))
    return Saved(str(path), f"Saved {Path(path).name}.")
