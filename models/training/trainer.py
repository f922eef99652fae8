"""The training loop: joint partial-label role CE + a metric loss on the sentence embedding.

``train(config, ctx)`` reads the datasets, tokenises them once, and trains
:class:`~models.training.net.RhetoricaNet` with AdamW (separate learning rates for the
encoder and the head, linear warm-up then linear decay), dynamic padding, context dropout,
evaluation on the dev sets (F1-micro in each dataset's own label space), early stopping
and a best-on-dev checkpoint.  Progress and cancellation go through ``core.jobs.JobContext``.
"""

from __future__ import annotations

import copy
import json
import math
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import torch
import torch.nn.functional as F
from tokenizers import Tokenizer

from core.errors import DatasetError, ModelError
from core.jobs import JobContext, ensure_context
from models.datasets import (
    DATASET_LABELS,
    LabelledDocument,
    dataset_key,
    load_spec,
    parse_spec,
    refuse_test_split,
    to_dataset_label,
)
from models.datasets.gold import UNLABELLED
from models.metrics import classification_report
from models.roles import ROLES
from models.training.base import base_model_name, load_encoder, load_tokenizer, pick_device
from models.training.batching import Batch, ContextDropout, EncodedDocument, Piece, collate, encode_documents
from models.training.checkpoint import build_net, load_checkpoint, save_checkpoint
from models.training.distil import TeacherTargets, attach_teacher, distil_loss, read_teacher_targets
from models.training.function_data import (
    annotated_function_documents,
    attach_content_targets,
    attach_functions,
    base_embeddings,
    function_dev_set,
    function_documents_in_context,
    is_function_spec,
    read_function_labels,
)
from models.training.function_labels import read_function_rows
from models.training.losses import make_loss
from models.training.net import SECTION_KINDS, FunctionConfig, HeadConfig, RhetoricaNet
from models.training.samplers import budget_batches, pack_by_budget

if TYPE_CHECKING:
    from models.training.pack import TrainingPack


