"""Evaluation metrics (numpy only), one implementation each.

* Classification: :func:`classification_report` (F1 micro / macro, per-class
  precision / recall / F1 / support, confusion matrix).
* Retrieval: :func:`precision_at_1` and :func:`map_at_r`, as defined by Musgrave,
  Belongie & Lim, "A Metric Learning Reality Check" (ECCV 2020): every item queries
  all the others; R = the number of other items with the query's label; MAP@R =
  mean over queries of (1/R) * sum_{i=1..R} P@i * rel(i).  Queries with R = 0 are
  left out (they have nothing to find).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass
class ClassificationReport:
    labels: list[str]
    f1_micro: float
    f1_macro: float
    accuracy: float
    precision: dict[str, float]
    recall: dict[str, float]
    f1: dict[str, float]
    support: dict[str, int]
    confusion: list[list[int]]  # rows = gold label, columns = predicted label (order of ``labels``)

    def to_dict(self) -> dict[str, object]:
        return {
            "labels": self.labels,
            "f1_micro": self.f1_micro,
            "f1_macro": self.f1_macro,
            "accuracy": self.accuracy,
            "per_class": {
                label: {"precision": self.precision[label], "recall": self.recall[label],
                        "f1": self.f1[label], "support": self.support[label]}
                for label in self.labels
            },
            "confusion": self.confusion,
        }


def confusion_matrix(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """Counts [gold, predicted] over ``labels`` (a label outside ``labels`` raises ValueError)."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
    index = {label: i for i, label in enumerate(labels)}
    unknown = sorted({x for x in (*gold, *predicted) if x not in index})
    if unknown:
        raise ValueError(f"labels not in the label set: {', '.join(map(str, unknown))}")
    matrix = np.zeros((len(labels), len(labels)), dtype=np.int64)
    np.add.at(matrix, ([index[x] for x in gold], [index[x] for x in predicted]), 1)
    return matrix


def _safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.divide(a, b, out=np.zeros_like(a, dtype=np.float64), where=b > 0)


def classification_report(gold: Sequence[str], predicted: Sequence[str],
                          labels: Sequence[str]) -> ClassificationReport:
    """F1 micro and macro (macro = unweighted mean of per-class F1 over ``labels``).

    In single-label classification over the full label set, F1-micro equals accuracy.
    A class with no gold and no predicted items gets F1 0 and still counts in the macro mean
    (as scikit-learn does with ``labels=`` given); pass only the dataset's labels.
    """
    matrix = confusion_matrix(gold, predicted, labels)
    tp = np.diag(matrix).astype(np.float64)
    predicted_count = matrix.sum(axis=0).astype(np.float64)
    gold_count = matrix.sum(axis=1).astype(np.float64)
    precision = _safe_div(tp, predicted_count)
    recall = _safe_div(tp, gold_count)
    f1 = _safe_div(2 * precision * recall, precision + recall)
    total_tp, total = tp.sum(), matrix.sum()
    micro = float(total_tp / total) if total else 0.0  # micro P = micro R = micro F1 here
    names = list(labels)
    return ClassificationReport(
        labels=names,
        f1_micro=micro,
        f1_macro=float(f1.mean()) if len(names) else 0.0,
        accuracy=micro,
        precision=dict(zip(names, precision.tolist())),
        recall=dict(zip(names, recall.tolist())),
        f1=dict(zip(names, f1.tolist())),
        support=dict(zip(names, gold_count.astype(int).tolist())),
        confusion=matrix.tolist(),
    )


@dataclass
class RetrievalReport:
    precision_at_1: float
    map_at_r: float
    queries: int  # queries with R > 0 (the ones averaged)
    items: int

    def to_dict(self) -> dict[str, object]:
        return {"precision_at_1": self.precision_at_1, "map_at_r": self.map_at_r,
                "queries": self.queries, "items": self.items}


def retrieval_report(embeddings: np.ndarray, labels: Sequence[str], chunk: int = 1024) -> RetrievalReport:
    """P@1 and MAP@R where every item queries all the others by cosine similarity.

    Ties in similarity are broken by item index (stable sort), which matters only for
    exact duplicates.
    """
    codes = np.unique(np.asarray(labels), return_inverse=True)[1]
    n = len(codes)
    if n != len(embeddings):
        raise ValueError(f"{len(embeddings)} embeddings but {n} labels")
    counts = np.bincount(codes)
    r_all = counts[codes] - 1  # others with the same label
    x = np.asarray(embeddings, dtype=np.float32)
    x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    p1_hits, ap_values = [], []
    max_r = int(r_all.max()) if n else 0
    for start in range(0, n, chunk):
        rows = np.arange(start, min(n, start + chunk))
        sim = x[rows] @ x.T
        sim[np.arange(len(rows)), rows] = -np.inf
        # Top max_r neighbours per query, in order (stable: ties by index).
        order = np.argsort(-sim, axis=1, kind="stable")[:, : max(1, max_r)]
        relevant = codes[order] == codes[rows][:, None]
        for k, row in enumerate(rows):
            r = int(r_all[row])
            if r == 0:
                continue
            rel = relevant[k, :r]
            p1_hits.append(bool(relevant[k, 0]))
            precision_at_i = np.cumsum(rel) / np.arange(1, r + 1)
            ap_values.append(float((precision_at_i * rel).sum() / r))
    queries = len(ap_values)
    return RetrievalReport(
        precision_at_1=float(np.mean(p1_hits)) if queries else 0.0,
        map_at_r=float(np.mean(ap_values)) if queries else 0.0,
        queries=queries,
        items=n,
    )


