"""``rhetorica train …``: train models (needs the ``train`` extra: torch, transformers)."""

from __future__ import annotations

import argparse

from app.commands._groups import add_group

MODULES = (
    "app.commands.lab.train_roles",
    "app.commands.lab.train_body",
    "app.commands.lab.train_figures",
    "app.commands.lab.train_corrections",
    "app.commands.lab.train_calibrate",
    "app.commands.lab.train_function_prior",
    "app.commands.lab.train_function_context",
    "app.commands.lab.train_none_detector",
    "app.commands.lab.train_pack",
    "app.commands.lab.train_teacher",
    "app.commands.lab.train_average",
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    add_group(subparsers, "train", "Train a model and export it as a bundle.", MODULES)
