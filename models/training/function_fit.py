"""Fit the function head on hand-annotated sentences, over cached pooled vectors (issue 24).

The shipped function head learnt from distant marker labels (precision ~0.85, 8 % of sentences, mostly
formulaic ones). With the annotated corpus (``models/datasets/annotated``) every function has hand
labels on real full-paper sentences, implicit ones included. The encoder stays frozen, so, like the body
head (:mod:`models.training.body_roles`), the head trains on cached pooled vectors in seconds: the MLP and
the class vectors of the normalised-softmax head start from the bundle's and are fine-tuned with
cross-entropy on the sentences that have a function ("none" is not a class: the export fits the
threshold below which a sentence shows none, on the gold dev split). The epoch is chosen on the
annotated corpus's dev papers (never the gold test sets); epoch 0, the head as shipped, competes too.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from core.jobs import JobContext
from core.taxonomy.labels import NO_FUNCTION
from models.training.head_loop import Evaluation, HeadLoopConfig, fit_head, train_only
from models.training.net import RhetoricaNet
from models.vector_cache import FeatureCache


@dataclass
class FunctionFitConfig:
    epochs: int = 30
    lr: float = 5e-4
    batch: int = 64
    weight_decay: float = 0.01
    # Training-time noise on the pooled vectors (share of each vector's norm): the int8 graph's vectors
    # differ from fp32 ones by about this much.
    feature_noise: float = 0.05
    seed: int = 0


@dataclass
class FunctionFitResult:
    best_epoch: int
    best_dev: float
    counts: dict[str, int]
    history: list[dict[str, float]] = field(default_factory=list)
    seconds: float = 0.0


def labelled_pairs(pairs: Sequence[tuple[str, str]], functions: Sequence[str]) -> list[tuple[str, int]]:
    """(text, class index) for the sentences whose function is one of the head's (not "none")."""
    index = {f: i for i, f in enumerate(functions)}
    return [(text, index[f]) for text, f in pairs if f != NO_FUNCTION and f in index]


def head_accuracy(net: RhetoricaNet, pairs: Sequence[tuple[str, int]], cache: FeatureCache) -> float:
    """Top-1 accuracy of the function head on sentences that have a function."""
    assert net.function_head is not None
    if not pairs:
        return 0.0
    net.function_head.eval()
    with torch.no_grad():
        features = torch.from_numpy(cache.of([t for t, _ in pairs]))
        _, logits = net.function_head(features)
    gold = torch.tensor([c for _, c in pairs])
    return float((logits.argmax(-1) == gold).float().mean())


def fit_function_head(net: RhetoricaNet, train: Sequence[tuple[str, str]], dev: Sequence[tuple[str, str]],
                      cache: FeatureCache, cfg: FunctionFitConfig, ctx: JobContext | None = None,
                      fp32_cache: FeatureCache | None = None) -> FunctionFitResult:
    """Fine-tune ``net``'s function head on (text, function id) pairs; everything else stays frozen.
    Keeps the epoch with the best dev accuracy (epoch 0 = as given, so never worse on dev)."""
    head = net.function_head
    if head is None or net.function_config is None:
        raise ValueError("this net has no function head to fit")
    functions = net.function_config.functions
    train_pairs, dev_pairs = labelled_pairs(train, functions), labelled_pairs(dev, functions)
    counts = {"train": len(train_pairs), "dev": len(dev_pairs),
              "train_functions": len({c for _, c in train_pairs}),
              "train_none": sum(1 for _, f in train if f == NO_FUNCTION)}
    texts = [t for t, _ in train_pairs]
    int8 = torch.from_numpy(cache.of(texts))
    fp32 = torch.from_numpy(fp32_cache.of(texts)) if fp32_cache is not None else int8
    labels = torch.tensor([c for _, c in train_pairs])

    def function_head() -> nn.Module:
        train_only(net, head)
        return head

    def loss(trained: nn.Module, batch: list[int], rng: random.Random) -> torch.Tensor:
        chosen = torch.tensor(batch)
        features = (fp32 if rng.random() < 0.5 else int8)[chosen]
        if cfg.feature_noise > 0:
            scale = features.norm(dim=-1, keepdim=True) * cfg.feature_noise / features.shape[-1] ** 0.5
            features = features + torch.randn_like(features) * scale
        _, logits = trained(features)
        return F.cross_entropy(logits, labels[chosen])

    def dev_accuracy(_head: nn.Module) -> Evaluation:
        accuracy = head_accuracy(net, dev_pairs, cache)
        return Evaluation(accuracy, {"dev": round(accuracy, 5)})

    loop = HeadLoopConfig(epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch, weight_decay=cfg.weight_decay,
                          seed=cfg.seed, label="function head ")
    fit = fit_head(function_head, loss, range(len(train_pairs)), loop, evaluate=dev_accuracy, ctx=ctx)
    net.eval()
    assert fit.best is not None
    return FunctionFitResult(fit.best_epoch, fit.best.score, counts, fit.history(loss_digits=5), fit.seconds)


def function_pairs(spec: str) -> list[tuple[str, str]]:
    """(text, function id) pairs of a spec: ``annotated:train`` / ``annotated:dev`` (the hand-annotated
    corpus) or ``jsonl:PATH`` of rows with ``text`` and ``function``."""
    import json
    from pathlib import Path

    from core.errors import DatasetError
    from models.datasets import refuse_test_split

    refuse_test_split(spec, "function-head training data")
    if spec.startswith("annotated:"):
        from models.datasets.annotated_corpus import annotated_sentences

        return [(s.text, s.function) for s in annotated_sentences(spec.split(":", 1)[1])]
    if spec.startswith("jsonl:"):
        rows = [json.loads(line) for line in Path(spec[6:]).read_text(encoding="utf-8").splitlines()
                if line.strip()]
        return [(str(r["text"]), str(r["function"])) for r in rows]
    raise DatasetError(f"function data {spec!r}: expected annotated:SPLIT or jsonl:PATH")
