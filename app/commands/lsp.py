"""``rhetorica lsp``: a language server on stdin/stdout for any editor with an LSP client.

Each sentence of an open ``.tex``/``.md``/``.txt`` document gets its role and function (inlay hints
or hint diagnostics), a hover with the function, its confidence and the top suggestions with their
sources, an "Insert template" code action per suggestion and, on each section's heading, the draft
checklist ("Your introduction never makes this move: an aim statement"). The options give the
starting settings; an editor's ``initializationOptions`` and ``workspace/didChangeConfiguration``
override them (docs/lsp.md). Needs the ``lsp`` extra (pygls).
"""

from __future__ import annotations

import argparse

from app.commands._options import add_model_options, bounded_int, path_arg

LABEL_MODES = ("inlay", "diagnostics", "both", "off")  # app.lsp.settings.LABEL_MODES (not imported here)
CHECKLIST_KINDS = ("abstract", "introduction", "discussion", "conclusion")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    help_text = "Language server (LSP, stdio): roles, functions, suggestions and the checklist in any editor."
    parser = subparsers.add_parser("lsp", help=help_text, description=__doc__.split("\n\n")[1])
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

    from app.commands._options import check_input_folder, check_output_file
    from core.errors import RhetoricaError

    try:
        from app.lsp.server import build_server
    except ImportError as error:
        if str(error.name).split(".")[0] not in ("pygls", "lsprotocol"):
            raise
        raise RhetoricaError("the language server needs pygls: pip install 'rhetorica[lsp]'") from None
    from app.lsp.settings import LspSettings
    from models.encoder import load_model

    for what, given in (("a phrase-corpus folder", args.corpus), ("a library folder", args.library)):
        if given is not None and given.exists():
            check_input_folder(given, what)
    check_output_file(args.log, "--log")
    settings = LspSettings(labels=args.labels, suggestions=args.suggestions, sources=args.sources,
                           corpus=str(args.corpus) if args.corpus else None,
                           library=str(args.library) if args.library else None,
                           checklist_kind=args.checklist_kind)
    logging.basicConfig(filename=args.log, level=logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.log:  # each labelling run and request in the log file; pygls's own chatter stays out
        logging.getLogger("rhetorica.lsp").setLevel(logging.INFO)
    model = load_model(args.model, device=args.device, threads=args.threads)  # once per server
    server = build_server(model, settings, version=_version())
    server.start_io()
    return 0


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rhetorica")
    except PackageNotFoundError:
        return "0"
