"""Train a body head: role labels for the sentences of full papers' body sections (issue 11).

The shipped role head has only seen abstracts. A body head (:meth:`RhetoricaNet.enable_body_head`)
is a second, equally small role head that labels the sentences of body sections; the role head
keeps abstracts, so every abstract figure stays where it is. Both heads read the same frozen
pooled sentence vectors, so training needs the encoder once per sentence: the vectors come from
the bundle's own ONNX sentence graph (what the app computes) and are cached under ``--out``; the
head then trains on them in minutes on two cores.

Supervision, all distant or noisy (no full-paper gold exists except the hand-labelled yardstick,
which only selects the epoch, from its dev split):

- **Section kinds** (:data:`SECTION_ROLES`): what a section of a kind may hold, written from the
  genre, not fitted to data. A method section's sentences may be method or "other" (debris),
  a related-work section's background, and so on; an introduction excludes only conclusions.
  A partial-label loss (``-log`` of the allowed roles' summed probability) leaves the choice inside
  the set to what the sentence says.
- **Distant function labels** (``rhetorica data functions`` output, precision ~0.85 on a judged
  sample): a body sentence whose marker gave a function takes that function's role alone; it
  overrides the section's set (a "results show that" sentence in a method section is a result).
- **Labelled full-text sentences** from a dataset spec (``pmc-sents-full:dev-fit``: biomedical
  full-text sentences labelled by their section), with that dataset's allowed sets.

Sources: ``scirex`` (CS/ML full texts) and ``pdfs`` (the shared PDFs minus the twelve gold
papers), read by :mod:`models.training.function_corpus`; any labelled dataset spec.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from core.jobs import JobContext, ensure_context
from models.roles import ROLES
from models.training.distil import taught_loss
from models.training.head_loop import Evaluation, HeadLoopConfig, fit_members, train_only
from models.training.losses import PartialLabelCE
from models.training.net import BODY_SECTION_KINDS, HeadEnsemble, RhetoricaNet, section_index
from models.vector_cache import FeatureCache

ALL_ROLES = frozenset(ROLES)

# What a body section of each kind may hold (the genre's conventions, not fitted to any data).
# "other" (extraction debris, acknowledgements) is in no set: every set holding it would let the
# partial-label loss be satisfied by calling everything "other". A section the parser cannot name
# gives no label at all (only its distant labels count).
SECTION_ROLES: dict[str, frozenset[str]] = {
    "introduction": frozenset({"background", "objective", "method", "result"}),
    "related-work": frozenset({"background"}),
    "method": frozenset({"method"}),
    "result": frozenset({"result", "method"}),  # experiment sections describe set-ups too
    "discussion": frozenset({"conclusion", "result", "background"}),
    "conclusion": frozenset({"conclusion", "result", "objective"}),
    "other": frozenset(),
}
CORPUS_SOURCES = ("scirex", "pdfs")


@dataclass
class BodyRun:
    """A run of consecutive sentences of one section (what the runtime feeds the role graph)."""

    doc_id: str
    kind: str
    sentences: list[str]
    allowed: list[frozenset[str]]  # per sentence; the empty set = no label (context only)
    source: str = ""


def read_distant_roles(path: Path) -> dict[tuple[str, str], str]:
    """(doc_id, sentence text) -> role, from a distant function-label file."""
    roles: dict[tuple[str, str], str] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                if row.get("role") in ALL_ROLES:
                    roles[(str(row["doc_id"]), str(row["text"]))] = str(row["role"])
    return roles


def body_kind(kind: str) -> str:
    """The body kind a corpus section kind stands for ("unknown" = a heading the parser cannot map)."""
    return kind if kind in BODY_SECTION_KINDS else "other"


def _keep_paper(doc_id: str, share: float) -> bool:
    return int(hashlib.sha1(doc_id.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF < share


def corpus_runs(source: str, distant: dict[tuple[str, str], str], paper_share: float = 1.0
                ) -> list[BodyRun]:
    """The body section runs of a full-text source (abstracts skipped), with their allowed roles."""
    from models.training.function_corpus import corpus_sentences

    runs: list[BodyRun] = []
    current: BodyRun | None = None
    for item in corpus_sentences(source):
        if item.section_kind == "abstract" or not _keep_paper(item.doc_id, paper_share):
            current = None
            continue
        kind = body_kind(item.section_kind)
        if current is None or current.doc_id != item.doc_id or current.kind != kind:
            current = BodyRun(item.doc_id, kind, [], [], source)
            runs.append(current)
        role = distant.get((item.doc_id, item.text))
        current.sentences.append(item.text)
        current.allowed.append(frozenset({role}) if role else SECTION_ROLES[kind])
    return runs


def dataset_runs(spec: str, limit: int | None = None, seed: int = 0) -> list[BodyRun]:
    """A labelled dataset's documents as body runs. Documents that carry section kinds (the annotated
    corpus) keep them, abstracts left out (the role head labels those); the others become runs of
    kind "other" (a body section the reader cannot name: those datasets say which section a sentence
    came from only through its label). ``spec*N`` repeats the dataset's runs N times (weighting)."""
    from models.datasets import load_spec, refuse_test_split

    spec, _, times = spec.partition("*")
    repeat = int(times) if times.isdigit() and int(times) > 0 else 1
    refuse_test_split(spec, "body-head training data")
    documents = load_spec(spec)
    if limit is not None and len(documents) > limit:
        documents = random.Random(seed).sample(documents, limit)
    runs = []
    for doc in documents:
        kind = body_kind(doc.section_kinds[0]) if doc.section_kinds else "other"
        if doc.section_kinds and doc.section_kinds[0] == "abstract":
            continue
        runs.append(BodyRun(doc.doc_id, kind, list(doc.sentences), list(doc.allowed), spec))
    return runs * repeat


