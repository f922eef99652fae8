"""The Graphical-abstract panel's words (pure functions): a card's label, text and tooltip, each
candidate's score on 0–1 within the paper, and the heading over the cards."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from app.gui.widgets import clip, muted

if TYPE_CHECKING:  # pragma: no cover
    from core.document import Figure, Paper
    from core.figures.figure_rank import FigureRanking, RankedFigure

CHOICE = "#b8860b"
YOUR_CHOICE = "Your choice"
REASON_CHARS = 420  # the reason's words shown on a card (all of it in the tooltip)
NO_PAPER = "Open a paper first: this panel suggests which of its figures makes the best graphical abstract."
NO_FIGURES = "No figures found in this paper: only figures are candidates, tables are not."
NO_FIGURES_TABLES = ("No figures found in this paper: only figures are candidates, tables are not. Tick "
                     "<b>Include tables</b> to rank its {n} table{s}.")
NO_FIGURES_AT_ALL = "No figures or tables found in this paper: there is nothing to suggest."
NO_MODEL = "No model: ranking the figures needs a model bundle (choose one in File › Settings)."
NO_SCORER = "This model cannot score figures: {error}"


def nothing_to_rank(paper: Paper | None, include_tables: bool) -> str:
    """Why there is nothing to rank, as the panel says it ("" when there is something)."""
    from core.figures.figure_rank import candidate_figures

    if paper is None:
        return NO_PAPER
    if candidate_figures(paper, include_tables=include_tables):
        return ""
    tables = sum(1 for f in paper.figures if f.kind == "table")
    if include_tables:
        return NO_FIGURES_AT_ALL
    return NO_FIGURES_TABLES.format(n=tables, s="" if tables == 1 else "s") if tables else NO_FIGURES


def figure_label(ranked: RankedFigure | Figure) -> str:
    return f"{'Table' if ranked.kind == 'table' else 'Figure'} {ranked.number}"


def card_html(ranked: RankedFigure, chosen: bool) -> str:
    """Rank, label, page and the ranker's reason in words (no raw scores: they are in the tooltip)."""
    badge = f"&nbsp; <span style='color:{CHOICE}; font-weight:bold'>★ {YOUR_CHOICE}</span>" if chosen else ""
    label = html.escape(figure_label(ranked))
    return (f"<span style='color:{muted()}'>{ranked.rank}.</span>&nbsp; <b>{label}</b>"
            f" <span style='color:{muted()}'>p.&nbsp;{ranked.page + 1}</span>"
            f"{badge}"
            f"<br><span style='font-size:9pt'>{html.escape(clip(ranked.reason, REASON_CHARS))}</span>")


def relative_scores(ranking: FigureRanking) -> dict[str, float]:
    """Each candidate's score on 0–1 within this paper (1 = the best here, 0 = the last)."""
    scores = {r.figure_id: r.score for r in ranking.figures}
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    return {k: (v - low) / span if span > 0 else 1.0 for k, v in scores.items()}


def card_tooltip(ranked: RankedFigure, weights_source: str, relative: float = 1.0, total: int = 0) -> str:
    """The reason in full, the rank and the score on 0–1, and each part's share of the score in %."""
    mass = sum(abs(v) for v in ranked.parts.values()) or 1.0
    parts = "\n".join(f"  {name.replace('_', ' ')}: {100 * abs(value) / mass:.0f}%"
                      f" ({'for' if value >= 0 else 'against'})"
                      for name, value in sorted(ranked.parts.items(), key=lambda kv: -abs(kv[1])))
    words = f"\nShared words: {', '.join(ranked.words)}" if ranked.words else ""
    best = f"\nBest abstract sentence: {clip(ranked.best_sentence, 240)}" if ranked.best_sentence else ""
    of = f" of {total}" if total else ""
    return (f"{figure_label(ranked)} (page {ranked.page + 1}), rank {ranked.rank}{of}, "
            f"score {relative:.2f} (0–1 within this paper)\n{ranked.reason}\n"
            f"What the score is made of ({weights_source}):\n{parts or '  (none)'}{best}{words}\n\n"
            f"{clip(ranked.caption, 400)}\n\nDouble-click to use it as the graphical abstract")




def heading_html(ranking: FigureRanking, include_tables: bool) -> str:
    """"4 figures ranked against the abstract · weights: fitted (model bundle)"."""
    kinds = "figures and tables" if include_tables else "figures"
    return (f"<b>{len(ranking.figures)}</b> <span style='color:{muted()}'>{kinds} ranked against the "
            f"{html.escape(ranking.query)} · weights: {html.escape(ranking.weights_source)}</span>")


def heading_tooltip(ranking: FigureRanking) -> str:
    return (f"Scorer: {ranking.scorer}\nWeights: "
            + ", ".join(f"{k} {v:+.2f}" for k, v in ranking.weights.items()))



def failure_message(error: Exception) -> str:
    """What the panel says (rich text) when ranking could not be done."""
    from app.gui.operation import AnalysisUnavailable, ModelUnavailable
    from core.errors import ModelError

    if isinstance(error, ModelUnavailable):
        return NO_MODEL
    if isinstance(error, AnalysisUnavailable):
        return html.escape(clip(error, 200))
    if isinstance(error, ModelError):
        return html.escape(NO_SCORER.format(error=clip(error, 300)))
    return html.escape(clip(f"Ranking the figures failed: {error}", 300))
