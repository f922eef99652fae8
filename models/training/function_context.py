"""Train a contextual function head: each sentence's function read with its whole section (session 14).

The function head (:class:`models.training.net.FunctionHead`) reads one sentence's pooled vector and
nothing around it; the role heads read the section's run of sentences, its kind and each sentence's
place, and that is why they are right far more often. A contextual function head
(:meth:`RhetoricaNet.enable_function_context_head`) has the role head's shape with one output per
function id and runs in the role graph beside the role heads (output ``function_context_logits``). It is
trained, with everything else frozen, on the bundle's own pooled vectors (cached, as ``rhetorica train
body`` does) of the hand-annotated corpus's sentences inside their whole sections
(:func:`models.datasets.annotated_corpus.annotated_sections`): the annotated sentences carry their
function, the others are context only; "none" teaches nothing (the threshold decides it). The epoch is
chosen on the corpus's dev papers, read the same way. How much the runtime trusts it against the function
head is fitted afterwards with the function prior (``rhetorica train function-prior``: ``context_weight``).
"""

from __future__ import annotations

import copy
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from core.jobs import JobContext, ensure_context
from models.training.distil import taught_loss
from models.training.head_loop import Evaluation, HeadLoopConfig, fit_members, train_only
from models.training.net import HeadEnsemble, RhetoricaNet, RoleHead, section_index
from models.vector_cache import FeatureCache


@dataclass
class FunctionWindow:
    """Up to one context window of a section's sentences, each with its function's index (-1: none)."""

    kind: str
    sentences: list[str]
    targets: list[int]
    source: str = ""


@dataclass
class FunctionContextConfig:
    epochs: int = 8
    lr: float = 1e-3
    batch_windows: int = 32
    max_run: int = 64  # sentences per window (the runtime's context window)
    weight_decay: float = 0.01
    feature_noise: float = 0.05  # Gaussian noise on the pooled vectors, a share of their norm
    fp32_share: float = 0.5  # share of batches on the torch fp32 vectors (quantisation-aware)
    seed: int = 0
    # Start from the body head's weights (projection, kind and position tables, context layers; not its
    # role classifier): what it learnt about reading a section carries over to functions.
    init_from_body_head: bool = False
    # Share of training windows read with the kind "other" instead of their own: the parser names a
    # PDF section's kind wrongly about a quarter of the time, so the head should not lean on it alone.
    kind_dropout: float = 0.0
    # Heads trained one after another from seeds seed, seed + 1, …, read as one (their mean
    # log-probabilities, :class:`~models.training.net.HeadEnsemble`): on the annotated dev papers five
    # heads were right 1.5–2 points more often than one (session 21).
    members: int = 1
    # Distillation (session 24): weight of the cross-entropy to a teacher's function probabilities
    # (models.training.teacher), on every sentence of a training window the teacher read — the
    # annotated ones and their context alike. 0: hand labels only.
    teacher_weight: float = 0.0


@dataclass
class FunctionContextResult:
    best_epoch: int  # of the last member trained
    best_dev: float  # of the head as the runtime reads it (all members together)
    counts: dict[str, int] = field(default_factory=dict)
    history: list[dict[str, float]] = field(default_factory=list)
    seconds: float = 0.0


def section_windows(spec: str, function_ids: Sequence[str], size: int = 64,
                    source_weights: Mapping[str, int] | None = None) -> list[FunctionWindow]:
    """``annotated:SPLIT`` (or ``annotated:SPLIT*N``, the windows N times) as windows of whole sections,
    the annotated sentences with their function's index, the rest -1; ``source_weights``: a source's
    windows that many times (e.g. {"pdfs2": 3}: the papers parsed by Rhetorica, as the app reads them).
    Never a test split."""
    from models.datasets.annotated_corpus import annotated_sections
    from models.training.function_data import annotated_split

    spec, _, times = spec.partition("*")
    repeat = int(times) if times.isdigit() and int(times) > 0 else 1
    split = annotated_split(spec, "contextual function head data")
    index = {f: i for i, f in enumerate(function_ids)}
    windows: list[FunctionWindow] = []
    for section in annotated_sections(split):
        targets = [index.get(c.function, -1) if c is not None else -1 for c in section.annotated]
        for start in range(0, len(section.texts), size):
            window = FunctionWindow(section.kind, section.texts[start : start + size],
                                    targets[start : start + size], section.source)
            windows += [window] * max(1, int((source_weights or {}).get(section.source, 1)))
    return windows * repeat


