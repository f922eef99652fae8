"""The Alignment panel's background job (a worker thread: no widgets here): both sides and their
alignment, made with ``core.alignment.align_sides`` as ``rhetorica align`` makes them; the second PDF is read
from the analysis cache or parsed in a child process (``app.gui.pdf_jobs.parse_cached``: pymupdf never runs
in a thread of this process). Also what the panel says of a comparison that cannot be made: a second
"PDF" refused before the job starts (:func:`refusal`), a job that failed (:func:`failure_line`) or was
cancelled (:func:`cancelled_line`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.gui.job_progress import Steps
from app.gui.widgets import one_line
from core.document import Paper
from core.errors import DocumentError, NotAPdfError
from core.jobs import JobContext
from core.model_api import RoleModel

if TYPE_CHECKING:  # pragma: no cover
    from core.alignment.align import Alignment, AlignSide
    from core.alignment.align_sides import PdfSide
    from core.cache import AnalysisCache
    from core.labelling.analysis import PaperAnalysis


@dataclass(frozen=True)
class AlignOutcome:
    """The alignment and, when a second PDF was read just now, its parsed paper and analysis (for the
    side-by-side pages)."""

    alignment: Alignment
    paper_b: Paper | None = None
    analysis_b: PaperAnalysis | None = None


def failure_line(other: tuple[str, str], error: Exception) -> str:
    """"Cannot compare with b.pdf: this is a folder, not a PDF file": why the comparison with ``other``
    (("pdf", path) or ("draft", text)) cannot be made, in one line naming the file (not its whole path)."""
    what = Path(other[1]).name if other[0] == "pdf" else "the draft"
    if isinstance(error, DocumentError):
        what, reason = Path(error.path).name or what, error.reason
    else:
        reason = (error.strerror if isinstance(error, OSError) else None) or str(error)
    return one_line(f"Cannot compare with {what}: {reason}")


def cancelled_line(other: tuple[str, str] | None) -> str:
    """What the summary says once a comparison was cancelled (as after a failed one, no earlier
    alignment stays listed, where it would read as the answer to the cancelled one)."""
    what = "the draft" if other is None or other[0] != "pdf" else Path(other[1]).name
    return f"The comparison with {what} was cancelled: compare again to see it."


def refusal(other: tuple[str, str]) -> str:
    """Why ``other`` cannot be compared at all, said as File › Open says it of the same file (a folder, an
    empty or missing file, one that is no PDF: ``pdf_pages.check_pdf_file``); "" when it may be."""
    from app.gui.pdf_pages import check_pdf_file

    if other[0] != "pdf":
        return ""
    try:
        check_pdf_file(other[1])
    except NotAPdfError as error:
        return failure_line(other, error)
    return ""


def _plan(other: tuple[str, str], analyse_a: bool, read_b: bool) -> list[tuple[str, float]]:
    """The job's steps and their weights (what takes longer gets more of the bar)."""
    steps = [("a", 2.0)] if analyse_a else []
    if read_b:
        steps += [("read", 1.0), ("b", 2.0)] if other[0] == "pdf" else [("b", 1.0)]
    return [*steps, ("align", 0.2)]


def _open_paper_side(steps: Steps, paper: Paper, model: RoleModel,
                     analysis: PaperAnalysis | None) -> AlignSide:
    from core.alignment.align import side_from_paper
    from core.alignment.align_sides import analysed_side

    if analysis is not None and analysis.embedded:
        return side_from_paper(paper, analysis, kind="pdf")
    return analysed_side(paper, model, steps.step("a", "analysing the open paper"), kind="pdf")


def _pdf_side(steps: Steps, path: str, model: RoleModel, cache: AnalysisCache | None) -> PdfSide:
    """The second PDF's side: read (from the cache or in a child process), then analysed."""
    from app.gui.pdf_jobs import parse_cached
    from core.alignment.align_sides import pdf_side, require_text

    name = Path(path).name
    try:
        second, sha, _cached = parse_cached(steps.step("read", f"reading {name}"), path, cache)
    except OSError as error:  # gone or unreadable since it was chosen: a plain reason, not "[Errno 21]"
        raise NotAPdfError(path, f"cannot be read ({error.strerror or error})") from None
    require_text(second, name)
    return pdf_side(second, model, cache=cache, sha256=sha, ctx=steps.step("b", f"analysing {name}"))


def align_job(ctx: JobContext, paper: Paper, other: tuple[str, str], model: RoleModel,
              function_weight: float = 0.7, side_a: AlignSide | None = None,
              side_b: AlignSide | None = None, analysis_a: PaperAnalysis | None = None,
              cache: AnalysisCache | None = None) -> AlignOutcome:
    """Both sides (``other`` is ("pdf", path) or ("draft", text)) and their alignment; ``side_a``/``side_b``:
    sides from an earlier comparison (not read or analysed again); ``analysis_a``: the open paper's
    embedded analysis (else it is analysed here); ``cache``: where the second PDF's paper and analysis
    are looked up and kept. Its progress is one forward scale over its steps, said in the job's words
    (``job_progress.Steps``: the parser's closing "done" is not the job's)."""
    from core.alignment.align_sides import align_sides, draft_text_side

    kind, value = other
    analyse_a = side_a is None and not (analysis_a is not None and analysis_a.embedded)
    steps = Steps(ctx, _plan(other, analyse_a, side_b is None))
    a = side_a if side_a is not None else _open_paper_side(steps, paper, model, analysis_a)
    ctx.check()
    found = None
    if side_b is not None:
        b = side_b
    elif kind != "pdf":
        b = draft_text_side(value, model, steps.step("b", "analysing the draft"))
    else:
        found = _pdf_side(steps, value, model, cache)
        b = found.side
    alignment = align_sides(a, b, function_weight=function_weight, ctx=steps.step("align", "aligning"))
    return AlignOutcome(alignment, found.paper if found else None, found.analysis if found else None)
