"""The function head's temperature and "none" threshold, fitted on the gold dev split before export.

A normalised-softmax head is overconfident: its logits are a fixed scale times a cosine, and the
distant labels it learnt from are easier than real body sentences (pilot 3 showed a mean best-function
probability of 67 % against 26 % accuracy on gold). One temperature T, the one that minimises the
negative log-likelihood of the gold functions on the dev split, divides the head's scale (Guo et al.
2017's temperature scaling; it never changes which function is best).

Most body sentences do no particular communicative move (36 % of the gold set has no function), but
a softmax always names one. A sentence's function is reported as "none" when its best function's
probability is below a threshold; the threshold is the one that maximises accuracy (with "none" as
a class) on the hand-labelled gold dev split. The test split is never read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from core.taxonomy.labels import NO_FUNCTION
from models.encoder import pad_batch
from models.training.base import load_tokenizer
from models.training.net import RhetoricaNet


@dataclass
class FunctionThreshold:
    threshold: float
    accuracy_without: float  # gold dev accuracy when every sentence gets its best function
    accuracy_with: float
    sentences: int
    data: str
    temperature: float = 1.0  # divides the head's logits (fitted before the threshold)
    nll_before: float = 0.0  # mean NLL of the gold function (sentences that have one), T = 1
    nll_after: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return {"threshold": round(self.threshold, 4),
                "dev_accuracy_without": round(self.accuracy_without, 4),
                "dev_accuracy_with": round(self.accuracy_with, 4), "sentences": self.sentences,
                "data": self.data, "method": "max accuracy with 'none' as a class",
                "temperature": round(self.temperature, 4), "dev_nll_before": round(self.nll_before, 4),
                "dev_nll_after": round(self.nll_after, 4)}


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(-1, keepdims=True))
    return shifted / shifted.sum(-1, keepdims=True)


def fit_temperature(logits: np.ndarray, gold: np.ndarray) -> tuple[float, float, float]:
    """(T, NLL at T = 1, NLL at T): the temperature in [0.25, 20] (log grid) that minimises the mean
    negative log-likelihood of ``gold`` (indices) under softmax(logits / T)."""
    def nll(t: float) -> float:
        p = _softmax(logits / t)[np.arange(len(gold)), gold]
        return float(-np.log(np.maximum(p, 1e-12)).mean())

    if len(gold) == 0:
        return 1.0, 0.0, 0.0
    grid = np.exp(np.linspace(np.log(0.25), np.log(20.0), 121))
    best = min(grid, key=nll)
    return float(best), nll(1.0), nll(float(best))


def best_threshold(best_probability: np.ndarray, best_is_right: np.ndarray, gold_is_none: np.ndarray
                   ) -> tuple[float, float, float]:
    """(threshold, accuracy without, accuracy with): below the threshold a sentence is "none"."""
    def accuracy(threshold: float) -> float:
        none = best_probability < threshold
        return float(np.where(none, gold_is_none, best_is_right).mean())

    candidates = [0.0, *sorted(set(np.round(best_probability, 4).tolist()))]
    scored = [(accuracy(t), -t, t) for t in candidates]
    best = max(scored)
    return best[2], accuracy(0.0), best[0]


@torch.no_grad()
def fit_function_threshold(net: RhetoricaNet, base_dir: Path, max_length: int, split: str = "dev",
                           pdf_dir: Path | None = None) -> FunctionThreshold:
    from core.paths import shared_dir
    from models.datasets import refuse_test_split
    from models.datasets.gold import load_gold

    refuse_test_split(f"gold:{split}", "the function threshold")
    assert net.function_config is not None, "the net has no function head"
    items = load_gold(split, pdf_dir or shared_dir() / "pdfs")
    ids = list(net.function_config.functions)
    tokenizer = load_tokenizer(base_dir, max_length)
    token_ids = [e.ids for e in tokenizer.encode_batch([g.text for g in items])]
    net = net.eval()
    chunks = []
    for start in range(0, len(token_ids), 64):
        batch, mask = pad_batch(token_ids[start: start + 64], 0)
        pooled, content_pooled = net.pooled_views(torch.from_numpy(batch), torch.from_numpy(mask))
        chunks.append(net.sentence_outputs(pooled, content_pooled)[2].float().numpy())
    logits = np.concatenate(chunks)
    index = {f: i for i, f in enumerate(ids)}
    with_function = [n for n, g in enumerate(items) if g.function in index]
    temperature, nll_before, nll_after = fit_temperature(
        logits[with_function], np.array([index[items[n].function] for n in with_function], dtype=int))
    probs = _softmax(logits / temperature)
    best = probs.argmax(-1)
    right = np.array([ids[b] == g.function for b, g in zip(best, items, strict=True)])
    gold_none = np.array([g.function == NO_FUNCTION for g in items])
    threshold, without, with_ = best_threshold(probs.max(-1), right, gold_none)
    return FunctionThreshold(threshold, without, with_, len(items), f"gold:{split}", temperature,
                             nll_before, nll_after)


def apply_temperature(net: RhetoricaNet, temperature: float) -> None:
    """Fold ``temperature`` into the function head's scale (and its config, for the manifest)."""
    assert net.function_head is not None and net.function_config is not None
    net.function_head.scale = net.function_head.scale / temperature
    net.function_config.scale = net.function_head.scale
