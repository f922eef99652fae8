"""Per-class logit bias fitted on the dev sets (folded into the role classifier before export).

Training subsamples some classes (e.g. PMC-Sents-FULL's large "other" class) and mixes datasets with
different class priors, so the raw arg-max is biased.  We fit one additive bias per role, by
coordinate ascent on the mean F1-micro of the dev sets (each in its own label space), and add it to
the classifier's bias.  Only dev data is used; the test splits stay untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from models.datasets import DATASET_LABELS, parse_spec, to_dataset_label
from models.roles import ROLES
from models.training.base import load_tokenizer
from models.training.net import RhetoricaNet


@dataclass
class DevLogits:
    spec: str
    log_probs: np.ndarray  # [n, len(ROLES)]
    gold: np.ndarray  # [n] dataset-label indices
    role_to_label: np.ndarray  # [len(ROLES)] dataset-label index of each role


@dataclass
class Calibration:
    bias: list[float]  # per role, in ROLES order
    before: dict[str, float]  # spec -> dev F1-micro without the bias
    after: dict[str, float]  # spec -> dev F1-micro with it

    def to_dict(self) -> dict[str, object]:
        return {"bias": dict(zip(ROLES, [round(b, 3) for b in self.bias])),
                "dev_f1_micro_before": self.before, "dev_f1_micro_after": self.after,
                "method": "per-role logit bias, coordinate ascent on mean dev F1-micro"}


def dev_logits(net: RhetoricaNet, specs: list[str], base_dir: Path, max_length: int,
               shared: Path | None = None) -> list[DevLogits]:
    from models.training.trainer import load_corpora, predict_documents

    tokenizer = load_tokenizer(base_dir, max_length)
    out = []
    for spec, corpus in load_corpora(specs, tokenizer, shared).items():
        name, _ = parse_spec(spec)
        key = "user" if name.startswith(("jsonl:", "csv:")) else name
        labels = DATASET_LABELS[key]
        probs, _ = predict_documents(net, corpus, torch.device("cpu"))
        # Sentences read only as context (a gold paper's or the annotated corpus's unlabelled ones) carry
        # no label: they are read with their section and never scored.
        flat = [lab for d in corpus for lab in d.doc.labels]
        scored = np.array([lab in labels for lab in flat], dtype=bool)
        gold = np.array([labels.index(lab) for lab in flat if lab in labels])
        mapping = np.array([labels.index(to_dataset_label(name, role)) for role in ROLES])
        out.append(DevLogits(spec, np.log(np.concatenate(probs) + 1e-12)[scored], gold, mapping))
    return out


def _scores(items: list[DevLogits], bias: np.ndarray) -> dict[str, float]:
    return {it.spec: float((it.role_to_label[(it.log_probs + bias).argmax(-1)] == it.gold).mean())
            for it in items}


def tied_roles(items: list[DevLogits]) -> list[list[int]]:
    """Groups of roles that every dev set maps to the same label (e.g. result and conclusion on
    CSAbstruct alone): the dev sets cannot tell them apart, so they share one bias and their
    relative balance stays as trained."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for role in range(len(ROLES)):
        groups.setdefault(tuple(int(it.role_to_label[role]) for it in items), []).append(role)
    return list(groups.values())


def fit_bias(items: list[DevLogits], rounds: int = 3, span: float = 3.0, step: float = 0.1) -> Calibration:
    """Coordinate ascent over one bias per group of :func:`tied_roles` (ties keep the bias nearer 0)."""
    bias = np.zeros(len(ROLES))
    before = _scores(items, bias)
    grid = np.round(np.arange(-span, span + step / 2, step), 4)
    grid = grid[np.argsort(np.abs(grid), kind="stable")]
    best = float(np.mean(list(before.values())))
    for _ in range(rounds):
        changed = False
        for group in tied_roles(items):
            for value in grid:
                trial = bias.copy()
                trial[group] = value
                score = float(np.mean(list(_scores(items, trial).values())))
                if score > best + 1e-9:
                    best, bias, changed = score, trial, True
        if not changed:
            break
    return Calibration([float(b) for b in bias], before, _scores(items, bias))


def apply_bias(net: RhetoricaNet, bias: list[float]) -> None:
    """Add ``bias`` to the role logits; label adapters (which read centred role logits) get the
    opposite shift folded into their own bias, so their outputs do not change."""
    with torch.no_grad():
        shift = torch.tensor(bias, dtype=net.head.classifier.bias.dtype)
        net.head.classifier.bias.add_(shift)
        for _, adapter in net.adapter_items():
            roles = adapter.linear.weight[:, -shift.numel():]
            adapter.linear.bias.sub_(roles @ (shift - shift.mean()))
