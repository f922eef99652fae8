"""``rhetorica train pack-run`` / ``pack-merge``: train a training pack on another machine (a GPU one),
then rebuild its checkpoint here (models/training/pack.py)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from app.commands._options import (
    bounded_float,
    bounded_int,
    input_file,
    input_folder,
    output_file,
    output_folder,
)

# Hyper-parameters pack-run may change; everything else is the packed run's configuration.
OVERRIDES = ("epochs", "lr_encoder", "lr_head", "teacher_weight", "distil_weight", "max_minutes",
             "max_steps", "evals_per_epoch", "seed")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    run_parser = subparsers.add_parser(
        "pack-run", help="Train a training pack (written by 'train roles --write-pack') on this machine.",
        description="Train the run a training pack describes, from the pack alone (no shared data, no base "
        "weights needed), keep the best checkpoint on its dev sets, and write the trained weights in fp16 "
        "parts of at most 15 MB each (PARTS/NAME-partN.pt) with the dev history: what 'train pack-merge' "
        "turns back into a checkpoint on the machine that wrote the pack.")
    run_parser.add_argument("pack", type=input_folder, help="the pack folder")
    run_parser.add_argument("--parts", type=output_folder, required=True, help="folder for the trained parts")
    run_parser.add_argument("--name", default="run", help="file prefix of the parts (default run)")
    run_parser.add_argument("--work", type=output_folder, default=None,
                            help="checkpoint folder (default runs/pack-<time>)")
    run_parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    run_parser.add_argument("--epochs", type=bounded_float(0.01, 1_000.0), default=None)
    run_parser.add_argument("--lr-encoder", type=bounded_float(0.0, 1.0), default=None)
    run_parser.add_argument("--lr-head", type=bounded_float(0.0, 1.0), default=None)
    run_parser.add_argument("--teacher-weight", type=bounded_float(0.0, 1_000.0), default=None)
    run_parser.add_argument("--distil-weight", type=bounded_float(0.0, 1_000.0), default=None,
                            help="weight of the larger teacher's soft targets (a pack written with --distil)")
    run_parser.add_argument("--max-minutes", type=bounded_float(0.0, 100_000.0), default=None)
    run_parser.add_argument("--max-steps", type=bounded_int(0, 10_000_000), default=None)
    run_parser.add_argument("--evals-per-epoch", type=bounded_int(1, 1_000), default=None)
    run_parser.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=None)
    run_parser.set_defaults(func=run_pack)

    merge = subparsers.add_parser(
        "pack-merge", help="Rebuild a packed run's checkpoint from its trained parts.",
        description="Read the pack's starting model again here (its --init or --init-bundle, with the base "
        "model's own weights) and write the trained parts over it: a checkpoint for 'rhetorica export'.")
    merge.add_argument("pack", type=input_folder, help="the pack folder the run was trained from")
    merge.add_argument("parts", type=input_file, nargs="+", help="the run's NAME-partN.pt files")
    merge.add_argument("--out", type=output_file, required=True, help="checkpoint file to write (best.pt)")
    merge.set_defaults(func=run_merge)


def run_pack(args: argparse.Namespace) -> int:
    from core.jobs import JobContext, Progress
    from models.training.pack import read_pack, write_trained_parts
    from models.training.trainer import train

    pack = read_pack(args.pack)
    cfg = pack.config
    for name in OVERRIDES:
        value = getattr(args, name)
        if value is not None:
            setattr(cfg, name, value)
    cfg.device = args.device
    cfg.out = str(args.work or Path("runs") / time.strftime("pack-%Y%m%d-%H%M%S"))
    start = time.time()

    def show(p: Progress) -> None:
        print(f"[{time.strftime('%H:%M:%S')} +{time.time() - start:6.0f}s] {p.message}", flush=True)

    result = train(cfg, JobContext(show), pack=pack)
    parts = write_trained_parts(result.checkpoint, args.parts, args.name)
    history = args.parts / f"{args.name}-history.jsonl"
    history.write_text("".join(json.dumps(h) + "\n" for h in result.history), encoding="utf-8")
    print(json.dumps({"parts": [str(p) for p in parts], "history": str(history),
                      "best_step": result.best_step, "steps": result.steps, "best_dev": result.best_dev,
                      "minutes": round(result.seconds / 60, 1)}, indent=2))
    return 0


def run_merge(args: argparse.Namespace) -> int:
    from app.commands._options import check_output_file
    from models.training.pack import checkpoint_from_parts

    check_output_file(args.out, "--out", inputs=[*args.parts, args.pack / "start.pt"], create_parents=True)
    out = checkpoint_from_parts(args.pack, list(args.parts), args.out)
    print(json.dumps({"checkpoint": str(out)}))
    return 0