def gold_runs(split: str) -> list[BodyRun]:
    """The hand-labelled gold papers' body sections as the app feeds them (``gold-papers``)."""
    from models.datasets import load_spec

    return [BodyRun(doc.doc_id, body_kind((doc.section_kinds or ["other"])[0]), list(doc.sentences),
                    [frozenset({label}) if label else frozenset() for label in doc.labels], "gold-papers")
            for doc in load_spec(f"gold-papers:{split}")]


def fill_cache(cache: FeatureCache, model: Any, texts: Iterable[str], ctx: JobContext | None = None,
               chunk: int = 2048) -> None:
    """Encode the texts the cache lacks with ``model`` (an ``EncoderModel``: its sentence graph's
    ``pooled`` output), saving after every chunk so an interrupted run resumes."""
    ctx = ensure_context(ctx)
    todo = cache.missing(texts)
    for start in range(0, len(todo), chunk):
        ctx.check()
        part = todo[start : start + chunk]
        (pooled,) = model.run_sentences(model.tokenize(part), ["pooled"])
        cache.add(part, pooled)
        cache.save()
        ctx.progress(min(start + chunk, len(todo)), len(todo), "encoding sentences")


def fill_cache_torch(cache: FeatureCache, net: RhetoricaNet, model: Any, texts: Iterable[str],
                     ctx: JobContext | None = None, chunk: int = 2048, batch: int = 64) -> None:
    """As :func:`fill_cache`, with the torch net's fp32 pooled vectors (tokenised by ``model``):
    the vectors the export's parity check compares the int8 graph with."""
    from models.encoder import pad_batch
    from models.training.net import encode_views

    ctx = ensure_context(ctx)
    todo = sorted(cache.missing(texts), key=len)
    net.eval()
    for start in range(0, len(todo), chunk):
        ctx.check()
        part = todo[start : start + chunk]
        ids = model.tokenize(part)
        out = []
        with torch.no_grad():
            for b in range(0, len(part), batch):
                input_ids, mask = pad_batch(ids[b : b + batch], 0)
                pooled, _ = encode_views(net.encoder, None, torch.from_numpy(input_ids),
                                         torch.from_numpy(mask))
                out.append(pooled.numpy())
        cache.add(part, np.concatenate(out))
        cache.save()
        ctx.progress(min(start + chunk, len(todo)), len(todo), "encoding sentences (torch fp32)")


