"""Graphical-abstract ranking against the hand-labelled dev set (``rhetorica eval figures``).

Every method ranks each labelled paper's figures; the measures are the MRR of the reader's
first choice, the MAP of the reader's top 3 and P@1 (the method's first figure is among the
reader's three). Methods: "pick the first figure", "pick the largest figure", the untrained
encoder's abstract–caption cosine, the trained scorer alone, and the fitted combination
(``core.figure_fit``) — fitted on the same twelve papers, so it is reported leave-one-paper-out
(each paper ranked with weights fitted on the other eleven) beside the in-sample fit. The shipped
combination is also *selected* (which features, how much L2: :data:`CONFIGS`) by leave-one-paper-out
on the same papers, so its honest figure is nested: for each paper, the selection and the fit are
both done on the other eleven.
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
# The combinations the ranking may use, declared before looking at any result: the scorer with the
# first-figure prior, + size, + every prior, every feature; each with four strengths of the L2 pull.
FEATURE_SETS: dict[str, tuple[str, ...]] = {
    "scorer + first figure": ("caption_match", "first_figure"),
    "scorer + first figure + size": ("caption_match", "first_figure", "size"),
    "scorer + priors": ("caption_match", *PRIORS),
    "all features": FEATURES,
}
L2_CHOICES = (0.1, 1.0, 3.0, 10.0)


@dataclass(frozen=True)
class RankerConfig:
    features: str  # a key of FEATURE_SETS
    l2: float


CONFIGS = tuple(RankerConfig(name, l2) for name in FEATURE_SETS for l2 in L2_CHOICES)


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


def _held_out_rankings(papers: Sequence[LabelledPaper], config: RankerConfig) -> dict[str, list[str]]:
    weights = leave_one_paper_out(papers, FEATURE_SETS[config.features], config.l2)
    return {p.name: ranking(p.numbers, combine(p.values, weights[p.name])[0]) for p in papers}


def _score(rankings: Mapping[str, list[str]], papers: Sequence[LabelledPaper]) -> float:
    """Mean of MRR (first choice) and MAP (top 3): what the selection maximises."""
    rr = [reciprocal_rank(rankings[p.name], p.top[0]) for p in papers]
    ap = [average_precision(rankings[p.name], p.top) for p in papers]
    return float(np.mean(rr) + np.mean(ap)) / 2


def select_config(papers: Sequence[LabelledPaper]) -> tuple[RankerConfig, dict[str, float]]:
    """The configuration with the best leave-one-paper-out score on ``papers`` (ties: the earlier,
    simpler one), and every configuration's score."""
    scores = {f"{c.features}, l2={c.l2:g}": _score(_held_out_rankings(papers, c), papers) for c in CONFIGS}
    best = max(CONFIGS, key=lambda c: scores[f"{c.features}, l2={c.l2:g}"])
    return best, {k: round(v, 4) for k, v in scores.items()}


def fit_selected(papers: Sequence[LabelledPaper]) -> tuple[dict[str, float], RankerConfig]:
    """Select a configuration (:func:`select_config`) and fit it on all ``papers``."""
    config, _ = select_config(papers)
    return fit_weights(papers, FEATURE_SETS[config.features], config.l2), config


def nested_weights(papers: Sequence[LabelledPaper]) -> dict[str, dict[str, float]]:
    """For each paper, weights selected AND fitted without it: the honest figure for
    :func:`fit_selected` (nested leave-one-paper-out)."""
    out = {}
    for paper in papers:
        rest = [p for p in papers if p is not paper]
        out[paper.name] = fit_selected(rest)[0]
    return out


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
        "selected combination, nested leave-one-paper-out": _per_paper(trained, nested_weights(papers_t)),
        "selected combination, fitted on all 12 (in-sample)": _fixed(trained, fit_selected(papers_t)[0]),
    }
    if shipped_weights:
        methods["shipped ranker weights (in-sample)"] = _fixed(trained, shipped_weights)
    out = {}
    for name, method in methods.items():
        out[name] = measures({c.gold.pdf: ranking(c.numbers, method(c)) for c in cases}, cases)
    return out
