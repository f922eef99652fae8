"""``rhetorica corrections list|add|remove|export|import``: your corrections of sentence labels (issue 15).

Corrections live in the library's database (``core.library.corrections``); ``rhetorica train
corrections`` trains on them. The GUI stores them from the page view, inspector and draft pane.
"""

from __future__ import annotations

import argparse

from app.commands._options import bounded_int, path_arg, text_arg
from core.document import SectionKind

JSONL_LIMIT = 200_000_000  # bytes: a corrections file is kilobytes


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    help_text = "Your corrections of sentence roles and functions (kept in the library; train on them)."
    parser = subparsers.add_parser("corrections", help=help_text, description=help_text)
    children = parser.add_subparsers(dest="corrections_command", metavar="WHAT")

    def child(name: str, text: str) -> argparse.ArgumentParser:
        sub = children.add_parser(name, help=text, description=text)
        sub.add_argument("--library", type=path_arg, default=None, metavar="DIR",
                         help="library folder (default: the user data folder's library/)")
        return sub

    listing = child("list", "List the corrections (newest last) and how many there are of each kind.")
    listing.set_defaults(func=run_list)
    add = child("add", "Correct one sentence's role (or --function) by hand.")
    add.add_argument("text", type=_sentence, help="the sentence")
    add.add_argument("label", type=text_arg,
                     help="the right role (background, objective, method, result, conclusion, "
                     "other) or, with --function, a function id of the taxonomy")
    add.add_argument("--function", action="store_true", help="LABEL is a communicative function")
    kinds = [kind.value for kind in SectionKind]
    add.add_argument("--section-kind", default="", metavar="KIND", choices=kinds,
                     help="the sentence's section kind: " + ", ".join(kinds) + " (default: none given)")
    add.add_argument("--doc-id", default="manual", type=text_arg,
                     help="the paper it belongs to (default 'manual')")
    add.set_defaults(func=run_add)
    remove = child("remove", "Remove a correction by its id (from 'list').")
    remove.add_argument("id", type=bounded_int(1, 2**63 - 1))
    remove.set_defaults(func=run_remove)
    export = child("export", "Write every correction as JSONL (the generic training format).")
    export.add_argument("out", type=path_arg)
    export.set_defaults(func=run_export)
    imported = child("import", "Add the corrections of a JSONL file (an export, or rows with 'text' and "
                     "'label').")
    imported.add_argument("file", type=path_arg)
    imported.set_defaults(func=run_import)
    parser.set_defaults(func=lambda args: parser.print_help() or 2)


def _sentence(text: str) -> str:
    text_arg(text)
    if not text.strip():
        raise argparse.ArgumentTypeError("the sentence is empty")
    return text


def _open(args: argparse.Namespace):
    from app.commands._options import check_input_folder
    from core.library.library import Library
    from core.paths import library_dir

    if args.library is not None and args.library.exists():
        check_input_folder(args.library, "a library folder")
    return Library(args.library if args.library is not None else library_dir())


def _known_functions() -> frozenset[str]:
    from core.taxonomy.functions import default_taxonomy

    return frozenset(f.id for f in default_taxonomy().functions)


def run_list(args: argparse.Namespace) -> int:
    from core.library.corrections import Corrections

    with _open(args) as library:
        corrections = Corrections(library.store)
        rows = corrections.all()
        counts = corrections.counts()
    for c in rows:
        was = f" (was {c.predicted})" if c.predicted else ""
        print(f"{c.id:>5}  {c.field:<8} {c.corrected:<24}{was:<22} {c.text[:70]}")
    by_role = ", ".join(f"{k} {v}" for k, v in sorted(counts.by_role.items())) or "none"
    print(f"{counts.role} role correction(s) ({by_role}), {counts.function} function correction(s)")
    return 0


def run_add(args: argparse.Namespace) -> int:
    from core.library.corrections import Correction, Corrections

    field = "function" if args.function else "role"
    with _open(args) as library:
        stored = Corrections(library.store).add(
            Correction(doc_id=args.doc_id, text=args.text, field=field, corrected=args.label,
                       section_kind=args.section_kind), _known_functions())
    print(f"correction {stored.id} stored: {field} = {stored.corrected}")
    return 0


def run_remove(args: argparse.Namespace) -> int:
    from core.errors import RhetoricaError
    from core.library.corrections import Corrections

    with _open(args) as library:
        if not Corrections(library.store).remove(args.id):
            raise RhetoricaError(f"no correction with id {args.id} ('rhetorica corrections list' shows them)")
    print(f"correction {args.id} removed")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from app.commands._options import check_output_file
    from core.library.corrections import Corrections
    from core.paths import library_dir

    folder = args.library if args.library is not None else library_dir()
    library_files = [p for p in folder.glob("*") if p.is_file()] if folder.is_dir() else []
    check_output_file(args.out, "OUT", inputs=library_files)
    with _open(args) as library:
        count = Corrections(library.store).export_jsonl(args.out)
    print(f"{count} correction(s) written to {args.out}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from core.fileio import read_text_input
    from core.library.corrections import Corrections

    # The file is checked (exists, size, UTF-8) before the library opens.
    read_text_input(args.file, "a JSONL file of corrections", max_bytes=JSONL_LIMIT)
    with _open(args) as library:
        count = Corrections(library.store).import_jsonl(args.file, _known_functions())
    print(f"{count} correction(s) added or updated from {args.file}")
    return 0
