"""The sides of an alignment and their alignment, made the same way by ``rhetorica align`` and the
Alignment panel (issue 26.2): a PDF's side from its embedded analysis (cached), a draft's side analysed
here with both views, and the check that two sides were embedded alike before ``core.alignment.align.align``.

Reading a PDF stays with the caller (the command parses in-process, the GUI in a child process); each
function here takes the parsed paper."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.document import Paper
from core.errors import RhetoricaError
from core.jobs import JobContext, ensure_context
from core.model_api import RoleModel

if TYPE_CHECKING:  # pragma: no cover
    from core.alignment.align import Alignment, AlignSide
    from core.cache import AnalysisCache
    from core.labelling.analysis import PaperAnalysis

DIFFERENT_MODELS = "the two texts were embedded differently: analyse them with the same model"


@dataclass(frozen=True)
class PdfSide:
    """A PDF's side with the paper and embedded analysis it was made from; ``note``: one line about a
    damaged cache entry computed again ("" when none)."""

    side: AlignSide
    paper: Paper
    analysis: PaperAnalysis
    note: str = ""


def _named(name: str, message: str) -> str:
    return f"{name}: {message}" if name else message


def require_text(paper: Paper, name: str = "") -> None:
    """Raise a one-line error for a parsed PDF without text (before any model is loaded for it)."""
    if not paper.sentences:
        raise RhetoricaError(_named(name, "no text found in the PDF (a scanned paper?)"))


def pdf_side(paper: Paper, model: RoleModel, *, cache: AnalysisCache | None = None, sha256: str = "",
             ctx: JobContext | None = None, name: str = "") -> PdfSide:
    """A parsed PDF's side from its embedded analysis (read from ``cache``, or made and cached there);
    ``name`` starts the one-line error for a PDF without text."""
    from core.alignment.align import side_from_paper
    from core.labelling.embedded_analysis import embedded_analysis

    require_text(paper, name)
    ctx = ensure_context(ctx)
    ctx.progress(0, 1, "analysing the second text")
    found = embedded_analysis(paper, model, cache=cache, sha256=sha256, ctx=ctx)
    return PdfSide(side_from_paper(paper, found.analysis, kind="pdf"), paper, found.analysis, found.note)


def analysed_side(paper: Paper, model: RoleModel, ctx: JobContext | None = None, *, kind: str = "draft",
                  name: str = "") -> AlignSide:
    """A side analysed here with both views (a draft; a paper without an embedded analysis)."""
    from core.alignment.align import side_from_paper
    from core.labelling.analysis import analyze_paper

    if not paper.sentences:
        raise RhetoricaError(_named(name, "the draft has no sentences"))
    analysis = analyze_paper(paper, model, ctx, with_embeddings=True, with_function_vectors=True)
    return side_from_paper(paper, analysis, kind=kind)


def draft_text_side(text: str, model: RoleModel, ctx: JobContext | None = None) -> AlignSide:
    """A draft's text (Markdown headings as sections) as a side, analysed here."""
    from core.alignment.align import paper_from_text

    ctx = ensure_context(ctx)
    paper = paper_from_text(text, title="Draft", source="draft")
    if paper.sentences:
        ctx.progress(0, 1, "analysing the second text")
    return analysed_side(paper, model, ctx)


def check_comparable(a: AlignSide, b: AlignSide, message: str = DIFFERENT_MODELS) -> None:
    """Raise ``RhetoricaError(message)`` when the two sides' vectors are not of one model."""
    if a.function.shape[1] != b.function.shape[1] or a.content.shape[1] != b.content.shape[1]:
        raise RhetoricaError(message)


def align_sides(a: AlignSide, b: AlignSide, *, function_weight: float = 0.7,
                ctx: JobContext | None = None, message: str = DIFFERENT_MODELS) -> Alignment:
    """``core.alignment.align.align`` of two comparable sides (checked first), with progress."""
    from core.alignment.align import align

    ctx = ensure_context(ctx)
    ctx.check()
    check_comparable(a, b, message)
    ctx.progress(0, 1, "aligning")
    alignment = align(a, b, function_weight=function_weight)
    ctx.progress(1, 1, f"{len(alignment.pairs)} aligned pairs")
    return alignment
