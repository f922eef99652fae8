"""``rhetorica train figures``: the figure head, its word-overlap weight and the ranking weights.

1. Figure–mention pairs of every source (``models.datasets.figure_pairs``: OA-STM, PMC JATS, S2ORC,
   MedICaT, the shared PDFs less the graphical-abstract v1 dev set; ``models.datasets.figure_sources``:
   unarXive's figure markers and the pdfs2 papers' own "Figure N" mentions, never their labels), split
   by paper. No paper of the test split (what ``rhetorica eval figures`` scores) trains or selects: a
   train or dev paper that shares a paper id or a title with a test paper is dropped
   (:func:`held_out_guard`).
2. Content vectors of every caption and paragraph sentence, cached in the work folder.
3. The figure head trained on the train papers; its epoch and the weight of word overlap added to its
   cosine chosen together, by mention matching on the dev papers (``models.training.figure_head``).
4. A bundle = the source bundle + ``figures.onnx`` (int8, parity-checked).
5. The ranking weights (``core.figures.figure_fit``) fitted on the hand-labelled papers with the new bundle's
   scorer (every configuration averaged over bootstrap resamples, ``models.figure_eval.bagged_fit``),
   written into its manifest (``--skip-ranker``: not, e.g. while comparing heads; ``rhetorica eval
   figures --skip-mentions --save-ranker`` fits them later).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.figures.figure_fit import LabelledPaper
from core.figures.figure_rank import candidate_figures, figure_features
from core.jobs import JobContext, ensure_context
from models.datasets.figure_gold import gold_papers, gold_pdf_names
from models.datasets.figure_pairs import FigurePaper
from models.datasets.figure_sources import ALL_SOURCES, read_source_papers
from models.encoder import load_model
from models.figure_eval import ranker_record
from models.figure_matching import lexical_scores, matching_set, mention_report
from models.figure_scorer import load_figure_scorer
from models.training.bundle_out import staged_bundle
from models.training.figure_head import (
    LEXICAL_WEIGHTS,
    FigureHeadConfig,
    add_head_to_bundle,
    config_record,
    encode_set,
    head_vectors,
    record_ranker,
    split_papers,
    train_figure_head,
)
from models.vector_cache import FeatureCache


@dataclass
class FigureTraining:
    bundle: Path
    out: Path
    work: Path
    version: str
    command: str
    config: FigureHeadConfig = field(default_factory=FigureHeadConfig)
    threads: int | None = 2
    sources: tuple[str, ...] = ALL_SOURCES
    fit_ranker: bool = True


def _title_key(title: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", title.lower()))


def held_out_guard(split: dict[str, list[FigurePaper]]) -> dict[str, list[FigurePaper]]:
    """``split`` without the train/dev papers that are a test paper under another source or file: the
    same paper id, or the same title (of 20 characters or more). Returns what was dropped, by split."""
    test = split.get("test", [])
    ids = {p.paper_id for p in test}
    titles = {key for key in (_title_key(p.title) for p in test) if len(key) >= 20}
    dropped: dict[str, list[FigurePaper]] = {}
    for name in ("train", "dev"):
        keep = []
        for paper in split.get(name, []):
            if paper.paper_id in ids or _title_key(paper.title) in titles:
                dropped.setdefault(name, []).append(paper)
            else:
                keep.append(paper)
        split[name] = keep
    return dropped


def read_training_papers(sources: Sequence[str]) -> tuple[dict[str, list[FigurePaper]], dict[str, list[str]]]:
    """The papers of ``sources`` by split (the v1 graphical-abstract PDFs left out) after
    :func:`held_out_guard`, and the ids it dropped."""
    excluded = gold_pdf_names()
    papers = [p for source in sources for p in read_source_papers(source, exclude_pdfs=excluded)]
    split = split_papers(papers)
    dropped = held_out_guard(split)
    return split, {k: [f"{p.source}:{p.paper_id}" for p in v] for k, v in dropped.items()}


def train_figures(job: FigureTraining, ctx: JobContext | None = None) -> dict[str, Any]:
    """Run steps 1-5 of the module docstring; returns what was measured on the way."""
    ctx = ensure_context(ctx)
    split, dropped = read_training_papers(job.sources)
    model = load_model(job.bundle, device="cpu", threads=job.threads)
    cache = FeatureCache(job.work / "content.npz", model.model_id)
    sets = {name: encode_set(matching_set(split[name]), model, cache, ctx) for name in ("train", "dev")}
    head, result = train_figure_head(sets["train"], sets["dev"], job.config, ctx)
    text, caption = head_vectors(head, sets["dev"])
    dev = sets["dev"].data
    lexical = lexical_scores(dev)
    by_weight = {w: mention_report(text, caption, dev, lexical=lexical, lexical_weight=w).accuracy_at_1
                 for w in LEXICAL_WEIGHTS}
    lexical_weight = result.lexical_weight
    training = {
        "command": job.command,
        "data": {"sources": list(job.sources), "excluded_pdfs": sorted(gold_pdf_names()),
                 "dropped_as_test_papers": dropped,
                 "papers": {k: len(v) for k, v in split.items()},
                 "mentions": {k: v.data.mention_count for k, v in sets.items()}},
        "head": config_record(job.config, result),
        "lexical_weight_dev_accuracy": {str(k): round(v, 4) for k, v in by_weight.items()},
    }
    with staged_bundle(job.out) as stage:  # becomes job.out only once the head and the ranker are in
        parity = add_head_to_bundle(head, job.bundle, stage, sets["dev"], version=job.version,
                                    training=training, lexical_weight=lexical_weight)
        out: dict[str, Any] = {"head": config_record(job.config, result), "lexical_weight": lexical_weight,
                               "dev_accuracy_by_lexical_weight": training["lexical_weight_dev_accuracy"],
                               "parity": parity}
        if job.fit_ranker:
            out["ranker"] = fit_ranker(stage, job.command, ctx)
    return out


def fit_ranker(bundle: Path, command: str, ctx: JobContext | None = None) -> dict[str, Any]:
    """Fit the ranking weights on the hand-labelled papers with ``bundle``'s scorer; record them."""
    ctx = ensure_context(ctx)
    model = load_model(bundle, device="cpu")
    scorer = load_figure_scorer(model)
    labelled = []
    for gold, paper in gold_papers():
        ctx.check()
        numbers = [f.number for f in candidate_figures(paper)]
        values = figure_features(paper, scorer).values
        labelled.append(LabelledPaper(gold.pdf, numbers, values, list(gold.top3)))
    weights, record = ranker_record(labelled, "graphical-abstract dev set", command)
    record_ranker(bundle, weights, record)
    return {"weights": weights, **record}
