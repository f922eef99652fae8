"""Fit the weights of the graphical-abstract ranking (``core.figure_rank``) on hand-labelled papers.

Each labelled paper gives its candidates' raw features and a gain per candidate (3 for the
reader's first choice, 2 for the second, 1 for the third, 0 for the rest). The fit is a
listwise softmax over each paper's candidates, ``scale_within_paper(features) @ w``, pulled
towards the gains' distribution, with an L2 penalty: convex, a few features, Newton's
method, deterministic. With a dozen papers the weights are noisy, so results on the same
papers must be cross-validated by paper (:func:`leave_one_paper_out`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.figure_rank import FEATURES, scale_within_paper

GAINS = (3.0, 2.0, 1.0)


@dataclass
class LabelledPaper:
    """One paper's candidate features (rows = candidates) and the reader's top choices."""

    name: str
    numbers: list[str]  # printed figure numbers, one per row
    values: np.ndarray  # (n, len(FEATURES)) raw features
    top: list[str]  # printed numbers, best first

    def gains(self) -> np.ndarray:
        out = np.zeros(len(self.numbers))
        for gain, number in zip(GAINS, self.top, strict=False):
            if number in self.numbers:
                out[self.numbers.index(number)] = gain
        return out


def fit_weights(papers: Sequence[LabelledPaper], features: Sequence[str] = FEATURES, l2: float = 0.1,
                steps: int = 50) -> dict[str, float]:
    """Weights of ``features`` (the others get none) that rank the readers' choices first: Newton's
    method on the convex listwise loss (a few features, so the Hessian is tiny)."""
    columns = [FEATURES.index(f) for f in features]
    blocks = []
    for paper in papers:
        gains = paper.gains()
        if len(paper.numbers) < 2 or gains.sum() == 0:
            continue
        blocks.append((scale_within_paper(paper.values)[:, columns], gains / gains.sum()))
    if not blocks:
        return {}
    w = np.zeros(len(columns))
    for _ in range(steps):
        grad = l2 * w
        hessian = l2 * np.eye(len(columns))
        for x, target in blocks:
            z = x @ w
            q = np.exp(z - z.max())
            q /= q.sum()
            grad = grad + x.T @ (q - target) / len(blocks)
            hessian = hessian + x.T @ (np.diag(q) - np.outer(q, q)) @ x / len(blocks)
        step = np.linalg.solve(hessian + 1e-9 * np.eye(len(columns)), grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return {name: round(float(v), 4) for name, v in zip(features, w, strict=True)}


def leave_one_paper_out(papers: Sequence[LabelledPaper], features: Sequence[str] = FEATURES,
                        l2: float = 0.1) -> dict[str, dict[str, float]]:
    """For each paper, the weights fitted on all the other papers (its honest ranking)."""
    return {paper.name: fit_weights([p for p in papers if p is not paper], features, l2) for paper in papers}
