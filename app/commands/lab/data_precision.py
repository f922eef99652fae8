"""``rhetorica data precision``: the precision of distant function labels from hand judgements."""

from __future__ import annotations

import argparse

from app.commands._options import input_file


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "precision",
        help="Precision of distant function labels from a file of hand judgements.",
        description="Count the judged rows (JSON Lines with function, marker, section_kind, correct, "
        "better) as drawn, and as the current taxonomy would label them (rows whose marker was "
        "pruned left out, instead_in switches applied). The second figure re-uses the sample that "
        "guided the pruning: judge a fresh sample for an unbiased one.",
    )
    parser.add_argument("judgements", type=input_file, nargs="+", help="judgement files (JSON Lines)")
    parser.add_argument("--taxonomy", type=input_file, default=None, help="taxonomy file (default: bundled)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.commands._options import read_jsonl
    from core.errors import RhetoricaError
    from core.fileio import check_text_file
    from core.taxonomy.functions import load_taxonomy
    from models.training.function_labels import judged_precision

    if args.taxonomy is not None:
        check_text_file(args.taxonomy, "a taxonomy file (TOML)")
    taxonomy = load_taxonomy(args.taxonomy)
    for path in args.judgements:
        rows = read_jsonl(path, "judgements (JSON Lines)")
        try:
            result = judged_precision(rows, taxonomy)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise RhetoricaError(f"{path}: not judgement rows (function, marker, section_kind, correct, "
                                 f"better): {type(error).__name__}: {error}") from None
        print(f"{path}: {result.correct} of {result.judged} judged correct, "
              f"precision {result.precision:.3f}; "
              f"under taxonomy {taxonomy.version}: {result.kept_correct} of {result.kept} kept rows, "
              f"precision {result.kept_precision:.3f}")
    return 0
