"""``rhetorica train function-context``: add a contextual function head to a bundle (frozen encoder, cached
vectors; models/training/function_context.py)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from app.commands._options import (
    MAX_THREADS,
    bounded_float,
    bounded_int,
    input_folder,
    output_folder,
    source_weight,
)
from app.commands.lab._teacher_options import add_teacher_options, teacher_paths, teacher_weight


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "function-context",
        help="Train a contextual function head (functions read with their section) and write a bundle.",
        description="Keep a bundle's encoder, role heads, function head and every other part; add a head "
        "of the role head's shape that gives each sentence's function read with its whole section, "
        "trained on the bundle's own pooled vectors of the hand-annotated corpus's sections; pick the "
        "epoch on annotated:dev; export (only the role graph is new), quantise, parity-check. Then run "
        "calibrate-roles and function-prior on the new bundle (function-prior fits how much the runtime "
        "trusts the new head).")
    parser.add_argument("--bundle", type=input_folder, default=None,
                        help="bundle to start from (default: the shipped model)")
    parser.add_argument("--out", type=output_folder, required=True, help="bundle folder to write")
    parser.add_argument("--work", type=output_folder, default=None,
                        help="checkpoint and vector-cache folder (default runs/function-context-<time>)")
    parser.add_argument("--data", action="append", default=None, metavar="SPEC",
                        help="annotated split read as whole sections, e.g. annotated:train or "
                        "annotated:train*2 (repeatable; default annotated:train)")
    parser.add_argument("--dev", action="append", default=None, metavar="SPEC",
                        help="annotated split that selects the epoch (default annotated:dev; never a test "
                        "split)")
    parser.add_argument("--epochs", type=bounded_int(1, 100_000), default=8)
    parser.add_argument("--lr", type=bounded_float(0.0, 10.0), default=1e-3)
    parser.add_argument("--feature-noise", type=bounded_float(0.0, 100.0), default=0.05,
                        help="training noise on the pooled vectors, as a share of their norm")
    parser.add_argument("--fp32-share", type=bounded_float(0.0, 1.0), default=0.5,
                        help="share of batches on the torch fp32 vectors instead of the int8 graph's")
    parser.add_argument("--init-from-body-head", action="store_true",
                        help="start from the body head's weights (all but its role classifier) instead of a "
                        "random head")
    parser.add_argument("--kind-dropout", type=bounded_float(0.0, 1.0), default=0.0,
                        help="share of training windows read with the section kind 'other' (the parser's "
                        "kinds are often wrong on unseen layouts)")
    parser.add_argument("--source-weight", type=source_weight, action="append", default=[],
                        metavar="SOURCE=N", help="a corpus source's sections N times, e.g. pdfs2=3 (papers "
                        "parsed by Rhetorica, as the app reads them; repeatable)")
    parser.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=0)
    parser.add_argument("--members", type=bounded_int(1, 16), default=1,  # net.MAX_MEMBERS (no torch here)
                        help="heads trained from seeds SEED, SEED+1, … and read as one (the mean of their "
                        "log-probabilities; default 1)")
    add_teacher_options(parser, "function")
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2)
    parser.add_argument("--parity-data", default="csabstruct:dev-dedup")
    parser.add_argument("--name", default="rhetorica-functions")
    parser.add_argument("--version", required=True)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.commands._options import log_progress
    from core.jobs import JobContext
    from models.bundle import default_bundle_path
    from models.training.bundle_out import refuse_bundle_out, staged_bundle
    from models.training.figure_head import carry_figure_head
    from models.training.function_context import FunctionContextConfig, train_function_context_checkpoint
    from models.training.pipeline import export_checkpoint

    bundle = Path(args.bundle or default_bundle_path())
    refuse_bundle_out(args.out, sources=[("the bundle you train from", bundle)])
    work = args.work or Path("runs") / time.strftime("function-context-%Y%m%d-%H%M%S")
    cfg = FunctionContextConfig(epochs=args.epochs, lr=args.lr, feature_noise=args.feature_noise,
                                fp32_share=args.fp32_share, seed=args.seed,
                                init_from_body_head=args.init_from_body_head, kind_dropout=args.kind_dropout,
                                members=args.members,
                                teacher_weight=teacher_weight(args))
    teacher = teacher_paths(args)
    command = shlex.join(["rhetorica", *sys.argv[1:]])
    checkpoint, result = train_function_context_checkpoint(
        bundle, work, args.data or ["annotated:train"], args.dev or ["annotated:dev"], cfg, args.threads,
        command, JobContext(log_progress()), dict(args.source_weight), teacher)
    print(json.dumps({"checkpoint": str(checkpoint), "best_epoch": result.best_epoch,
                      "best_dev_accuracy": result.best_dev, "counts": result.counts,
                      "history": result.history}, indent=2), flush=True)
    # The encoder and the function head did not move: the sentence graphs ship unchanged.
    with staged_bundle(args.out) as stage:  # becomes --out only once the figure head is in too
        manifest = export_checkpoint(checkpoint, stage, parity_data=args.parity_data, name=args.name,
                                     version=args.version, command=command, reuse_sentence_graphs=bundle,
                                     ctx=JobContext(log_progress()))
        carry_figure_head(bundle, stage)  # graphical-abstract suggestion stays with the new bundle
    parity = manifest.context.get("parity", {})
    print(json.dumps({"bundle": str(args.out), "version": manifest.version,
                      "parity": {k: parity.get(k) for k in ("fp32", "int8") if k in parity}}, indent=2))
    return 0
