"""``rhetorica lsp``: a language server on stdin/stdout for any editor with an LSP client.

Each sentence of an open ``.tex``/``.md``/``.txt`` document gets its role and function (inlay hints or
hint diagnostics), a hover with the function, its confidence and the top suggestions with their sources,
an "Insert template" code action per suggestion whose template has a [CONTENT] slot and, on each
section's heading, the draft checklist ("No sentence of your introduction clearly makes this move: an
aim statement"). The options give the starting settings; an editor's ``initializationOptions`` and
``workspace/didChangeConfiguration`` override them (docs/lsp.md). A ``--corpus``/``--library`` folder
that does not exist, is a file or holds no phrase corpus or library does not stop the server: one
warning line (stderr, or the ``--log`` file) and, once the editor has connected, one message in the
editor; the default folder is used. Needs the ``lsp`` extra (pygls).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from app.commands._options import add_model_options, bounded_int, path_arg, plain_help

if TYPE_CHECKING:  # pragma: no cover
    from app.lsp.settings import LspSettings

LABEL_MODES = ("inlay", "diagnostics", "both", "off")  # app.lsp.settings.LABEL_MODES (not imported here)
CHECKLIST_KINDS = ("abstract", "introduction", "discussion", "conclusion")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    help_text = "Language server (LSP, stdio): roles, functions, suggestions and the checklist in any editor."
    parser = subparsers.add_parser("lsp", help=help_text, description=plain_help(__doc__.split("\n\n")[1]))
    parser.add_argument("--stdio", action="store_true",
                        help="talk over stdin/stdout (the default and only transport; accepted for clients "
                             "that pass it)")
    parser.add_argument("--labels", choices=LABEL_MODES, default="inlay",
                        help="how sentence labels are shown (default: inlay hints)")
    parser.add_argument("--suggestions", type=bounded_int(0, 10), default=3, metavar="N",
                        help="suggestions in a hover, 0 to 10 (default 3)")
    parser.add_argument("--sources", choices=("all", "corpus", "library", "none"), default="all",
                        help="where suggestions come from (default: all)")
    parser.add_argument("--corpus", type=path_arg, default=None, metavar="DIR",
                        help="phrase corpus folder (default: the bundled or built corpus)")
    parser.add_argument("--library", type=path_arg, default=None, metavar="DIR",
                        help="library folder (default: your library)")
    parser.add_argument("--checklist-kind", choices=CHECKLIST_KINDS, default=None,
                        help="check a draft without headings as this section")
    parser.add_argument("--log", type=path_arg, default=None, metavar="FILE",
                        help="write the server's log here (default: warnings on stderr)")
    add_model_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import logging

    from app.commands._options import check_output_file
    from core.errors import RhetoricaError

    try:
        from app.lsp.server import build_server
    except ImportError as error:
        if str(error.name).split(".")[0] not in ("pygls", "lsprotocol"):
            raise
        raise RhetoricaError("the language server needs pygls: pip install 'rhetorica[lsp]'") from None
    from models.encoder import load_model

    check_output_file(args.log, "--log")
    settings, notes = start_settings(args)
    logging.basicConfig(filename=args.log, level=logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.log:  # each labelling run and request in the log file; pygls's own chatter stays out
        logging.getLogger("rhetorica.lsp").setLevel(logging.INFO)
    for note in notes:
        logging.getLogger("rhetorica.lsp").warning(note)
    model = load_model(args.model, device=args.device, threads=args.threads)  # once per server
    server = build_server(model, settings, version=_version(), notes=notes)
    server.start_io()
    return 0


def start_settings(args: argparse.Namespace) -> tuple[LspSettings, list[str]]:
    """The settings the options give, and one line per ``--corpus``/``--library`` folder that cannot be
    used (that option then keeps its default: the server starts, and says so)."""
    from app.lsp.settings import FOLDER_WHAT, LspSettings, folder_problem

    notes: list[str] = []
    folders: dict[str, str | None] = {}
    for name in ("corpus", "library"):
        given = getattr(args, name)
        problem = folder_problem(given, name) if given is not None else ""
        if problem:
            notes.append(f"rhetorica lsp --{name}: {problem}; using {FOLDER_WHAT[name][1]}")
        folders[name] = str(given) if given is not None and not problem else None
    settings = LspSettings(labels=args.labels, suggestions=args.suggestions, sources=args.sources,
                           corpus=folders["corpus"], library=folders["library"],
                           checklist_kind=args.checklist_kind)
    return settings, notes


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rhetorica")
    except PackageNotFoundError:
        return "0"
