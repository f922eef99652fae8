"""The Graphical-abstract panel's background job (a worker thread: no widgets here): the open paper's
figures ranked with the bundle's figure scorer and fitted weights, then one thumbnail per candidate
rendered in a child process (``app.gui.pdf_jobs.figure_pngs_isolated``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from core.document import Paper
from core.jobs import JobContext
from core.model_api import RoleModel

if TYPE_CHECKING:  # pragma: no cover
    from core.labelling.analysis import PaperAnalysis

THUMB_ZOOM = 2.0  # thumbnails rendered at 144 dpi, scaled down to the card


def bundle_weights(model: Any) -> dict[str, float] | None:
    """The ranker weights fitted for the model's bundle (``context.figures.ranker.weights``), or None."""
    manifest = getattr(model, "manifest", None)
    context = getattr(manifest, "context", None) or {}
    ranker = dict(dict(context.get("figures", {}) or {}).get("ranker", {}) or {})
    weights = {str(k): float(v) for k, v in dict(ranker.get("weights", {}) or {}).items()}
    return weights or None


def suggest_job(ctx: JobContext, paper: Paper, model: RoleModel, include_tables: bool,
                thumbnails: bool = True, analysis: PaperAnalysis | None = None) -> Iterator[tuple[str, Any]]:
    """Yield ``("ranking", FigureRanking)`` and then ``("thumbnail", (figure id, PNG bytes or None))``
    for each candidate, best first. ``analysis``: the paper's embedded analysis (the session's): the
    scorer reads its texts' vectors from it (``core.labelling.analysis_vectors``) instead of running the
    model."""
    from core.figures.figure_rank import rank_figures
    from models.figure_scorer import FigureScorer, load_figure_scorer

    ctx.progress(0, 1, "loading the figure scorer")
    scorer = load_figure_scorer(model)  # type: ignore[arg-type]
    if analysis is not None and analysis.embedded:
        from core.labelling.analysis_vectors import AnalysisVectors

        vectors = AnalysisVectors(model, paper, analysis)
        scorer = FigureScorer(vectors, scorer.session, scorer.lexical_weight)  # type: ignore[arg-type]
    ctx.check()
    ctx.progress(0, 1, "ranking the figures")
    weights = bundle_weights(model)
    ranking = rank_figures(paper, scorer, weights=weights,
                           weights_source="fitted (model bundle)" if weights else "",
                           include_tables=include_tables)
    ctx.check()
    yield "ranking", ranking
    if not thumbnails or not ranking.figures or not paper.source_path:
        return
    by_id = {f.id: f for f in paper.figures}
    figures = [by_id[r.figure_id] for r in ranking.figures if r.figure_id in by_id]
    ctx.progress(0, len(figures), "rendering the candidates")
    from app.gui.pdf_jobs import figure_pngs_isolated

    for index, png in figure_pngs_isolated(ctx, paper.source_path, figures, THUMB_ZOOM):
        ctx.progress(index + 1, len(figures), "rendering the candidates")
        yield "thumbnail", (figures[index].id, png)