@dataclass
class TrainConfig:
    """Everything a training run depends on (saved with the checkpoint and in the manifest)."""

    data: list[str] = field(default_factory=lambda: ["csabstruct:train"])
    dev: list[str] = field(default_factory=lambda: ["csabstruct:dev-dedup"])  # no test abstracts
    out: str = "runs/train"
    base: str | None = None  # base model folder; None = packaged all-MiniLM-L6-v2
    seed: int = 13
    epochs: float = 2.0
    max_steps: int = 0  # 0 = no limit beyond epochs
    max_minutes: float = 0.0  # 0 = no wall-clock limit (training stops, best checkpoint kept)
    batch_size: int = 64  # sentences per step
    max_length: int = 64
    lr_encoder: float = 4e-5
    lr_head: float = 1e-3
    weight_decay: float = 0.01
    warmup: float = 0.06  # fraction of the planned steps
    role_loss: str = "partial_ce"
    # > 0: ambiguous allowed sets become soft targets with this weight on the label's primary role
    # (e.g. CSAbstruct result -> 0.8 result + 0.2 conclusion); 0 = pure partial-label loss, which
    # lets a role shared by many sets (conclusion) absorb probability mass.
    primary_weight: float = 0.0
    init: str | None = None  # start from this checkpoint's weights
    init_bundle: str | None = None  # or from a model bundle's weights (models.training.from_bundle)
    label_smoothing: float = 0.0
    metric_loss: str = "supcon"  # "" for none
    metric_weight: float = 0.2
    metric_kwargs: dict[str, Any] = field(default_factory=lambda: {"temperature": 0.1})
    freeze_embeddings: bool = True  # word/position embeddings stay fixed (faster on CPU, little loss)
    head: dict[str, Any] = field(default_factory=dict)  # HeadConfig overrides
    p_single: float = 0.10
    p_window: float = 0.20
    p_hide_section: float = 0.30
    # Per-epoch subsampling: spec -> {dataset label: fraction kept}, e.g. PMC's big "other" class.
    keep_fraction: dict[str, dict[str, float]] = field(default_factory=dict)
    # Label adapters: dataset keys whose own label scheme gets a linear adapter on the model's
    # outputs, trained jointly with full cross-entropy (models.adapters; e.g. "pmc-sents-full").
    adapters: list[str] = field(default_factory=list)
    adapter_weight: float = 0.5
    # Communicative functions (issue 11): distant labels from 'rhetorica data functions' (JSON Lines),
    # a normalised-softmax head on the pooled sentence, and a content view distilled from the base.
    function_data: list[str] = field(default_factory=list)
    function_dev: str = "gold:dev"  # "" = no function score in model selection
    function_weight: float = 1.0
    function_loss: str = "norm_softmax"  # or "norm_softmax+supcon" (supcon on the function embedding)
    function_dim: int = 128
    function_roles: bool = False  # distant function labels also teach the role head (function's role)
    function_context: int = 0  # > 0: each labelled sentence with up to this many neighbours each side
    content_weight: float = 1.0  # distillation: 1 - cos(content view, frozen base embedding)
    # Content fork (0 = none): the top K encoder layers are forked; frozen base copies give the
    # content view exactly (no distillation needed), the lower 6-K layers are frozen.
    content_fork: int = 0
    freeze_encoder: bool = False  # train the heads only (the encoder keeps the starting weights)
    freeze_role_head: bool = False  # the role head keeps the starting weights (e.g. to add functions only)
    # > 0: learning without forgetting. A frozen copy of the starting model (--init / --init-bundle)
    # reads every batch too; on the rows of the role datasets (--data: the abstracts, PMC) the loss
    # adds this weight x KL(starting model || model) of the role probabilities and of each label
    # adapter's, so what the starting model does there is kept while the encoder learns the rest.
    teacher_weight: float = 0.0
    # > 0: distillation from a larger teacher (models.training.distil, session 24): this weight x the
    # cross-entropy to the teacher's role and function probabilities (a 'train teacher-run' output,
    # ``distil``, read with the teacher data it read, ``distil_data``) on every sentence it read.
    distil: str = ""
    distil_data: str = ""
    distil_weight: float = 0.0
    evals_per_epoch: int = 1
    patience: int = 3  # evaluations without dev improvement before stopping
    threads: int = 0  # torch threads; 0 = leave torch's default
    device: str = "auto"
    log_every: int = 10

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class DevResult:
    scores: dict[str, float]  # spec -> F1-micro (functions: "gold:dev#functions" -> top-1 accuracy)
    macro: dict[str, float]  # spec -> F1-macro
    extra: dict[str, float] = field(default_factory=dict)  # reported, not selected on (content cosine)

    @property
    def mean(self) -> float:
        """Model selection score: the mean over dev sets of each set's best head (the role head
        mapped to the set's labels, or its label adapter when it has one and scores higher: a
        lossy role mapping, like PMC's, must not steer selection)."""
        best: dict[str, float] = {}
        for key, value in self.scores.items():
            spec = key.split("#", 1)[0]
            best[spec] = max(best.get(spec, value), value)
        return float(np.mean(list(best.values()))) if best else 0.0


@dataclass
class TrainResult:
    checkpoint: Path
    best_dev: dict[str, float]
    best_step: int
    steps: int
    seconds: float
    history: list[dict[str, Any]]
    trained_section_kinds: list[str]


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _epoch_pieces(corpus: list[EncodedDocument], cfg: TrainConfig, dropout: ContextDropout,
                  rng: random.Random) -> list[Piece]:
    pieces: list[Piece] = []
    for index, doc in enumerate(corpus):
        keep = cfg.keep_fraction.get(doc.source)
        if keep and len(doc.doc) == 1:
            fraction = keep.get(doc.doc.labels[0], 1.0)
            if fraction < 1.0 and rng.random() >= fraction:
                continue
        pieces.extend(dropout.pieces(index, len(doc.doc), rng))
    return pieces


