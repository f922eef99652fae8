"""``rhetorica bench …``: speed and memory benchmarks."""

from __future__ import annotations

import argparse

from app.commands._groups import add_group

MODULES = (
    "app.commands.bench_parse",
    "app.commands.bench_analyze",
    "app.commands.bench_encode",
    "app.commands.bench_gemm",
    "app.commands.bench_gui",
    "app.commands.bench_index",
    "app.commands.bench_suggest",
    "app.commands.bench_lsp",
    "app.commands.bench_align",
    "app.commands.bench_finetune",
    "app.commands.bench_train_gui",
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    add_group(subparsers, "bench", "Measure speed and memory.", MODULES)
