"""Functions that agree with the sentence's role in context (issue 24, session 13).

The function head reads one sentence's pooled vector and nothing around it, while the role heads read
the section's run of sentences and its kind. Every function of the taxonomy belongs to one role
(``resources/functions/taxonomy.toml``), so the role head's probability of that role is evidence the
function head lacks: "One limitation of this study …" is a limitation (conclusion) in a discussion, not
a gap in earlier work (background). The runtime reweights the function probabilities by the
(calibrated) probability of each function's role:

    p(f | sentence, context) ∝ p_function_head(f | sentence) · p_role(role(f) | context) ** alpha

and renormalises; the "none" threshold is then applied to the reweighted best function. ``alpha`` and
the threshold are fitted on dev data (never a test split) by :func:`fit_role_prior` and stored in the
bundle's manifest (``context.functions.role_prior``, with each function's role, so the runtime needs
no taxonomy file); a bundle without it behaves as before (alpha 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.taxonomy.labels import NO_FUNCTION

ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


@dataclass(frozen=True)
class RolePrior:
    """The fitted reweighting: ``alpha``, the "none" threshold after it, and the role column of each
    function (an index into the bundle's role labels)."""

    alpha: float
    threshold: float
    role_columns: np.ndarray  # (F,) int

    def apply(self, function_probabilities: np.ndarray, role_probabilities: np.ndarray) -> np.ndarray:
        """(n, F) function probabilities reweighted by the (n, R) role probabilities, rows summing to 1."""
        if self.alpha == 0.0 or not len(function_probabilities):
            return function_probabilities
        weights = np.power(np.maximum(role_probabilities[:, self.role_columns], 1e-12), self.alpha)
        joint = function_probabilities * weights
        return (joint / np.maximum(joint.sum(-1, keepdims=True), 1e-30)).astype(np.float32)

    @classmethod
    def from_manifest(cls, functions: Mapping[str, Any], labels: Sequence[str]) -> RolePrior | None:
        """The prior a manifest's ``context.functions`` records, or None (none recorded, or roles the
        bundle does not label)."""
        record = functions.get("role_prior")
        ids = list(functions.get("ids", ()))
        if not isinstance(record, Mapping):
            return None
        roles = list(record.get("roles", ()))
        if len(roles) != len(ids) or any(role not in labels for role in roles):
            return None
        return cls(float(record.get("alpha", 0.0)), float(record.get("threshold", 0.0)),
                   np.array([list(labels).index(role) for role in roles], dtype=np.int64))


def labels_with_threshold(probabilities: np.ndarray, ids: Sequence[str], threshold: float) -> list[str]:
    best = probabilities.argmax(-1) if len(probabilities) else np.zeros(0, dtype=np.int64)
    return [ids[b] if probabilities[i, b] >= threshold else NO_FUNCTION for i, b in enumerate(best)]


def best_threshold(probabilities: np.ndarray, ids: Sequence[str], gold: Sequence[str]) -> tuple[float, float]:
    """(threshold, accuracy with "none" counted): the cut on the best function's probability below which
    a sentence gets "none", chosen for accuracy among the observed probabilities."""
    best_p = probabilities.max(-1)
    right = np.array([ids[b] == g for b, g in zip(probabilities.argmax(-1), gold, strict=True)])
    none = np.array([g == NO_FUNCTION for g in gold])
    candidates = np.unique(np.concatenate([[0.0], best_p]))
    scores = [float(np.where(best_p < t, none, right).mean()) for t in candidates]
    index = int(np.argmax(scores))
    return float(candidates[index]), scores[index]


def fit_role_prior(function_probabilities: np.ndarray, role_probabilities: np.ndarray, gold: Sequence[str],
                   ids: Sequence[str], role_columns: np.ndarray,
                   alphas: Sequence[float] = ALPHAS) -> tuple[RolePrior, dict[str, Any]]:
    """Choose alpha (and its threshold) for accuracy on dev sentences with a hand-given function (or
    "none"); ties go to the smaller alpha. Returns the prior and a record of the grid."""
    grid: dict[str, float] = {}
    best: tuple[float, float, float] | None = None  # (accuracy, alpha, threshold)
    for alpha in alphas:
        prior = RolePrior(alpha, 0.0, role_columns)
        reweighted = prior.apply(function_probabilities, role_probabilities)
        threshold, accuracy = best_threshold(reweighted, ids, gold)
        grid[f"{alpha:g}"] = round(accuracy, 4)
        if best is None or accuracy > best[0] + 1e-12:
            best = (accuracy, alpha, threshold)
    assert best is not None
    accuracy, alpha, threshold = best
    record = {"alpha": alpha, "threshold": round(threshold, 4), "sentences": len(gold),
              "dev_accuracy_alpha0": grid[f"{alphas[0]:g}"], "dev_accuracy": round(accuracy, 4),
              "dev_accuracy_by_alpha": grid}
    return RolePrior(alpha, threshold, role_columns), record
