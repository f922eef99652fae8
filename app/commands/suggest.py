"""``rhetorica suggest "SENTENCE"`` or ``--input FILE``: functionally similar phrasings from real papers."""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from typing import TYPE_CHECKING

from app.commands._options import (
    add_model_options,
    bounded_int,
    check_input_folder,
    path_arg,
    sentence_arg,
    text_arg,
)
from core.document import SectionKind

if TYPE_CHECKING:  # pragma: no cover
    from core.phrasing.suggest import SuggestionResult

MAX_K = 100  # core.phrasing.suggest.MAX_K (not imported at startup)
TITLE_CHARS = 70  # a source's title is cut (with "…") past this


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    help_text = ("Real sentences from the phrase corpus and your library that do the same rhetorical job "
                 "as SENTENCE (or each line of --input).")
    parser = subparsers.add_parser("suggest", help=help_text, description=help_text)
    parser.add_argument("sentence", nargs="?", default=None, type=sentence_arg)
    parser.add_argument("--input", type=path_arg, default=None, metavar="FILE",
                        help="one sentence per line (UTF-8); writes one JSON object per line")
    parser.add_argument("-k", type=bounded_int(1, MAX_K), default=10,
                        help=f"suggestions per sentence, 1 to {MAX_K} (default 10)")
    parser.add_argument("--function", default=None, metavar="F", type=text_arg,
                        help="only sentences with this function id")
    kinds = [kind.value for kind in SectionKind]
    parser.add_argument("--section", default=None, metavar="KIND", choices=kinds,
                        help="only sentences from this section kind: " + ", ".join(kinds))
    parser.add_argument("--source", choices=("corpus", "library", "all"), default="all",
                        help="where suggestions come from: corpus (the phrase corpus), library (your "
                        "library of papers) or all (both; the default)")
    parser.add_argument("--library", type=path_arg, default=None, metavar="DIR",
                        help="library folder (default: the user data folder's library/)")
    parser.add_argument("--corpus", type=path_arg, default=None, metavar="DIR",
                        help="phrase corpus folder (default: the bundled or built corpus)")
    parser.add_argument("--json", action="store_true", help="print JSON (always, with --input)")
    add_model_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.errors import RhetoricaError
    from core.fileio import read_text_input
    from core.phrasing.suggestion_sources import (
        ADD_SOURCES,
        SuggestionRequest,
        available_templater,
        opened_sources,
        search,
        source_folders,
    )
    from models.encoder import load_model

    if (args.sentence is None) == (args.input is None):
        raise RhetoricaError("suggest: give a SENTENCE or --input FILE (one of them)")
    lines: list[str] = []
    if args.input is not None:
        lines = [line.strip() for line in read_text_input(args.input, "a text file of sentences").splitlines()
                 if line.strip()]
        if not lines:
            raise RhetoricaError(f"{args.input}: no sentences (every line is blank): give one sentence "
                                 "per line")
    # A path given by hand that is a file is a mistake worth naming (a missing folder just holds nothing).
    for what, given in (("a library folder", args.library), ("a phrase-corpus folder", args.corpus)):
        if given is not None and given.exists():
            check_input_folder(given, what)
    folders = source_folders(args.source, args.corpus, args.library)
    if not folders:
        given = [str(folder) for kind, folder in (("corpus", args.corpus), ("library", args.library))
                 if args.source in (kind, "all") and folder is not None]
        where = f" ({', '.join(given)} holds no library or phrase corpus)" if given else ""
        raise RhetoricaError(f"nothing to suggest from{where}: {ADD_SOURCES}")
    templater = available_templater()
    model = load_model(args.model, device=args.device, threads=args.threads)
    _check_function(args.function, model.function_ids)
    with opened_sources(folders, model) as opened:
        for line in lines or [args.sentence]:
            result = search(opened, SuggestionRequest(line, args.k, args.function, args.section), model,
                            templater)
            if args.input is not None:
                print(json.dumps(result.to_dict(), ensure_ascii=False), flush=True)
        for error in opened.left_out:
            print(f"rhetorica: warning: suggestions from the phrase corpus only: {error}", file=sys.stderr)
    if args.input is not None:
        return 0
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return 0
    _print_result(result)
    return 0


def _print_result(result: SuggestionResult) -> None:
    """The suggestions, most similar first: similarity, sentence, template, and where each comes from
    (its function's name · corpus or library: the source's title · its section)."""
    from core.taxonomy.functions import default_taxonomy
    from core.taxonomy.labels import NO_FUNCTION

    taxonomy = default_taxonomy()
    query = result.query
    print(f"{query['role']} / {query['function'] or '-'}: {query['text']}")
    if not result.suggestions:
        print("  (no suggestions: try --source all, or add papers to your library)")
    for number, item in enumerate(result.suggestions, 1):
        source = item.source
        print(f"{number:2d}. {item.similarity:.2f}  {item.text}")
        if item.template:
            print(f"      template: {item.template}")
        doing = taxonomy.name_of(item.function) if item.function and item.function != NO_FUNCTION else "-"
        title = source["title"]
        title = title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"
        print(f"      {doing} · {source['kind']}: {title} · {source['section'] or 'no section'}")


def _check_function(function: str | None, known: tuple[str, ...]) -> None:
    """An unknown --function id is a mistake to name (it would filter every suggestion out)."""
    from core.errors import RhetoricaError

    if function is not None and known and function not in known and function != "none":
        close = difflib.get_close_matches(function, known, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise RhetoricaError(f"--function {function}: not a function id of this model{hint}")
