"""Train the figure head (the caption–text scorer of issue 14) and add it to a model bundle.

Self-supervised, after Yamamoto et al. (2021): a paragraph that says "Figure N" is a free
training pair for Figure N's caption (``models.datasets.figure_pairs``: OA-STM, PMC JATS, S2ORC,
MedICaT and the shared PDFs; references masked, so a number can never give the answer away).

The encoder stays frozen: every caption and paragraph sentence is encoded once in the bundle's
content view (cached by ``models.vector_cache``), and a group (a caption, a paragraph) is the unit
mean of its sentences' vectors. The head maps a group to a "text" and a "caption" vector, each a
residual low-rank map (``x + up(down(x))``, ``up`` starting at zero, so training starts from the
content view's cosine, the untrained baseline). The loss is InfoNCE from each paragraph to the
captions of a batch of papers: the other figures of the same paper are the hard negatives, the
figures of the other papers the in-batch ones. The epoch kept is the one with the best mention
matching on the dev papers (epoch 0, the untrained map, included). The head is exported to
ONNX, quantised to int8 and parity-checked against torch before it joins the bundle.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from core.errors import ModelError
from core.jobs import JobContext, ensure_context
from models.bundle import read_manifest, verify_bundle, write_manifest
from models.figure_matching import MatchingSet, lexical_scores, mention_report, set_vectors
from models.figure_scorer import FIGURE_GRAPH_KEY, OUTPUTS
from models.training.head_loop import Evaluation, HeadLoopConfig, fit_head
from models.vector_cache import FeatureCache

FIGURE_GRAPH = "figures.onnx"
OPSET = 17


class FigureHead(nn.Module):
    """Two residual low-rank maps of unit content vectors: the text side and the caption side
    (``nonlinear``: a GELU between the down and up halves)."""

    def __init__(self, dim: int = 384, rank: int = 64, dropout: float = 0.1, nonlinear: bool = False) -> None:
        super().__init__()
        self.text_down = nn.Linear(dim, rank, bias=False)
        self.text_up = nn.Linear(rank, dim, bias=False)
        self.caption_down = nn.Linear(dim, rank, bias=False)
        self.caption_up = nn.Linear(rank, dim, bias=False)
        self.dropout = nn.Dropout(dropout)
        self.activation: nn.Module = nn.GELU() if nonlinear else nn.Identity()
        nn.init.zeros_(self.text_up.weight)
        nn.init.zeros_(self.caption_up.weight)

    def side(self, content: torch.Tensor, which: str) -> torch.Tensor:
        down, up = (self.text_down, self.text_up) if which == "text" else (self.caption_down, self.caption_up)
        return F.normalize(content + up(self.dropout(self.activation(down(content)))), dim=-1)

    def forward(self, content: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.side(content, "text"), self.side(content, "caption")


NEGATIVES = ("batch", "paper")
# The word-overlap weights the head's epoch is chosen with (jointly: the best (epoch, weight) on the dev
# papers), since the scorer adds word overlap to the head's cosine.
LEXICAL_WEIGHTS = (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0)


@dataclass
class FigureHeadConfig:
    rank: int = 64
    dropout: float = 0.1
    epochs: int = 30
    lr: float = 2e-3
    weight_decay: float = 0.01
    temperature: float = 0.05
    papers_per_batch: int = 8
    seed: int = 0
    # "batch": a paragraph's softmax runs over the figures of every paper of the batch; "paper": over its
    # own paper's figures only (the hard negatives alone, as mention matching ranks them)
    negatives: str = "batch"
    # word overlap added to the training logits with this weight (its own paper's figures; 0: off), so
    # the head learns what the overlap misses
    lexical_in_loss: float = 0.0
    nonlinear: bool = False


@dataclass
class FigureHeadResult:
    best_epoch: int = 0
    best_dev: float = 0.0
    history: list[dict[str, float]] = field(default_factory=list)
    seconds: float = 0.0
    lexical_weight: float = 0.0  # the word-overlap weight chosen with the epoch


@dataclass
class SetVectors:
    """A matching set with its group vectors (unit content means)."""

    data: MatchingSet
    text: np.ndarray
    caption: np.ndarray


def encode_set(data: MatchingSet, model: Any, cache: FeatureCache, ctx: JobContext | None = None,
               chunk: int = 1024) -> SetVectors:
    """Content vectors of every sentence of ``data`` (cached), then the unit group means."""
    ctx = ensure_context(ctx)
    todo = cache.missing(data.sentences())
    for start in range(0, len(todo), chunk):
        ctx.check()
        part = todo[start : start + chunk]
        cache.add(part, model.embed(part, view="content"))
        cache.save()
        ctx.progress(min(start + chunk, len(todo)), len(todo), "encoding captions and paragraphs")
    text = set_vectors(cache.of, data.text_groups)
    return SetVectors(data, text, set_vectors(cache.of, data.caption_groups))


def head_vectors(head: FigureHead, vectors: SetVectors) -> tuple[np.ndarray, np.ndarray]:
    head.eval()
    with torch.no_grad():
        text = head.side(torch.from_numpy(vectors.text), "text").numpy()
        caption = head.side(torch.from_numpy(vectors.caption), "caption").numpy()
    return text, caption


def dev_accuracy(head: FigureHead, vectors: SetVectors) -> float:
    text, caption = head_vectors(head, vectors)
    return mention_report(text, caption, vectors.data).accuracy_at_1


def dev_accuracy_by_weight(head: FigureHead, vectors: SetVectors, lexical: Mapping[int, np.ndarray],
                           weights: Sequence[float] = LEXICAL_WEIGHTS) -> dict[float, float]:
    """Dev mention matching of the head's cosine plus each word-overlap weight."""
    text, caption = head_vectors(head, vectors)
    return {w: mention_report(text, caption, vectors.data, lexical=lexical, lexical_weight=w).accuracy_at_1
            for w in weights}


