"""``rhetorica export``: turn a training checkpoint into a model bundle."""

from __future__ import annotations

import argparse
import json
import shlex
import sys

from app.commands._options import path_arg, text_arg


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export",
        help="Export a training checkpoint to a model bundle (ONNX, int8, parity-checked).",
        description="Export CHECKPOINT (a best.pt written by 'rhetorica train roles') to ONNX, quantise "
        "it (int8 dynamic, per channel) unless --no-quantize, check parity against torch on real "
        "sentences (fails below the thresholds) and write manifest.json, model.onnx (the sentence graph), "
        "roles.onnx (the role graph) and tokenizer.json. "
        "With --untrained instead of CHECKPOINT: the baseline bundle (the base encoder with a random "
        "role head), which the evaluations compare trained bundles with.",
    )
    parser.add_argument("checkpoint", type=path_arg, nargs="?")
    parser.add_argument("--untrained", action="store_true",
                        help="export the untrained baseline (all-MiniLM-L6-v2 + random role head)")
    parser.add_argument("--out", type=path_arg, required=True, help="bundle folder to write")
    parser.add_argument("--no-quantize", action="store_true", help="ship the fp32 graph")
    parser.add_argument("--parity-data", default="csabstruct:dev", metavar="SPEC",
                        help="documents for the parity check (default csabstruct:dev)")
    parser.add_argument("--calibrate", action="append", default=[], metavar="SPEC",
                        help="fit a per-role logit bias on this dev set before export (repeatable)")
    parser.add_argument("--training-command", default=None, metavar="TEXT", type=text_arg,
                        help="the command that trained the checkpoint (recorded in the manifest)")
    parser.add_argument("--reuse-sentence-graphs", type=path_arg, default=None, metavar="BUNDLE",
                        help="ship this bundle's sentence and content graphs unchanged (for a checkpoint "
                        "whose encoder was not trained, e.g. from 'rhetorica train body')")
    parser.add_argument("--name", default="rhetorica-roles", type=text_arg)
    parser.add_argument("--version", default="0.1.0", type=text_arg)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.commands._options import check_input_file, check_input_folder, check_output_folder
    from core.errors import RhetoricaError

    if args.untrained == (args.checkpoint is not None):
        raise RhetoricaError("export: give a CHECKPOINT or --untrained (one of them)")
    from models.datasets.registry import refuse_test_split  # no torch

    refuse_test_split(args.parity_data, "the export parity check (--parity-data)")
    for spec in args.calibrate:
        refuse_test_split(spec, "calibration (--calibrate)")
    if args.checkpoint is not None:
        check_input_file(args.checkpoint, "a checkpoint (.pt)")
    if args.reuse_sentence_graphs is not None:
        check_input_folder(args.reuse_sentence_graphs, "a model bundle folder")
    check_output_folder(args.out, "--out")
    from models.training.bundle_out import refuse_bundle_out  # no torch

    reused = ("the bundle whose sentence graphs are reused", args.reuse_sentence_graphs)
    refuse_bundle_out(args.out, sources=[reused])
    from core.jobs import JobContext  # torch loads with these: after the cheap checks
    from models.bundle import bundle_size_bytes
    from models.training.pipeline import export_checkpoint, export_untrained

    ctx = JobContext(lambda p: print(p.message, flush=True))
    if args.untrained:
        manifest = export_untrained(args.out, quantize=not args.no_quantize, parity_data=args.parity_data,
                                    ctx=ctx)
    else:
        manifest = export_checkpoint(
            args.checkpoint, args.out, quantize=not args.no_quantize, parity_data=args.parity_data,
            name=args.name, version=args.version, command=args.training_command,
            extra_training={"export_command": shlex.join(["rhetorica", *sys.argv[1:]])},
            calibrate=args.calibrate, reuse_sentence_graphs=args.reuse_sentence_graphs, ctx=ctx)
    parity = manifest.context.get("parity", {})
    print(json.dumps({"bundle": str(args.out), "size_mb": round(bundle_size_bytes(args.out) / 1e6, 2),
                      "quantization": manifest.quantization,
                      "parity": {k: parity.get(k) for k in ("fp32", "int8") if k in parity}}, indent=2))
    return 0
