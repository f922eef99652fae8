"""``rhetorica train corrections``: train the role heads on your corrections (issue 15)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from app.commands._options import (
    MAX_THREADS,
    bounded_int,
    input_folder,
    output_file,
    output_folder,
    write_output,
)

# About 15 s an epoch with the standard data: 100 is already hours, and more never helps (4 is the default).
MAX_EPOCHS = 100


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "corrections",
        help="Train the role heads on your corrections (mixed with standard data) and write a bundle.",
        description="Start from a bundle; train its role head and body head on the role corrections in "
        "your library (each with the sentences around it), mixed with CSAbstruct train abstracts and "
        "PMC-Sents-FULL dev-fit sentences so nothing is forgotten; measure before and after on held-out "
        "corrections and the standard dev sets; write the new bundle, marked accepted only when it is "
        "not worse on the dev sets. See models/training/corrections.py.")
    parser.add_argument("--library", type=input_folder, default=None, metavar="DIR",
                        help="library folder holding the corrections (default: the user data folder's)")
    parser.add_argument("--bundle", type=input_folder, default=None,
                        help="bundle to start from (default: the shipped one)")
    parser.add_argument("--out", type=output_folder, required=True,
                        help="bundle folder to write (new or empty)")
    parser.add_argument("--work", type=output_folder, default=None,
                        help="vector cache (default runs/corrections-<time>)")
    parser.add_argument("--epochs", type=bounded_int(1, MAX_EPOCHS), default=None,
                        help=f"passes over the corrections and the standard data (at most {MAX_EPOCHS})")
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2)
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT",
                        help="also write the report here")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.commands._options import log_progress
    from core.jobs import JobContext
    from core.library.corrections import Corrections
    from core.library.library import Library
    from core.paths import library_dir
    from models.bundle import default_bundle_path
    from models.training.bundle_out import refuse_bundle_out
    from models.training.corrections import CorrectionJob, CorrectionTrainingConfig, train_on_corrections

    bundle = args.bundle or default_bundle_path()
    refuse_bundle_out(args.out, sources=[("the bundle you train from", bundle)])  # before any work
    folder = args.library if args.library is not None else library_dir()
    with Library(folder) as library:
        corrections = Corrections(library.store).all()
    config = CorrectionTrainingConfig()
    if args.epochs is not None:
        config.epochs = args.epochs
    work = args.work or Path("runs") / time.strftime("corrections-%Y%m%d-%H%M%S")
    job = CorrectionJob(bundle=bundle, corrections=corrections, work=work,
                        out=args.out, command=shlex.join(["rhetorica", *sys.argv[1:]]), config=config,
                        threads=args.threads)
    report = train_on_corrections(job, JobContext(log_progress(every=5.0)))
    _show(report.to_dict())
    if args.json is not None:
        write_output(args.json, json.dumps(report.to_dict(), indent=2) + "\n")
    verdict = "accepted" if report.accepted else "NOT accepted"
    print(f"bundle written to {args.out} ({verdict}: {report.reason}); use it with --model {args.out} "
          "or choose it in the app's Settings")
    return 0


def _show(report: dict) -> None:
    print(f"{'measure':<36} {'before':>8} {'after':>8}")
    for name, before in report["before"].items():
        print(f"{name:<36} {before:>8.2f} {report['after'][name]:>8.2f}")
    print(f"{report['steps']} steps, {report['seconds_per_step'] * 1000:.1f} ms per step; "
          + ", ".join(f"{k} {v} s" for k, v in report["seconds"].items()))
