"""``rhetorica train average``: a weighted average of trained nets of one shape (a model soup, or WiSE-FT
between a pack's starting net and a run trained from it; models/training/weight_average.py)."""

from __future__ import annotations

import argparse
import json

from app.commands._options import bounded_float, output_file, path_arg


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "average", help="Average trained checkpoints of one shape (a model soup, or WiSE-FT).",
        description="Write the weighted average of nets fine-tuned from one start, weight by weight: "
        "several seeds' checkpoints (a uniform 'model soup') or a pack folder's starting net and a run "
        "trained from it (WiSE-FT: --weights 0.5 0.5 is halfway). The result is the first checkpoint "
        "with its weights replaced, for 'rhetorica export'.")
    parser.add_argument("sources", type=path_arg, nargs="+",
                        help="checkpoint files (best.pt) or training pack folders (their starting net)")
    parser.add_argument("--weights", type=bounded_float(0.0, 1_000.0), nargs="+", default=None,
                        help="one weight per source (default: all equal)")
    parser.add_argument("--out", type=output_file, required=True, help="checkpoint file to write")
    parser.set_defaults(func=run_average)


def run_average(args: argparse.Namespace) -> int:
    from app.commands._options import check_output_file
    from models.training.weight_average import average_weights, parse_sources

    check_output_file(args.out, "--out", inputs=args.sources, create_parents=True)  # never over a source
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = average_weights(parse_sources(list(args.sources), args.weights), args.out)
    print(json.dumps({"checkpoint": str(report.out), "averaged_tensors": report.averaged,
                      "kept_tensors": report.kept,
                      "sources": [{"path": str(s.path), "weight": s.weight} for s in report.sources]},
                     indent=2))
    return 0