def _batch(windows: Sequence[FunctionWindow], cache: FeatureCache) -> tuple[torch.Tensor, ...]:
    """Padded (pooled [B, n, h], kinds [B, n], lengths [B], key mask [B, n], targets [B, n])."""
    n_max = max(len(w.sentences) for w in windows)
    pooled = torch.zeros(len(windows), n_max, cache.vectors.shape[1])
    kinds = torch.zeros(len(windows), n_max, dtype=torch.long)
    targets = torch.full((len(windows), n_max), -1, dtype=torch.long)
    lengths = torch.tensor([len(w.sentences) for w in windows])
    for b, window in enumerate(windows):
        n = len(window.sentences)
        pooled[b, :n] = torch.from_numpy(cache.of(window.sentences))
        kinds[b, :] = section_index(window.kind)
        targets[b, :n] = torch.tensor(window.targets)
    key_mask = torch.arange(n_max).unsqueeze(0) < lengths.unsqueeze(1)
    return pooled, kinds, lengths, key_mask, targets


def context_accuracy(net: RhetoricaNet, windows: Sequence[FunctionWindow], cache: FeatureCache) -> float:
    """Top-1 accuracy of the contextual head on the windows' sentences that have a function, each window
    fed alone as the runtime feeds a section."""
    head = net.function_context_head
    assert head is not None
    right = total = 0
    head.eval()
    with torch.no_grad():
        for window in windows:
            pooled, kinds, lengths, _, targets = _batch([window], cache)
            predicted = head(pooled, kinds, lengths, None).argmax(-1)[0]
            labelled = targets[0] >= 0
            right += int((predicted[labelled] == targets[0][labelled]).sum())
            total += int(labelled.sum())
    return right / total if total else 0.0


def train_function_context_head(net: RhetoricaNet, train: Sequence[FunctionWindow],
                                dev: Sequence[FunctionWindow], cache: FeatureCache,
                                cfg: FunctionContextConfig, ctx: JobContext | None = None,
                                fp32_cache: FeatureCache | None = None,
                                soft: Mapping[str, np.ndarray] | None = None) -> FunctionContextResult:
    """Train ``net``'s contextual function head (a fresh one when it has none) on cached pooled vectors;
    everything else stays frozen. Keeps the epoch with the best dev accuracy (epoch 0 = as given). With
    ``cfg.members`` > 1, every member starts from the same place (the given head, or a fresh one). With
    ``soft`` (a teacher's function probabilities by sentence text, in this net's function order) and
    ``cfg.teacher_weight`` > 0, the loss adds that weight times the cross-entropy to the teacher's
    probabilities on every window sentence it read."""
    if net.function_config is None:
        raise ValueError("this net has no functions: a contextual function head needs their ids")
    if cfg.members > 1 and isinstance(net.function_context_head, HeadEnsemble):
        raise ValueError("this net's contextual function head is already an ensemble: train members from "
                         "a single head")
    start = copy.deepcopy(net.function_context_head)

    def build(_member: int) -> nn.Module:
        net.function_context_head = copy.deepcopy(start)  # None: a fresh head, initialised from this seed
        if net.function_context_head is None:
            net.enable_function_context_head()
            if cfg.init_from_body_head and isinstance(net.body_head, RoleHead):
                assert net.function_context_head is not None
                shared = {k: v for k, v in net.body_head.state_dict().items()
                          if not k.startswith("classifier.")}
                net.function_context_head.load_state_dict(shared, strict=False)
        assert net.function_context_head is not None
        train_only(net, net.function_context_head)
        return net.function_context_head

    def loss(head: nn.Module, batch: list[FunctionWindow], rng: random.Random) -> torch.Tensor:
        if cfg.kind_dropout > 0:
            batch = [FunctionWindow("other", w.sentences, w.targets, w.source)
                     if rng.random() < cfg.kind_dropout else w for w in batch]
        use_fp32 = fp32_cache is not None and rng.random() < cfg.fp32_share
        pooled, kinds, lengths, key_mask, targets = _batch(batch, fp32_cache if use_fp32 and fp32_cache
                                                           else cache)
        if cfg.feature_noise > 0:
            scale = pooled.norm(dim=-1, keepdim=True) * cfg.feature_noise / pooled.shape[-1] ** 0.5
            pooled = pooled + torch.randn_like(pooled) * scale
        logits = head(pooled, kinds, lengths, key_mask)
        labelled = key_mask & (targets >= 0)
        hard = (F.cross_entropy(logits[labelled], targets[labelled]) if bool(labelled.any())
                else logits.sum() * 0)
        if not distil:
            return hard
        return hard + cfg.teacher_weight * taught_loss(logits, [w.sentences for w in batch], soft, key_mask)

    def evaluate(_head: nn.Module) -> Evaluation:
        accuracy = context_accuracy(net, dev, cache)
        return Evaluation(accuracy, {"dev": round(accuracy, 5)})

    distil = bool(soft) and cfg.teacher_weight > 0
    usable = [w for w in train if any(t >= 0 for t in w.targets)
              or (distil and any(t in (soft or {}) for t in w.sentences))]
    loop = HeadLoopConfig(epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch_windows,
                          weight_decay=cfg.weight_decay, seed=cfg.seed, label="contextual function head ")
    fit = fit_members(build, loss, usable, loop, cfg.members, evaluate=evaluate, ctx=ctx)
    assert fit.last.best is not None
    best = fit.last.best.score
    if cfg.members > 1:
        net.function_context_head = HeadEnsemble(fit.heads)
        best = context_accuracy(net, dev, cache)
    net.eval()
    counts = {"train_windows": len(usable), "train_sentences": sum(len(w.sentences) for w in usable),
              "train_labelled": sum(1 for w in usable for t in w.targets if t >= 0),
              "train_taught": (sum(1 for w in usable for t in w.sentences if t in (soft or {}))
                               if distil else 0),
              "dev_labelled": sum(1 for w in dev for t in w.targets if t >= 0)}
    return FunctionContextResult(fit.last.best_epoch, best, counts, fit.history, fit.seconds)