@dataclass
class BodyConfig:
    epochs: int = 6
    lr: float = 1e-3
    batch_runs: int = 32
    max_run: int = 64  # sentences per training window (the runtime's context window)
    weight_decay: float = 0.01
    # Training-time noise on the pooled vectors, as a share of each vector's norm: the shipped int8
    # sentence graph's vectors differ from fp32 ones by about that much (cosine ~0.99), and a head
    # trained without it flips more labels between the two (the export's parity gate).
    feature_noise: float = 0.0
    # Share of training batches that read the torch fp32 vectors instead of the int8 graph's
    # (quantisation-aware: the head learns to give both the same label; needs ``fp32_cache``).
    fp32_share: float = 0.5
    seed: int = 0
    # Heads trained from seeds seed, seed + 1, …, each from the same start (the bundle's body head, or a
    # copy of its role head), read as one (their mean log-probabilities; models.training.net.HeadEnsemble).
    members: int = 1
    # Loss weight per role (others 1.0): a rare role the head under-calls (objective) counts more.
    role_weights: dict[str, float] = field(default_factory=dict)
    # Distillation (session 24): weight of the cross-entropy to a teacher's role probabilities
    # (models.training.teacher) on every window sentence the teacher read. 0: the labels alone.
    teacher_weight: float = 0.0


@dataclass
class BodyResult:
    best_epoch: int
    best_dev: float
    history: list[dict[str, float]] = field(default_factory=list)
    seconds: float = 0.0


def _windows(runs: Sequence[BodyRun], size: int) -> list[BodyRun]:
    out = []
    for run in runs:
        for start in range(0, len(run.sentences), size):
            out.append(BodyRun(run.doc_id, run.kind, run.sentences[start : start + size],
                               run.allowed[start : start + size], run.source))
    return out


def _batch(runs: Sequence[BodyRun], cache: FeatureCache) -> tuple[torch.Tensor, ...]:
    """Padded (pooled [B, n, h], kinds [B, n], lengths [B], key mask [B, n], allowed [B, n, C])."""
    n_max = max(len(r.sentences) for r in runs)
    hidden = cache.vectors.shape[1]
    pooled = torch.zeros(len(runs), n_max, hidden)
    kinds = torch.zeros(len(runs), n_max, dtype=torch.long)
    allowed = torch.zeros(len(runs), n_max, len(ROLES), dtype=torch.bool)
    lengths = torch.tensor([len(r.sentences) for r in runs])
    for b, run in enumerate(runs):
        n = len(run.sentences)
        pooled[b, :n] = torch.from_numpy(cache.of(run.sentences))
        kinds[b, :] = section_index(run.kind)
        for i, roles in enumerate(run.allowed):
            for role in roles:
                allowed[b, i, ROLES.index(role)] = True
    key_mask = torch.arange(n_max).unsqueeze(0) < lengths.unsqueeze(1)
    return pooled, kinds, lengths, key_mask, allowed


def body_accuracy(net: RhetoricaNet, runs: Sequence[BodyRun], cache: FeatureCache,
                  window: int = 64) -> tuple[float, int]:
    """Accuracy on the labelled sentences of ``runs`` (single-role labels), each run fed in windows
    of ``window`` sentences as the runtime does; (accuracy, labelled sentences)."""
    right = total = 0
    net.eval()
    with torch.no_grad():
        for run in _windows(runs, window):
            pooled, kinds, lengths, _, allowed = _batch([run], cache)
            predicted = net.role_logits(pooled, kinds, lengths, None).argmax(-1)[0]
            labelled = allowed[0].sum(-1) == 1
            right += int(allowed[0][torch.arange(len(run.sentences)), predicted][labelled].sum())
            total += int(labelled.sum())
    return (right / total if total else 0.0), total


