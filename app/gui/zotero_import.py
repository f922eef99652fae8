"""Library › "Add from Zotero…": bring the PDFs of a Zotero library into the user's library (issue 27.3).

The action asks for Zotero's data folder (starting at ``~/Zotero``), then runs :func:`zotero_job` as one
of the Library panel's jobs: a :class:`~app.gui.workers.Worker` started through the session's job
tracker, with the panel's progress bar and Cancel (and the status bar's), exactly as "Add folder…" runs.
The job reads a copy of ``zotero.sqlite`` (:func:`core.library.zotero.read_zotero`), compares it with
what the last sync recorded and adds only new or changed items
(:mod:`core.library.zotero_sync`; PDFs are parsed in child processes by ``Library.add_pdfs``, never in
the GUI process). The panel then shows one summary line, with one detail line for each item without a
readable PDF, each changed file and each item gone from Zotero (their papers are never removed).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog

from app.gui.job_progress import PaperSteps
from app.gui.operation import MODEL
from core.jobs import JobContext
from core.model_api import RoleModel

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.panels.library import LibraryPanel
    from core.library.zotero_sync import SyncReport

ACTION_TEXT = "Add from Zotero…"
ACTION_TIP = ("Add the PDFs of your Zotero library (title, authors, year and DOI kept); again later, only "
              "new and changed items are added")


def zotero_job(ctx: JobContext, folder: Path, zotero_dir: Path, model: RoleModel,
               workers: int | None = None) -> SyncReport:
    """Sync the Zotero data folder ``zotero_dir`` into the library in ``folder`` (opened here, in the
    worker thread)."""
    from core.library.library import Library
    from core.library.zotero import read_zotero
    from core.library.zotero_sync import apply_sync, plan_sync

    snapshot = read_zotero(zotero_dir, ctx.child(0.0, 0.05))
    with Library(folder) as library:
        plan = plan_sync(library.store, snapshot, ctx.child(0.05, 0.15))
        adding: JobContext = ctx.child(0.15, 1.0)
        if plan.add:  # "paper 7 of 25 (name.pdf)" on one scale that only moves forward, as Add folder…
            adding = PaperSteps(adding, len({planned.sha256 for planned in plan.add}))
        return apply_sync(library, plan, model if plan.add else None, adding,
                          workers=workers or max(1, (os.cpu_count() or 2) - 1))


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def sync_summary(report: SyncReport) -> str:
    """One line: "From Zotero: added 2 papers (90 sentences) · 1 with new metadata · 4 unchanged · …"."""
    added = (f"added {_plural(len(report.added), 'paper')} ({_plural(report.sentences, 'sentence')})"
             if report.added else "no new papers")
    parts = [f"From Zotero: {added}"]
    for count, what in ((len(report.linked), "already in your library, now with Zotero's details"),
                        (len(report.updated), "with new details"), (report.unchanged, "unchanged"),
                        (len(report.failed), "without a readable PDF"),
                        (len(report.gone), "gone from Zotero"),
                        (report.left_out, "you had removed (not added again)")):
        if count:
            parts.append(f"{count:,} {what}")
    return " · ".join(parts)


def choose_zotero_folder(panel: LibraryPanel) -> Path | None:
    """Ask for Zotero's data folder (the one holding ``zotero.sqlite``); None when cancelled."""
    from core.library.zotero import default_zotero_dir

    start = default_zotero_dir()
    chosen = QFileDialog.getExistingDirectory(panel, "Zotero's data folder (it holds zotero.sqlite)",
                                              str(start if start.is_dir() else Path.home()))
    return Path(chosen) if chosen else None


def start_zotero_import(panel: LibraryPanel, zotero_dir: Path) -> None:
    """Run the sync as one of ``panel``'s jobs (its progress bar and Cancel; waits for the model)."""
    if panel.busy:
        return
    panel.run_job(zotero_job, panel.folder, zotero_dir, MODEL, label="Adding from Zotero",
                  on_done=lambda report: show_report(panel, report))


def show_report(panel: LibraryPanel, report: SyncReport) -> None:
    summary = sync_summary(report)
    panel.show_summary(summary, report.lines())
    panel.statusMessage.emit(summary)
    if report.added or report.linked or report.updated:
        panel.libraryChanged.emit()


def zotero_action(panel: LibraryPanel) -> QAction:
    """The panel's "Add from Zotero…" action (its toolbar and the File menu)."""
    action = QAction(ACTION_TEXT, panel)
    action.setToolTip(ACTION_TIP)
    action.setStatusTip(ACTION_TIP)

    def ask() -> None:
        if panel.busy:
            return
        chosen = choose_zotero_folder(panel)
        if chosen is not None:
            start_zotero_import(panel, chosen)

    action.triggered.connect(lambda _checked=False: ask())
    return action
