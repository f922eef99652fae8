"""Graphical-abstract ranking against the hand-labelled dev set (``rhetorica eval figures``, issues 14, 25).

Every method ranks each labelled paper's figures; the measures are the MRR of the reader's first
choice, the MAP of the reader's top 3 and P@1 (the method's first figure is among the reader's
three), overall and per field (biomedical, CS, physical, social; v1 papers count as CS). Papers with
a single candidate figure are left out of the measures (every method ranks them right).

Methods: "first figure" (the lowest printed number), the caption–text scorer alone, the previous
ranker (issue 14: the scorer and four priors, with the weights it shipped with, fitted on the twelve
v1 papers — so in-sample there), and the ranker of issue 25 (the features of ``core.figures.figure_rank``,
``core.figures.figure_fit``) **leave-one-paper-out**: each paper is ranked with weights fitted on the other
papers only. What ships (:func:`bagged_fit`, since session 23) fits every configuration of :data:`CONFIGS` —
the feature set (:data:`FEATURE_SETS`: issue 25's, or issue 25's plus the relative evidence of session 13)
times the L2 strength (:data:`L2_CHOICES`) — and averages their normalised weights, over
:data:`BAG_ROUNDS` bootstrap resamples of the training papers: no choice is made, so nothing varies with
one fold's winner. Also shown: the same average without resampling, and the procedure that shipped
before it (:func:`nested_fit`: one configuration chosen by an inner leave-one-paper-out on the other
papers). Every configuration is also shown on its own. The weights a bundle carries (fitted on every
dev paper) are shown in-sample, labelled so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.document import Paper
from core.figures.figure_fit import LabelledPaper, bagged, fit_weights, leave_one_paper_out, normalised
from core.figures.figure_rank import FEATURES, RELATIVE_FEATURES, combine, figure_features
from core.model_api import CaptionScorer
from models.datasets.figure_gold import FigureGold
from models.metrics import average_precision, reciprocal_rank

PRIORS = ("first_figure", "position", "size", "mentions")
SCORER_FEATURES = ("caption_match", "best_sentence", "mention_match")
ISSUE25_FEATURES = tuple(f for f in FEATURES if f not in RELATIVE_FEATURES)
# The feature sets the ranking may use: issue 14's (the scorer + priors), issue 25's, and issue 25's with the
# relative evidence of session 13 (``overview_strongest``).
FEATURE_SETS: dict[str, tuple[str, ...]] = {
    "scorer + priors (issue 14)": ("caption_match", *PRIORS),
    "every feature (issue 25)": ISSUE25_FEATURES,
    "issue 25 + strongest overview cue": FEATURES,
}
# The feature sets the shipped fit averages over (with each L2 strength); the nested choice picks among them.
SELECTED_SETS = ("every feature (issue 25)", "issue 25 + strongest overview cue")
# L2 strengths (on standardised inputs) the shipped fit averages over; the nested choice (reported beside
# it) picks one by an inner leave-one-paper-out.
L2_CHOICES = (0.1, 0.3, 1.0)
# The weights the bundle shipped with before issue 25 (issue 14: scorer + priors, L2 10, fitted on the
# twelve v1 papers), kept to report "the previous ranker".
ISSUE14_WEIGHTS = {"caption_match": 0.2338, "first_figure": 0.3004, "position": -0.259, "size": 0.1358,
                   "mentions": 0.071}
FIELDS = ("biomedical", "CS", "physical", "social")


@dataclass(frozen=True)
class RankerConfig:
    features: str  # a key of FEATURE_SETS
    l2: float


# Every configuration the selection compares (ties: the first listed, so the simpler feature set).
CONFIGS = tuple(RankerConfig(features, l2) for features in SELECTED_SETS for l2 in L2_CHOICES)
NESTED = "ranker, leave-one-paper-out (nested: features and L2 chosen inside)"
AVERAGED = "ranker, leave-one-paper-out (every configuration averaged)"
BAGGED = "ranker, leave-one-paper-out (bagged: what ships)"
# Bootstrap resamples of the training papers the shipped fit averages over, and their seed (fixed in
# session 23 before the procedure was measured: docs/benchmarks.md).
BAG_ROUNDS = 20
BAG_SEED = 0


@dataclass
class GoldCase:
    """One labelled paper with its candidates' raw features (rows in reading order)."""

    gold: FigureGold
    paper: Paper
    numbers: list[str]
    values: np.ndarray  # (n, len(FEATURES)) with the bundle's scorer

    @property
    def name(self) -> str:
        return self.gold.pdf

    def labelled(self) -> LabelledPaper:
        return LabelledPaper(self.gold.pdf, self.numbers, self.values, list(self.gold.top3))


def gold_cases(pairs: Iterable[tuple[FigureGold, Paper]], scorer: CaptionScorer) -> list[GoldCase]:
    out = []
    for gold, paper in pairs:
        feats = figure_features(paper, scorer)
        out.append(GoldCase(gold, paper, [f.number for f in feats.figures], feats.values))
    return out


