"""Exporting the open paper's analysis from the GUI: the save dialog and writing the file.

The formats themselves are ``core.exports`` (JSON, CSV, Markdown); this module picks the file
name (beside the last opened paper), reads the format from the dialog's filter or the file's
suffix, and reports the outcome in the banner or the status bar.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from app.gui.banner import Banner
from app.gui.session import Session
from app.gui.settings import AppSettings

EXPORT_FILTERS = {"json": "JSON (*.json)", "csv": "CSV (*.csv)", "md": "Markdown (*.md)"}
_FORMAT_ALIASES = {"markdown": "md", "jsn": "json"}


class AnalysisExporter:
    """File › Export: asks where (``dialog``) and writes (``export_to``)."""

    def __init__(self, parent: QWidget, session: Session, settings: AppSettings, banner: Banner,
                 notify: Callable[[str], None]) -> None:
        self._parent = parent
        self._session = session
        self._settings = settings
        self._banner = banner
        self._notify = notify

    def suggested_path(self, fmt: str | None) -> str:
        """``<paper>-roles.<fmt>`` in the folder of the most recently opened paper."""
        paper = self._session.paper
        stem = Path(paper.source_path).stem if paper is not None else "paper"
        name = f"{stem}-roles.{fmt or 'json'}"
        recent = self._settings.recent_files
        return str(Path(recent[0]).parent / name) if recent else name

    def dialog(self, fmt: str | None = None) -> None:
        """Ask for a file (one format, or any of them) and export there."""
        if self._session.paper is None or self._session.analysis is None:
            self._banner.show_message("info", "Nothing to export yet: open a paper and wait for its roles.")
            return
        filters = [EXPORT_FILTERS[fmt]] if fmt else list(EXPORT_FILTERS.values())
        path, chosen = QFileDialog.getSaveFileName(self._parent, "Export the analysis",
                                                   self.suggested_path(fmt), ";;".join(filters))
        if not path:
            return
        if fmt is None:
            fmt = next((k for k, v in EXPORT_FILTERS.items() if v == chosen), None) or \
                Path(path).suffix.lstrip(".").lower()
        self.export_to(path, fmt)

    def export_to(self, path: str | os.PathLike[str], fmt: str | None = None) -> Path | None:
        """Write the analysis as ``fmt`` (default: from the suffix); the written path, or None."""
        from core.exports import EXPORTERS

        paper, analysis = self._session.paper, self._session.analysis
        if paper is None or analysis is None:
            return None
        fmt = (fmt or Path(path).suffix.lstrip(".")).lower()
        fmt = _FORMAT_ALIASES.get(fmt, fmt)
        if fmt not in EXPORTERS:
            self._banner.show_message("error", f"Unknown export format {fmt!r}: use .json, .csv or .md")
            return None
        try:
            written = EXPORTERS[fmt](paper, analysis, Path(path))
        except OSError as error:
            self._banner.show_message("error", f"Could not write {path}: {error.strerror or error}")
            return None
        self._notify(f"Exported {len(paper.sentences)} sentences to {written}")
        return written
