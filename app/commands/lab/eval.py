"""``rhetorica eval …``: quality metrics on named real dataset splits."""

from __future__ import annotations

import argparse

from app.commands._groups import add_group

MODULES = (
    "app.commands.lab.eval_split",
    "app.commands.lab.eval_roles",
    "app.commands.lab.eval_retrieval",
    "app.commands.lab.eval_content",
    "app.commands.lab.eval_functions",
    "app.commands.lab.eval_templates",
    "app.commands.lab.eval_suggest",
    "app.commands.lab.eval_suggest_labels",
    "app.commands.lab.eval_align",
    "app.commands.lab.eval_search",
    "app.commands.lab.eval_figures",
    "app.commands.lab.eval_sections",
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    add_group(subparsers, "eval", "Measure quality on a named dataset split.", MODULES)
