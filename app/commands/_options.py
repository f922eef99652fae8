"""Command-line options shared by the commands that load a model bundle."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_model_options(parser: argparse.ArgumentParser, *, default_threads: int | None = 2) -> None:
    """``--model BUNDLE``, ``--threads N`` and ``--device auto|cpu|cuda``."""
    parser.add_argument("--model", type=Path, default=None, metavar="BUNDLE",
                        help="model bundle folder (default: resources/models/default)")
    threads_default = "all cores" if default_threads is None else str(default_threads)
    parser.add_argument("--threads", type=int, default=default_threads,
                        help=f"onnxruntime threads (default: {threads_default})")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
