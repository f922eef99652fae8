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

The section kind is evidence too: a limitation is stated in a discussion, baselines are named in a method
section. With a kind prior (``kind_prior`` in the same record: per section kind, log p(f | kind) / p(f)
counted on the annotated corpus's train split with add-one smoothing) the product also carries
(p(f | kind) / p(f)) ** beta; a sentence of unknown kind (a query sent alone) gets no kind prior.

A bundle with a contextual function head (session 14: the role graph's ``function_context_logits``, the
function read with its section as the role is) replaces p_function_head by the geometric mixture
p_head ** (1 - w) · p_context ** w (renormalised), ``w`` = ``context_weight``, fitted with alpha and beta;
a sentence of unknown kind keeps the function head alone (the context head was trained on sections).

Last, a temperature (session 16): the product above is a geometric mixture whose exponents are fitted for
accuracy, not for what the probabilities say; with a sharper encoder its best function's probability ran
far above how often it is right (dev ECE 0.17). ``temperature`` T (fitted on the same dev sentences, the
negative log-likelihood of their hand-given functions) turns the probabilities shown into p ** (1 / T),
renormalised (:meth:`RolePrior.shown`). The labels do not change: the best function is the same, and the
"none" threshold is decided on the untempered probabilities (tempering reorders the best probabilities across
sentences, so no threshold on the tempered ones keeps the same decisions; one refitted on them lost 0.9 point
of dev accuracy).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.taxonomy.labels import NO_FUNCTION

ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
BETAS = (0.0, 0.25, 0.5, 0.75, 1.0)
CONTEXT_WEIGHTS = (0.0, 0.25, 0.4, 0.5, 0.6, 0.75, 1.0)
TEMPERATURES = tuple(round(0.5 + 0.05 * i, 2) for i in range(91))  # 0.5 … 5.0


@dataclass(frozen=True)
class RolePrior:
    """The fitted reweighting: ``alpha``, the "none" threshold after it, and the role column of each
    function (an index into the bundle's role labels)."""

    alpha: float
    threshold: float
    role_columns: np.ndarray  # (F,) int
    beta: float = 0.0
    kind_log_ratio: np.ndarray | None = None  # (K + 1, F): log p(f | kind) / p(f) by kind index, unknown last
    context_weight: float = 0.0  # w of the contextual function head's probabilities (0: not used)
    unknown_kind: int = -1  # the "unknown" section-kind index (no context mixing there); -1: none given
    temperature: float = 1.0  # p ** (1 / T), renormalised, after the reweighting (1: none)

    @property
    def active(self) -> bool:
        """Whether applying the prior changes anything (so its threshold replaces the bundle's)."""
        return self.alpha != 0.0 or self.beta != 0.0 or self.context_weight != 0.0

    def mix_context(self, function_probabilities: np.ndarray, context_probabilities: np.ndarray | None,
                    kinds: np.ndarray | None) -> np.ndarray:
        """p_head ** (1 - w) · p_context ** w, renormalised, for the sentences of a known section kind
        (all of them when no kinds are given); the others keep p_head."""
        w = self.context_weight
        if w == 0.0 or context_probabilities is None or not len(function_probabilities):
            return function_probabilities
        log_mix = ((1.0 - w) * np.log(np.maximum(function_probabilities, 1e-12))
                   + w * np.log(np.maximum(context_probabilities, 1e-12)))
        mixed = np.exp(log_mix - log_mix.max(-1, keepdims=True))
        mixed = mixed / mixed.sum(-1, keepdims=True)
        if kinds is not None and self.unknown_kind >= 0:
            alone = np.asarray(kinds) == self.unknown_kind
            mixed[alone] = function_probabilities[alone]
        return mixed.astype(np.float32)

    def apply(self, function_probabilities: np.ndarray, role_probabilities: np.ndarray,
              kinds: np.ndarray | None = None, context_probabilities: np.ndarray | None = None) -> np.ndarray:
        """(n, F) function probabilities (mixed with the contextual head's ``context_probabilities`` when
        the bundle has one) reweighted by the (n, R) role probabilities (and, with ``kinds``, the (n,)
        section-kind indices, by the kind prior), rows summing to 1."""
        function_probabilities = self.mix_context(function_probabilities, context_probabilities, kinds)
        use_kinds = self.beta != 0.0 and self.kind_log_ratio is not None and kinds is not None
        if (self.alpha == 0.0 and not use_kinds) or not len(function_probabilities):
            return function_probabilities
        log_weights = self.alpha * np.log(np.maximum(role_probabilities[:, self.role_columns], 1e-12))
        if use_kinds:
            assert self.kind_log_ratio is not None and kinds is not None
            log_weights = log_weights + self.beta * self.kind_log_ratio[kinds]
        log_weights = log_weights - log_weights.max(-1, keepdims=True)
        joint = function_probabilities * np.exp(log_weights)
        return (joint / np.maximum(joint.sum(-1, keepdims=True), 1e-30)).astype(np.float32)

    def shown(self, probabilities: np.ndarray) -> np.ndarray:
        """The probabilities to show: :meth:`apply`'s, tempered. The "none" threshold is decided on
        :meth:`apply`'s own (the runtime keeps that decision beside the tempered ones)."""
        return tempered(probabilities, self.temperature)

    @classmethod
    def from_manifest(cls, functions: Mapping[str, Any], labels: Sequence[str],
                      section_kinds: Sequence[str] = ()) -> RolePrior | None:
        """The prior a manifest's ``context.functions`` records, or None (none recorded, or roles the
        bundle does not label). ``section_kinds``: the bundle's kinds (their indices, unknown last, are
        what the runtime hands to :meth:`apply`)."""
        record = functions.get("role_prior")
        ids = list(functions.get("ids", ()))
        if not isinstance(record, Mapping):
            return None
        roles = list(record.get("roles", ()))
        if len(roles) != len(ids) or any(role not in labels for role in roles):
            return None
        columns = np.array([list(labels).index(role) for role in roles], dtype=np.int64)
        kind_prior = record.get("kind_prior")
        beta, table = 0.0, None
        if isinstance(kind_prior, Mapping):
            table = kind_table(kind_prior.get("log_ratio", {}), section_kinds, len(ids))
            beta = float(kind_prior.get("beta", 0.0)) if table is not None else 0.0
        temperature = float(record.get("temperature", 1.0))
        if not 0.05 <= temperature <= 20.0:  # a damaged manifest: no tempering rather than nonsense
            temperature = 1.0
        return cls(float(record.get("alpha", 0.0)), float(record.get("threshold", 0.0)), columns, beta, table,
                   float(record.get("context_weight", 0.0)), len(section_kinds) if section_kinds else -1,
                   temperature)


def tempered(probabilities: np.ndarray, temperature: float) -> np.ndarray:
    """Rows of ``probabilities`` raised to 1 / ``temperature`` and renormalised (1: unchanged)."""
    if temperature == 1.0 or not len(probabilities):
        return probabilities
    logs = np.log(np.maximum(probabilities, 1e-12)) / temperature
    out = np.exp(logs - logs.max(-1, keepdims=True))
    return (out / out.sum(-1, keepdims=True)).astype(np.float32)


def fit_temperature(probabilities: np.ndarray, ids: Sequence[str], gold: Sequence[str],
                    temperatures: Sequence[float] = TEMPERATURES) -> float:
    """The temperature minimising the negative log-likelihood of the hand-given functions (sentences
    labelled "none" left out); ties go to the one nearest 1."""
    index = {f: i for i, f in enumerate(ids)}
    rows = [i for i, g in enumerate(gold) if g in index]
    if not rows:
        return 1.0
    columns = np.array([index[gold[i]] for i in rows])
    chosen = probabilities[rows]
    best = (float("inf"), 1.0)
    for t in sorted(temperatures, key=lambda t: abs(t - 1.0)):
        nll = float(-np.log(np.maximum(tempered(chosen, t)[np.arange(len(rows)), columns], 1e-12)).mean())
        if nll < best[0] - 1e-9:
            best = (nll, float(t))
    return best[1]


def kind_table(log_ratio: object, section_kinds: Sequence[str], width: int) -> np.ndarray | None:
    """The (K + 1, F) table of :attr:`RolePrior.kind_log_ratio` for a bundle's ``section_kinds`` from a
    record {kind: [F log ratios]}; a kind the record lacks (and "unknown", the last row) gets zeros.
    None when the record is malformed."""
    if not isinstance(log_ratio, Mapping):
        return None
    table = np.zeros((len(section_kinds) + 1, width), dtype=np.float32)
    for row, kind in enumerate(section_kinds):
        values = log_ratio.get(kind)
        if values is None:
            continue
        if not isinstance(values, Sequence) or len(values) != width:
            return None
        table[row] = np.asarray([float(v) for v in values], dtype=np.float32)
    return table


def kind_log_ratios(kinds: Sequence[str], functions: Sequence[str], ids: Sequence[str],
                    section_kinds: Sequence[str]) -> dict[str, list[float]]:
    """log p(f | kind) / p(f) for each of ``section_kinds``, counted over labelled sentences (their
    ``kinds`` and ``functions``; "none" and unknown ids left out) with add-one smoothing."""
    index = {f: i for i, f in enumerate(ids)}
    counts = np.ones((len(section_kinds), len(ids)))
    overall = np.ones(len(ids))
    for kind, function in zip(kinds, functions, strict=True):
        if function in index and kind in section_kinds:
            counts[list(section_kinds).index(kind), index[function]] += 1
            overall[index[function]] += 1
    ratio = np.log(counts / counts.sum(1, keepdims=True)) - np.log(overall / overall.sum())
    return {kind: [round(float(v), 4) for v in ratio[row]] for row, kind in enumerate(section_kinds)}


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
                   ids: Sequence[str], role_columns: np.ndarray, alphas: Sequence[float] = ALPHAS,
                   kinds: np.ndarray | None = None, kind_log_ratio: np.ndarray | None = None,
                   betas: Sequence[float] = BETAS, context_probabilities: np.ndarray | None = None,
                   unknown_kind: int = -1, context_weights: Sequence[float] = CONTEXT_WEIGHTS,
                   fit_temperatures: bool = False) -> tuple[RolePrior, dict[str, Any]]:
    """Choose alpha (and, given the sentences' kind indices and a kind table, beta; given the contextual
    head's probabilities, its weight) and the threshold for accuracy on dev sentences with a hand-given
    function (or "none"); ties go to the smaller values. Returns the prior and a record of the grid."""
    grid: dict[str, float] = {}
    best: tuple[float, float, float, float, float] | None = None  # (accuracy, alpha, beta, w, threshold)
    weights = context_weights if context_probabilities is not None else (0.0,)
    for weight in weights:
        for beta in (betas if kinds is not None and kind_log_ratio is not None else (0.0,)):
            for alpha in alphas:
                prior = RolePrior(alpha, 0.0, role_columns, beta, kind_log_ratio, weight, unknown_kind)
                reweighted = prior.apply(function_probabilities, role_probabilities, kinds,
                                         context_probabilities)
                threshold, accuracy = best_threshold(reweighted, ids, gold)
                key = f"alpha {alpha:g}, beta {beta:g}"
                key += f", context {weight:g}" if len(weights) > 1 else ""
                grid[key] = round(accuracy, 4)
                if best is None or accuracy > best[0] + 1e-12:
                    best = (accuracy, alpha, beta, weight, threshold)
    assert best is not None
    accuracy, alpha, beta, weight, threshold = best
    first = f"alpha {alphas[0]:g}, beta 0" + (f", context {weights[0]:g}" if len(weights) > 1 else "")
    record: dict[str, Any] = {"alpha": alpha, "threshold": round(threshold, 4), "sentences": len(gold),
                              "dev_accuracy_alpha0": grid[first], "dev_accuracy": round(accuracy, 4),
                              "dev_accuracy_by_alpha_beta": grid, "beta": beta}
    if context_probabilities is not None:
        record["context_weight"] = weight
    if fit_temperatures:
        fitted = RolePrior(alpha, threshold, role_columns, beta, kind_log_ratio, weight, unknown_kind)
        untempered = fitted.apply(function_probabilities, role_probabilities, kinds, context_probabilities)
        temperature = fit_temperature(untempered, ids, gold)
        shown = tempered(untempered, temperature)
        record.update(temperature=temperature,
                      dev_ece_before=round(_best_function_ece(untempered, ids, gold), 4),
                      dev_ece_after=round(_best_function_ece(shown, ids, gold), 4))
    else:
        temperature = 1.0
    return RolePrior(alpha, threshold, role_columns, beta, kind_log_ratio, weight, unknown_kind,
                     temperature), record


def _best_function_ece(probabilities: np.ndarray, ids: Sequence[str], gold: Sequence[str]) -> float:
    """ECE of the best function's probability against its being right, on sentences with a function."""
    from models.metrics import expected_calibration_error

    rows = [i for i, g in enumerate(gold) if g != NO_FUNCTION]
    best = probabilities[rows].argmax(-1)
    right = [ids[b] == gold[i] for b, i in zip(best, rows, strict=True)]
    return expected_calibration_error(probabilities[rows].max(-1), right)
