"""Role temperatures: the role probabilities a bundle shows, calibrated on dev data (issue 24, item 5).

The role heads are trained with cross-entropy on partial and distant labels and come out
over-confident (0.6.0 on gold:dev: mean top probability 0.88 against 0.67 accuracy). One temperature
per head — the abstract/role head and the body head — divides the role logits before the softmax
(Guo et al. 2017's temperature scaling: it never changes which role is best). Each is the value in
[0.5, 10] (log grid) that minimises the negative log-likelihood of the hand-given roles on dev
documents (never a test split), fed as the app feeds them. The temperatures live in the bundle's
manifest (``context.role_calibration``), so calibrating needs no re-export; the runtime
(:class:`models.encoder.EncoderModel`) applies them.

Optionally (``calibrate-roles --bias``, session 26) each head also gets one additive logit bias per role,
fitted jointly with its temperature on the same NLL (vector scaling restricted to a bias; centred, L2
:data:`BIAS_L2`): a prior correction that *can* change the best role, e.g. for a head that finds a rare role
with high precision but low recall.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

GRID = np.exp(np.linspace(np.log(0.5), np.log(10.0), 121))
BIAS_L2 = 0.01  # on the centred biases, against the mean NLL
MAX_BIAS = 10.0  # a manifest bias beyond this is damage, not calibration


@dataclass(frozen=True)
class HeadTemperature:
    temperature: float
    sentences: int
    nll_before: float
    nll_after: float
    ece_before: float
    ece_after: float
    bias: tuple[float, ...] = ()  # per role, in the bundle's label order (empty: temperature only)

    def to_dict(self) -> dict[str, object]:
        record: dict[str, object] = {
            "temperature": round(self.temperature, 4), "sentences": self.sentences,
            "dev_nll_before": round(self.nll_before, 4), "dev_nll_after": round(self.nll_after, 4),
            "dev_ece_before": round(self.ece_before, 4), "dev_ece_after": round(self.ece_after, 4)}
        if self.bias:
            record["bias"] = [round(b, 4) for b in self.bias]
        return record


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


def _inputs(probabilities: np.ndarray, gold: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Gold role indices and log-probabilities (they stand in for logits: a softmax ignores a row shift)."""
    gold_idx = np.asarray(gold, dtype=np.int64)
    return gold_idx, np.log(np.maximum(np.asarray(probabilities, dtype=np.float64), 1e-12))


def fit_temperature(probabilities: np.ndarray, gold: Sequence[int]) -> HeadTemperature:
    """The temperature for one head from its (uncalibrated) probabilities on dev sentences and the
    gold role indices. Log-probabilities stand in for logits (a softmax ignores a per-row shift)."""
    gold_idx, log_probs = _inputs(probabilities, gold)
    if len(gold_idx) == 0:
        return HeadTemperature(1.0, 0, 0.0, 0.0, 0.0, 0.0)
    losses = [_nll(log_probs, gold_idx, float(t)) for t in GRID]
    best = float(GRID[int(np.argmin(losses))])
    return HeadTemperature(best, len(gold_idx), _nll(log_probs, gold_idx, 1.0), min(losses),
                           _ece(_softmax(log_probs), gold_idx), _ece(_softmax(log_probs / best), gold_idx))


def fit_temperature_and_bias(probabilities: np.ndarray, gold: Sequence[int],
                             l2: float = BIAS_L2) -> HeadTemperature:
    """The temperature and per-role biases for one head: for each temperature of :data:`GRID`, the centred
    biases minimising the mean NLL + ``l2`` / 2 × |b|² (convex in b: Newton's method), then the pair with
    the lowest penalised NLL. Roles absent from ``gold`` still get a bias (pulled towards 0 by ``l2``)."""
    gold_idx, log_probs = _inputs(probabilities, gold)
    if len(gold_idx) == 0:
        return HeadTemperature(1.0, 0, 0.0, 0.0, 0.0, 0.0)
    n, roles = log_probs.shape
    onehot = np.zeros((n, roles))
    onehot[np.arange(n), gold_idx] = 1.0
    best: tuple[float, float, np.ndarray] | None = None
    for t in GRID:
        z = log_probs / t
        b = np.zeros(roles)
        for _ in range(25):
            p = _softmax(z + b)
            grad = (p - onehot).mean(0) + l2 * b
            hessian = (np.diag(p.mean(0)) - p.T @ p / n) + l2 * np.eye(roles)
            step = np.linalg.solve(hessian, grad)
            b -= step
            if np.abs(step).max() < 1e-7:
                break
        b -= b.mean()  # a softmax ignores a common shift
        loss = _nll(z + b, gold_idx, 1.0) + 0.5 * l2 * float(b @ b)
        if best is None or loss < best[0]:
            best = (loss, float(t), b)
    assert best is not None
    _, t_best, bias = best
    after = log_probs / t_best + bias
    return HeadTemperature(t_best, n, _nll(log_probs, gold_idx, 1.0), _nll(after, gold_idx, 1.0),
                           _ece(_softmax(log_probs), gold_idx), _ece(_softmax(after), gold_idx),
                           tuple(float(x) for x in bias))


def apply_temperatures(logits: np.ndarray, kinds: np.ndarray, per_kind: np.ndarray,
                       bias_per_kind: np.ndarray | None = None) -> np.ndarray:
    """Role logits [n, R] divided row-wise by the temperature of each sentence's section-kind index, plus
    that kind's head's per-role bias [K, R] when the bundle has one."""
    if len(logits) == 0:
        return logits
    scaled = logits / per_kind[kinds][:, None]
    return scaled if bias_per_kind is None else scaled + bias_per_kind[kinds]
