"""``rhetorica data …``: build training data from the corpora (distant labels)."""

from __future__ import annotations

import argparse

from app.commands._groups import add_group

MODULES = ("app.commands.data_functions", "app.commands.data_precision", "app.commands.data_open_set",
           "app.commands.data_formulas", "app.commands.data_figures", "app.commands.data_annotation")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    add_group(subparsers, "data", "Build training data from the shared corpora.", MODULES)
