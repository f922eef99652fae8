"""The "none" threshold of the function head, fitted on the gold dev split before export.

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

from core.labels import NO_FUNCTION
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

    def to_dict(self) -> dict[str, object]:
        return {"threshold": round(self.threshold, 4),
                "dev_accuracy_without": round(self.accuracy_without, 4),
                "dev_accuracy_with": round(self.accuracy_with, 4), "sentences": self.sentences,
                "data": self.data, "method": "max accuracy with 'none' as a class"}


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
    probabilities = []
    for start in range(0, len(token_ids), 64):
        batch, mask = pad_batch(token_ids[start: start + 64], 0)
        pooled = net.pooled(torch.from_numpy(batch), torch.from_numpy(mask))
        logits = net.sentence_outputs(pooled)[2]
        probabilities.append(torch.softmax(logits.float(), dim=-1).numpy())
    probs = np.concatenate(probabilities)
    best = probs.argmax(-1)
    right = np.array([ids[b] == g.function for b, g in zip(best, items, strict=True)])
    gold_none = np.array([g.function == NO_FUNCTION for g in items])
    threshold, without, with_ = best_threshold(probs.max(-1), right, gold_none)
    return FunctionThreshold(threshold, without, with_, len(items), f"gold:{split}")