def precision_at_1(embeddings: np.ndarray, labels: Sequence[str]) -> float:
    return retrieval_report(embeddings, labels).precision_at_1


def map_at_r(embeddings: np.ndarray, labels: Sequence[str]) -> float:
    return retrieval_report(embeddings, labels).map_at_r


@dataclass
class RankingReport:
    """Known-item search: query i's only relevant item is item i."""

    queries: int
    recall_at_1: float
    recall_at_5: float
    mrr: float

    def to_dict(self) -> dict[str, float | int]:
        return {"queries": self.queries, "recall@1": round(self.recall_at_1, 4),
                "recall@5": round(self.recall_at_5, 4), "mrr": round(self.mrr, 4)}


def ranking_report(queries: np.ndarray, items: np.ndarray) -> RankingReport:
    """Recall@1, Recall@5 and MRR of cosine search, ``queries[i]`` looking for ``items[i]``.

    Both are (n, d) and L2-normalised.  Ties count against the query (a rank is 1 + the number
    of items scoring at least as high as the right one, other than itself).
    """
    if queries.shape != items.shape or len(queries) == 0:
        raise ValueError(f"need two non-empty arrays of one shape, got {queries.shape} and {items.shape}")
    scores = queries @ items.T
    right = np.diag(scores)
    others = scores >= right[:, None]
    np.fill_diagonal(others, False)
    ranks = 1 + others.sum(axis=1)
    return RankingReport(len(ranks), float((ranks == 1).mean()), float((ranks <= 5).mean()),
                         float((1.0 / ranks).mean()))


def expected_calibration_error(confidence: Sequence[float], correct: Sequence[bool], bins: int = 10) -> float:
    """ECE: the mean over equal-width confidence bins of |accuracy − mean confidence|, weighted by
    the share of predictions in the bin (Guo et al. 2017). 0 = the probabilities mean what they say."""
    conf = np.asarray(confidence, dtype=np.float64)
    right = np.asarray(correct, dtype=np.float64)
    if conf.size == 0:
        return 0.0
    which = np.minimum((conf * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        chosen = which == b
        if chosen.any():
            total += chosen.mean() * abs(right[chosen].mean() - conf[chosen].mean())
    return float(total)


def reciprocal_rank(ranking: Sequence[str], item: str) -> float:
    """1 / the 1-based rank of ``item`` in ``ranking`` (0 when it is absent)."""
    return 1.0 / (list(ranking).index(item) + 1) if item in ranking else 0.0


def average_precision(ranking: Sequence[str], relevant: Sequence[str]) -> float:
    """Average precision of ``ranking`` for the ``relevant`` items (absent ones count as misses)."""
    wanted = set(relevant)
    if not wanted:
        return 0.0
    found, total = 0, 0.0
    for position, item in enumerate(ranking, start=1):
        if item in wanted:
            found += 1
            total += found / position
    return total / len(wanted)


@dataclass(frozen=True)
class PairedDifference:
    """Model B's accuracy minus model A's on the same items, with a bootstrap interval that resamples whole
    groups (papers): sentences of one paper rise and fall together, so resampling sentences would make the
    interval too narrow."""

    a: float
    b: float
    difference: float  # b - a
    low: float  # the interval's ends (``level``, e.g. 0.95)
    high: float
    a_only: int  # items A gets right and B wrong
    b_only: int
    items: int
    groups: int
    level: float
    resamples: int


def paired_difference(groups: Sequence[object], a_correct: Sequence[bool], b_correct: Sequence[bool],
                      resamples: int = 2000, level: float = 0.95, seed: int = 0) -> PairedDifference:
    """B − A accuracy on paired items, the interval from ``resamples`` draws of the groups with replacement
    (percentile bootstrap, seeded)."""
    if not len(groups) == len(a_correct) == len(b_correct):
        raise ValueError("paired items need one group and two outcomes each")
    if not groups:
        raise ValueError("no items to compare")
    if resamples < 1 or not 0.0 < level < 1.0:
        raise ValueError(f"resamples must be >= 1 and level in (0, 1), not {resamples} and {level}")
    names = sorted({str(g) for g in groups})
    index = {name: i for i, name in enumerate(names)}
    which = np.array([index[str(g)] for g in groups])
    a = np.asarray(a_correct, dtype=np.float64)
    b = np.asarray(b_correct, dtype=np.float64)
    counts = np.bincount(which, minlength=len(names)).astype(np.float64)
    delta = np.bincount(which, weights=b - a, minlength=len(names))
    draws = np.random.default_rng(seed).integers(0, len(names), size=(resamples, len(names)))
    differences = delta[draws].sum(axis=1) / counts[draws].sum(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(differences, [tail, 1.0 - tail])
    return PairedDifference(float(a.mean()), float(b.mean()), float((b - a).mean()), float(low), float(high),
                            int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum()), len(a),
                            len(names), level, resamples)
