"""The ``rhetorica`` command line.

Each subcommand lives in its own module under :mod:`app.commands` and exposes
``add_parser(subparsers)``.  Command modules import only the standard library at
module level; heavy dependencies (pymupdf, onnxruntime, torch, Qt) are imported
inside the function that runs the command, so ``rhetorica parse`` starts fast.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from app.commands._groups import list_apart
from core.errors import RhetoricaError

# The author's verbs, in the order shown in --help.
USER_COMMAND_MODULES = (
    "app.commands.gui",
    "app.commands.parse",
    "app.commands.analyze",
    "app.commands.library",
    "app.commands.suggest",
    "app.commands.align",
    "app.commands.search",
    "app.commands.figures",
    "app.commands.corrections",
    "app.commands.template",
    "app.commands.lsp",
)
# The lab's verbs (training, evaluation, benchmarks, data), listed apart in --help; their modules
# live in app/commands/lab/.
LAB_COMMAND_MODULES = (
    "app.commands.lab.train",
    "app.commands.lab.export",
    "app.commands.lab.corpus",
    "app.commands.lab.data",
    "app.commands.lab.eval",
    "app.commands.lab.bench",
)
COMMAND_MODULES = USER_COMMAND_MODULES + LAB_COMMAND_MODULES
LAB_TITLE = "lab commands"
LAB_DESCRIPTION = ("How the model is trained, measured and shipped (README, 'The lab'); "
                   "an author never needs them.")


class Parser(argparse.ArgumentParser):
    """argparse with the CLI's error contract: a bad argument prints exactly one line,
    ``rhetorica: error: <command>: <message>``, on stderr (no usage block) and exits 2. Every
    subcommand's parser is one of these too (``add_subparsers`` makes children of the same class)."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("rhetorica").strip()
        self.exit(2, error_line(f"{command}: {message}" if command else message) + "\n")


def error_line(message: object) -> str:
    """``rhetorica: error: …`` on one line (newlines folded, undecodable bytes as escapes)."""
    text = " ".join(str(message).split())
    return "rhetorica: error: " + text.encode("utf-8", "backslashreplace").decode("utf-8")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="rhetorica",
        description="Offline writing assistant for scientific authors.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name in USER_COMMAND_MODULES:
        importlib.import_module(name).add_parser(subparsers)
    user_verbs = set(subparsers.choices)
    for name in LAB_COMMAND_MODULES:
        if (module := _lab_module(name)) is not None:
            module.add_parser(subparsers)
    lab_verbs = [verb for verb in subparsers.choices if verb not in user_verbs]
    list_apart(parser, subparsers, lab_verbs, LAB_TITLE, LAB_DESCRIPTION)
    return parser


def _lab_module(name: str) -> ModuleType | None:
    """A lab command's module; None only in the packaged app when the build left it out on purpose
    (packaging/rhetorica.spec, LEFT_OUT_COMMANDS: training needs torch). From a source tree a
    missing module stays an ImportError at start-up."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if getattr(sys, "frozen", False) and error.name == name:
            return None
        raise


def main(argv: Sequence[str] | None = None) -> int:
    # A library's warning (torch, onnxruntime, numpy) is one "rhetorica: note:" line, not a
    # multi-line report with a source line: stderr stays readable and machine-checkable.
    with warnings.catch_warnings():
        warnings.showwarning = _note
        return _main(argv)


def _note(message: Warning | str, category: type[Warning], filename: str, lineno: int,
          file: object = None, line: str | None = None) -> None:
    text = " ".join(str(message).split())
    print(f"rhetorica: note: {text[:300]}", file=sys.stderr)


class _NoteHandler(logging.Handler):
    """A record of the ``rhetorica.library`` logger (an index a library repaired by itself, whatever
    command opened it) as one ``rhetorica: note:`` line; sys.stderr is looked up at each record."""

    def emit(self, record: logging.LogRecord) -> None:
        print(f"rhetorica: note: {record.getMessage()}", file=sys.stderr, flush=True)


def _print_library_notices() -> None:
    logger = logging.getLogger("rhetorica.library")
    if not any(isinstance(h, _NoteHandler) for h in logger.handlers):
        logger.addHandler(_NoteHandler())
        logger.propagate = False


def _main(argv: Sequence[str] | None) -> int:
    _print_library_notices()
    for stream in (sys.stdout, sys.stderr):  # paths and text the locale cannot encode: escaped, not a crash
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
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
        print(error_line(error), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rhetorica: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except MemoryError:
        print(error_line("out of memory (is an input far larger than it should be?)"), file=sys.stderr)
        return 2
    except OSError as error:  # the last net: the commands check their paths first, so this is rare
        print(error_line(_os_error(error)), file=sys.stderr)
        return 2


def _os_error(error: OSError) -> str:
    """One line for a file-system failure the command did not foresee (a folder removed meanwhile,
    a disk that went away, permissions)."""
    reason = error.strerror or str(error) or type(error).__name__
    names = [str(n) for n in (error.filename, error.filename2) if n is not None]
    return f"{' -> '.join(names)}: {reason}" if names else reason


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
