"""Fit the none detector (``models/none_detector.py``): the word model on hand labels, the decision on dev.

:func:`fit_none_detector` builds the vocabulary (terms in at least ``min_df`` training sentences) and IDF
(smoothed: ln((1 + n) / (1 + df)) + 1), then an L2-regularised logistic regression (``c`` as in liblinear:
0.5 ||w||² + c · Σ log-loss) with L-BFGS on a sparse matrix. The section kind is dropped for a fixed share
of the sentences (chosen by a hash of the text, so a rerun is the same) so that a sentence read alone, of
unknown kind, is served. :func:`choose_decision` then picks ``w`` and ``t`` of the runtime's rule for function
accuracy on dev sentences whose probabilities come from the bundle itself.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from models.none_detector import NoneDetector, terms

BEST_WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)


def _kept_kind(text: str, kind: str | None, kind_dropout: float) -> str | None:
    draw = hashlib.sha1(text.encode("utf-8")).digest()[0] / 256.0
    return None if draw < kind_dropout else kind


def fit_none_detector(texts: Sequence[str], kinds: Sequence[str | None], is_none: Sequence[bool],
                      c: float = 2.0, min_df: int = 2, kind_dropout: float = 0.3,
                      max_iterations: int = 200) -> NoneDetector:
    """The word model fitted on labelled sentences (its decision left at w = 1, t = 0: see
    :func:`choose_decision`)."""
    if not texts or len(set(is_none)) < 2:
        raise ValueError("the none detector needs sentences of both kinds (none and a function)")
    term_lists = [terms(t, _kept_kind(t, k, kind_dropout)) for t, k in zip(texts, kinds, strict=True)]
    document_frequency = Counter(term for row in term_lists for term in set(row))
    vocabulary = tuple(sorted(t for t, df in document_frequency.items() if df >= min_df))
    n = len(texts)
    idf = np.array([math.log((1 + n) / (1 + document_frequency[t])) + 1.0 for t in vocabulary],
                   dtype=np.float32)
    detector = NoneDetector(vocabulary, idf, np.zeros(len(vocabulary), np.float32), 0.0)
    rows, columns, values = [], [], []
    for row, term_list in enumerate(term_lists):
        cols, vals = detector.term_row(term_list)
        rows.extend([row] * len(cols))
        columns.extend(cols.tolist())
        values.extend(vals.tolist())
    matrix = torch.sparse_coo_tensor(torch.tensor([rows, columns]), torch.tensor(values, dtype=torch.float64),
                                     (n, len(vocabulary)), check_invariants=True).coalesce()
    target = torch.tensor([1.0 if x else 0.0 for x in is_none], dtype=torch.float64)
    weight = torch.zeros(len(vocabulary), 1, dtype=torch.float64)
    bias = torch.zeros(1, dtype=torch.float64)
    optimiser = torch.optim.LBFGS([weight, bias], lr=1.0, max_iter=max_iterations, tolerance_grad=1e-7,
                                  tolerance_change=1e-10, history_size=20, line_search_fn="strong_wolfe")
    transposed = matrix.t().coalesce()

    def closure() -> torch.Tensor:
        # A convex regression: its gradient is written out, no autograd (backward passes belong to the
        # head loop and the encoder trainer).
        scores = torch.sparse.mm(matrix, weight).squeeze(1) + bias
        loss = (torch.nn.functional.binary_cross_entropy_with_logits(scores, target, reduction="sum")
                + 0.5 / c * (weight ** 2).sum()) / n
        residual = (torch.sigmoid(scores) - target).unsqueeze(1)
        weight.grad = (torch.sparse.mm(transposed, residual) + weight / c) / n
        bias.grad = residual.sum().reshape(1) / n
        return loss

    with torch.no_grad():
        optimiser.step(closure)
    return NoneDetector(vocabulary, idf, weight.squeeze(1).numpy().astype(np.float32), float(bias.item()))


@dataclass(frozen=True)
class Decision:
    best_weight: float
    threshold: float
    accuracy: float  # function accuracy on the dev sentences with this decision
    none_share: float  # share of them called "none"


def decision_accuracy(log_p_none: np.ndarray, best_probability: np.ndarray, best_right: np.ndarray,
                      gold_none: np.ndarray, best_weight: float, threshold: float) -> tuple[float, float]:
    """Function accuracy and "none" share of the rule on dev sentences: a sentence called "none" is right when
    its hand label is "none", any other when its best function is its hand function (``best_right``)."""
    called = log_p_none - best_weight * np.log(np.maximum(best_probability, 1e-12)) > threshold
    right = np.where(called, gold_none, best_right)
    return float(right.mean()) if len(right) else 0.0, float(called.mean()) if len(called) else 0.0


def choose_decision(log_p_none: np.ndarray, best_probability: np.ndarray, best_right: Sequence[bool],
                    gold_none: Sequence[bool]) -> Decision:
    """``w`` (from :data:`BEST_WEIGHTS`) and ``t`` (every midpoint of the dev scores) for the highest function
    accuracy on the dev sentences; ties keep the smaller ``w`` and the higher ``t`` (fewer "none")."""
    right, none = np.asarray(best_right, dtype=bool), np.asarray(gold_none, dtype=bool)
    best: Decision | None = None
    for w in BEST_WEIGHTS:
        scores = log_p_none - w * np.log(np.maximum(best_probability, 1e-12))
        order = np.sort(np.unique(scores))
        cuts = np.concatenate([[order[0] - 1.0], (order[1:] + order[:-1]) / 2, [order[-1] + 1.0]])
        for t in cuts[::-1]:
            accuracy, share = decision_accuracy(log_p_none, best_probability, right, none, w, float(t))
            if best is None or accuracy > best.accuracy + 1e-12:
                best = Decision(w, float(t), accuracy, share)
    assert best is not None
    return best
