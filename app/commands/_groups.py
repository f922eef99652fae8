"""Helpers for command groups (``rhetorica eval …``, ``rhetorica bench …``) and for listing
the lab's verbs apart from the user's in ``rhetorica --help``."""

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


class _HelpListing(argparse.Action):
    """Help text only: some subcommands of a parser, shown in a section of their own. It belongs
    to no parser's actions (an argument group lists it), so it never takes part in parsing."""

    def __init__(self, entries: list[argparse.Action], metavar: str | tuple[str, ...] | None) -> None:
        super().__init__(option_strings=[], dest=argparse.SUPPRESS, nargs=0, metavar=metavar)
        self._entries = entries

    def _get_subactions(self) -> list[argparse.Action]:  # what HelpFormatter lists, indented
        return self._entries


def list_apart(parser: argparse.ArgumentParser, subparsers: argparse._SubParsersAction,
               names: list[str], title: str, description: str) -> None:
    """Show the subcommands ``names`` of ``subparsers`` in ``parser``'s help under a section of
    their own (``rhetorica --help``: the user's verbs, then the lab's). Parsing is unchanged: the
    subcommands stay choices of ``subparsers``; only their help entries move."""
    moved = [entry for entry in subparsers._choices_actions if entry.dest in names]
    subparsers._choices_actions[:] = [entry for entry in subparsers._choices_actions if entry not in moved]
    section = parser.add_argument_group(title, description)
    section._group_actions.append(_HelpListing(moved, subparsers.metavar))
