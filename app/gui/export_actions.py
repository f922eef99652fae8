"""Exporting the open paper's analysis from the GUI: the save dialog and writing the file.

The formats themselves are ``core.exporting.exports`` (JSON, CSV, Markdown, HTML) and ``core.pdf.annotate``
(the PDF with its role colours as highlight annotations, written by a background job); this module picks the
file name (beside the last opened paper), reads the format from the dialog's filter or the file's
suffix, and reports the outcome in the banner or the status bar.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QWidget

from app.gui.banner import Banner
from app.gui.file_writes import writes_a_file
from app.gui.save_text import folder_problem
from app.gui.session import Session
from app.gui.settings import EXPORTS, AppSettings
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
_SUFFIXES = {"json": (".json",), "csv": (".csv",), "md": (".md", ".markdown"), "html": (".html", ".htm")}
# a name ending in one of these is refused for any other format: the author means that kind of file
_KNOWN_SUFFIXES = {".pdf", *(ending for endings in _SUFFIXES.values() for ending in endings)}
_FILE_TYPE = re.compile(r"\.[a-z][a-z0-9]{0,7}")  # ".docx", ".txt"; not the ".2" of "roles v1.2"
ANY_FORMAT = "give it a .md, .html, .csv or .json file name"
ANNOTATED_PDF_FILTER = "PDF with role highlights (*.pdf)"
ANNOTATE_JOB = writes_a_file("annotated-pdf-export")  # the worker's name: closing the window asks first


class Notify(Protocol):
    """Says a line in the status bar; ``paper``: the PDF it is about (default: the open one)."""

    def __call__(self, message: str, paper: str | None = None) -> None: ...


class ExportRefused(Exception):
    """The export target is refused before anything is written (the message: one line)."""


def _refused(target: Path, reason: str) -> ExportRefused:
    return ExportRefused(f"Cannot export to {target}: {reason}")


def _same_file(path: Path, other: str) -> bool:
    if path.absolute() == Path(other).absolute():
        return True
    try:
        return path.is_file() and os.path.samefile(path, other)
    except OSError:
        return False


def export_target(path: str | os.PathLike[str], fmt: str | None, source: str | None) -> tuple[Path, str]:
    """The file an export as ``fmt`` (None: the one its suffix names) writes for the chosen ``path``, and
    the format. A name that does not end in the format's suffix gets it added ("roles" and "roles.txt" as
    Markdown: "roles.md", "roles.txt.md"); raises :class:`ExportRefused` (nothing to write) for a folder,
    the open PDF ``source``, a name ending in another format's suffix (".pdf" or ".csv" for JSON), and
    (``app.commands._options.check_output_file``, as the CLI's ``--export``) a folder that does not exist
    or cannot be written, a file of the model bundle."""
    from app.commands._options import check_output_file
    from core.errors import RhetoricaError

    target = Path(path)
    if problem := folder_problem(target):
        raise ExportRefused(problem)
    if source and _same_file(target, source):
        raise _refused(target, "it is the open paper's PDF; choose another file name")
    suffix = target.suffix.lower()
    if fmt is None:
        fmt = next((f for f, endings in _SUFFIXES.items() if suffix in endings), "")
        if not fmt:
            unknown = suffix.lstrip(".") if _FILE_TYPE.fullmatch(suffix) else ""
            what = f"Unknown export format {unknown!r} for" if unknown else "Cannot export to"
            raise ExportRefused(f"{what} {target}: {ANY_FORMAT}")
    fmt = _FORMAT_ALIASES.get(fmt.lower(), fmt.lower())
    if fmt not in _SUFFIXES:
        raise ExportRefused(f"Unknown export format {fmt!r}: use .json, .csv, .md or .html")
    if suffix in _KNOWN_SUFFIXES and suffix not in _SUFFIXES[fmt]:
        kind = EXPORT_FILTERS[fmt].split(" ")[0]
        raise _refused(target, f"give the {kind} export a name ending in {_SUFFIXES[fmt][0]}, "
                               f"not {target.suffix}")
    if suffix not in _SUFFIXES[fmt]:
        target = target.with_name(target.name + _SUFFIXES[fmt][0])
    if problem := folder_problem(target):
        raise ExportRefused(problem)
    try:
        check_output_file(target, "the export", inputs=[source] if source else [])
    except RhetoricaError as error:
        reason = str(error).removeprefix(f"{target}: ")
        raise _refused(target, reason) from None
    return target, fmt


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
                 notify: Notify) -> None:
        self._parent = parent
        self._session = session
        self._settings = settings
        self._banner = banner
        self._notify = notify
        self.annotating: Worker | None = None  # the running "Export annotated PDF…" job
        self._error = ""  # the banner line of the last export that failed

    # -- what the exports say ----------------------------------------------------------------
    def _failed(self, line: str) -> None:
        """A refused or failed export: the banner, and the status bar (an earlier "Exported …" there
        would contradict it)."""
        self._error = line
        self._banner.show_message("error", line)
        self._notify(line)

    def _succeeded(self, line: str, paper: str | None = None) -> None:
        """A written export: the status bar; an earlier export's error in the banner is dismissed."""
        if self._error and self._banner.isVisible() and self._banner.kind == "error" \
                and self._banner.message.text() == self._error:
            self._banner.dismiss()
        self._error = ""
        self._notify(line, paper)

    def suggested_path(self, fmt: str | None) -> str:
        """``<paper>-roles.<fmt>`` in the folder of the most recently opened paper (else the documents
        folder: never the process's working folder)."""
        paper = self._session.paper
        stem = Path(paper.source_path).stem if paper is not None else "paper"
        name = f"{stem}-roles.{fmt or 'json'}"
        recent = self._settings.recent_files
        folder = Path(recent[0]).parent if recent else Path(self._settings.folder_for(EXPORTS))
        return str(folder / name)

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
        """Write the analysis as ``fmt`` (default: from the suffix) to ``path`` (checked by
        :func:`export_target`: its suffix added when it has none); the written path, or None (said in
        the banner: nothing written)."""
        from core.exporting.exports import EXPORTERS

        paper, analysis = self._session.paper, self._session.analysis
        if paper is None or analysis is None:
            return None
        try:
            target, fmt = export_target(path, fmt, self._session.path)
        except ExportRefused as refused:
            self._failed(str(refused))
            return None
        try:
            written = EXPORTERS[fmt](paper, analysis, target)
        except OSError as error:
            self._failed(write_failure(str(target), error.strerror or error))
            return None
        self._succeeded(f"Exported {len(paper.sentences)} sentences to {written}")
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
            self._failed(problem)
            return None
        worker = Worker(annotate_job, source, paper, analysis, target, self._session.palette.colors(),
                        name=ANNOTATE_JOB)
        worker.result.connect(lambda written, s=source: self._on_annotated(written, s))
        worker.error.connect(lambda error, t=target: self._failed(write_failure(t, error)))
        worker.finished.connect(self._annotating_finished)
        self.annotating = worker
        self._session.tracker.start(worker, "Exporting the annotated PDF")
        return worker

    def _on_annotated(self, written: AnnotatedPdf, source: str) -> None:
        """Written: said in the status bar, naming the paper when another one is open by now."""
        skipped = f"; {written.skipped} sentence(s) have no place on the page" if written.skipped else ""
        of = f" of {Path(source).name}" if source != self._session.path else ""
        self._succeeded(f"Exported {written.highlights} highlight(s) for {written.sentences} sentence(s)"
                        f"{of} to {written.path}{skipped}", source)

    def _annotating_finished(self) -> None:
        self.annotating = None
