"""The Library panel's background jobs (worker threads: no Qt here). Each opens its own
:class:`~core.library.library.Library` in the worker thread and closes it (SQLite connections belong to
the thread that opened them); :func:`read_listing` is the list the panel reads on the UI thread."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.gui.job_progress import PaperSteps, Steps
from core.errors import Cancelled, RhetoricaError
from core.jobs import JobContext
from core.model_api import RoleModel

if TYPE_CHECKING:  # pragma: no cover
    from core.document import Paper
    from core.labelling.analysis import PaperAnalysis
    from core.library.doctor import RepairReport
    from core.library.library import AddReport, Library
    from core.library.store import LibraryStats, PaperRecord


def library_folder() -> Path:
    """The user's library folder (``core.paths.library_dir``, read at each call)."""
    from core.paths import library_dir

    return library_dir()


@dataclass(frozen=True)
class Listing:
    papers: list[PaperRecord]
    stats: LibraryStats


def read_listing(folder: Path) -> Listing | None:
    """The papers and totals of the library in ``folder``; None when there is no library there yet
    (nothing is created by looking). A library whose database is missing or empty raises
    :class:`~core.library.store.MissingDatabaseError`, a damaged one
    :class:`~core.library.store.DamagedLibraryError`."""
    from core.library.library import Library
    from core.library.store import database_missing, library_traces

    if database_missing(folder) and not library_traces(folder):
        return None
    with Library(folder) as library:
        return Listing(library.store.papers(), library.stats())


def _workers() -> int:
    return max(1, (os.cpu_count() or 2) - 1)


def add_pdfs_job(ctx: JobContext, folder: Path, paths: list[Path], model: RoleModel,
                 workers: int | None = None) -> AddReport:
    """Add the PDFs ``paths`` name to the library in ``folder`` (opened here, in the worker thread).

    Duplicates are found first; several new PDFs go to ``Library.add_pdfs`` (parsed in worker
    processes), a single one is parsed in a child process here, because ``add_pdfs`` parses a lone
    PDF in the calling process and the GUI process runs pymupdf only on its UI thread."""
    from core.fileio import file_sha256
    from core.library.library import AddReport, Library, find_pdfs

    report = AddReport()
    ctx.progress(0, 1, "looking for PDFs")
    pdfs, report.skipped = find_pdfs(paths)
    with Library(folder) as library:
        todo: list[Path] = []
        for path in pdfs:
            ctx.check()
            try:
                known = library.store.has_sha256(file_sha256(path))
            except OSError as error:
                report.skipped.append((str(path), f"cannot read: {error.strerror or error}"))
                continue
            if known:
                report.record(str(path), "", None)
            else:
                todo.append(path)
        if len(todo) == 1:
            _add_one(ctx, library, todo[0], model, report)
        elif todo:
            papers = PaperSteps(ctx, len(todo))  # "paper 7 of 25 (name.pdf)", one scale, forward only
            papers.progress(0, len(todo), f"reading {len(todo)} PDFs")
            added = library.add_pdfs(todo, model, papers, workers=workers or _workers())
            report.added += added.added
            report.skipped += added.skipped
            report.sentences += added.sentences
    return report


def _add_one(ctx: JobContext, library: Library, path: Path, model: RoleModel, report: AddReport) -> None:
    """Add one new PDF, parsed in a child process: reading it, then labelling and storing it, on one
    scale that only moves forward (``job_progress.Steps``)."""
    from app.gui.pdf_jobs import parse_isolated

    steps = Steps(ctx, [("read", 1.0), ("add", 2.0)])
    try:
        paper = parse_isolated(steps.step("read", f"reading {path.name}"), str(path))
    except Cancelled:
        raise
    except (RhetoricaError, OSError) as error:
        report.skipped.append((str(path), str(error)))
    else:
        ids = library.add_paper(paper, model, ctx=steps.step("add", f"adding {path.name}"))
        report.record(str(path), paper.sha256, ids)
    ctx.progress(1, 1, f"added {len(report.added)} of 1")


def add_paper_job(ctx: JobContext, folder: Path, paper: Paper, model: RoleModel,
                  analysis: PaperAnalysis | None = None) -> int | None:
    """Add an already parsed paper: its sentence count, or None when it was in the library.
    ``analysis``: its embedded analysis (the session's), stored as it is (no model run)."""
    from core.library.library import Library

    with Library(folder) as library:
        if library.store.has_sha256(paper.sha256):
            return None
        steps = Steps(ctx, [("add", 1.0)])
        share = steps.step("add", f"adding {paper.title or Path(paper.source_path).name}")
        ids = library.add_paper(paper, model, ctx=share, analysis=analysis)
        ctx.progress(1, 1, "added")
    return None if ids is None else len(ids)


def check_job(ctx: JobContext, folder: Path) -> Exception | None:
    """The quick check of the library's database run after a listing: the damage as an error
    (shown with :func:`damage_message`), or None when it is sound."""
    from core.library.doctor import diagnose
    from core.library.store import DATABASE_NAME, DamagedLibraryError

    ctx.progress(0, 1, "checking the library")
    health = diagnose(folder, quick=True).database
    if health.state == "damaged":
        return DamagedLibraryError(folder / DATABASE_NAME, "; ".join(health.problems[:1]) or "damaged")
    return None


def repair_job(ctx: JobContext, folder: Path) -> RepairReport:
    """"Repair library…": the doctor's repair (what ``rhetorica library doctor`` runs)."""
    from core.library.doctor import repair

    return repair(folder, ctx)


def remove_job(ctx: JobContext, folder: Path, paper_ids: list[str]) -> tuple[int, int]:
    """Remove papers: (papers removed, sentences removed)."""
    from core.library.library import Library

    sentences = 0
    with Library(folder) as library:
        for number, paper_id in enumerate(paper_ids):
            ctx.check()
            ctx.progress(number, len(paper_ids), "removing papers")
            sentences += library.remove(paper_id)
        ctx.progress(len(paper_ids), len(paper_ids), "removed")
    return len(paper_ids), sentences
