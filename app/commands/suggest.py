"""``rhetorica suggest "SENTENCE"`` or ``--input FILE``: functionally similar phrasings from real papers."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.commands._options import add_model_options


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    help_text = ("Real sentences from the phrase corpus and your library that do the same rhetorical job "
                 "as SENTENCE (or each line of --input).")
    parser = subparsers.add_parser("suggest", help=help_text, description=help_text)
    parser.add_argument("sentence", nargs="?", default=None)
    parser.add_argument("--input", type=Path, default=None, metavar="FILE",
                        help="one sentence per line; writes one JSON object per line")
    parser.add_argument("-k", type=int, default=10, help="suggestions per sentence (default 10)")
    parser.add_argument("--function", default=None, metavar="F", help="only sentences with this function id")
    parser.add_argument("--section", default=None, metavar="KIND",
                        help="only sentences from this section kind")
    parser.add_argument("--source", choices=("corpus", "library", "all"), default="all")
    parser.add_argument("--library", type=Path, default=None, metavar="DIR")
    parser.add_argument("--corpus", type=Path, default=None, metavar="DIR",
                        help="phrase corpus folder (default: the bundled or built corpus)")
    parser.add_argument("--json", action="store_true", help="print JSON (always, with --input)")
    add_model_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from contextlib import ExitStack

    from core.errors import MissingFileError
    from core.paths import corpus_dir, library_dir
    from core.suggest import has_sentences, open_source, suggest
    from models.encoder import load_model

    if (args.sentence is None) == (args.input is None):
        print("rhetorica suggest: give a SENTENCE or --input FILE (one of them)", file=sys.stderr)
        return 2
    if args.input is not None and not args.input.is_file():
        raise MissingFileError(str(args.input), "no such file")
    wanted = [("corpus", args.corpus or corpus_dir()), ("library", args.library or library_dir())]
    folders = [(kind, folder) for kind, folder in wanted
               if args.source in (kind, "all") and has_sentences(folder)]
    if not folders:
        print("rhetorica suggest: nothing to suggest from: build the phrase corpus with 'rhetorica corpus "
              "build' or add papers with 'rhetorica library add PDF…'", file=sys.stderr)
        return 2
    templater = _templater()
    model = load_model(args.model, device=args.device, threads=args.threads)
    with ExitStack() as stack:
        sources = [open_source(kind, folder, model) for kind, folder in folders]
        for opened in sources:
            stack.callback(opened.library.close)
        if args.input is not None:
            for line in args.input.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    result = suggest(line.strip(), model, sources, args.k, function=args.function,
                                     section_kind=args.section, templater=templater)
                    print(json.dumps(result.to_dict(), ensure_ascii=False), flush=True)
            return 0
        result = suggest(args.sentence, model, sources, args.k, function=args.function,
                         section_kind=args.section, templater=templater)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return 0
    query = result.query
    print(f"{query['role']} / {query['function'] or '-'}: {query['text']}")
    if not result.suggestions:
        print("  (no suggestions: try --source all, or add papers to your library)")
    for number, item in enumerate(result.suggestions, 1):
        source = item.source
        print(f"{number:2d}. {item.similarity:.2f}  {item.text}")
        if item.template:
            print(f"      template: {item.template}")
        where = f"{source['kind']}: {source['title'][:60]} ({source['section'] or '-'})"
        print(f"      {item.function or '-'} · {where}")
    return 0


def _templater():  # type: ignore[no-untyped-def]
    """The formulaic-span extractor, when it is built."""
    try:
        from core.templates import template_of
    except ImportError:
        return None
    return template_of