def train_function_context_checkpoint(bundle: Path, work: Path, data: Sequence[str], dev: Sequence[str],
                                      cfg: FunctionContextConfig, threads: int | None = None,
                                      command: str = "", ctx: JobContext | None = None,
                                      source_weights: Mapping[str, int] | None = None,
                                      teacher: tuple[Path, Path] | None = None
                                      ) -> tuple[Path, FunctionContextResult]:
    """A bundle's net with a contextual function head trained on ``data`` (annotated specs), the epoch
    chosen on ``dev``, saved as ``work/best.pt`` (the training record in its metadata's
    ``function_context``, which the export writes into the manifest). Vectors are cached under ``work``.
    ``teacher``: (teacher data folder, soft.npz) to distil from with ``cfg.teacher_weight``."""
    from models.bundle import read_manifest
    from models.encoder import load_model
    from models.training.body_roles import fill_cache, fill_cache_torch
    from models.training.checkpoint import save_checkpoint
    from models.training.from_bundle import net_from_bundle

    ctx = ensure_context(ctx)
    started = time.monotonic()
    if threads:
        torch.set_num_threads(max(1, threads))
    model = load_model(bundle, device="cpu", threads=threads)
    net, base_dir = net_from_bundle(bundle)
    if net.function_config is None:
        raise ValueError(f"{bundle}: this bundle has no function head")
    ids = list(net.function_config.functions)
    ctx.progress(0, 1, "reading the annotated sections")
    train_windows = [w for spec in data for w in section_windows(spec, ids, cfg.max_run, source_weights)]
    dev_windows = [w for spec in dev for w in section_windows(spec, ids, cfg.max_run)]
    texts = [t for w in [*train_windows, *dev_windows] for t in w.sentences]
    cache = FeatureCache(work / "features.npz", model.model_id)
    fill_cache(cache, model, texts, ctx.child(0.0, 0.4))
    fp32_cache = None
    if cfg.fp32_share > 0:
        fp32_cache = FeatureCache(work / "features-fp32.npz", model.model_id)
        fill_cache_torch(fp32_cache, net, model, [t for w in train_windows for t in w.sentences],
                         ctx.child(0.4, 0.7))
    soft = None
    if teacher is not None:
        from models.training.teacher import read_soft_labels

        soft = read_soft_labels(*teacher, ids, "functions")
    net.function_context_head = None  # always a fresh head
    result = train_function_context_head(net, train_windows, dev_windows, cache, cfg, ctx.child(0.7, 1.0),
                                         fp32_cache, soft)
    manifest = read_manifest(bundle)
    context = manifest.context
    record: dict[str, Any] = {"from_bundle": str(bundle), "model_id": model.model_id, "data": list(data),
                              "source_weights": dict(source_weights or {}),
                              "teacher": [str(p) for p in teacher] if teacher else None,
                              "dev": list(dev), "config": cfg.__dict__, "counts": result.counts,
                              "best_epoch": result.best_epoch, "best_dev_accuracy": round(result.best_dev, 5),
                              "history": result.history, "seconds": round(time.monotonic() - started, 1)}
    main_kinds = sorted(set(context.get("section_kinds_trained", ["abstract"]))
                        - set(dict(context.get("body_head", {})).get("section_kinds", [])))
    body_record = {k: v for k, v in dict(context.get("body_head", {})).items()
                   if k not in {"section_kinds", "note"}}
    checkpoint = work / "best.pt"
    save_checkpoint(checkpoint, net, base_dir, {
        "trained_section_kinds": main_kinds or ["abstract"], "body_head": body_record,
        "function_context": record, "config": {"command": command, "seed": cfg.seed}})
    return checkpoint, result
