"""``rhetorica train body``: add a body-section role head to a bundle (frozen encoder, cached vectors)."""

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
    input_file,
    input_folder,
    output_folder,
    source_weight,
)
from app.commands.lab._teacher_options import add_teacher_options, teacher_paths, teacher_weight


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "body",
        help="Train a role head for full papers' body sections and write a bundle.",
        description="Keep a bundle's encoder, role head (abstracts) and every other part; add a second "
        "role head for the sentences of body sections (introduction ... conclusion, other), trained on "
        "the bundle's own pooled sentence vectors with partial labels from section kinds, distant "
        "function labels and labelled full-text datasets; pick the epoch on gold-papers:dev; export, "
        "quantise, parity-check.",
    )
    parser.add_argument("--bundle", type=input_folder, default=None,
                        help="bundle to start from (default: the shipped model)")
    parser.add_argument("--out", type=output_folder, required=True, help="bundle folder to write")
    parser.add_argument("--work", type=output_folder, default=None,
                        help="checkpoint and vector-cache folder (default runs/body-<time>)")
    parser.add_argument("--source", action="append", default=None, choices=("scirex", "pdfs"),
                        help="full-text corpus (repeatable; default both)")
    parser.add_argument("--paper-share", type=bounded_float(0.0, 1.0), default=1.0,
                        help="share of each corpus's papers to use (chosen by a hash of the paper id)")
    parser.add_argument("--data", action="append", default=[], metavar="SPEC",
                        help="labelled dataset, e.g. pmc-sents-full:dev-fit or annotated:train*3 "
                        "(*N: its runs N times; repeatable)")
    parser.add_argument("--function-data", action="append", default=[], metavar="SPEC",
                        help="also fit the function head on these hand-labelled functions, e.g. "
                        "annotated:train (the epoch is chosen on annotated:dev); the sentence graph is "
                        "then exported anew instead of reused (repeatable)")
    parser.add_argument("--dev-data", action="append", default=[], metavar="SPEC",
                        help="labelled dataset that selects the epoch beside gold-papers:dev, e.g. "
                        "annotated:dev (repeatable; never a test split)")
    parser.add_argument("--data-limit", type=bounded_int(1, 100_000_000), default=None,
                        help="documents drawn from each --data")
    parser.add_argument("--function-labels", type=input_file, default=None,
                        help="distant function labels (rhetorica data functions): their roles label "
                        "body sentences")
    parser.add_argument("--epochs", type=bounded_int(1, 100_000), default=6)
    parser.add_argument("--lr", type=bounded_float(0.0, 10.0), default=1e-3)
    parser.add_argument("--feature-noise", type=bounded_float(0.0, 100.0), default=0.0,
                        help="training noise on the pooled vectors, as a share of their norm")
    parser.add_argument("--fp32-share", type=bounded_float(0.0, 1.0), default=0.5,
                        help="share of batches on the torch fp32 vectors instead of the int8 graph's "
                        "(quantisation-aware; 0 = int8 only)")
    parser.add_argument("--role-weight", type=_role_weight, action="append", default=[], metavar="ROLE=W",
                        help="loss weight of a role (repeatable; others 1), e.g. objective=2 for a rare "
                        "role the head under-calls")
    parser.add_argument("--source-weight", type=source_weight, action="append", default=[],
                        metavar="SOURCE=N", help="an annotated source's sections N times, e.g. pdfs2=3 "
                        "(papers parsed by Rhetorica, as the app reads them; repeatable)")
    parser.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=0)
    parser.add_argument("--members", type=bounded_int(1, 16), default=1,  # net.MAX_MEMBERS (no torch here)
                        help="body heads trained from seeds SEED, SEED+1, …, each from the same start, and "
                        "read as one (the mean of their log-probabilities; default 1)")
    add_teacher_options(parser, "role")
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2)
    parser.add_argument("--parity-data", default="csabstruct:dev-dedup")
    parser.add_argument("--name", default="rhetorica-functions")
    parser.add_argument("--version", default="0.4.0")
    parser.set_defaults(func=run)


def _role_weight(text: str) -> tuple[str, float]:
    """``ROLE=W`` with a known role and a weight in (0, 100]."""
    from core.taxonomy.labels import ROLES

    role, _, weight = text.partition("=")
    try:
        value = float(weight)
    except ValueError:
        value = -1.0
    if role not in ROLES or not 0 < value <= 100:
        raise argparse.ArgumentTypeError(f"expected ROLE=W with a role of {', '.join(ROLES)} and "
                                         f"0 < W <= 100, not {text!r}")
    return role, value


def run(args: argparse.Namespace) -> int:
    from core.fileio import check_text_file

    if args.function_labels is not None:  # checked in blocks before torch loads: UTF-8 text, not binary
        check_text_file(args.function_labels, "function labels (JSON Lines)", max_bytes=4_000_000_000)
    from app.commands._options import log_progress
    from core.jobs import JobContext
    from models.bundle import default_bundle_path
    from models.training.body_roles import BodyConfig, BodyData, train_body_checkpoint
    from models.training.bundle_out import refuse_bundle_out, staged_bundle
    from models.training.pipeline import export_checkpoint

    bundle = args.bundle or default_bundle_path()
    refuse_bundle_out(args.out, sources=[("the bundle you train from", bundle)])
    work = args.work or Path("runs") / time.strftime("body-%Y%m%d-%H%M%S")
    data = BodyData(sources=args.source or ["scirex", "pdfs"], datasets=args.data,
                    function_labels=args.function_labels, paper_share=args.paper_share,
                    dataset_limit=args.data_limit, dev_datasets=args.dev_data,
                    function_datasets=args.function_data, source_weights=dict(args.source_weight))
    cfg = BodyConfig(epochs=args.epochs, lr=args.lr, feature_noise=args.feature_noise,
                     fp32_share=args.fp32_share, seed=args.seed, role_weights=dict(args.role_weight),
                     members=args.members, teacher_weight=teacher_weight(args))
    command = shlex.join(["rhetorica", *sys.argv[1:]])

    checkpoint, result = train_body_checkpoint(Path(bundle), work, data, cfg, args.threads, command,
                                               JobContext(log_progress()), teacher_paths(args))
    print(json.dumps({"checkpoint": str(checkpoint), "best_epoch": result.best_epoch,
                      "best_dev_accuracy": result.best_dev, "history": result.history}, indent=2), flush=True)
    # The encoder did not move: the bundle's sentence graphs ship unchanged, only roles.onnx is new.
    from models.training.figure_head import carry_figure_head

    with staged_bundle(args.out) as stage:  # becomes --out only once the figure head is in too
        manifest = export_checkpoint(checkpoint, stage, parity_data=args.parity_data, name=args.name,
                                     version=args.version, command=command,
                                     # a new function head lives in the sentence graph: export it anew
                                     reuse_sentence_graphs=None if args.function_data else Path(bundle),
                                     ctx=JobContext(log_progress()))
        carry_figure_head(Path(bundle), stage)  # graphical-abstract suggestion stays with the new bundle
    parity = manifest.context.get("parity", {})
    print(json.dumps({"bundle": str(args.out), "version": manifest.version,
                      "parity": {k: parity.get(k) for k in ("fp32", "int8") if k in parity}}, indent=2))
    return 0