def role_batch_loss(net: RhetoricaNet, batch: Sequence[BodyRun], cache: FeatureCache,
                    feature_noise: float = 0.0,
                    role_weights: Mapping[str, float] | None = None,
                    soft: Mapping[str, np.ndarray] | None = None,
                    teacher_weight: float = 0.0) -> torch.Tensor:
    """The partial-label loss of ``net``'s role heads on a batch of runs (their labelled sentences);
    ``feature_noise``: Gaussian noise on the pooled vectors, that share of each vector's norm;
    ``role_weights``: a loss weight per role (a sentence's weight: the mean over its allowed roles);
    ``soft`` (a teacher's role probabilities by text, in :data:`ROLES` order) with ``teacher_weight``:
    plus that weight times the cross-entropy to them on every sentence the teacher read."""
    pooled, kinds, lengths, key_mask, allowed = _batch(batch, cache)
    if feature_noise > 0:
        scale = pooled.norm(dim=-1, keepdim=True) * feature_noise / pooled.shape[-1] ** 0.5
        pooled = pooled + torch.randn_like(pooled) * scale
    logits = net.role_logits(pooled, kinds, lengths, key_mask)
    labelled = key_mask & allowed.any(-1)
    weights = None
    if role_weights:
        weights = torch.tensor([float(role_weights.get(role, 1.0)) for role in ROLES])
    loss = (PartialLabelCE(class_weights=weights)(logits[labelled], allowed[labelled]) if bool(labelled.any())
            else logits.sum() * 0)
    if not soft or teacher_weight <= 0:
        return loss
    return loss + teacher_weight * taught_loss(logits, [r.sentences for r in batch], soft, key_mask)


def train_body_head(net: RhetoricaNet, train_runs: Sequence[BodyRun], dev_runs: Sequence[BodyRun],
                    cache: FeatureCache, cfg: BodyConfig, ctx: JobContext | None = None,
                    fp32_cache: FeatureCache | None = None,
                    soft: Mapping[str, np.ndarray] | None = None) -> BodyResult:
    """Train ``net``'s body head (added as a copy of the role head when missing) on cached pooled
    vectors; everything else stays frozen. Keeps the weights of the epoch with the best dev
    accuracy (epoch 0 = the copy before training, so the result is never worse on dev). ``soft``: a
    teacher's role probabilities by text (:data:`ROLES` order), learnt with ``cfg.teacher_weight``."""

    if cfg.members > 1 and isinstance(net.body_head, HeadEnsemble):
        raise ValueError("this net's body head is already an ensemble: train members from a single head")
    start = copy.deepcopy(net.body_head)

    def body_head(_member: int) -> nn.Module:
        net.body_head = copy.deepcopy(start)  # every member from the same start (None: the role head's copy)
        if net.body_head is None:
            net.enable_body_head()
        assert net.body_head is not None
        train_only(net, net.body_head)
        return net.body_head

    def loss(_head: nn.Module, batch: list[BodyRun], rng: random.Random) -> torch.Tensor:
        use_fp32 = fp32_cache is not None and rng.random() < cfg.fp32_share
        features = fp32_cache if use_fp32 and fp32_cache is not None else cache
        return role_batch_loss(net, batch, features, cfg.feature_noise, cfg.role_weights, soft,
                               cfg.teacher_weight)

    def dev_accuracy(_head: nn.Module) -> Evaluation:
        accuracy, _ = body_accuracy(net, dev_runs, cache)
        return Evaluation(accuracy, {"dev": accuracy})

    distil = bool(soft) and cfg.teacher_weight > 0
    windows = [w for w in _windows(train_runs, cfg.max_run)
               if any(w.allowed) or (distil and any(t in (soft or {}) for t in w.sentences))]
    loop = HeadLoopConfig(epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch_runs,
                          weight_decay=cfg.weight_decay, seed=cfg.seed, label="body head ")
    fit = fit_members(body_head, loss, windows, loop, cfg.members, evaluate=dev_accuracy, ctx=ctx)
    assert fit.last.best is not None
    best = fit.last.best.score
    if cfg.members > 1:
        net.body_head = HeadEnsemble(fit.heads)
        best = body_accuracy(net, dev_runs, cache)[0]
    net.eval()
    return BodyResult(fit.last.best_epoch, best, fit.history, fit.seconds)


