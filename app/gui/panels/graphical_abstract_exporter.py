"""The Graphical-abstract panel's "Export PNG…" in the background: the save dialog's default name, the
300 dpi render (``graphical_abstract_export.export_job``) run by a
:class:`~app.gui.operation.PanelOperation` sharing the panel's status line, and what it says when done."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from app.gui.file_writes import writes_a_file
from app.gui.operation import PanelOperation
from app.gui.panels.graphical_abstract_export import (
    EXPORT_DPI,
    ExportedFigure,
    export_job,
    sidecar_path,
    sidecar_problem,
)
from app.gui.panels.graphical_abstract_text import figure_label
from app.gui.panels.registry import SaysStatus
from app.gui.save_text import folder_problem
from app.gui.session import Session
from app.gui.status_line import StatusLine
from core.document import Figure, Paper

EXPORT_JOB = writes_a_file("Exporting the graphical abstract")  # closing the window asks first


def default_export_path(paper: Paper | None, figure: Figure) -> Path:
    """``<paper>-graphical-abstract-figure3.png`` beside the paper's PDF."""
    source = Path(paper.source_path) if paper is not None and paper.source_path else Path.home() / "paper"
    kind = "table" if figure.kind == "table" else "figure"
    return source.with_name(f"{source.stem}-graphical-abstract-{kind}{figure.number}.png")


class FigureExporter(QObject):
    """Writes one figure at 300 dpi with its caption; ``exported(ExportedFigure)`` when written."""

    exported = Signal(object)
    busyChanged = Signal(bool)

    def __init__(self, panel: QWidget, session: Session, line: StatusLine) -> None:
        super().__init__(panel)
        self._panel = panel
        self.op = PanelOperation(panel, session, line)
        self.op.busyChanged.connect(self.busyChanged)

    def ask_path(self, paper: Paper | None, figure: Figure) -> str:
        path, _ = QFileDialog.getSaveFileName(self._panel, "Export the graphical abstract",
                                              str(default_export_path(paper, figure)), "PNG image (*.png)")
        return str(path or "")

    def replace_sidecar(self, path: str) -> bool | None:
        """Whether the caption may be written beside ``path``: False when it need not replace anything,
        True when the author agreed to replace the existing ``.txt``, None (refused, said on the status
        line) when the name ends in ``.txt`` or the author kept the existing file."""
        if not sidecar_problem(path):
            return False
        text = sidecar_path(path)
        if Path(path).suffix.lower() != ".txt" and QMessageBox.question(
                self._panel, "Export the graphical abstract",
                f"{text.name} already exists. The figure's caption is saved beside the PNG as {text.name}."
                "\nReplace it?", QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No) == QMessageBox.StandardButton.Yes:
            return True
        self.say_failure(f"Not exported: {sidecar_problem(path)}.")
        return None

    def say_failure(self, line: str) -> None:
        """A refused or failed export: on the panel's status line and in the window's status bar (where an
        earlier "Graphical abstract saved as …" would otherwise contradict it)."""
        self.op.set_status(line)
        if isinstance(self._panel, SaysStatus):
            self._panel.statusMessage.emit(line)

    def start(self, pdf: str, figure: Figure, path: str) -> bool:
        """Export ``figure`` to ``path`` in the background; False (said on the status line) when ``path``
        is a folder or the caption's ``.txt`` would replace a file the author did not agree to replace."""
        if problem := folder_problem(path):
            self.say_failure(problem)
            return False
        replace = self.replace_sidecar(path)
        if replace is None:
            return False
        self.op.error_prefix = f"Cannot write {path}"
        self.op.run(export_job, pdf, figure.page, tuple(figure.bbox), figure.caption, path, replace,
                    needs_model=False, label=EXPORT_JOB,
                    status=f"Exporting {figure_label(figure)} at {EXPORT_DPI} dpi…", on_done=self._done,
                    on_error=lambda _error: self.say_failure(self.op.line.text()))
        return True

    def _done(self, exported: ExportedFigure) -> None:
        size = f"{exported.width}×{exported.height} px, {EXPORT_DPI} dpi"
        text = f" and {exported.text.name}" if exported.text is not None else ""
        self.op.set_status(f"Saved {exported.png.name} ({size}){text}.")
        self.exported.emit(exported)