def best_weight(by_weight: Mapping[float, float]) -> float:
    """The weight with the best accuracy (ties: the smallest weight)."""
    return max(by_weight, key=lambda w: (by_weight[w], -w))


def _lexical_rows(data: MatchingSet, figures: Mapping[int, list[int]]) -> dict[int, np.ndarray]:
    """Per mention, word overlap against every figure row of its paper (``figures`` order)."""
    scores = lexical_scores(data, kinds=tuple(dict.fromkeys(data.figure_kind)))
    for m, paper in enumerate(data.mention_paper):
        if m in scores and len(scores[m]) != len(figures.get(paper, [])):
            raise ValueError("word-overlap rows do not follow the paper's figure rows")
    return scores


def _paper_rows(data: MatchingSet) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    figures: dict[int, list[int]] = {}
    mentions: dict[int, list[int]] = {}
    for row, paper in enumerate(data.figure_paper):
        figures.setdefault(paper, []).append(row)
    for row, paper in enumerate(data.mention_paper):
        mentions.setdefault(paper, []).append(row)
    return figures, mentions


def train_figure_head(train: SetVectors, dev: SetVectors, cfg: FigureHeadConfig,
                      ctx: JobContext | None = None) -> tuple[FigureHead, FigureHeadResult]:
    """Train a head on ``train``; keep the epoch with the best dev mention matching."""
    if cfg.negatives not in NEGATIVES:
        raise ValueError(f"unknown negatives {cfg.negatives!r}: use one of {', '.join(NEGATIVES)}")
    figures, mentions = _paper_rows(train.data)
    papers = [p for p in mentions if p in figures]
    train_lexical = _lexical_rows(train.data, figures) if cfg.lexical_in_loss else {}
    dev_lexical = lexical_scores(dev.data)
    text_all, caption_all = torch.from_numpy(train.text), torch.from_numpy(train.caption)

    def new_head() -> FigureHead:
        return FigureHead(train.text.shape[1], cfg.rank, cfg.dropout, cfg.nonlinear)

    def loss(head: FigureHead, batch: list[int], _rng: random.Random) -> torch.Tensor:
        """InfoNCE from each mention of the batch's papers to their figures' captions."""
        fig_rows = [r for p in batch for r in figures[p]]
        column = {r: i for i, r in enumerate(fig_rows)}
        men_rows = [r for p in batch for r in mentions[p]]
        target = torch.zeros(len(men_rows), len(fig_rows))
        overlap = torch.zeros(len(men_rows), len(fig_rows))
        for i, r in enumerate(men_rows):
            for positive in train.data.positives[r]:
                target[i, column[positive]] = 1.0
            if r in train_lexical:
                own = figures[train.data.mention_paper[r]]
                overlap[i, [column[c] for c in own]] = torch.from_numpy(train_lexical[r])
        text = head.side(text_all[men_rows], "text")
        caption = head.side(caption_all[fig_rows], "caption")
        logits = text @ caption.T + cfg.lexical_in_loss * overlap
        log_q = F.log_softmax(logits / cfg.temperature, dim=-1)
        # Several positives (a paragraph naming two figures): the probability of any of them.
        return -(torch.logsumexp(log_q.masked_fill(target == 0, -1e9), dim=-1)).mean()

    def dev_matching(head: FigureHead) -> Evaluation:
        """Dev mention matching with the best word-overlap weight (chosen with the epoch)."""
        by_weight = dev_accuracy_by_weight(head, dev, dev_lexical)
        weight = best_weight(by_weight)
        return Evaluation(by_weight[weight], {"dev": round(by_weight[0.0], 4),
                                              "dev_with_overlap": round(by_weight[weight], 4),
                                              "lexical_weight": weight})

    per_batch = 1 if cfg.negatives == "paper" else cfg.papers_per_batch
    loop = HeadLoopConfig(epochs=cfg.epochs, lr=cfg.lr, batch_size=per_batch, weight_decay=cfg.weight_decay,
                          seed=cfg.seed, label="figure head ")
    fit = fit_head(new_head, loss, papers, loop, evaluate=dev_matching, ctx=ctx)
    assert fit.best is not None
    result = FigureHeadResult(fit.best_epoch, fit.best.score, fit.history(loss_digits=4), fit.seconds,
                              fit.best.record["lexical_weight"])
    return fit.head, result