def _fit_functions(net: RhetoricaNet, model: Any, data: BodyData, cache: FeatureCache,
                   fp32_cache: FeatureCache | None, seed: int, ctx: JobContext) -> dict[str, Any]:
    """Fit the function head on ``data.function_datasets`` (nothing to do when there are none)."""
    if not data.function_datasets or net.function_head is None:
        return {}
    from models.training.function_fit import FunctionFitConfig, fit_function_head, function_pairs

    train = [p for spec in data.function_datasets for p in function_pairs(spec)]
    dev = [p for spec in data.function_dev for p in function_pairs(spec)]
    texts = [t for t, _ in [*train, *dev]]
    fill_cache(cache, model, texts, ctx.child(0.0, 0.3))
    if fp32_cache is not None:
        fill_cache_torch(fp32_cache, net, model, texts, ctx.child(0.3, 0.5))
    cfg = FunctionFitConfig(seed=seed)
    result = fit_function_head(net, train, dev, cache, cfg, ctx.child(0.5, 1.0), fp32_cache)
    return {"data": data.function_datasets, "dev": data.function_dev, "config": cfg.__dict__,
            "counts": result.counts, "best_epoch": result.best_epoch,
            "best_dev_accuracy": round(result.best_dev, 5), "history": result.history,
            "seconds": round(result.seconds, 1)}


@dataclass
class BodyData:
    """Where a body head's training sentences come from (see the module docstring)."""

    sources: list[str] = field(default_factory=lambda: list(CORPUS_SOURCES))
    datasets: list[str] = field(default_factory=list)  # labelled specs, e.g. pmc-sents-full:dev-fit
    function_labels: Path | None = None  # distant function labels (rhetorica data functions)
    paper_share: float = 1.0  # share of each corpus source's papers used (by a hash of the paper id)
    dataset_limit: int | None = None  # documents drawn from each dataset spec
    dev: str = "dev"  # the gold-papers split that selects the epoch
    dev_datasets: list[str] = field(default_factory=list)  # more labelled specs that select it too
    # Hand-labelled functions (e.g. annotated:train): also fit the function head on them
    # (models.training.function_fit); its epoch is chosen on ``function_dev``.
    function_datasets: list[str] = field(default_factory=list)
    function_dev: list[str] = field(default_factory=lambda: ["annotated:dev"])
    # An annotated source's documents that many times (e.g. {"pdfs2": 3}: papers parsed by Rhetorica).
    source_weights: dict[str, int] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        return {"sources": self.sources, "datasets": self.datasets,
                "function_labels": str(self.function_labels) if self.function_labels else None,
                "paper_share": self.paper_share, "dataset_limit": self.dataset_limit,
                "dev": [f"gold-papers:{self.dev}", *self.dev_datasets],
                "function_data": self.function_datasets,
                "function_dev": self.function_dev if self.function_datasets else [],
                "source_weights": dict(self.source_weights),
                "section_roles": {k: sorted(v) for k, v in SECTION_ROLES.items()}}


def training_runs(data: BodyData, seed: int = 0) -> list[BodyRun]:
    distant = read_distant_roles(data.function_labels) if data.function_labels else {}
    runs: list[BodyRun] = []
    for source in data.sources if data.paper_share > 0 else []:  # share 0: none of their papers, not read
        runs += corpus_runs(source, distant, data.paper_share)
    for spec in data.datasets:
        runs += weighted_runs(dataset_runs(spec, data.dataset_limit, seed), data.source_weights)
    return runs


def weighted_runs(runs: list[BodyRun], source_weights: Mapping[str, int]) -> list[BodyRun]:
    """Each annotated run repeated as often as its source's weight says (others once)."""
    if not source_weights:
        return runs
    from models.datasets.annotated_corpus import document_source

    def times(run: BodyRun) -> int:
        return max(1, int(source_weights.get(document_source(run.doc_id) or "", 1)))

    return [run for run in runs for _ in range(times(run))]


