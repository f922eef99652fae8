"""``rhetorica data …``: build training data from the corpora (distant labels)."""

from __future__ import annotations

import argparse

from app.commands._groups import add_group

MODULES = (
    "app.commands.lab.data_functions",
    "app.commands.lab.data_precision",
    "app.commands.lab.data_open_set",
    "app.commands.lab.data_formulas",
    "app.commands.lab.data_figures",
    "app.commands.lab.data_annotation",
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    add_group(subparsers, "data", "Build training data from the shared corpora.", MODULES)
