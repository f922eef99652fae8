"""``rhetorica train roles``: train the encoder + role head, export, quantise, parity-check, bundle."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from app.commands._options import (
    MAX_THREADS,
    as_text,
    bounded_float,
    bounded_int,
    input_file,
    input_folder,
    output_folder,
)

if TYPE_CHECKING:  # pragma: no cover
    from core.jobs import Progress

LABELS_LIMIT = 4_000_000_000  # bytes


def _keep(value: str) -> tuple[str, str, float]:
    """``SPEC:LABEL=FRACTION`` e.g. ``pmc-sents-full:dev-fit:other=0.35``."""
    try:
        left, fraction = value.rsplit("=", 1)
        spec, label = left.rsplit(":", 1)
        share = float(fraction)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected SPEC:LABEL=FRACTION, got {value!r}") from None
    if not 0.0 <= share <= 1.0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{value!r}: the FRACTION must be 0 to 1")
    return spec, label, share


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "roles",
        help="Train the rhetorical-role model and write a bundle.",
        description="Fine-tune the base sentence encoder with a context-aware role head on labelled "
        "datasets (partial-label cross-entropy + a metric loss on the embedding), keep the best "
        "checkpoint on the dev sets, export it to ONNX, quantise it (int8 per channel), check parity "
        "and write a model bundle. Datasets: csabstruct:train, pmc-sents-full:dev-fit, pubmedqa:train, "
        "nicta-piboso:train, sciarg:train (or sciarg-fine:train), uci-az:train, "
        "scirex-sections:train (distant labels), jsonl:PATH, csv:PATH.",
    )
    parser.add_argument("--data", action="append", default=[], metavar="SPEC",
                        help="training data NAME:SPLIT (repeat for several; optional with --functions: "
                        "a function-only run)")
    parser.add_argument("--dev", action="append", default=[], metavar="SPEC",
                        help="dev data for model selection / early stopping (repeatable)")
    parser.add_argument("--out", type=output_folder, default=None,
                        help="bundle folder to write (needed unless --write-pack)")
    parser.add_argument("--write-pack", type=output_folder, default=None, metavar="DIR",
                        help="write this run's inputs (datasets as read here, the starting net, the base "
                        "model's config and tokenizer) as a training pack to DIR and stop: train it on "
                        "another machine with 'rhetorica train pack-run', bring it back with "
                        "'rhetorica train pack-merge'")
    parser.add_argument("--work", type=output_folder, default=None,
                        help="checkpoint folder (default runs/train-<time>; never commit it)")
    parser.add_argument("--base", type=as_text(input_folder), default=None,
                        help="base model folder (default: packaged all-MiniLM-L6-v2)")
    parser.add_argument("--epochs", type=bounded_float(0.001, 100_000.0), default=2.0)
    parser.add_argument("--max-steps", type=bounded_int(0, 1_000_000_000), default=0)
    parser.add_argument("--max-minutes", type=bounded_float(0.0, 1e7), default=0.0,
                        help="wall-clock limit: the learning rate decays to 0 by then and training stops")
    parser.add_argument("--batch-size", type=bounded_int(1, 65_536), default=64, help="sentences per step")
    parser.add_argument("--max-length", type=bounded_int(1, 512), default=64, help="tokens per sentence")
    parser.add_argument("--lr-encoder", type=bounded_float(0.0, 10.0), default=4e-5)
    parser.add_argument("--lr-head", type=bounded_float(0.0, 10.0), default=1e-3)
    parser.add_argument("--primary-weight", type=bounded_float(0.0, 1.0), default=0.0,
                        help="soft targets for ambiguous label sets: this weight on the label's own role "
                        "(0 = pure partial-label loss)")
    parser.add_argument("--init", type=as_text(input_file), default=None, metavar="CHECKPOINT",
                        help="start from the weights of this checkpoint")
    parser.add_argument("--init-bundle", type=as_text(input_folder), default=None, metavar="BUNDLE",
                        help="start from a model bundle's weights (read back from its ONNX graph, "
                        "int8 weights dequantised), e.g. resources/models/default")
    parser.add_argument("--metric-loss", default="supcon",
                        help="loss on the sentence embedding: supcon, multi_similarity, triplet_all, "
                        "triplet_hard, arcface, or none")
    parser.add_argument("--metric-weight", type=bounded_float(0.0, 1_000.0), default=0.2)
    parser.add_argument("--keep", type=_keep, action="append", default=[], metavar="SPEC:LABEL=FRACTION",
                        help="per-epoch subsampling of one label of a single-sentence dataset")
    parser.add_argument("--adapter", action="append", default=[], metavar="DATASET",
                        help="train a label adapter for this dataset's own labels (e.g. pmc-sents-full); "
                        "shipped in the bundle, used by `rhetorica eval roles --head adapter`")
    parser.add_argument("--adapter-weight", type=bounded_float(0.0, 1_000.0), default=0.5)
    parser.add_argument("--functions", type=_function_source, action="append", default=[],
                        metavar="FILE|SPEC",
                        help="distant function labels (JSON Lines of 'rhetorica data functions'), or "
                        "annotated:train (the hand-annotated corpus: each section run with its roles and "
                        "functions): adds the function head and the content view")
    parser.add_argument("--function-dev", default="gold:dev", metavar="SPEC",
                        help="function sentences for model selection (default gold:dev, or annotated:dev; "
                        "'none' to skip)")
    parser.add_argument("--function-weight", type=bounded_float(0.0, 1_000.0), default=1.0)
    parser.add_argument("--function-roles", action="store_true",
                        help="the distant function labels also teach the role head: each sentence gets "
                        "its function's role, with its real section kind (body-section supervision)")
    parser.add_argument("--function-loss", choices=("norm_softmax", "norm_softmax+supcon"),
                        default="norm_softmax")
    parser.add_argument("--function-context", type=bounded_int(0, 256), default=0, metavar="K",
                        help="feed each distant-labelled sentence with up to K neighbours on each side "
                        "(same document and section kind, unlabelled), so the role head learns it in a "
                        "section as the app labels it (default 0: single sentences)")
    parser.add_argument("--content-fork", type=bounded_int(0, 64), default=0, metavar="K",
                        help="fork the top K encoder layers: frozen base copies give the content view "
                             "exactly (no distillation), the lower layers are frozen and the role/function "
                             "branch trains freely; they ship as content.onnx, run only for embeddings. "
                             "From a trained model (--init, --init-bundle) K must be all layers (6)")
    parser.add_argument("--freeze-encoder", action="store_true",
                        help="train the heads only; the encoder keeps the starting model's weights")
    parser.add_argument("--freeze-role-head", action="store_true",
                        help="the role head keeps the starting model's weights (add functions only)")
    parser.add_argument("--teacher-weight", type=bounded_float(0.0, 1_000.0), default=0.0,
                        help="keep what the starting model (--init, --init-bundle) does on the role "
                        "datasets' rows: this weight x KL(starting model || model) of the role "
                        "probabilities and the label adapters' (default 0: off)")
    parser.add_argument("--distil", type=input_folder, default=None, metavar="TEACHER_RUN",
                        help="distil from a larger teacher: a 'train teacher-run' or 'teacher-merge' output "
                        "folder, read with --distil-data; its role and function probabilities become soft "
                        "targets on every training sentence it read")
    parser.add_argument("--distil-data", type=input_folder, default=None, metavar="TEACHER_DATA",
                        help="the 'train teacher-data' folder the teacher read")
    parser.add_argument("--distil-weight", type=bounded_float(0.0, 1_000.0), default=1.0,
                        help="weight of the cross-entropy to the teacher's probabilities (default 1; used "
                        "only with --distil)")
    parser.add_argument("--content-weight", type=bounded_float(0.0, 1_000.0), default=1.0,
                        help="weight of 1 - cos(content view, base embedding) (default 1.0)")
    parser.add_argument("--evals-per-epoch", type=bounded_int(1, 1_000), default=1)
    parser.add_argument("--patience", type=bounded_int(0, 1_000_000), default=3)
    parser.add_argument("--threads", type=bounded_int(0, MAX_THREADS), default=0,
                        help="torch threads (default: torch's choice)")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=13)
    parser.add_argument("--no-quantize", action="store_true", help="ship the fp32 graph")
    parser.add_argument("--no-calibrate", action="store_true",
                        help="do not fit the per-role logit bias on the dev sets before export")
    parser.add_argument("--name", default="rhetorica-roles")
    parser.add_argument("--version", default="0.1.0")
    parser.set_defaults(func=run)


def _function_source(value: str) -> str:
    """``annotated:SPLIT`` (a named hand-labelled set, never a test split) or an existing input file."""
    if value.startswith("annotated:"):
        if value.split(":", 1)[1] not in {"train", "dev", "all"}:
            raise argparse.ArgumentTypeError(f"{value!r}: the annotated corpus has splits train, dev, all")
        return value
    return as_text(input_file)(value)


def run(args: argparse.Namespace) -> int:
    from core.fileio import check_text_file

    if not args.data and not args.functions:
        from core.errors import DatasetError

        raise DatasetError("nothing to train on: give --data NAME:SPLIT (role data) and/or --functions FILE")
    for path in (f for f in args.functions if not f.startswith("annotated:")):  # UTF-8 text, not binary
        check_text_file(path, "function labels (JSON Lines)", max_bytes=LABELS_LIMIT)
    if args.out is not None and args.write_pack is None:  # before the training, not after it
        from models.training.bundle_out import refuse_bundle_out

        refuse_bundle_out(args.out, sources=[("the bundle you start from (--init-bundle)", args.init_bundle)])
    from core.jobs import JobContext
    from models.training.pipeline import train_bundle
    from models.training.trainer import TrainConfig

    keep: dict[str, dict[str, float]] = {}
    for spec, label, fraction in args.keep:
        keep.setdefault(spec, {})[label] = fraction
    work = args.work or Path("runs") / time.strftime("train-%Y%m%d-%H%M%S")
    cfg = TrainConfig(
        data=args.data, dev=args.dev, out=str(work), base=args.base, seed=args.seed, epochs=args.epochs,
        max_steps=args.max_steps, max_minutes=args.max_minutes, batch_size=args.batch_size,
        max_length=args.max_length, lr_encoder=args.lr_encoder, lr_head=args.lr_head,
        primary_weight=args.primary_weight, init=args.init, init_bundle=args.init_bundle,
        metric_loss="" if args.metric_loss == "none" else args.metric_loss, metric_weight=args.metric_weight,
        metric_kwargs={"temperature": 0.1} if args.metric_loss in ("supcon", "ntxent") else {},
        keep_fraction=keep, adapters=args.adapter, adapter_weight=args.adapter_weight,
        function_data=args.functions, function_dev="" if args.function_dev == "none" else args.function_dev,
        function_weight=args.function_weight, function_loss=args.function_loss,
        function_roles=args.function_roles, function_context=args.function_context,
        content_weight=args.content_weight,
        content_fork=args.content_fork,
        freeze_encoder=args.freeze_encoder,
        freeze_role_head=args.freeze_role_head,
        teacher_weight=args.teacher_weight,
        distil=str(args.distil or ""), distil_data=str(args.distil_data or ""),
        distil_weight=args.distil_weight if args.distil else 0.0,
        evals_per_epoch=args.evals_per_epoch, patience=args.patience,
        threads=args.threads, device=args.device,
    )
    if args.write_pack is not None:
        from models.training.pack import write_pack

        sizes = write_pack(cfg, args.write_pack)
        total = round(sum(sizes.values()) / 1e6, 1)
        print(json.dumps({"pack": str(args.write_pack), "bytes": sizes, "total_mb": total}, indent=2))
        return 0
    if args.out is None:
        from core.errors import DatasetError

        raise DatasetError("--out BUNDLE is needed (or --write-pack DIR to train elsewhere)")
    command = shlex.join(["rhetorica", *sys.argv[1:]])
    start = time.time()

    def show(p: Progress) -> None:
        print(f"[{time.strftime('%H:%M:%S')} +{time.time() - start:6.0f}s] {p.message}", flush=True)

    result, manifest = train_bundle(cfg, args.out, quantize=not args.no_quantize, name=args.name,
                                    version=args.version, command=command,
                                    calibrate=not args.no_calibrate, ctx=JobContext(show))
    parity = manifest.context.get("parity", {})
    print(json.dumps({"bundle": str(args.out), "checkpoint": str(result.checkpoint),
                      "best_dev_f1_micro": result.best_dev, "best_step": result.best_step,
                      "steps": result.steps, "minutes": round(result.seconds / 60, 1),
                      "parity": {k: parity.get(k) for k in ("fp32", "int8") if k in parity}}, indent=2))
    return 0