def train_body_checkpoint(bundle: Path, work: Path, data: BodyData, cfg: BodyConfig,
                          threads: int | None = None, command: str = "",
                          ctx: JobContext | None = None, teacher: tuple[Path, Path] | None = None
                          ) -> tuple[Path, BodyResult]:
    """A bundle's net with a body head trained on ``data``, saved as ``work/best.pt`` (export it
    with ``rhetorica export``). Pooled vectors are cached in ``work/features.npz``. ``teacher``: (teacher
    data folder, soft.npz) to distil the roles from with ``cfg.teacher_weight``."""
    from models.encoder import load_model
    from models.training.checkpoint import save_checkpoint
    from models.training.from_bundle import net_from_bundle

    ctx = ensure_context(ctx)
    started = time.monotonic()
    if threads:
        torch.set_num_threads(max(1, threads))
    model = load_model(bundle, device="cpu", threads=threads)
    ctx.progress(0, 1, "reading training sentences")
    train_runs = training_runs(data, cfg.seed)
    dev_runs = gold_runs(data.dev) + [r for spec in data.dev_datasets for r in dataset_runs(spec)]
    counts = {"runs": len(train_runs), "sentences": sum(len(r.sentences) for r in train_runs),
              "labelled": sum(1 for r in train_runs for a in r.allowed if a),
              "single_role": sum(1 for r in train_runs for a in r.allowed if len(a) == 1)}
    ctx.progress(0, 1, f"{counts['sentences']} sentences in {counts['runs']} runs")
    cache = FeatureCache(work / "features.npz", model.model_id)
    texts = [t for r in [*train_runs, *dev_runs] for t in r.sentences]
    fill_cache(cache, model, texts, ctx.child(0.0, 0.4))
    net, base_dir = net_from_bundle(bundle)
    fp32_cache = None
    if cfg.fp32_share > 0:
        fp32_cache = FeatureCache(work / "features-fp32.npz", model.model_id)
        fill_cache_torch(fp32_cache, net, model, [t for r in train_runs for t in r.sentences],
                         ctx.child(0.4, 0.7))
    soft = None
    if teacher is not None:
        from models.training.teacher import read_soft_labels

        soft = read_soft_labels(*teacher, list(ROLES), "roles")
        counts["taught"] = sum(1 for r in train_runs for t in r.sentences if t in soft)
    result = train_body_head(net, train_runs, dev_runs, cache, cfg, ctx.child(0.7, 0.9), fp32_cache, soft)
    functions_record = _fit_functions(net, model, data, cache, fp32_cache, cfg.seed, ctx.child(0.9, 1.0))
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    context = manifest.get("context", {})
    # The role head keeps the kinds it was trained on (others stay tied to "unknown" at export).
    main_kinds = sorted(set(context.get("section_kinds_trained", ["abstract"])) - set(BODY_SECTION_KINDS)
                        - set(context.get("body_head", {}).get("section_kinds", [])))
    record = {"from_bundle": str(bundle), "model_id": model.model_id, "data": data.describe(),
              "config": cfg.__dict__, "counts": counts, "best_epoch": result.best_epoch,
              "teacher": [str(p) for p in teacher] if teacher else None,
              "best_dev_accuracy": round(result.best_dev, 5), "history": result.history,
              "seconds": round(time.monotonic() - started, 1)}
    if functions_record:
        record["function_head"] = functions_record
    checkpoint = work / "best.pt"
    # A contextual function head read back with the bundle stays, with its training record.
    described = dict(dict(context.get("functions", {})).get("context_head", {}))
    function_context = ({k: v for k, v in described.items() if k not in {"output", "graph", "note"}}
                        if net.function_context_head is not None else {})
    save_checkpoint(checkpoint, net, base_dir, {
        "trained_section_kinds": main_kinds or ["abstract"], "body_head": record,
        **({"function_context": function_context} if function_context else {}),
        "config": {"command": command, "data": data.sources + data.datasets,
                   "dev": [f"gold-papers:{data.dev}", *data.dev_datasets], "seed": cfg.seed}})
    return checkpoint, result
