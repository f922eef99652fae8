"""The Alignment panel's background job (a worker thread: no widgets here): both sides and their
alignment, made with ``core.alignment.align_sides`` as ``rhetorica align`` makes them; the second PDF is read
from the analysis cache or parsed in a child process (``app.gui.pdf_jobs.parse_cached``: pymupdf never runs
in a thread of this process). Also what the panel says of a comparison that cannot be made: a second
"PDF" refused before the job starts (:func:`refusal`) and a job that failed (:func:`failure_line`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.gui.widgets import one_line
from core.document import Paper
from core.errors import DocumentError, NotAPdfError
from core.jobs import JobContext
from core.model_api import RoleModel

if TYPE_CHECKING:  # pragma: no cover
    from core.alignment.align import Alignment, AlignSide
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


def _open_paper_side(ctx: JobContext, paper: Paper, model: RoleModel,
                     analysis: PaperAnalysis | None) -> AlignSide:
    from core.alignment.align import side_from_paper
    from core.alignment.align_sides import analysed_side

    if analysis is not None and analysis.embedded:
        return side_from_paper(paper, analysis, kind="pdf")
    ctx.progress(0, 1, "analysing the open paper")
    return analysed_side(paper, model, ctx, kind="pdf")


def align_job(ctx: JobContext, paper: Paper, other: tuple[str, str], model: RoleModel,
              function_weight: float = 0.7, side_a: AlignSide | None = None,
              side_b: AlignSide | None = None, analysis_a: PaperAnalysis | None = None,
              cache: AnalysisCache | None = None) -> AlignOutcome:
    """Both sides (``other`` is ("pdf", path) or ("draft", text)) and their alignment; ``side_a``/``side_b``:
    sides from an earlier comparison (not read or analysed again); ``analysis_a``: the open paper's
    embedded analysis (else it is analysed here); ``cache``: where the second PDF's paper and analysis
    are looked up and kept."""
    from app.gui.pdf_jobs import parse_cached
    from core.alignment.align_sides import align_sides, draft_text_side, pdf_side, require_text

    kind, value = other
    a = side_a if side_a is not None else _open_paper_side(ctx, paper, model, analysis_a)
    ctx.check()
    if side_b is not None:
        return AlignOutcome(align_sides(a, side_b, function_weight=function_weight, ctx=ctx))
    if kind != "pdf":
        b = draft_text_side(value, model, ctx)
        return AlignOutcome(align_sides(a, b, function_weight=function_weight, ctx=ctx))
    ctx.progress(0, 1, f"reading {Path(value).name}")
    try:
        second, sha, _cached = parse_cached(ctx, value, cache)
    except OSError as error:  # gone or unreadable since it was chosen: a plain reason, not "[Errno 21]"
        raise NotAPdfError(value, f"cannot be read ({error.strerror or error})") from None
    require_text(second, Path(value).name)
    found = pdf_side(second, model, cache=cache, sha256=sha, ctx=ctx)
    alignment = align_sides(a, found.side, function_weight=function_weight, ctx=ctx)
    return AlignOutcome(alignment, found.paper, found.analysis)
