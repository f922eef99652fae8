"""Exporting the open paper's analysis from the GUI: the save dialog and writing the file.

The formats themselves are ``core.exporting.exports`` (JSON, CSV, Markdown, HTML) and ``core.pdf.annotate``
(the PDF with its role colours as highlight annotations, written by a background job); this module picks the
file name (beside the last opened paper), reads the format from the dialog's filter or the file's
suffix, and reports the outcome in the banner or the status bar.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QWidget

from app.gui.banner import Banner
from app.gui.save_text import folder_problem
from app.gui.session import Session
from app.gui.settings import AppSettings
from app.gui.widgets import one_line
from app.gui.workers import Worker

if TYPE_CHECKING:  # pragma: no cover
    from core.document import Paper
    from core.jobs import JobContext
    from core.labelling.analysis import PaperAnalysis
    from core.pdf.annotate import AnnotatedPdf

EXPORT_FILTERS = {"json": "JSON (*.json)", "csv": "CSV (*.csv)", "md": "Markdown (*.md)",
                  "html": "HTML (*.html)"}
_FORMAT_ALIASES = {"markdown": "md", "jsn": "json", "htm": "html"}
ANNOTATED_PDF_FILTER = "PDF with role highlights (*.pdf)"


def annotate_job(ctx: JobContext, source: str, paper: Paper, analysis: PaperAnalysis, out: str,
                 colors: dict[str, str]) -> AnnotatedPdf:
    """The background job of "Export annotated PDF…" (``core.pdf.annotate``)."""
    from core.pdf.annotate import annotate_pdf

    return annotate_pdf(source, paper, analysis, out, colors=colors, ctx=ctx)


def write_failure(target: str, error: object) -> str:
    """The banner's one line for an export that was not written: "Could not write <target>:" and the
    reason, without the "cannot write <target>:" the error's own message may start with."""
    reason = " ".join(str(error).split())
    prefix = f"cannot write {target}: "
    if reason.lower().startswith(prefix.lower()):
        reason = reason[len(prefix):]
    return one_line(f"Could not write {target}: {reason}", 300)


class AnalysisExporter:
    """File › Export: asks where (``dialog``) and writes (``export_to``)."""

    def __init__(self, parent: QWidget, session: Session, settings: AppSettings, banner: Banner,
                 notify: Callable[[str], None]) -> None:
        self._parent = parent
        self._session = session
        self._settings = settings
        self._banner = banner
        self._notify = notify
        self.annotating: Worker | None = None  # the running "Export annotated PDF…" job

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
        from core.exporting.exports import EXPORTERS

        paper, analysis = self._session.paper, self._session.analysis
        if paper is None or analysis is None:
            return None
        if problem := folder_problem(path):
            self._banner.show_message("error", problem)
            return None
        fmt = (fmt or Path(path).suffix.lstrip(".")).lower()
        fmt = _FORMAT_ALIASES.get(fmt, fmt)
        if fmt not in EXPORTERS:
            self._banner.show_message("error",
                                      f"Unknown export format {fmt!r}: use .json, .csv, .md or .html")
            return None
        try:
            written = EXPORTERS[fmt](paper, analysis, Path(path))
        except OSError as error:
            self._banner.show_message("error", write_failure(str(path), error.strerror or error))
            return None
        self._notify(f"Exported {len(paper.sentences)} sentences to {written}")
        return written

    # -- the PDF with its role highlights ------------------------------------------------------
    def annotated_pdf_action(self) -> QAction:
        """File › "Export annotated PDF…" (its owner adds it to a menu)."""
        action = QAction("Export annotated &PDF…", self._parent)
        action.setStatusTip("Save a copy of the PDF with each sentence's role as a highlight annotation")
        action.triggered.connect(lambda: self.annotated_pdf_dialog())
        return action

    def annotated_pdf_dialog(self) -> None:
        if self._session.paper is None or self._session.analysis is None or not self._session.path:
            self._banner.show_message("info", "Nothing to export yet: open a PDF and wait for its roles.")
            return
        path, _ = QFileDialog.getSaveFileName(self._parent, "Export the PDF with role highlights",
                                              self.suggested_annotated_path(), ANNOTATED_PDF_FILTER)
        if path:
            self.export_annotated_pdf(path)

    def suggested_annotated_path(self) -> str:
        """``<paper>-roles.pdf`` beside the open PDF."""
        source = Path(self._session.path or "paper.pdf")
        return str(source.with_name(f"{source.stem}-roles.pdf"))

    def export_annotated_pdf(self, path: str | os.PathLike[str]) -> Worker | None:
        """Write the open PDF with its role highlights to ``path`` in the background (the palette's
        colours); the worker, or None when there is nothing to export, an export is running or ``path``
        is a folder (said in the banner)."""
        paper, analysis, source = self._session.paper, self._session.analysis, self._session.path
        if paper is None or analysis is None or not source:
            return None
        if self.annotating is not None:
            self._banner.show_message("info", "An annotated PDF is being written already.")
            return None
        target = str(path)
        if Path(target).suffix.lower() != ".pdf":
            target += ".pdf"
        if problem := folder_problem(path) or folder_problem(target):
            self._banner.show_message("error", problem)
            return None
        worker = Worker(annotate_job, source, paper, analysis, target, self._session.palette.colors(),
                        name="annotated-pdf-export")
        worker.result.connect(self._on_annotated)
        worker.error.connect(lambda error, t=target: self._banner.show_message("error",
                                                                               write_failure(t, error)))
        worker.finished.connect(self._annotating_finished)
        self.annotating = worker
        self._session.tracker.start(worker, "Exporting the annotated PDF")
        return worker

    def _on_annotated(self, written: AnnotatedPdf) -> None:
        skipped = f"; {written.skipped} sentence(s) have no place on the page" if written.skipped else ""
        self._notify(f"Exported {written.highlights} highlight(s) for {written.sentences} sentence(s) "
                     f"to {written.path}{skipped}")

    def _annotating_finished(self) -> None:
        self.annotating = None
