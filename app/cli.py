"""The ``rhetorica`` command line.

Each subcommand lives in its own module under :mod:`app.commands` and exposes
``add_parser(subparsers)``.  Command modules import only the standard library at
module level; heavy dependencies (pymupdf, onnxruntime, torch, Qt) are imported
inside the function that runs the command, so ``rhetorica parse`` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from core.errors import RhetoricaError

# Order is the order shown in --help.
COMMAND_MODULES = (
    "app.commands.gui",
    "app.commands.parse",
    "app.commands.analyze",
    "app.commands.library",
    "app.commands.suggest",
    "app.commands.align",
    "app.commands.search",
    "app.commands.figures",
    "app.commands.corpus",
    "app.commands.corrections",
    "app.commands.template",
    "app.commands.train",
    "app.commands.export",
    "app.commands.data",
    "app.commands.eval",
    "app.commands.bench",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rhetorica",
        description="Offline writing assistant for scientific authors.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:  # a command not built yet
            if error.name != name:
                raise
            continue
        module.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        # No subcommand: open the GUI (when it exists), else show help.
        if "app.commands.gui" in sys.modules:
            args = parser.parse_args(["gui", *(argv or [])])
        else:
            parser.print_help()
            return 0
    try:
        return int(args.func(args) or 0)
    except RhetoricaError as error:
        print(f"rhetorica: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rhetorica: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
