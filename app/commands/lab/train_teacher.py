"""``rhetorica train teacher-data`` / ``teacher-run``: a larger teacher encoder trained where a GPU is lent,
whose soft labels ``train function-context --teacher`` distils from (models/training/teacher.py)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from app.commands._options import bounded_float, bounded_int, input_folder, output_folder


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    data = subparsers.add_parser(
        "teacher-data",
        help="Write the data a teacher encoder trains on (annotated corpus) and is measured on.",
        description="Every sentence of the annotated corpus's train sections (annotated ones with role and "
        "function, the rest as context), and the dev sets (the corpus's dev sections, gold:dev, the dev set "
        "v5, parsed as the app parses them), each with its section kind and previous sentence, in one "
        "compressed JSON file: what 'train teacher-run' reads on a machine without the shared data.")
    data.add_argument("--out", type=output_folder, required=True, help="folder to write")
    data.set_defaults(func=run_data)

    run = subparsers.add_parser(
        "teacher-run", help="Fine-tune a teacher encoder on teacher data and write its soft labels.",
        description="Fine-tune a base encoder (a local Hugging Face folder, e.g. all-mpnet-base-v2) with a "
        "role and a function classifier on the annotated train sentences; keep each seed's best epoch on "
        "the corpus's dev sentences; write the seeds' mean probabilities for every sentence (soft.npz) and "
        "every epoch's dev figures (report.json).")
    run.add_argument("data", type=input_folder, help="folder written by 'train teacher-data'")
    run.add_argument("--base", type=input_folder, required=True, help="base encoder folder (config, "
                     "tokenizer.json, weights)")
    run.add_argument("--out", type=output_folder, required=True, help="folder for soft.npz and report.json")
    run.add_argument("--device", default="auto", help="auto, cpu or cuda")
    run.add_argument("--epochs", type=bounded_int(1, 100), default=4)
    run.add_argument("--seeds", type=bounded_int(1, 16), default=1)
    run.add_argument("--first-seed", type=bounded_int(0, 2**31), default=0)
    run.add_argument("--batch-size", type=bounded_int(1, 4096), default=32)
    run.add_argument("--lr-encoder", type=bounded_float(0.0, 1.0), default=3e-5)
    run.add_argument("--lr-head", type=bounded_float(0.0, 1.0), default=1e-3)
    run.add_argument("--max-length", type=bounded_int(8, 512), default=128)
    run.add_argument("--max-minutes", type=bounded_float(0.0, 100_000.0), default=0.0,
                     help="no new epoch starts past it, no new seed past half of it (0: no limit)")
    run.set_defaults(func=run_teacher_command)

    merge = subparsers.add_parser(
        "teacher-merge", help="Average several teacher runs (weighted by their seeds) into one.",
        description="Average the probabilities of several 'train teacher-run' outputs on the same teacher "
        "data, each weighted by the seeds it kept; write soft.npz and report.json (the merged dev figures).")
    merge.add_argument("data", type=input_folder, help="the teacher data the runs read")
    merge.add_argument("runs", type=input_folder, nargs="+", help="teacher-run output folders")
    merge.add_argument("--out", type=output_folder, required=True)
    merge.set_defaults(func=run_merge)

    export = subparsers.add_parser(
        "teacher-export", help="A teacher's train-sentence probabilities, small enough to commit.",
        description="Write a teacher run's (or merge's) probabilities of the train sentences as uint8 rows "
        "(no text; the teacher data's fingerprint is checked when read) with its report: what "
        "'--teacher DIR' / '--distil DIR' read in a later session without training the teacher again.")
    export.add_argument("data", type=input_folder, help="the teacher data the run read")
    export.add_argument("run", type=input_folder, help="teacher-run or teacher-merge output folder")
    export.add_argument("--out", type=output_folder, required=True)
    export.set_defaults(func=run_export)


def run_data(args: argparse.Namespace) -> int:
    from models.training.teacher import write_teacher_data

    counts = write_teacher_data(args.out)
    print(json.dumps({"out": str(args.out), "sentences": counts}))
    return 0


def run_export(args: argparse.Namespace) -> int:
    from models.training.teacher import export_train_labels

    print(json.dumps({"out": str(args.out), **export_train_labels(args.data, args.run, args.out)}))
    return 0


def run_merge(args: argparse.Namespace) -> int:
    from models.training.teacher import merge_teachers

    scores = merge_teachers(args.data, list(args.runs), args.out)
    print(json.dumps({"out": str(args.out), "dev": scores}, indent=1))
    return 0


def run_teacher_command(args: argparse.Namespace) -> int:
    from models.training.teacher import TeacherConfig, run_teacher

    cfg = TeacherConfig(epochs=args.epochs, seeds=args.seeds, first_seed=args.first_seed,
                        batch_size=args.batch_size, lr_encoder=args.lr_encoder, lr_head=args.lr_head,
                        max_length=args.max_length, max_minutes=args.max_minutes, device=args.device)
    start = time.time()

    def log(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')} +{time.time() - start:6.0f}s] {message}", flush=True)

    result = run_teacher(args.data, Path(args.base), args.out, cfg, log)
    print(json.dumps({"out": str(args.out), "chosen": result.chosen, "averaged": result.averaged,
                      "minutes": round(result.seconds / 60, 1)}, indent=1))
    return 0