@torch.no_grad()
def predict_documents(net: RhetoricaNet, corpus: list[EncodedDocument], device: torch.device,
                      budget: int = 128) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(role probabilities [n, C], adapter inputs [n, d]: the embeddings, or a fork's normalised
    pooled vectors) per document, whole documents as context."""
    net.eval()
    sizes = [len(d.doc) for d in corpus]
    probs: list[np.ndarray] = [np.zeros((0, len(ROLES)))] * len(corpus)
    embs: list[np.ndarray] = [np.zeros((0, net.hidden))] * len(corpus)
    order = sorted(range(len(corpus)), key=lambda i: max(len(t) for t in corpus[i].token_ids))
    for batch_docs in pack_by_budget(order, sizes, budget):
        batch = collate([Piece(i, 0, sizes[i]) for i in batch_docs], corpus).to(device)
        emb, logits, _, pooled = net.forward_batch_all(batch.input_ids, batch.attention_mask,
                                                       batch.section_kind, batch.doc_lengths)
        emb = net.adapter_input(emb, pooled)
        p = torch.softmax(logits.float(), dim=-1).cpu().numpy()
        e = emb.float().cpu().numpy()
        cursor = 0
        for i in batch_docs:
            probs[i] = p[cursor: cursor + sizes[i]]
            embs[i] = e[cursor: cursor + sizes[i]]
            cursor += sizes[i]
    return probs, embs


@dataclass
class FunctionDev:
    """Gold dev sentences with a function: token ids, function indices, base-model embeddings."""

    name: str
    token_ids: list[list[int]]
    functions: list[int]
    content_target: torch.Tensor | None  # base embeddings (None: not computed, content cosine not reported)


@torch.no_grad()
def evaluate_functions(net: RhetoricaNet, dev: FunctionDev, device: torch.device) -> tuple[float, float]:
    """(function top-1 accuracy, mean cosine of the content view to the base) on ``dev``."""
    from models.encoder import pad_batch

    net.eval()
    hits = 0
    cosine = 0.0
    for start in range(0, len(dev.token_ids), 64):
        ids, mask = pad_batch(dev.token_ids[start: start + 64], 0)
        pooled, content_pooled = net.pooled_views(torch.from_numpy(ids).to(device),
                                                  torch.from_numpy(mask).to(device))
        content, _, logits = net.sentence_outputs(pooled, content_pooled)
        gold = torch.tensor(dev.functions[start: start + 64], device=device)
        hits += int((logits.argmax(-1) == gold).sum())
        if dev.content_target is not None:
            target = dev.content_target[start: start + 64].to(device)
            cosine += float((content * target).sum(-1).sum())
    net.train()
    n = max(1, len(dev.token_ids))
    return hits / n, (cosine / n if dev.content_target is not None else float("nan"))


def evaluate_dev(net: RhetoricaNet, dev: dict[str, list[EncodedDocument]], device: torch.device,
                 function_dev: FunctionDev | None = None) -> DevResult:
    """F1-micro/macro of each dev set in its own label space (predicted role -> dataset label),
    and with ``function_dev`` the function top-1 accuracy (selected on) and content cosine."""
    scores: dict[str, float] = {}
    macro: dict[str, float] = {}
    extra: dict[str, float] = {}
    if function_dev is not None and net.has_functions:
        accuracy, cosine = evaluate_functions(net, function_dev, device)
        scores[f"{function_dev.name}#functions"] = accuracy
        if not math.isnan(cosine):
            extra["content_cosine_to_base"] = cosine
    for spec, corpus in dev.items():
        name, _ = parse_spec(spec)
        probs, embs = predict_documents(net, corpus, device)
        gold = [lab for d in corpus for lab in d.doc.labels]
        pred = [to_dataset_label(name, ROLES[int(k)]) for p in probs for k in p.argmax(-1)]
        scored = [i for i, label in enumerate(gold) if label != UNLABELLED]  # context-only rows: unscored
        gold, pred = [gold[i] for i in scored], [pred[i] for i in scored]
        key = "user" if name.startswith(("jsonl:", "csv:")) else name
        report = classification_report(gold, pred, DATASET_LABELS[key])
        scores[spec], macro[spec] = report.f1_micro, report.f1_macro
        if key in net.adapters:
            adapter = net.adapter(key)
            emb = torch.from_numpy(np.concatenate(embs)).float()
            log_p = torch.log(torch.from_numpy(np.concatenate(probs)).float().clamp(min=1e-12))
            with torch.no_grad():
                ids = adapter(emb.to(device), log_p.to(device)).argmax(-1).cpu().tolist()
            adapted = [adapter.labels[ids[i]] for i in scored]
            report = classification_report(gold, adapted, DATASET_LABELS[key])
            scores[f"{spec}#adapter"], macro[f"{spec}#adapter"] = report.f1_micro, report.f1_macro
    net.train()
    return DevResult(scores, macro, extra)


def adapter_loss(net: RhetoricaNet, emb: torch.Tensor, logits: torch.Tensor, batch: Batch) -> torch.Tensor:
    """Summed cross-entropy of every adapter on its own dataset's rows, divided by the batch size."""
    total = logits.new_zeros(())
    if not net.adapters or batch.datasets is None or batch.native is None:
        return total
    for name, adapter in net.adapter_items():
        rows = torch.tensor([d == name for d in batch.datasets], device=logits.device) & (batch.native >= 0)
        if bool(rows.any()):
            out = adapter(emb[rows], logits[rows], corrected=False)
            total = total + F.cross_entropy(out, batch.native[rows], reduction="sum")
    return total / max(1, logits.shape[0])