def export_head(head: FigureHead, path: Path) -> None:
    """The fp32 ONNX graph: ``content`` (n, d) -> ``text_vector``, ``caption_vector`` (n, d)."""
    head = head.eval()
    example = F.normalize(torch.randn(3, head.text_down.in_features), dim=-1)
    path.parent.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(head, (example,), str(path), input_names=["content"],
                          output_names=[OUTPUTS["text"], OUTPUTS["caption"]],
                          dynamic_axes={name: {0: "n"} for name in ("content", *OUTPUTS.values())},
                          opset_version=OPSET, do_constant_folding=True, dynamo=False)


def parity(head: FigureHead, graph: Path, vectors: SetVectors) -> dict[str, float]:
    """How closely ``graph`` (int8) follows torch: mean cosine of the outputs, and agreement of
    the top-1 figure in dev mention matching."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    ref_text, ref_caption = head_vectors(head, vectors)
    text = session.run([OUTPUTS["text"]], {"content": vectors.text})[0]
    caption = session.run([OUTPUTS["caption"]], {"content": vectors.caption})[0]
    text /= np.linalg.norm(text, axis=1, keepdims=True)
    caption /= np.linalg.norm(caption, axis=1, keepdims=True)
    cosine = float(np.mean(np.concatenate([(ref_text * text).sum(1), (ref_caption * caption).sum(1)])))
    ref = mention_report(ref_text, ref_caption, vectors.data)
    got = mention_report(text, caption, vectors.data)
    agree = _top1_agreement(ref_text, ref_caption, text, caption, vectors.data)
    return {"mean_cosine": round(cosine, 5), "top1_agreement": round(agree, 4),
            "dev_accuracy_torch": round(ref.accuracy_at_1, 4),
            "dev_accuracy_onnx": round(got.accuracy_at_1, 4)}


def _top1_agreement(t1: np.ndarray, c1: np.ndarray, t2: np.ndarray, c2: np.ndarray,
                    data: MatchingSet) -> float:
    figures, _ = _paper_rows(data)
    same = []
    for m, paper in enumerate(data.mention_paper):
        rows = figures.get(paper, [])
        if len(rows) >= 2:
            same.append(int(np.argmax(c1[rows] @ t1[m])) == int(np.argmax(c2[rows] @ t2[m])))
    return float(np.mean(same)) if same else 1.0


PARITY_GATE = {"mean_cosine": 0.995, "top1_agreement": 0.97}


def add_head_to_bundle(head: FigureHead, source: Path, out: Path, dev: SetVectors, *, version: str,
                       training: dict[str, Any], lexical_weight: float = 0.0,
                       quantize: bool = True) -> dict[str, Any]:
    """Copy bundle ``source`` to ``out`` with the head as ``figures.onnx`` (int8 unless
    ``quantize`` is False), after the parity gate; the manifest gets the new graph, version and
    training record. Returns the parity figures. Raises :class:`ModelError` when parity fails."""
    from models.training.quantize import quantize_int8

    manifest = verify_bundle(source)
    if out.exists() and any(out.iterdir()):
        raise ModelError(f"{out} is not empty: choose a new folder for the bundle")
    out.mkdir(parents=True, exist_ok=True)
    fp32 = out / "figures-fp32.onnx"
    export_head(head, fp32)
    graph = out / FIGURE_GRAPH
    if quantize:
        quantize_int8(fp32, graph)
        fp32.unlink()
    else:
        fp32.replace(graph)
    checked = parity(head, graph, dev)
    failed = [k for k, floor in PARITY_GATE.items() if checked[k] < floor]
    if failed:
        shutil.rmtree(out, ignore_errors=True)
        raise ModelError(f"figure head parity failed ({', '.join(f'{k} {checked[k]}' for k in failed)}): "
                         "the int8 graph does not follow torch closely enough")
    for name in manifest.files:
        if name != FIGURE_GRAPH:  # a source that has a figure head already: the new graph replaces it
            shutil.copy2(source / name, out / name)
    manifest = read_manifest(source)
    manifest.version = version
    manifest.created = ""
    context = dict(manifest.context)
    context["graphs"] = {**dict(context.get("graphs", {})), FIGURE_GRAPH_KEY: FIGURE_GRAPH}
    context["figures"] = {
        "head": {"type": "residual low-rank maps of the content view (text side, caption side)"
                 + (", GELU between the halves" if isinstance(head.activation, nn.GELU) else ""),
                 "rank": head.text_down.out_features, "quantization": "int8" if quantize else "none"},
        "lexical_weight": lexical_weight,
        "parity": checked,
        "training": training,
    }
    manifest.context = context
    write_manifest(out, manifest, (*manifest.files, FIGURE_GRAPH), made=True)
    return checked


def config_record(cfg: FigureHeadConfig, result: FigureHeadResult) -> dict[str, Any]:
    return {"config": asdict(cfg), "best_epoch": result.best_epoch, "best_dev": round(result.best_dev, 4),
            "lexical_weight": result.lexical_weight, "history": result.history,
            "seconds": round(result.seconds, 1)}


def split_papers(papers: Sequence[Any]) -> dict[str, list[Any]]:
    """Papers by their stable split (``FigurePaper.split``)."""
    out: dict[str, list[Any]] = {"train": [], "dev": [], "test": []}
    for paper in papers:
        out[paper.split].append(paper)
    return out


def record_ranker(bundle: Path, weights: dict[str, float], record: dict[str, Any]) -> None:
    """Write the graphical-abstract ranking weights into the bundle's manifest (its files, and
    so its model id, stay the same)."""
    manifest = verify_bundle(bundle)
    context = dict(manifest.context)
    figures = dict(context.get("figures", {}))
    figures["ranker"] = {"weights": weights, **record}
    context["figures"] = figures
    manifest.context = context
    write_manifest(bundle, manifest, tuple(manifest.files))


def carry_figure_head(source: Path, out: Path) -> bool:
    """Copy ``source``'s figure head (graph and manifest record) into bundle ``out``, whose content
    view must be the same (a bundle exported with ``--reuse-sentence-graphs source``). False when
    ``source`` has none."""
    origin = verify_bundle(source)
    graph = dict(origin.context.get("graphs", {})).get(FIGURE_GRAPH_KEY)
    if not graph:
        return False
    manifest = verify_bundle(out)
    shutil.copy2(source / str(graph), out / str(graph))
    context = dict(manifest.context)
    context["graphs"] = {**dict(context.get("graphs", {})), FIGURE_GRAPH_KEY: graph}
    context["figures"] = origin.context.get("figures", {})
    manifest.context = context
    write_manifest(out, manifest, (*manifest.files, str(graph)), made=True)
    return True
