"""Fit the weights of the graphical-abstract ranking (``core.figures.figure_rank``) on hand-labelled papers.

Each labelled paper gives its candidates' raw features and a gain per candidate (3 for the
reader's first choice, 2 for the second, 1 for the third, 0 for the rest). The fit is listwise:
a softmax over each paper's candidates of ``model_inputs(features) @ w`` (the issue-14 features
scaled within the paper, the others as they are), pulled towards the gains' distribution, with an
L2 penalty on the weights of globally standardised inputs (so one strength suits every feature;
the weights are given back in the inputs' own units). Convex, a few dozen features, Newton's
method on all papers at once, deterministic. With some dozens of papers the weights are noisy, so
results on the same papers must be cross-validated by paper (:func:`leave_one_paper_out`: a paper
is always ranked with weights fitted without it), and one fit varies with which papers it saw:
:func:`bagged` averages a fit over bootstrap resamples of the papers to lower that variance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from core.figures.figure_rank import FEATURES, model_inputs

GAINS = (3.0, 2.0, 1.0)


@dataclass
class LabelledPaper:
    """One paper's candidate features (rows = candidates) and the reader's top choices."""

    name: str
    numbers: list[str]  # printed figure numbers, one per row
    values: np.ndarray  # (n, len(FEATURES)) raw features
    top: list[str]  # printed numbers, best first

    @cached_property
    def inputs(self) -> np.ndarray:
        """``model_inputs`` of the raw features (what the weights multiply), computed once."""
        return model_inputs(np.asarray(self.values, dtype=np.float64))

    def scores(self, weights: dict[str, float]) -> np.ndarray:
        """The candidates' scores under ``weights`` (as ``core.figures.figure_rank.combine`` gives them)."""
        return self.inputs @ np.array([float(weights.get(name, 0.0)) for name in FEATURES])

    def gains(self) -> np.ndarray:
        out = np.zeros(len(self.numbers))
        for gain, number in zip(GAINS, self.top, strict=False):
            if number in self.numbers:
                out[self.numbers.index(number)] = gain
        return out


@dataclass
class _Stacked:
    """Every usable paper's inputs in one matrix, with where each paper's rows start."""

    x: np.ndarray  # (rows, features), standardised
    target: np.ndarray  # (rows,) each paper's gains / their sum
    starts: np.ndarray  # (papers,) first row of each paper
    scale: np.ndarray  # (features,) the standard deviations divided out


def _stack(papers: Sequence[LabelledPaper], columns: list[int]) -> _Stacked | None:
    xs, targets, starts, row = [], [], [], 0
    for paper in papers:
        gains = paper.gains()
        if len(paper.numbers) < 2 or gains.sum() == 0:
            continue  # nothing to learn from a single figure or an unlabelled paper
        xs.append(paper.inputs[:, columns])
        targets.append(gains / gains.sum())
        starts.append(row)
        row += len(paper.numbers)
    if not xs:
        return None
    x = np.vstack(xs)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    return _Stacked(x / scale, np.concatenate(targets), np.array(starts), scale)


def _softmax_by_paper(z: np.ndarray, starts: np.ndarray) -> np.ndarray:
    top = np.maximum.reduceat(z, starts)
    sizes = np.diff(np.append(starts, len(z)))
    e = np.exp(z - np.repeat(top, sizes))
    return e / np.repeat(np.add.reduceat(e, starts), sizes)


def fit_weights(papers: Sequence[LabelledPaper], features: Sequence[str] = FEATURES, l2: float = 0.1,
                steps: int = 50) -> dict[str, float]:
    """Weights of ``features`` (the others get none) that rank the readers' choices first: Newton's
    method on the convex listwise loss, averaged over papers, plus ``l2`` / 2 × |w|² on standardised
    inputs. Papers with fewer than two candidates or no labelled choice are skipped; ``{}`` when none
    is left."""
    columns = [FEATURES.index(f) for f in features]
    data = _stack(papers, columns)
    if data is None:
        return {}
    x, target, starts = data.x, data.target, data.starts
    count = len(starts)
    w = np.zeros(len(columns))
    eye = np.eye(len(columns))
    for _ in range(steps):
        q = _softmax_by_paper(x @ w, starts)
        grad = x.T @ (q - target) / count + l2 * w
        per_paper = np.add.reduceat(x * q[:, None], starts)  # (papers, features): E_q[x] per paper
        hessian = ((x * q[:, None]).T @ x - per_paper.T @ per_paper) / count + l2 * eye
        step = np.linalg.solve(hessian + 1e-9 * eye, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    w = w / data.scale
    return {name: round(float(v), 6) for name, v in zip(features, w, strict=True)}


Fit = Callable[[Sequence[LabelledPaper]], dict[str, float]]


def leave_one_paper_out(papers: Sequence[LabelledPaper], features: Sequence[str] = FEATURES,
                        l2: float = 0.1, fit: Fit | None = None) -> dict[str, dict[str, float]]:
    """For each paper, the weights fitted on all the other papers (its honest ranking). ``fit`` (the
    training papers -> weights) replaces :func:`fit_weights` with ``features`` and ``l2``."""
    def default(train: Sequence[LabelledPaper]) -> dict[str, float]:
        return fit_weights(train, features, l2)

    chosen = fit or default
    out = {}
    for paper in papers:
        train = [p for p in papers if p.name != paper.name]
        out[paper.name] = chosen(train)
    return out


def bagged(papers: Sequence[LabelledPaper], fit: Fit, rounds: int = 20, seed: int = 0) -> dict[str, float]:
    """The mean of ``fit``'s :func:`normalised` weights over ``rounds`` bootstrap resamples of ``papers``
    (drawn by paper with replacement, seeded: the same papers give the same weights). A paper drawn twice
    counts twice (its copies get distinct names)."""
    rng = np.random.default_rng(seed)
    total: dict[str, float] = {}
    for _ in range(rounds):
        draw = rng.integers(0, max(len(papers), 1), len(papers))
        sample = [LabelledPaper(f"{papers[i].name}#{j}", papers[i].numbers, papers[i].values, papers[i].top)
                  for j, i in enumerate(draw)]
        for name, value in normalised(fit(sample)).items():
            total[name] = total.get(name, 0.0) + value / rounds
    return {name: round(value, 6) for name, value in total.items()}


def normalised(weights: dict[str, float]) -> dict[str, float]:
    """The weights scaled to a total of 1 in absolute value (only their direction ranks), rounded."""
    total = sum(abs(v) for v in weights.values()) or 1.0
    return {k: round(v / total, 6) for k, v in weights.items()}
