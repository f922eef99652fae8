"""Role temperatures: the role probabilities a bundle shows, calibrated on dev data (issue 24, item 5).

The role heads are trained with cross-entropy on partial and distant labels and come out
over-confident (0.6.0 on gold:dev: mean top probability 0.88 against 0.67 accuracy). One temperature
per head — the abstract/role head and the body head — divides the role logits before the softmax
(Guo et al. 2017's temperature scaling: it never changes which role is best). Each is the value in
[0.5, 10] (log grid) that minimises the negative log-likelihood of the hand-given roles on dev
documents (never a test split), fed as the app feeds them. The temperatures live in the bundle's
manifest (``context.role_calibration``), so calibrating needs no re-export; the runtime
(:class:`models.encoder.EncoderModel`) applies them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

GRID = np.exp(np.linspace(np.log(0.5), np.log(10.0), 121))


@dataclass(frozen=True)
class HeadTemperature:
    temperature: float
    sentences: int
    nll_before: float
    nll_after: float
    ece_before: float
    ece_after: float

    def to_dict(self) -> dict[str, float | int]:
        return {"temperature": round(self.temperature, 4), "sentences": self.sentences,
                "dev_nll_before": round(self.nll_before, 4), "dev_nll_after": round(self.nll_after, 4),
                "dev_ece_before": round(self.ece_before, 4), "dev_ece_after": round(self.ece_after, 4)}


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(-1, keepdims=True))
    return shifted / shifted.sum(-1, keepdims=True)


def _nll(log_probs: np.ndarray, gold: np.ndarray, t: float) -> float:
    p = _softmax(log_probs / t)[np.arange(len(gold)), gold]
    return float(-np.log(np.maximum(p, 1e-12)).mean())


def _ece(probs: np.ndarray, gold: np.ndarray, bins: int = 10) -> float:
    confidence = probs.max(-1)
    correct = probs.argmax(-1) == gold
    edges = np.linspace(0.0, 1.0, bins + 1)
    total = 0.0
    for lo, hi in itertools.pairwise(edges):
        chosen = (confidence > lo) & (confidence <= hi)
        if chosen.any():
            total += chosen.mean() * abs(float(correct[chosen].mean()) - float(confidence[chosen].mean()))
    return total


def fit_temperature(probabilities: np.ndarray, gold: Sequence[int]) -> HeadTemperature:
    """The temperature for one head from its (uncalibrated) probabilities on dev sentences and the
    gold role indices. Log-probabilities stand in for logits (a softmax ignores a per-row shift)."""
    gold_idx = np.asarray(gold, dtype=np.int64)
    if len(gold_idx) == 0:
        return HeadTemperature(1.0, 0, 0.0, 0.0, 0.0, 0.0)
    log_probs = np.log(np.maximum(np.asarray(probabilities, dtype=np.float64), 1e-12))
    losses = [_nll(log_probs, gold_idx, float(t)) for t in GRID]
    best = float(GRID[int(np.argmin(losses))])
    return HeadTemperature(best, len(gold_idx), _nll(log_probs, gold_idx, 1.0), min(losses),
                           _ece(_softmax(log_probs), gold_idx), _ece(_softmax(log_probs / best), gold_idx))


def apply_temperatures(logits: np.ndarray, kinds: np.ndarray, per_kind: np.ndarray) -> np.ndarray:
    """Role logits [n, R] divided row-wise by the temperature of each sentence's section-kind index."""
    if len(logits) == 0:
        return logits
    return logits / per_kind[kinds][:, None]
