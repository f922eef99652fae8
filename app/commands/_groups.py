"""Helpers for command groups (``rhetorica eval …``, ``rhetorica bench …``)."""

from __future__ import annotations

import argparse
import importlib


def add_group(subparsers: argparse._SubParsersAction, name: str, help_text: str,
              modules: tuple[str, ...]) -> argparse.ArgumentParser:
    """Add ``name`` with its own subcommands, one module each."""
    parser = subparsers.add_parser(name, help=help_text, description=help_text)
    children = parser.add_subparsers(dest=f"{name}_command", metavar="WHAT")
    for module_name in modules:
        importlib.import_module(module_name).add_parser(children)
    parser.set_defaults(func=lambda args: _missing(parser))
    return parser


def _missing(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2
