"""``--teacher``, ``--teacher-data``, ``--teacher-weight``: distil a head from a teacher's probabilities
(models/training/teacher.py), the same three options wherever a head can learn from one."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.commands._options import bounded_float, input_folder


def add_teacher_options(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--teacher", type=input_folder, default=None, metavar="TEACHER_RUN",
                        help="distil from a teacher: a 'train teacher-run' or 'teacher-merge' output folder "
                        "(its soft.npz), read with --teacher-data")
    parser.add_argument("--teacher-data", type=input_folder, default=None,
                        help="the 'train teacher-data' folder the teacher read")
    parser.add_argument("--teacher-weight", type=bounded_float(0.0, 100.0), default=1.0,
                        help=f"weight of the cross-entropy to the teacher's {what} probabilities (default 1)")


def teacher_paths(args: argparse.Namespace) -> tuple[Path, Path] | None:
    """(teacher data folder, soft.npz), None without a teacher; one clear line when only one is given."""
    if (args.teacher is None) != (args.teacher_data is None):
        raise SystemExit("rhetorica: --teacher and --teacher-data go together")
    return (args.teacher_data, args.teacher / "soft.npz") if args.teacher else None


def teacher_weight(args: argparse.Namespace) -> float:
    return float(args.teacher_weight) if args.teacher is not None else 0.0
