"""Graphical-abstract ranking against the hand-labelled dev set (``rhetorica eval figures``).

Every method ranks each labelled paper's figures; the measures are the MRR of the reader's
first choice, the MAP of the reader's top 3 and P@1 (the method's first figure is among the
reader's three). Methods: "pick the first figure", "pick the largest figure", the untrained
encoder's abstract–caption cosine, the trained scorer alone, and the fitted combination
(``core.figure_fit``) — fitted on the same twelve papers, so it is reported leave-one-paper-out
(each paper ranked with weights fitted on the other eleven) beside the in-sample fit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from core.document import Paper
from core.figure_fit import LabelledPaper, fit_weights, leave_one_paper_out
from core.figure_rank import FEATURES, candidate_figures, combine, figure_features
from core.model_api import CaptionScorer
from models.datasets.figure_gold import FigureGold
from models.metrics import average_precision, reciprocal_rank

PRIORS = ("first_figure", "position", "size", "mentions")
SCORER_FEATURES = ("caption_match", "best_sentence", "mention_match")


@dataclass
class GoldCase:
    """One labelled paper with its candidates' features under each scorer."""

    gold: FigureGold
    paper: Paper
    numbers: list[str]
    values: dict[str, np.ndarray]  # scorer name -> (n, len(FEATURES))

    def labelled(self, scorer: str) -> LabelledPaper:
        return LabelledPaper(self.gold.pdf, self.numbers, self.values[scorer], list(self.gold.top3))


def gold_cases(pairs: Iterable[tuple[FigureGold, Paper]],
               scorers: Mapping[str, CaptionScorer]) -> list[GoldCase]:
    out = []
    for gold, paper in pairs:
        numbers = [f.number for f in candidate_figures(paper)]
        values = {name: figure_features(paper, scorer).values for name, scorer in scorers.items()}
        out.append(GoldCase(gold, paper, numbers, values))
    return out


def ranking(numbers: Sequence[str], scores: np.ndarray) -> list[str]:
    """Numbers by score, best first (ties keep reading order)."""
    return [numbers[i] for i in sorted(range(len(numbers)), key=lambda i: (-float(scores[i]), i))]


def measures(rankings: Mapping[str, list[str]], cases: Sequence[GoldCase]) -> dict[str, float]:
    rr, ap, p1 = [], [], []
    for case in cases:
        ranked = rankings[case.gold.pdf]
        rr.append(reciprocal_rank(ranked, case.gold.top3[0]))
        ap.append(average_precision(ranked, case.gold.top3))
        p1.append(float(bool(ranked) and ranked[0] in case.gold.top3))
    return {"mrr_top1": round(float(np.mean(rr)), 4), "map_top3": round(float(np.mean(ap)), 4),
            "p_at_1": round(float(np.mean(p1)), 4), "papers": len(cases)}


Method = Callable[[GoldCase], np.ndarray]


def _feature(scorer: str, name: str) -> Method:
    return lambda case: case.values[scorer][:, FEATURES.index(name)]


def _fixed(scorer: str, weights: Mapping[str, float]) -> Method:
    return lambda case: combine(case.values[scorer], weights)[0]


def _per_paper(scorer: str, weights: Mapping[str, Mapping[str, float]]) -> Method:
    """Each paper ranked with its own weights (fitted without it)."""
    return lambda case: combine(case.values[scorer], weights[case.gold.pdf])[0]


def dev_report(cases: Sequence[GoldCase], trained: str, untrained: str,
               shipped_weights: Mapping[str, float] | None = None) -> dict[str, dict[str, float]]:
    """Every method's measures (see the module docstring)."""
    papers_t = [c.labelled(trained) for c in cases]
    papers_u = [c.labelled(untrained) for c in cases]
    lopo_t, lopo_u = leave_one_paper_out(papers_t), leave_one_paper_out(papers_u)
    methods: dict[str, Method] = {
        "first figure": lambda case: -np.arange(len(case.numbers), dtype=float),
        "largest figure": _feature(trained, "size"),
        "untrained cosine (all-MiniLM-L6-v2)": _feature(untrained, "caption_match"),
        "trained scorer alone": _feature(trained, "caption_match"),
        "priors only, leave-one-paper-out": _per_paper(trained, leave_one_paper_out(papers_t, PRIORS)),
        "untrained features + priors, leave-one-paper-out": _per_paper(untrained, lopo_u),
        "trained features + priors, leave-one-paper-out": _per_paper(trained, lopo_t),
        "trained features + priors, fitted on all 12 (in-sample)": _fixed(trained, fit_weights(papers_t)),
    }
    if shipped_weights:
        methods["shipped ranker weights (in-sample)"] = _fixed(trained, shipped_weights)
    out = {}
    for name, method in methods.items():
        out[name] = measures({c.gold.pdf: ranking(c.numbers, method(c)) for c in cases}, cases)
    return out
