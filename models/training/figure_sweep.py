"""Compare figure-head variants on the dev papers in one process (issue 25):
``python -m models.training.figure_sweep --work runs/fig-w --out runs/fig25/sweep.json``.

Each variant is a :class:`FigureHeadConfig` and a set of training sources; each is trained like
``rhetorica train figures`` does (epoch and word-overlap weight chosen together on the dev papers of every
source) and measured on the dev papers: all sources (what it was selected on) and the five sources that
``rhetorica eval figures --split dev`` scores by default. The test papers are never read here. The
papers are read and encoded once (the content vectors cached in ``--work``), so a variant costs seconds.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core.jobs import JobContext
from models.bundle import default_bundle_path
from models.datasets.figure_pairs import SOURCES
from models.datasets.figure_sources import ALL_SOURCES
from models.encoder import load_model
from models.figure_matching import lexical_scores, matching_set, mention_report
from models.training.figure_head import (
    FigureHeadConfig,
    SetVectors,
    encode_set,
    head_vectors,
    train_figure_head,
)
from models.training.figure_pipeline import read_training_papers
from models.vector_cache import FeatureCache

# The shipped head of 0.5.0 (rank 64, lr 5e-4, 20 epochs, in-batch negatives), then one change at a time.
BASE = FigureHeadConfig(rank=64, epochs=20, lr=5e-4)


@dataclass(frozen=True)
class Variant:
    name: str
    config: FigureHeadConfig
    sources: tuple[str, ...] = ALL_SOURCES


VARIANTS = (
    Variant("0.5.0 recipe, 5 old sources", BASE, SOURCES),
    Variant("0.5.0 recipe + unarxive", BASE, (*SOURCES, "unarxive")),
    Variant("0.5.0 recipe + pdfs2", BASE, (*SOURCES, "pdfs2")),
    Variant("0.5.0 recipe, all sources", BASE),
    Variant("own-paper negatives only", replace(BASE, negatives="paper")),
    Variant("word overlap in the loss (4)", replace(BASE, lexical_in_loss=4.0)),
    Variant("word overlap in the loss (4), own-paper negatives", replace(BASE, lexical_in_loss=4.0,
                                                                         negatives="paper")),
    Variant("rank 128", replace(BASE, rank=128)),
    Variant("rank 32", replace(BASE, rank=32)),
    Variant("rank 256, dropout 0.3", replace(BASE, rank=256, dropout=0.3)),
    Variant("40 epochs, lr 2e-4", replace(BASE, epochs=40, lr=2e-4)),
    Variant("lr 2e-3", replace(BASE, lr=2e-3)),
    Variant("temperature 0.1", replace(BASE, temperature=0.1)),
    Variant("temperature 0.02", replace(BASE, temperature=0.02)),
    Variant("GELU between the halves", replace(BASE, nonlinear=True)),
    Variant("weight decay 0.1", replace(BASE, weight_decay=0.1)),
)


def _subset(vectors: SetVectors, sources: tuple[str, ...]) -> SetVectors:
    """The rows of ``vectors`` whose papers come from ``sources``."""
    data = vectors.data
    keep = {i for i, name in enumerate(data.papers) if name.split(":", 1)[0] in sources}
    figure_rows = [r for r, p in enumerate(data.figure_paper) if p in keep]
    mention_rows = [r for r, p in enumerate(data.mention_paper) if p in keep]
    new_row = {r: i for i, r in enumerate(figure_rows)}
    paper_index = {p: i for i, p in enumerate(sorted(keep))}
    sub = type(data)(papers=[data.papers[p] for p in sorted(keep)],
                     caption_groups=[data.caption_groups[r] for r in figure_rows],
                     figure_paper=[paper_index[data.figure_paper[r]] for r in figure_rows],
                     figure_kind=[data.figure_kind[r] for r in figure_rows],
                     text_groups=[data.text_groups[r] for r in mention_rows],
                     mention_paper=[paper_index[data.mention_paper[r]] for r in mention_rows],
                     positives=[[new_row[f] for f in data.positives[r]] for r in mention_rows])
    return SetVectors(sub, vectors.text[mention_rows], vectors.caption[figure_rows])


def _merge(a: SetVectors, b: SetVectors) -> SetVectors:
    """One set of ``a``'s papers then ``b``'s."""
    import numpy as np

    data, other = a.data, b.data
    shift_paper, shift_figure = len(data.papers), len(data.caption_groups)
    merged = type(data)(papers=[*data.papers, *other.papers],
                        caption_groups=[*data.caption_groups, *other.caption_groups],
                        figure_paper=[*data.figure_paper, *(p + shift_paper for p in other.figure_paper)],
                        figure_kind=[*data.figure_kind, *other.figure_kind],
                        text_groups=[*data.text_groups, *other.text_groups],
                        mention_paper=[*data.mention_paper, *(p + shift_paper for p in other.mention_paper)],
                        positives=[*data.positives,
                                   *([f + shift_figure for f in r] for r in other.positives)])
    return SetVectors(merged, np.concatenate([a.text, b.text]), np.concatenate([a.caption, b.caption]))


def _fold_of(paper: str, folds: int) -> int:
    import hashlib

    return int(hashlib.sha1(f"fold:{paper}".encode()).hexdigest()[:8], 16) % folds


def _subset_by_names(vectors: SetVectors, keep: set[str]) -> SetVectors:
    data = vectors.data
    index = [i for i, name in enumerate(data.papers) if name in keep]
    position = {p: k for k, p in enumerate(index)}
    figure_rows = [r for r, p in enumerate(data.figure_paper) if p in position]
    mention_rows = [r for r, p in enumerate(data.mention_paper) if p in position]
    new_row = {r: i for i, r in enumerate(figure_rows)}
    sub = type(data)(papers=[data.papers[p] for p in index],
                     caption_groups=[data.caption_groups[r] for r in figure_rows],
                     figure_paper=[position[data.figure_paper[r]] for r in figure_rows],
                     figure_kind=[data.figure_kind[r] for r in figure_rows],
                     text_groups=[data.text_groups[r] for r in mention_rows],
                     mention_paper=[position[data.mention_paper[r]] for r in mention_rows],
                     positives=[[new_row[f] for f in data.positives[r]] for r in mention_rows])
    return SetVectors(sub, vectors.text[mention_rows], vectors.caption[figure_rows])


def run_folds(work: Path, variants: tuple[Variant, ...], folds: int = 5, bundle: Path | None = None,
              threads: int = 2) -> list[dict[str, Any]]:
    """Each variant trained ``folds`` times on the train + dev papers less one fold (by paper) and
    measured on that fold (the epoch and weight chosen on it too: optimistic alike for every variant);
    the mentions of all folds pooled. A larger, steadier comparison than the dev papers alone."""
    split, _ = read_training_papers(ALL_SOURCES)
    model = load_model(bundle or default_bundle_path(), device="cpu", threads=threads)
    cache = FeatureCache(work / "content.npz", model.model_id)
    ctx = JobContext()
    pool = _merge(*(encode_set(matching_set(split[name]), model, cache, ctx) for name in ("train", "dev")))
    rows = []
    for variant in variants:
        hits = {"all": [0, 0], "five": [0, 0]}
        for fold in range(folds):
            held = {n for n in pool.data.papers if _fold_of(n, folds) == fold}
            rest = {n for n in pool.data.papers if n not in held and n.split(":", 1)[0] in variant.sources}
            train, test = _subset_by_names(pool, rest), _subset_by_names(pool, held)
            head, result = train_figure_head(train, test, variant.config, ctx)
            for name, keep in (("all", ALL_SOURCES), ("five", SOURCES)):
                part = _subset(test, keep)
                if not part.data.papers:
                    continue
                text, caption = head_vectors(head, part)
                report = mention_report(text, caption, part.data, lexical=lexical_scores(part.data),
                                        lexical_weight=result.lexical_weight)
                hits[name][0] += round(report.accuracy_at_1 * report.mentions)
                hits[name][1] += report.mentions
        row = {"variant": variant.name, "folds": folds,
               **{f"cv_{k}": round(v[0] / max(1, v[1]), 4) for k, v in hits.items()},
               **{f"cv_{k}_mentions": v[1] for k, v in hits.items()}}
        rows.append(row)
        print(f"{variant.name:<52} cv(all) {row['cv_all']:.3f} ({row['cv_all_mentions']})  "
              f"cv(5 sources) {row['cv_five']:.3f} ({row['cv_five_mentions']})", flush=True)
    return rows


def run_sweep(work: Path, variants: tuple[Variant, ...] = VARIANTS, bundle: Path | None = None,
              threads: int = 2) -> list[dict[str, Any]]:
    split, dropped = read_training_papers(ALL_SOURCES)
    model = load_model(bundle or default_bundle_path(), device="cpu", threads=threads)
    cache = FeatureCache(work / "content.npz", model.model_id)
    ctx = JobContext()
    full = {name: encode_set(matching_set(split[name]), model, cache, ctx) for name in ("train", "dev")}
    old_dev = _subset(full["dev"], SOURCES)
    old_lexical = lexical_scores(old_dev.data)
    rows = []
    for variant in variants:
        train, dev = _subset(full["train"], variant.sources), full["dev"]
        started = time.monotonic()
        head, result = train_figure_head(train, dev, variant.config, ctx)
        text, caption = head_vectors(head, old_dev)
        old = mention_report(text, caption, old_dev.data, lexical=old_lexical,
                             lexical_weight=result.lexical_weight)
        row = {"variant": variant.name, "train_mentions": train.data.mention_count,
               "best_epoch": result.best_epoch, "lexical_weight": result.lexical_weight,
               "dev_all_sources": round(result.best_dev, 4), "dev_five_sources": round(old.accuracy_at_1, 4),
               "dev_five_sources_mrr": round(old.mrr, 4), "seconds": round(time.monotonic() - started, 1)}
        rows.append(row)
        print(f"{variant.name:<52} epoch {row['best_epoch']:>3}  w {row['lexical_weight']:>4g}  dev(all) "
              f"{row['dev_all_sources']:.3f}  dev(5 sources) {row['dev_five_sources']:.3f}", flush=True)
    if dropped:
        print(f"dropped as test papers: {dropped}")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, required=True,
                        help="vector-cache folder (shared with train figures)")
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    parser.add_argument("--only", default="", help="run only the variants whose name contains one of these "
                                                   "('|'-separated)")
    parser.add_argument("--seeds", type=int, default=1, help="repeat each variant with seeds 0..N-1")
    parser.add_argument("--folds", type=int, default=0,
                        help="cross-validate by paper over the train + dev papers in this many folds instead")
    args = parser.parse_args(argv)
    wanted = [w.strip().lower() for w in args.only.split("|")]
    chosen = tuple(v for v in VARIANTS if any(w in v.name.lower() for w in wanted))
    if args.seeds > 1:
        chosen = tuple(Variant(f"{v.name} (seed {s})", replace(v.config, seed=s), v.sources)
                       for v in chosen for s in range(args.seeds))
    rows = run_folds(args.work, chosen, args.folds) if args.folds else run_sweep(args.work, chosen)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
