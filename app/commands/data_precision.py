"""``rhetorica data precision``: the precision of distant function labels from hand judgements."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "precision",
        help="Precision of distant function labels from a file of hand judgements.",
        description="Count the judged rows (JSON Lines with function, marker, section_kind, correct, "
        "better) as drawn, and as the current taxonomy would label them (rows whose marker was "
        "pruned left out, instead_in switches applied). The second figure re-uses the sample that "
        "guided the pruning: judge a fresh sample for an unbiased one.",
    )
    parser.add_argument("judgements", type=Path, nargs="+", help="judgement files (JSON Lines)")
    parser.add_argument("--taxonomy", type=Path, default=None, help="taxonomy file (default: bundled)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.functions import load_taxonomy
    from models.training.function_labels import judged_precision

    taxonomy = load_taxonomy(args.taxonomy)
    for path in args.judgements:
        with path.open(encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle if line.strip()]
        result = judged_precision(rows, taxonomy)
        print(f"{path}: {result.correct} of {result.judged} judged correct, "
              f"precision {result.precision:.3f}; "
              f"under taxonomy {taxonomy.version}: {result.kept_correct} of {result.kept} kept rows, "
              f"precision {result.kept_precision:.3f}")
    return 0
