"""``rhetorica eval split``: sentence-splitter quality on gold-split abstracts."""

from __future__ import annotations

import argparse
import json
import sys

from app.commands._options import input_folder, output_file, write_output

DATASETS = ("csabstruct",)
SPLITS = ("train", "dev", "test")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "split",
        help="Sentence-boundary precision/recall/F1 of the rule splitter.",
        description="Join each abstract's gold sentences with single spaces, split them again and score "
        "boundaries (end of every sentence but the last) and exact sentences.",
    )
    parser.add_argument("--data", choices=DATASETS, default="csabstruct", help="dataset (default csabstruct)")
    parser.add_argument("--split", choices=SPLITS, default="test", help="dataset split (default test)")
    parser.add_argument("--data-dir", type=input_folder, default=None,
                        help="folder holding {split}.jsonl (default: <shared>/data/<data>)")
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT",
                        help="also write the figures here")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.errors import RhetoricaError
    from core.paths import shared_dir
    from core.text import split_sentences
    from core.text.split_eval import evaluate_splitter, load_csabstruct

    data_dir = args.data_dir or shared_dir() / "data" / args.data
    path = data_dir / f"{args.split}.jsonl"
    if not path.is_file():
        raise RhetoricaError(f"dataset file not found: {path} (set RHETORICA_SHARED or --data-dir)")
    documents = load_csabstruct(path)
    split_sentences("Warm-up. Done.")
    scores = evaluate_splitter(documents, split_sentences)
    rows = [
        ("boundary", scores.boundary_precision, scores.boundary_recall, scores.boundary_f1),
        ("sentence (exact)", scores.sentence_precision, scores.sentence_recall, scores.sentence_f1),
    ]
    print(f"{args.data} {args.split}: {scores.documents} abstracts, {scores.gold_sentences} gold sentences, "
          f"{scores.predicted_sentences} predicted")
    print(f"{'':18}{'precision':>10}{'recall':>10}{'F1':>10}")
    for name, precision, recall, f1 in rows:
        print(f"{name:18}{precision:10.4f}{recall:10.4f}{f1:10.4f}")
    print(f"speed: {scores.sentences_per_second:,.0f} sentences/s ({scores.seconds * 1000:.1f} ms in total)")
    if args.json is not None:
        figures = {"data": args.data, "split": args.split, "command": " ".join(["rhetorica", *sys.argv[1:]]),
                   **scores.to_dict()}
        write_output(args.json, json.dumps(figures, indent=2) + "\n")
    return 0