def function_and_content_loss(content: torch.Tensor, function_outputs: tuple[torch.Tensor, ...],
                              batch: Batch, cfg: TrainConfig, function_metric: torch.nn.Module | None
                              ) -> torch.Tensor:
    """Function cross-entropy (normalised softmax) on the rows with a function label, optionally a
    supervised-contrastive loss on their function embeddings, and the content distillation
    ``1 - cos(content view, base embedding)`` on every row."""
    function_embedding, function_logits = function_outputs
    total = content.new_zeros(())
    if batch.functions is not None and cfg.function_weight > 0:
        rows = batch.functions >= 0
        if bool(rows.any()):
            gold = batch.functions[rows]
            total = total + cfg.function_weight * F.cross_entropy(function_logits[rows], gold)
            if function_metric is not None and int(rows.sum()) > 1:
                total = total + cfg.function_weight * function_metric(function_embedding[rows], gold)
    if batch.content_target is not None and cfg.content_weight > 0:
        total = total + cfg.content_weight * (1 - (content * batch.content_target).sum(-1)).mean()
    return total


def teacher_loss(teacher: RhetoricaNet, net: RhetoricaNet, batch: Batch, emb: torch.Tensor,
                 logits: torch.Tensor, pooled: torch.Tensor, datasets: set[str]) -> torch.Tensor:
    """Mean KL(teacher || net) of the role probabilities over the rows of ``datasets``, plus, on the
    rows of each label adapter's dataset, the same for that adapter's outputs (zero without rows)."""
    total = logits.new_zeros(())
    if batch.datasets is None:
        return total
    rows = torch.tensor([d in datasets for d in batch.datasets], device=logits.device)
    if not bool(rows.any()):
        return total
    with torch.no_grad():
        t_emb, t_logits, _, t_pooled = teacher.forward_batch_all(
            batch.input_ids, batch.attention_mask, batch.section_kind, batch.doc_lengths)
    total = total + _kl(t_logits[rows], logits[rows])
    for name, adapter in net.adapter_items():
        own = torch.tensor([d == name for d in batch.datasets], device=logits.device)
        if name in datasets and bool(own.any()):
            with torch.no_grad():
                target = teacher.adapter(name)(teacher.adapter_input(t_emb, t_pooled)[own], t_logits[own],
                                               corrected=False)
            out = adapter(net.adapter_input(emb, pooled)[own], logits[own], corrected=False)
            total = total + _kl(target, out)
    return total


