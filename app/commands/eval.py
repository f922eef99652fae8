"""``rhetorica eval …``: quality metrics on named real dataset splits."""

from __future__ import annotations

import argparse

from app.commands._groups import add_group

MODULES = (
    "app.commands.eval_split",
    "app.commands.eval_roles",
    "app.commands.eval_retrieval",
    "app.commands.eval_content",
    "app.commands.eval_functions",
    "app.commands.eval_templates",
    "app.commands.eval_suggest",
    "app.commands.eval_align",
    "app.commands.eval_search",
    "app.commands.eval_figures",
    "app.commands.eval_sections",
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    add_group(subparsers, "eval", "Measure quality on a named dataset split.", MODULES)