def ranking(numbers: Sequence[str], scores: np.ndarray) -> list[str]:
    """Numbers by score, best first (ties keep reading order)."""
    return [numbers[i] for i in sorted(range(len(numbers)), key=lambda i: (-float(scores[i]), i))]


def _row(rr: list[float], ap: list[float], p1: list[float]) -> dict[str, float]:
    if not rr:
        return {"mrr_top1": 0.0, "map_top3": 0.0, "p_at_1": 0.0, "papers": 0}
    return {"mrr_top1": round(float(np.mean(rr)), 4), "map_top3": round(float(np.mean(ap)), 4),
            "p_at_1": round(float(np.mean(p1)), 4), "papers": len(rr)}


def measures(rankings: Mapping[str, list[str]], cases: Sequence[GoldCase]) -> dict[str, dict[str, float]]:
    """MRR / MAP / P@1 overall ("all") and per field, over the papers with two or more candidates."""
    groups: dict[str, tuple[list[float], list[float], list[float]]] = {
        g: ([], [], []) for g in ("all", *FIELDS)}
    for case in cases:
        if len(case.numbers) < 2 or not case.gold.top3:
            continue
        ranked = rankings[case.name]
        rr = reciprocal_rank(ranked, case.gold.top3[0])
        ap = average_precision(ranked, case.gold.top3)
        p1 = float(bool(ranked) and ranked[0] in case.gold.top3)
        for name in ("all", case.gold.field_name):
            bucket = groups.setdefault(name, ([], [], []))
            bucket[0].append(rr)
            bucket[1].append(ap)
            bucket[2].append(p1)
    return {name: _row(*lists) for name, lists in groups.items()}


Fit = Callable[[Sequence[LabelledPaper]], dict[str, float]]


def held_out_rankings(cases: Sequence[GoldCase], fit: Fit) -> dict[str, list[str]]:
    """Each paper ranked with weights ``fit`` learnt on the OTHER papers only (leave one paper out)."""
    papers = [c.labelled() for c in cases]
    weights = leave_one_paper_out(papers, fit=fit)
    return {c.name: ranking(c.numbers, combine(c.values, weights[c.name])[0]) for c in cases}


def _score(rankings: Mapping[str, list[str]], papers: Sequence[LabelledPaper]) -> float:
    """Mean of MRR (first choice) and MAP (top 3): what the selection maximises."""
    usable = [p for p in papers if len(p.numbers) >= 2 and p.top]
    if not usable:
        return 0.0
    rr = [reciprocal_rank(rankings[p.name], p.top[0]) for p in usable]
    ap = [average_precision(rankings[p.name], p.top) for p in usable]
    return float(np.mean(rr) + np.mean(ap)) / 2


def select_config(papers: Sequence[LabelledPaper]) -> tuple[RankerConfig, dict[str, float]]:
    """The configuration (:data:`CONFIGS`) with the best leave-one-paper-out score on ``papers`` (ties:
    the first listed), and every configuration's score."""
    scores = {}
    for config in CONFIGS:
        weights = leave_one_paper_out(papers, FEATURE_SETS[config.features], config.l2)
        rankings = {p.name: ranking(p.numbers, p.scores(weights[p.name])) for p in papers}
        scores[f"{config.features}, l2={config.l2:g}"] = _score(rankings, papers)
    best = max(CONFIGS, key=lambda c: scores[f"{c.features}, l2={c.l2:g}"])
    return best, {k: round(v, 4) for k, v in scores.items()}


def fit_selected(papers: Sequence[LabelledPaper]) -> tuple[dict[str, float], RankerConfig]:
    """Select a configuration (:func:`select_config`) and fit it on all ``papers``."""
    config, _ = select_config(papers)
    return fit_weights(papers, FEATURE_SETS[config.features], config.l2), config


def nested_fit(train: Sequence[LabelledPaper]) -> dict[str, float]:
    """The shipped procedure on ``train`` alone: the configuration (feature set, L2) chosen by
    leave-one-paper-out within ``train``, then fitted on all of ``train``."""
    return fit_selected(train)[0]


def average_fit(train: Sequence[LabelledPaper]) -> dict[str, float]:
    """The mean of every configuration's normalised weights, each fitted on all of ``train``."""
    total: dict[str, float] = {}
    for config in CONFIGS:
        for name, value in normalised(fit_weights(train, FEATURE_SETS[config.features], config.l2)).items():
            total[name] = total.get(name, 0.0) + value / len(CONFIGS)
    return total


def bagged_fit(train: Sequence[LabelledPaper]) -> dict[str, float]:
    """The shipped procedure (session 23): :func:`average_fit` averaged over :data:`BAG_ROUNDS` bootstrap
    resamples of ``train`` (seed :data:`BAG_SEED`)."""
    return bagged(train, average_fit, BAG_ROUNDS, BAG_SEED)


