"""``rhetorica bench …``: speed and memory benchmarks."""

from __future__ import annotations

import argparse

from app.commands._groups import add_group

MODULES = (
    "app.commands.lab.bench_parse",
    "app.commands.lab.bench_analyze",
    "app.commands.lab.bench_encode",
    "app.commands.lab.bench_gemm",
    "app.commands.lab.bench_gui",
    "app.commands.lab.bench_index",
    "app.commands.lab.bench_suggest",
    "app.commands.lab.bench_corpus",
    "app.commands.lab.bench_lsp",
    "app.commands.lab.bench_draft",
    "app.commands.lab.bench_align",
    "app.commands.lab.bench_finetune",
    "app.commands.lab.bench_train_gui",
    "app.commands.lab.bench_corpus_build",
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    add_group(subparsers, "bench", "Measure speed and memory.", MODULES)
