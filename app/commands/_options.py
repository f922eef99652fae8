"""Command-line options shared by the commands that load a model bundle."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def add_model_options(parser: argparse.ArgumentParser, *, default_threads: int | None = 2) -> None:
    """``--model BUNDLE``, ``--threads N`` and ``--device auto|cpu|cuda``."""
    parser.add_argument("--model", type=Path, default=None, metavar="BUNDLE",
                        help="model bundle folder (default: resources/models/default)")
    threads_default = "all cores" if default_threads is None else str(default_threads)
    parser.add_argument("--threads", type=int, default=default_threads,
                        help=f"onnxruntime threads (default: {threads_default})")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")


def progress_line(quiet: bool) -> Callable[[Any], None]:
    """A JobContext reporter for commands: one updating line on stderr when it is a terminal."""
    def report(progress: Any) -> None:
        if not quiet and sys.stderr.isatty():
            print(f"\r{progress.message[:60]:60} {100 * progress.fraction:5.1f}%", end="", file=sys.stderr)
    return report


def log_progress(every: float = 0.0) -> Callable[[Any], None]:
    """A JobContext reporter for long training commands: one timestamped line per message
    ("[12:00:00 +   42s] epoch 3: loss 0.51"), at most one per ``every`` seconds (the last always)."""
    import time

    start = time.time()
    last = [float("-inf")]

    def show(progress: Any) -> None:
        now = time.time()
        if now - last[0] >= every or progress.fraction >= 1:
            last[0] = now
            print(f"[{time.strftime('%H:%M:%S')} +{now - start:6.0f}s] {progress.message}", flush=True)
    return show
