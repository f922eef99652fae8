"""``rhetorica corrections list|add|remove|export|import``: your corrections of sentence labels (issue 15).

Corrections live in the library's database (``core.library.corrections``); ``rhetorica train
corrections`` trains on them. The GUI stores them from the page view, inspector and draft pane.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    help_text = "Your corrections of sentence roles and functions (kept in the library; train on them)."
    parser = subparsers.add_parser("corrections", help=help_text, description=help_text)
    children = parser.add_subparsers(dest="corrections_command", metavar="WHAT")

    def child(name: str, text: str) -> argparse.ArgumentParser:
        sub = children.add_parser(name, help=text, description=text)
        sub.add_argument("--library", type=Path, default=None, metavar="DIR",
                         help="library folder (default: the user data folder's library/)")
        return sub

    listing = child("list", "List the corrections (newest last) and how many there are of each kind.")
    listing.set_defaults(func=run_list)
    add = child("add", "Correct one sentence's role (or --function) by hand.")
    add.add_argument("text", help="the sentence")
    add.add_argument("label", help="the right role (background, objective, method, result, conclusion, "
                     "other) or, with --function, a function id of the taxonomy")
    add.add_argument("--function", action="store_true", help="LABEL is a communicative function")
    add.add_argument("--section-kind", default="", help="the sentence's section kind (e.g. discussion)")
    add.add_argument("--doc-id", default="manual", help="the paper it belongs to (default 'manual')")
    add.set_defaults(func=run_add)
    remove = child("remove", "Remove a correction by its id (from 'list').")
    remove.add_argument("id", type=int)
    remove.set_defaults(func=run_remove)
    export = child("export", "Write every correction as JSONL (the generic training format).")
    export.add_argument("out", type=Path)
    export.set_defaults(func=run_export)
    imported = child("import", "Add the corrections of a JSONL file (an export, or rows with 'text' and "
                     "'label').")
    imported.add_argument("file", type=Path)
    imported.set_defaults(func=run_import)
    parser.set_defaults(func=lambda args: parser.print_help() or 2)


def _open(args: argparse.Namespace):
    from core.library.library import Library
    from core.paths import library_dir

    return Library(args.library if args.library is not None else library_dir())


def _known_functions() -> frozenset[str]:
    from core.functions import default_taxonomy

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
    from core.library.corrections import Corrections

    with _open(args) as library:
        count = Corrections(library.store).export_jsonl(args.out)
    print(f"{count} correction(s) written to {args.out}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from core.library.corrections import Corrections

    with _open(args) as library:
        count = Corrections(library.store).import_jsonl(args.file, _known_functions())
    print(f"{count} correction(s) added or updated from {args.file}")
    return 0
