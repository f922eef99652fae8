"""``rhetorica train figures``: add the caption–text scorer (figure head) and ranking weights to a bundle."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from app.commands._options import MAX_THREADS, bounded_float, bounded_int, input_folder, output_folder

# The source names (eval figures keeps them, as models.datasets.figure_sources.ALL_SOURCES, not imported
# here: it loads the PDF parser, which "--help" must not pay for; a test checks they agree) and
# models.training.figure_head.NEGATIVES (torch).
from app.commands.lab.eval_figures import ALL_SOURCES
from app.commands.lab.eval_figures import _sources as _sources

NEGATIVES = ("batch", "paper")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "figures",
        help="Train the graphical-abstract scorer (figure head) and ranking weights; write a bundle.",
        description="Keep every graph of a bundle and add figures.onnx: a caption–text scorer trained "
        "self-supervised on paragraphs that mention 'Figure N' and Figure N's caption (OA-STM, PMC JATS, "
        "S2ORC, MedICaT, the shared PDFs less the hand-labelled ones, unarXive's figure markers, the pdfs2 "
        "papers' own mentions), its epoch and word-overlap weight chosen together on the dev papers; "
        "then fit the ranking weights on the hand-labelled graphical-abstract dev set. See "
        "models/training/figure_pipeline.py.",
    )
    parser.add_argument("--bundle", type=input_folder, default=None,
                        help="bundle to start from (default: the shipped model)")
    parser.add_argument("--out", type=output_folder, required=True,
                        help="bundle folder to write (new or empty)")
    parser.add_argument("--work", type=output_folder, default=None,
                        help="vector-cache folder (default runs/figures-<time>)")
    parser.add_argument("--rank", type=bounded_int(1, 4_096), default=64,
                        help="rank of the head's residual maps")
    parser.add_argument("--epochs", type=bounded_int(1, 100_000), default=20)
    parser.add_argument("--lr", type=bounded_float(0.0, 10.0), default=5e-4)
    parser.add_argument("--temperature", type=bounded_float(1e-3, 10.0), default=0.05,
                        help="InfoNCE temperature (default 0.05)")
    parser.add_argument("--dropout", type=bounded_float(0.0, 0.9), default=0.1)
    parser.add_argument("--papers-per-batch", type=bounded_int(1, 1_000), default=8,
                        help="papers whose figures share a softmax (with --negatives batch)")
    parser.add_argument("--negatives", choices=NEGATIVES, default="batch",
                        help="a paragraph's softmax over the figures of the whole batch (default) or of its "
                             "own paper only")
    parser.add_argument("--lexical-in-loss", type=bounded_float(0.0, 100.0), default=0.0, metavar="W",
                        help="add W x word overlap to the training logits (default 0: off)")
    parser.add_argument("--nonlinear", action="store_true", help="a GELU between the head's down and up maps")
    parser.add_argument("--sources", default=",".join(ALL_SOURCES), type=_sources, metavar="S,S",
                        help=f"figure-pair sources, comma-separated (default all: {','.join(ALL_SOURCES)})")
    parser.add_argument("--skip-ranker", action="store_true",
                        help="do not fit the ranking weights (fit them later: rhetorica eval figures "
                             "--skip-mentions --save-ranker --model BUNDLE)")
    parser.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=0)
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2)
    parser.add_argument("--version", default="0.5.0")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.commands._options import log_progress
    from core.jobs import JobContext
    from models.bundle import default_bundle_path
    from models.training.bundle_out import refuse_bundle_out
    from models.training.figure_head import FigureHeadConfig
    from models.training.figure_pipeline import FigureTraining, train_figures

    bundle = args.bundle or default_bundle_path()
    refuse_bundle_out(args.out, sources=[("the bundle you train from", bundle)])  # before any work
    job = FigureTraining(
        bundle=bundle, out=args.out,
        work=args.work or Path("runs") / time.strftime("figures-%Y%m%d-%H%M%S"), version=args.version,
        command=shlex.join(["rhetorica", *sys.argv[1:]]),
        config=FigureHeadConfig(rank=args.rank, epochs=args.epochs, lr=args.lr, seed=args.seed,
                                temperature=args.temperature, dropout=args.dropout,
                                papers_per_batch=args.papers_per_batch, negatives=args.negatives,
                                lexical_in_loss=args.lexical_in_loss, nonlinear=args.nonlinear),
        threads=args.threads, sources=args.sources, fit_ranker=not args.skip_ranker)
    result = train_figures(job, JobContext(log_progress(every=5.0)))
    print(json.dumps({"bundle": str(args.out), **result}, indent=2))
    return 0
