"""The Library panel's words (no Qt): add and repair summaries, the detail lines of skipped PDFs, the
damaged-library message, the totals line and the dates of the list."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from app.gui.widgets import one_line

if TYPE_CHECKING:  # pragma: no cover
    from core.library.doctor import RepairReport
    from core.library.library import AddReport
    from core.library.store import LibraryStats

EMPTY = ("Your library is empty: add PDFs of papers you like; their sentences then appear as "
         "suggestions.")
ALREADY = "already in your library"
NO_PDF = "This paper has no PDF to open (it was imported from abstracts, or its file has moved)."
CANCELLED = "Cancelled. Papers added before the cancel stay in your library."


def damage_message(error: BaseException) -> str | None:
    """What the panel says about a damaged library (None: ``error`` is not about damage)."""
    from core.library.store import DamagedLibraryError, MissingDatabaseError

    if isinstance(error, DamagedLibraryError):
        return (f"Your library's database is damaged ({one_line(error.detail, 100)}). “Repair library…” "
                "keeps every paper that can still be read in a new database (the damaged file is kept).")
    if isinstance(error, MissingDatabaseError):
        return ("Your library's database is missing or empty: its papers are gone from it. “Repair "
                "library…” restores them from a copy an earlier repair kept, or starts the library again "
                "empty.")
    return None


def repair_summary(report: RepairReport) -> str:
    """One line: what "Repair library…" did."""
    salvage = report.salvage
    if report.lost_everything:
        state = report.diagnosis.database.state
        return f"Started your library again, empty: its papers were in the {state} database."
    if salvage is not None:
        total = f" of {salvage.papers_total}" if salvage.papers_total is not None else ""
        lost = f"; {plural(salvage.papers_lost, 'paper')} could not be saved" if salvage.papers_lost else ""
        return (f"Repaired your library: recovered {salvage.papers_recovered}{total} papers "
                f"({plural(salvage.sentences_recovered, 'sentence')}){lost}.")
    if report.diagnosis.healthy:
        return "Your library is healthy: nothing to repair."
    return "Repaired your library: its search indexes were rebuilt."


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def failures(report: AddReport) -> list[tuple[str, str]]:
    """The (source, reason) of the PDFs that could not be added (duplicates are not failures)."""
    from core.library.library import ALREADY_THERE

    return [(source, reason) for source, reason in report.skipped if reason != ALREADY_THERE]


def report_summary(report: AddReport) -> str:
    """One line: "Added 2 papers (512 sentences) · 1 already in your library · 1 could not be read"."""
    parts = [f"Added {plural(len(report.added), 'paper')} ({plural(report.sentences, 'sentence')})"
             if report.added else "No papers added"]
    duplicates = len(report.skipped) - len(failures(report))
    if duplicates:
        parts.append(f"{duplicates} {ALREADY}")
    if failures(report):
        parts.append(f"{len(failures(report))} could not be read")
    return " · ".join(parts)


def detail_line(source: str, reason: str) -> str:
    """"name.pdf: reason" (the reason without the path it repeats, in the panel's words)."""
    from core.library.library import ALREADY_THERE

    for prefix in (f"{source}: ", f"{source} "):
        if reason.startswith(prefix):
            reason = reason[len(prefix):]
            break
    return f"{Path(source).name}: {ALREADY if reason == ALREADY_THERE else reason}"


def added_text(timestamp: float) -> str:
    try:
        return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return ""


def totals_text(stats: LibraryStats, wanted: str, shown: int) -> str:
    """"12 papers · 3,400 sentences", or with a filter "4 of 12 papers shown · …" / "No paper matches …"."""
    papers, sentences = plural(stats.papers, "paper"), plural(stats.sentences, "sentence")
    if not wanted:
        return f"{papers} · {sentences}"
    return (f"{shown} of {papers} shown · {sentences}" if shown
            else f"No paper matches “{wanted}” · {papers} · {sentences}")


def removal_question(names: list[str]) -> str:
    """What "Remove" asks before it removes the papers ``names``."""
    one = len(names) == 1
    named = f"“{names[0]}”" if one else plural(len(names), "paper")
    files = "file itself is" if one else "files themselves are"
    return (f"Remove {named} from your library?\n\n{'Its' if one else 'Their'} sentences will no longer "
            f"appear as suggestions. The PDF {files} not deleted.")


def paper_added_text(title: str, count: int | None) -> str:
    """"Added “Title” to your library (240 sentences)." or "“Title” is already in your library."."""
    if count is None:
        return f"“{title}” is {ALREADY}."
    return f"Added “{title}” to your library ({plural(count, 'sentence')})."


def removed_text(papers: int, sentences: int) -> str:
    return f"Removed {plural(papers, 'paper')} ({plural(sentences, 'sentence')})."


def no_model_text(error: object) -> str:
    """The advice first: a long error (two bundles refused) is clipped, never the advice."""
    return one_line(f"No model: choose a model bundle in File › Settings ({error})", 240)


@dataclass(frozen=True)
class Outcome:
    """What the panel says when a job ends: one line, its details, whether the library changed
    (``libraryChanged``), whether the window's status bar says it too, and whether to offer a repair."""

    text: str
    details: tuple[str, ...] = ()
    changed: bool = False
    announce: bool = True
    repair: bool = False


def added_outcome(report: AddReport) -> Outcome:
    details = tuple(detail_line(source, reason) for source, reason in report.skipped)
    return Outcome(report_summary(report), details, changed=bool(report.added))


def paper_added_outcome(title: str, count: int | None) -> Outcome:
    return Outcome(paper_added_text(title, count), changed=count is not None)


def removed_outcome(result: tuple[int, int]) -> Outcome:
    return Outcome(removed_text(*result), changed=True)


def repaired_outcome(report: RepairReport) -> Outcome:
    return Outcome(repair_summary(report), (*report.diagnosis.lines(), *report.lines()), changed=True)


CANCELLED_OUTCOME = Outcome(CANCELLED, changed=True, announce=False)


def failed_outcome(error: Exception) -> Outcome:
    """A job's failure: no model, no analysis (nothing changed), a damaged library (with the repair
    offered) or anything else (part of the job may have happened: the library may have changed)."""
    from app.gui.operation import AnalysisUnavailable, ModelUnavailable

    if isinstance(error, ModelUnavailable):
        return Outcome(no_model_text(error.cause), announce=False)
    if isinstance(error, AnalysisUnavailable):
        return Outcome(one_line(str(error), 240), announce=False)
    damage = damage_message(error)
    if damage is not None:
        return Outcome(damage, changed=True, repair=True)
    return Outcome(one_line(f"Failed: {error}", 240), changed=True, announce=False)
