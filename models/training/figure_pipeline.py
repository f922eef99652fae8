"""``rhetorica train figures``: the figure head, its word-overlap weight and the ranking weights.

1. Figure–mention pairs of every source (``models.datasets.figure_pairs``; the graphical-abstract
   dev set's PDFs left out), split by paper.
2. Content vectors of every caption and paragraph sentence, cached in the work folder.
3. The figure head trained on the train papers, its epoch chosen by mention matching on the dev
   papers (``models.training.figure_head``).
4. The weight of word overlap added to the head's cosine, chosen on the same dev papers.
5. A bundle = the source bundle + ``figures.onnx`` (int8, parity-checked).
6. The ranking weights (``core.figure_fit``) fitted on the twelve hand-labelled papers with the
   new bundle's scorer (the feature set and L2 strength selected by leave-one-paper-out,
   ``models.figure_eval.select_config``), written into its manifest. The test papers are never looked at here:
   ``rhetorica eval figures`` reports on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.figure_fit import LabelledPaper, fit_weights
from core.figure_rank import candidate_figures, figure_features
from core.jobs import JobContext, ensure_context
from models.datasets.figure_gold import gold_papers, gold_pdf_names
from models.datasets.figure_pairs import SOURCES, read_figure_papers
from models.encoder import load_model
from models.figure_eval import FEATURE_SETS, select_config
from models.figure_matching import lexical_scores, matching_set, mention_report
from models.figure_scorer import load_figure_scorer
from models.training.figure_head import (
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

LEXICAL_WEIGHTS = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)


@dataclass
class FigureTraining:
    bundle: Path
    out: Path
    work: Path
    version: str
    command: str
    config: FigureHeadConfig = field(default_factory=FigureHeadConfig)
    threads: int | None = 2


def train_figures(job: FigureTraining, ctx: JobContext | None = None) -> dict[str, Any]:
    """Run steps 1-6 of the module docstring; returns what was measured on the way."""
    ctx = ensure_context(ctx)
    excluded = gold_pdf_names()
    papers = [p for source in SOURCES for p in read_figure_papers(source, exclude_pdfs=excluded)]
    split = split_papers(papers)
    model = load_model(job.bundle, device="cpu", threads=job.threads)
    cache = FeatureCache(job.work / "content.npz", model.model_id)
    sets = {name: encode_set(matching_set(split[name]), model, cache, ctx) for name in ("train", "dev")}
    head, result = train_figure_head(sets["train"], sets["dev"], job.config, ctx)
    text, caption = head_vectors(head, sets["dev"])
    lexical = lexical_scores(sets["dev"].data)
    dev = sets["dev"].data
    by_weight = {w: mention_report(text, caption, dev, lexical=lexical, lexical_weight=w).accuracy_at_1
                 for w in LEXICAL_WEIGHTS}
    lexical_weight = max(LEXICAL_WEIGHTS, key=lambda w: (by_weight[w], -w))
    training = {
        "command": job.command,
        "data": {"sources": list(SOURCES), "excluded_pdfs": sorted(excluded),
                 "papers": {k: len(v) for k, v in split.items()},
                 "mentions": {k: v.data.mention_count for k, v in sets.items()}},
        "head": config_record(job.config, result),
        "lexical_weight_dev_accuracy": {str(k): round(v, 4) for k, v in by_weight.items()},
    }
    parity = add_head_to_bundle(head, job.bundle, job.out, sets["dev"], version=job.version,
                                training=training, lexical_weight=lexical_weight)
    ranker = fit_ranker(job.out, job.command, ctx)
    return {"head": config_record(job.config, result), "lexical_weight": lexical_weight,
            "dev_accuracy_by_lexical_weight": training["lexical_weight_dev_accuracy"], "parity": parity,
            "ranker": ranker}


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
    config, scores = select_config(labelled)
    fitted = fit_weights(labelled, FEATURE_SETS[config.features], config.l2)
    # Only the direction matters to a ranking: scaled to a total of 1 so the score parts read easily.
    total = sum(abs(v) for v in fitted.values()) or 1.0
    weights = {k: round(v / total, 4) for k, v in fitted.items()}
    record = {"fitted_on": f"graphical-abstract dev set ({len(labelled)} hand-labelled papers)",
              "selected": {"features": config.features, "l2": config.l2,
                           "by": "leave-one-paper-out mean of MRR (first choice) and MAP (top 3)",
                           "scores": scores},
              "command": command}
    record_ranker(bundle, weights, record)
    return {"weights": weights, **record}
