"""``rhetorica library add|import-jsonl|remove|list|stats|rebuild``: the user's library of papers."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from app.commands._options import add_model_options, progress_line


def _library_dir(args: argparse.Namespace) -> Path:
    from core.paths import library_dir

    return args.library if args.library is not None else library_dir()


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    help_text = "Manage your library of papers (sentences, labels and embeddings for suggestions and search)."
    parser = subparsers.add_parser("library", help=help_text, description=help_text)
    children = parser.add_subparsers(dest="library_command", metavar="WHAT")

    def child(name: str, help_: str, func: Any, model: bool = False) -> argparse.ArgumentParser:
        sub = children.add_parser(name, help=help_, description=help_)
        sub.add_argument("--library", type=Path, default=None, metavar="DIR",
                         help="library folder (default: the user data folder's library/)")
        sub.add_argument("--quiet", action="store_true", help="no progress line")
        if model:
            add_model_options(sub)
        sub.set_defaults(func=func)
        return sub

    add = child("add", "add PDFs (files or folders of PDFs); duplicates are skipped", _add, model=True)
    add.add_argument("paths", type=Path, nargs="+", metavar="PATH")
    add.add_argument("--workers", type=int, default=None,
                     help="processes that parse PDFs while this one labels them (default: cores - 1, at "
                          "least 1; 0: parse here)")
    jsonl = child("import-jsonl", 'add the papers of a JSONL file ({"id","title","abstract"} or '
                  '{"id","title","sentences"} per line)', _import_jsonl, model=True)
    jsonl.add_argument("file", type=Path)
    jsonl.add_argument("--note", default="", help="licence or source note stored with each paper")
    remove = child("remove", "remove a paper by its id", _remove)
    remove.add_argument("paper_id")
    listing = child("list", "the papers in the library", _list)
    listing.add_argument("--json", action="store_true")
    child("stats", "counts and size", _stats)
    child("rebuild", "recreate the search indexes from the database", _rebuild)
    parser.set_defaults(func=lambda args: parser.print_help() or 2)


def _pdfs(paths: list[Path]) -> list[Path]:
    from core.errors import MissingFileError

    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix.lower() == ".pdf" and p.is_file()))
        elif path.is_file():
            found.append(path)
        else:
            raise MissingFileError(str(path), "no such file or folder")
    return found


def _print_report(report: Any, quiet: bool) -> None:
    if not quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    for source, reason in report.skipped:
        print(f"skipped {source}: {reason}")
    print(f"added {len(report.added)} paper(s), {report.sentences} sentences")


def _add(args: argparse.Namespace) -> int:
    from core.jobs import JobContext
    from core.library.library import Library
    from models.encoder import load_model

    pdfs = _pdfs(args.paths)
    model = load_model(args.model, device=args.device, threads=args.threads)
    started = time.perf_counter()
    with Library(_library_dir(args)) as library:
        workers = args.workers if args.workers is not None else max(1, (os.cpu_count() or 2) - 1)
        report = library.add_pdfs(pdfs, model, JobContext(progress_line(args.quiet)), workers=workers)
    _print_report(report, args.quiet)
    seconds = time.perf_counter() - started
    print(f"{seconds:.1f} s: {report.sentences / max(seconds, 1e-9):.0f} sentences/s end to end "
          f"(parse, label, embed both views, index; {workers} parse worker(s))")
    return 0


def _import_jsonl(args: argparse.Namespace) -> int:
    from core.jobs import JobContext
    from core.library.library import Library
    from models.encoder import load_model

    model = load_model(args.model, device=args.device, threads=args.threads)
    with Library(_library_dir(args)) as library:
        report = library.import_jsonl(args.file, model, note=args.note,
                                      ctx=JobContext(progress_line(args.quiet)))
    _print_report(report, args.quiet)
    return 0


def _remove(args: argparse.Namespace) -> int:
    from core.library.library import Library

    with Library(_library_dir(args)) as library:
        count = library.remove(args.paper_id)
    print(f"removed {args.paper_id} ({count} sentences)")
    return 0


def _list(args: argparse.Namespace) -> int:
    from core.library.library import Library

    with Library(_library_dir(args)) as library:
        papers = library.store.papers()
    if args.json:
        print(json.dumps([{"paper_id": p.paper_id, "title": p.title, "kind": p.kind, "source": p.source,
                           "sentences": p.sentence_count, "model_id": p.model_id} for p in papers], indent=2))
        return 0
    if not papers:
        print("the library is empty: add papers with 'rhetorica library add PDF…'")
    for p in papers:
        print(f"{p.paper_id[:16]:16}  {p.sentence_count:5d}  {p.kind:5}  {p.title[:70]}")
    return 0


def _stats(args: argparse.Namespace) -> int:
    from core.library.library import Library

    folder = _library_dir(args)
    with Library(folder) as library:
        stats = library.stats()
    print(json.dumps({"library": str(folder), "papers": stats.papers, "sentences": stats.sentences,
                      "models": stats.models, "database_mb": round(stats.database_bytes / 1e6, 2)}, indent=2))
    return 0


def _rebuild(args: argparse.Namespace) -> int:
    from core.jobs import JobContext
    from core.library.library import Library

    with Library(_library_dir(args)) as library:
        library.rebuild(JobContext(progress_line(args.quiet)))
        count = library.stats().sentences
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    print(f"rebuilt the indexes of {count} sentences")
    return 0