def _kl(target_logits: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    """Mean over rows of KL(softmax(target) || softmax(logits))."""
    return F.kl_div(F.log_softmax(logits.float(), dim=-1), F.log_softmax(target_logits.float(), dim=-1),
                    reduction="batchmean", log_target=True)


# (head config, documents, per-sentence function indices of each document, gold dev texts, their functions)
FunctionData = tuple[FunctionConfig | None, list[LabelledDocument], list[list[int]], list[str], list[int]]


def _read_function_data(cfg: TrainConfig) -> FunctionData:
    """The function head's config, the distant-labelled documents and the gold dev sentences
    (read before the model loads, like every dataset)."""
    if not cfg.function_data:
        return None, [], [], [], []
    from core.taxonomy.functions import default_taxonomy

    taxonomy = default_taxonomy()
    ids = list(taxonomy.ids)
    roles = {f.id: f.role for f in taxonomy.functions} if cfg.function_roles else None
    functions: list[list[int]]
    files = [f for f in cfg.function_data if not is_function_spec(f)]
    docs: list[LabelledDocument] = []
    functions = []
    if files and cfg.function_context > 0:
        rows = read_function_rows(files, ids)
        docs, functions = function_documents_in_context(rows, ids, roles, cfg.function_context)
    elif files:
        docs, single = read_function_labels(files, ids, roles)
        functions = [[f] for f in single]
    for spec in (f for f in cfg.function_data if is_function_spec(f)):  # hand labels: roles and functions
        more_docs, more_functions = annotated_function_documents(spec, ids)
        docs += more_docs
        functions += more_functions
    texts: list[str] = []
    dev_functions: list[int] = []
    if cfg.function_dev:
        spec = cfg.function_dev
        split = spec if is_function_spec(spec) else spec.split(":", 1)[1]
        texts, dev_functions = function_dev_set(ids, split)
    config = FunctionConfig(ids, cfg.function_dim, taxonomy=f"{taxonomy.name}@{taxonomy.version}")
    return config, docs, functions, texts, dev_functions


def _optimizer(net: RhetoricaNet, cfg: TrainConfig, extra: list[torch.nn.Parameter]) -> torch.optim.Optimizer:
    decay: list[torch.nn.Parameter] = []
    no_decay: list[torch.nn.Parameter] = []
    head_decay: list[torch.nn.Parameter] = []
    head_no_decay: list[torch.nn.Parameter] = []
    for name, param in net.named_parameters():
        if not param.requires_grad:
            continue
        is_head = not name.startswith("encoder.")
        flat = param.dim() < 2  # biases and LayerNorm weights: no weight decay
        if is_head:
            (head_no_decay if flat else head_decay).append(param)
        else:
            (no_decay if flat else decay).append(param)
    groups = [
        {"params": decay, "lr": cfg.lr_encoder, "weight_decay": cfg.weight_decay},
        {"params": no_decay, "lr": cfg.lr_encoder, "weight_decay": 0.0},
        {"params": head_decay + extra, "lr": cfg.lr_head, "weight_decay": cfg.weight_decay},
        {"params": head_no_decay, "lr": cfg.lr_head, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW([g for g in groups if g["params"]])


def _schedule(step: int, total: int, warmup: int, time_fraction: float = 0.0) -> float:
    """Linear warm-up over ``warmup`` steps, then linear decay to 0 at whichever comes first:
    ``total`` steps or the wall-clock limit (``time_fraction`` = share of it used)."""
    if step < warmup:
        return (step + 1) / max(1, warmup)
    by_steps = (step - warmup) / max(1, total - warmup)
    return max(0.0, 1.0 - max(by_steps, time_fraction))


def load_corpora(specs: list[str], tokenizer: Tokenizer, shared: Path | None = None,
                 documents: dict[str, list[LabelledDocument]] | None = None
                 ) -> dict[str, list[EncodedDocument]]:
    """Tokenised documents per spec (``documents``: already read, keyed by spec)."""
    documents = documents or {}
    return {spec: encode_documents(documents[spec] if spec in documents else load_spec(spec, shared),
                                   tokenizer, spec)
            for spec in specs}


def starting_net(cfg: TrainConfig, functions_cfg: FunctionConfig | None
                 ) -> tuple[RhetoricaNet, Path, set[str]]:
    """The net a run starts from (a fresh one, ``cfg.init``'s checkpoint or ``cfg.init_bundle``'s
    weights, with ``cfg.content_fork``), its base folder, and the section kinds its role head learnt."""
    starting_kinds: set[str] = set()  # section kinds the starting model's role head learnt
    if cfg.init or cfg.init_bundle:
        if cfg.init:
            net, base_dir, init_meta = load_checkpoint(cfg.init, cfg.base)
            starting_kinds = set(init_meta.get("trained_section_kinds") or [])
        else:
            from models.training.from_bundle import net_from_bundle

            net, base_dir = net_from_bundle(str(cfg.init_bundle), cfg.base)
            manifest = json.loads((Path(str(cfg.init_bundle)) / "manifest.json").read_text(encoding="utf-8"))
            starting_kinds = set(manifest.get("context", {}).get("section_kinds_trained") or [])
        if functions_cfg is not None and not net.has_functions:
            net.enable_functions(functions_cfg)
    else:
        net, base_dir = build_net(cfg.base, HeadConfig(**cfg.head), functions_cfg)
    if cfg.content_fork and cfg.content_fork != net.content_fork:
        if net.content_fork:
            raise ModelError(f"--content-fork {cfg.content_fork}: the starting model has a fork of "
                             f"{net.content_fork} layers already")
        trained = bool(cfg.init or cfg.init_bundle)
        try:  # a trained encoder forks at its embeddings, with the base model's layers as the copies
            net.enable_content_fork(cfg.content_fork, load_encoder(base_dir) if trained else None)
        except ValueError as error:
            raise ModelError(f"--content-fork {cfg.content_fork}: {error}") from None
    return net, base_dir, starting_kinds


def read_inputs(cfg: TrainConfig, shared: Path | None
                ) -> tuple[dict[str, list[LabelledDocument]], FunctionData]:
    """Every dataset a run reads (``cfg.data``, ``cfg.dev``, keyed by spec) and its function data."""
    documents = {spec: load_spec(spec, shared) for spec in dict.fromkeys([*cfg.data, *cfg.dev])}
    return documents, _read_function_data(cfg)


def distil_targets(cfg: TrainConfig, functions_cfg: FunctionConfig | None, pack: TrainingPack | None
                   ) -> TeacherTargets | None:
    """The teacher's probabilities a run distils from (``cfg.distil_weight`` > 0): from the pack (which must
    carry them) when the run reads one, else from ``cfg.distil`` / ``cfg.distil_data``; one clear error
    when missing."""
    if cfg.distil_weight <= 0:
        return None
    if pack is not None:
        if pack.teacher is None:
            raise DatasetError(f"{pack.folder}: this pack carries no teacher rows (written without "
                               "--distil), so --distil-weight has nothing to weigh")
        return pack.teacher
    if not (cfg.distil and cfg.distil_data):
        raise DatasetError("--distil-weight needs --distil TEACHER_RUN and --distil-data TEACHER_DATA")
    return read_teacher_targets(Path(cfg.distil), Path(cfg.distil_data),
                                functions_cfg.functions if functions_cfg else [])


def train(cfg: TrainConfig, ctx: JobContext | None = None, shared: Path | None = None,
          pack: TrainingPack | None = None) -> TrainResult:
    """Train, evaluate on the dev sets, keep the best checkpoint (``<out>/best.pt``). With ``pack``
    (models.training.pack) the datasets and the starting net come from it, not from disk here."""
    ctx = ensure_context(ctx)
    for spec in cfg.dev:
        refuse_test_split(spec, "early stopping / model selection (--dev)")
    # Read every dataset before the model loads, so bad input fails at once with one line.
    documents, function_data = ((pack.documents, pack.function_data) if pack is not None
                                else read_inputs(cfg, shared))
    functions_cfg, function_docs, function_ids, dev_texts, dev_functions = function_data
    distilled = distil_targets(cfg, functions_cfg, pack)
    started = time.time()
    seed_everything(cfg.seed)
    if cfg.threads > 0:
        torch.set_num_threads(cfg.threads)
    device = pick_device(cfg.device)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)

    ctx.progress(0, 1, "loading base model and data")
    if pack is not None:
        net, base_dir, starting_kinds = pack.starting_net()
    else:
        net, base_dir, starting_kinds = starting_net(cfg, functions_cfg)
    if cfg.freeze_encoder:  # heads only: the branch keeps the starting model's features
        for param in net.encoder.parameters():
            param.requires_grad = False
    if cfg.freeze_role_head:
        for param in net.head.parameters():
            param.requires_grad = False
    tokenizer = load_tokenizer(base_dir, cfg.max_length)
    corpus = [d for docs in load_corpora(cfg.data, tokenizer, shared, documents).values() for d in docs]
    function_dev = None
    if function_docs:
        function_corpus = encode_documents(function_docs, tokenizer, "functions")
        attach_functions(function_corpus, function_ids)
        corpus += function_corpus
    if net.has_functions and cfg.content_weight > 0 and not net.content_fork:
        ctx.progress(0, 1, "embedding the training sentences with the frozen base model (content targets)")
        base_encoder = load_encoder(base_dir).to(device)
        attach_content_targets(corpus, base_encoder, device)
        if dev_texts:
            dev_ids = [e.ids for e in tokenizer.encode_batch(dev_texts)]
            function_dev = FunctionDev(cfg.function_dev, dev_ids, dev_functions,
                                       base_embeddings(base_encoder, dev_ids, device))
        del base_encoder
    elif net.has_functions and dev_texts:  # a content fork: the content view is the base's already
        function_dev = FunctionDev(cfg.function_dev, [e.ids for e in tokenizer.encode_batch(dev_texts)],
                                   dev_functions, None)
    if distilled is not None:
        taught = attach_teacher(corpus, distilled, len(functions_cfg.functions) if functions_cfg else 0)
        ctx.progress(0, 1, f"the teacher's probabilities on {taught} training sentences")
    dev = load_corpora(cfg.dev, tokenizer, shared, documents)
    if not corpus:
        raise DatasetError(f"no training documents in {', '.join(cfg.data) or '(no --data)'}")
    for key in cfg.adapters:
        name = dataset_key(key)
        if name == "user":
            raise DatasetError(f"--adapter {key}: label adapters are for named datasets "
                               "(a user file's labels are the roles already)")
        keep = {label: f for spec, fractions in cfg.keep_fraction.items() if dataset_key(spec) == name
                for label, f in fractions.items()}
        if name not in net.adapters:  # an adapter read back from a bundle has its shift in its bias
            net.add_adapter(name, list(DATASET_LABELS[name])).set_keep_fractions(keep)
    # Section kinds the role head learnt from: documents with role supervision only.
    # Those the starting model learnt stay learnt (a frozen or continued role head keeps them).
    trained_kinds = sorted({SECTION_KINDS[k] for d in corpus if d.dataset or not bool(d.allowed.all())
                            for k in d.kinds
                            if k < len(SECTION_KINDS)} | starting_kinds)

    if cfg.freeze_embeddings:
        for param in cast(Any, net.encoder).embeddings.parameters():  # a Hugging Face BertModel
            param.requires_grad = False
    teacher: RhetoricaNet | None = None
    if cfg.teacher_weight > 0:
        if not (cfg.init or cfg.init_bundle):
            raise ModelError("--teacher-weight keeps what a starting model does: "
                             "give --init or --init-bundle")
        teacher = copy.deepcopy(net).to(device).eval()
        for param in teacher.parameters():
            param.requires_grad = False
    teacher_datasets = {dataset_key(spec) for spec in cfg.data} if teacher is not None else set()
    net.to(device).train()
    role_loss = make_loss(cfg.role_loss, label_smoothing=cfg.label_smoothing).to(device)
    # With functions the sentence embedding is the content view: no role metric loss may bend it
    # (with a content fork it shapes the branch's pooled vector instead).
    metric_loss = (make_loss(cfg.metric_loss, **cfg.metric_kwargs).to(device)
                   if cfg.metric_loss and (net.content_fork or not net.has_functions) else None)
    function_metric = (make_loss("supcon", temperature=0.1).to(device)
                       if net.has_functions and "supcon" in cfg.function_loss else None)
    extra = list(metric_loss.parameters()) if metric_loss is not None else []
    optimizer = _optimizer(net, cfg, extra)
    base_lrs = [g["lr"] for g in optimizer.param_groups]

    dropout = ContextDropout(cfg.p_single, cfg.p_window, cfg.p_hide_section)
    rng = random.Random(cfg.seed)
    sample_pieces = _epoch_pieces(corpus, cfg, dropout, random.Random(cfg.seed))
    steps_per_epoch = len(budget_batches([p.size for p in sample_pieces], cfg.batch_size, cfg.seed))
    total = max(1, math.ceil(steps_per_epoch * cfg.epochs))
    if cfg.max_steps:
        total = min(total, cfg.max_steps)
    warmup = int(total * cfg.warmup)
    eval_every = max(1, steps_per_epoch // max(1, cfg.evals_per_epoch))
    meta_base = {"config": cfg.to_dict(), "base_model": base_model_name(base_dir),
                 "trained_section_kinds": trained_kinds}
    (out / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2), encoding="utf-8")

    best = -1.0
    best_scores: dict[str, float] = {}
    best_step = 0
    bad_evals = 0
    history: list[dict[str, Any]] = []
    step = 0
    epoch = 0
    running = 0.0
    stop = False
    checkpoint = out / "best.pt"
    step_time = 0.0

    def evaluate_and_save(reason: str) -> None:
        nonlocal best, best_scores, best_step, bad_evals, stop
        selecting = bool(dev) or function_dev is not None
        result = evaluate_dev(net, dev, device, function_dev) if selecting else DevResult({}, {})
        score = result.mean if selecting else -float(step)  # without dev sets keep the last
        entry = {"step": step, "epoch": round(step / steps_per_epoch, 3), "dev_f1_micro": result.scores,
                 "dev_f1_macro": result.macro, **result.extra, "loss": running,
                 "seconds": round(time.time() - started, 1), "reason": reason}
        history.append(entry)
        with (out / "history.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")
        if score > best or not selecting:
            best, best_scores, best_step, bad_evals = score, result.scores, step, 0
            save_checkpoint(checkpoint, net, base_dir, {**meta_base, "step": step, "dev": result.scores,
                                                        "dev_macro": result.macro, "history": history})
        else:
            bad_evals += 1
            if bad_evals >= cfg.patience:
                stop = True
        shown = " ".join(f"{k.split(':')[0]} {v:.4f}" for k, v in result.scores.items())
        ctx.progress(step, total, f"epoch {step / steps_per_epoch:.2f} loss {running:.3f} dev F1 {shown}")

    while step < total and not stop:
        pieces = _epoch_pieces(corpus, cfg, dropout, rng)
        lengths = [max(len(t) for t in corpus[p.doc].token_ids[p.start: p.end]) for p in pieces]
        batches = budget_batches([p.size for p in pieces], cfg.batch_size, cfg.seed + epoch, lengths=lengths)
        epoch += 1
        for batch_pieces in batches:
            ctx.check()
            t0 = time.time()
            batch = collate([pieces[i] for i in batch_pieces], corpus).to(device)
            emb, logits, function_outputs, pooled = net.forward_batch_all(
                batch.input_ids, batch.attention_mask, batch.section_kind, batch.doc_lengths)
            targets = (batch.soft_targets(cfg.primary_weight, logits) if cfg.primary_weight > 0
                       else batch.allowed)
            loss = role_loss(logits, targets)
            if function_outputs:
                loss = loss + function_and_content_loss(emb, function_outputs, batch, cfg, function_metric)
            if net.adapters and cfg.adapter_weight > 0:
                loss = loss + cfg.adapter_weight * adapter_loss(net, net.adapter_input(emb, pooled), logits,
                                                                batch)
            if distilled is not None:
                loss = loss + cfg.distil_weight * distil_loss(logits, function_outputs[1] if function_outputs
                                                              else None, batch)
            if teacher is not None:
                loss = loss + cfg.teacher_weight * teacher_loss(teacher, net, batch, emb, logits, pooled,
                                                                teacher_datasets)
            if metric_loss is not None and cfg.metric_weight > 0:
                # With a content fork the role metric loss shapes the branch, never the content view.
                shaped = F.normalize(pooled, p=2.0, dim=-1) if net.content_fork else emb
                loss = loss + cfg.metric_weight * metric_loss(shaped, batch.allowed)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            used = (time.time() - started) / 60 / cfg.max_minutes if cfg.max_minutes > 0 else 0.0
            factor = _schedule(step, total, warmup, used)
            for group, lr in zip(optimizer.param_groups, base_lrs):
                group["lr"] = lr * factor
            optimizer.step()
            step += 1
            value = float(loss.detach())
            running = value if step == 1 else 0.95 * running + 0.05 * value
            step_time = time.time() - t0 if step == 1 else 0.9 * step_time + 0.1 * (time.time() - t0)
            if step % cfg.log_every == 0 or step == 1:
                ctx.progress(step, total, f"epoch {step / steps_per_epoch:.2f} loss {running:.3f} "
                                          f"({step_time:.2f} s/step)")
            out_of_time = cfg.max_minutes > 0 and (time.time() - started) / 60 >= cfg.max_minutes
            if step % eval_every == 0 or step >= total or out_of_time:
                evaluate_and_save("time limit" if out_of_time else "scheduled")
                if out_of_time:
                    stop = True
            if step >= total or stop:
                break

    if not history or history[-1]["step"] != step:
        evaluate_and_save("end")
    ctx.progress(total, total, f"done: best dev {best_scores} at step {best_step}")
    return TrainResult(checkpoint, best_scores, best_step, step, time.time() - started, history,
                       trained_kinds)