def issue14_values(values: np.ndarray) -> np.ndarray:
    """``values`` with ``first_figure`` and ``position`` as issue 14 computed them (reading order)."""
    out = np.array(values, dtype=np.float64, copy=True)
    n = len(out)
    out[:, FEATURES.index("first_figure")] = [1.0 if i == 0 else 0.0 for i in range(n)]
    out[:, FEATURES.index("position")] = [i / (n - 1) if n > 1 else 0.0 for i in range(n)]
    return out


Method = Callable[[GoldCase], np.ndarray]


def paper_ranks(rankings: Mapping[str, list[str]], cases: Sequence[GoldCase]) -> dict[str, dict[str, Any]]:
    """Per paper with two or more candidates: its field, the reader's top 3, the first five of ``rankings``,
    and the reciprocal rank of the reader's first choice and the average precision of the top 3 there (what
    :func:`measures` averages), so that two runs can be compared paper by paper."""
    out: dict[str, dict[str, Any]] = {}
    for case in cases:
        if len(case.numbers) < 2 or not case.gold.top3:
            continue
        ranked = rankings[case.name]
        out[case.name] = {"field": case.gold.field_name, "reader_top3": list(case.gold.top3),
                          "ranked": ranked[:5],
                          "reciprocal_rank": round(reciprocal_rank(ranked, case.gold.top3[0]), 4),
                          "average_precision": round(average_precision(ranked, case.gold.top3), 4)}
    return out


def dev_report(cases: Sequence[GoldCase], bundle_weights: Mapping[str, float] | None = None,
               nested: bool = True, shipped: Mapping[str, list[str]] | None = None
               ) -> dict[str, dict[str, dict[str, float]]]:
    """Every method's measures (see the module docstring): method -> group ("all", fields) -> measures.
    ``shipped``: the bagged leave-one-paper-out rankings when the caller has them already
    (:func:`held_out_rankings` with :func:`bagged_fit`, the slowest of the fits)."""
    methods: dict[str, Method] = {
        "first figure": lambda c: -c.values[:, FEATURES.index("position")],
        "caption–text scorer alone": lambda c: c.values[:, FEATURES.index("caption_match")],
        "previous ranker (issue 14 weights)": lambda c: combine(issue14_values(c.values), ISSUE14_WEIGHTS)[0],
    }
    out = {name: measures({c.name: ranking(c.numbers, m(c)) for c in cases}, cases)
           for name, m in methods.items()}
    if nested:
        bagged = shipped if shipped is not None else held_out_rankings(cases, bagged_fit)
        out[BAGGED] = measures(bagged, cases)
        out[AVERAGED] = measures(held_out_rankings(cases, average_fit), cases)
        out[NESTED] = measures(held_out_rankings(cases, nested_fit), cases)
    for config in CONFIGS:
        def fixed(train: Sequence[LabelledPaper], config: RankerConfig = config) -> dict[str, float]:
            return fit_weights(train, FEATURE_SETS[config.features], config.l2)

        out[f"ranker, leave-one-paper-out ({config.features}, L2 {config.l2:g})"] = measures(
            held_out_rankings(cases, fixed), cases)
    if bundle_weights:
        out["bundle ranker weights (in-sample)"] = measures(
            {c.name: ranking(c.numbers, combine(c.values, bundle_weights)[0]) for c in cases}, cases)
    return out


def ranker_record(papers: Sequence[LabelledPaper], dev_set: str, command: str) -> tuple[dict[str, float],
                                                                                         dict[str, Any]]:
    """The shipped weights (:func:`bagged_fit` on every paper of ``dev_set``) and how they were made."""
    weights = normalised(bagged_fit(papers))
    record = {"fitted_on": f"{dev_set} ({len(papers)} hand-labelled papers)",
              "model": "listwise softmax over model_inputs (core.figures.figure_fit), gains 3/2/1",
              "procedure": {"configurations": [f"{c.features}, l2={c.l2:g}" for c in CONFIGS],
                            "averaged": "normalised weights of every configuration",
                            "bootstrap_rounds": BAG_ROUNDS, "seed": BAG_SEED},
              "command": command}
    return weights, record


def write_ranker(bundle: str | Path, weights: Mapping[str, float], record: Mapping[str, Any]) -> None:
    """Write ranking weights into a bundle's manifest (``context.figures.ranker``); its files, and so its
    model id, stay the same."""
    from models.bundle import verify_bundle, write_manifest

    manifest = verify_bundle(bundle)
    context = dict(manifest.context)
    figures = dict(context.get("figures", {}))
    figures["ranker"] = {"weights": dict(weights), **dict(record)}
    context["figures"] = figures
    manifest.context = context
    write_manifest(bundle, manifest, tuple(manifest.files))
