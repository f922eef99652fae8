"""``rhetorica data open-set``: seen/unseen function splits for the open-set retrieval test."""

from __future__ import annotations

import argparse
import json

from app.commands._options import bounded_int, check_output_file, input_file, output_folder


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "open-set",
        help="Split distant function labels into N seen functions (training) and the unseen rest.",
        description="For each N in --seen: choose N functions at random among those with at least "
        "--min-count labelled sentences; write seen-N.jsonl (their rows, to train on with "
        "'rhetorica train roles --functions') and unseen-N.jsonl (the other functions' rows, to "
        "retrieve among with 'rhetorica eval retrieval --data labels'), and split-N.json (the lists). "
        "The open-set generalisation test of Sugimoto & Aizawa 2022.",
    )
    parser.add_argument("labels", type=input_file,
                        help="function labels (JSON Lines of 'rhetorica data functions')")
    parser.add_argument("--seen", type=bounded_int(1, 100_000), nargs="+", default=[10, 20, 40], metavar="N")
    parser.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=1)
    parser.add_argument("--min-count", type=bounded_int(1, 100_000_000), default=10,
                        help="functions with fewer labelled sentences take no part (default 10)")
    parser.add_argument("--max-unseen", type=bounded_int(1, 100_000_000), default=100, metavar="K",
                        help="at most K sentences of each unseen function, drawn at random (default 100)")
    parser.add_argument("--out", type=output_folder, required=True, help="folder for the files")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.errors import DatasetError
    from core.fileio import check_text_file
    from models.training.function_labels import read_function_rows
    from models.training.open_set import open_set_split

    for n in args.seen:  # before any work: no output may replace the labels being read
        for name in (f"seen-{n}.jsonl", f"unseen-{n}.jsonl", f"split-{n}.json"):
            check_output_file(args.out / name, "--out", inputs=[args.labels], create_parents=True)
    check_text_file(args.labels, "function labels (JSON Lines)", max_bytes=4_000_000_000)
    rows = read_function_rows([args.labels])
    args.out.mkdir(parents=True, exist_ok=True)
    for n in args.seen:
        try:
            split = open_set_split(rows, n, args.seed, args.min_count, args.max_unseen)
        except ValueError as error:
            raise DatasetError(str(error)) from None
        for name, part in (("seen", split.train_rows), ("unseen", split.unseen_rows)):
            with (args.out / f"{name}-{n}.jsonl").open("w", encoding="utf-8") as handle:
                handle.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in part)
        record = {"labels": str(args.labels), "seed": args.seed, "min_count": args.min_count,
                  "max_unseen_per_function": args.max_unseen,
                  "seen": list(split.seen), "unseen": list(split.unseen),
                  "train_rows": len(split.train_rows), "unseen_rows": len(split.unseen_rows)}
        (args.out / f"split-{n}.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        print(f"N={n}: {len(split.seen)} seen functions ({len(split.train_rows)} rows), "
              f"{len(split.unseen)} unseen ({len(split.unseen_rows)} rows) -> {args.out}")
    return 0
