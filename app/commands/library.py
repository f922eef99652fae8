"""``rhetorica library add|import-jsonl|remove|list|stats|rebuild|doctor``: the user's library of papers.

``library add --zotero [DATA_DIR]`` adds the PDFs of a Zotero library (default data folder ``~/Zotero``) with
each item's key, title, authors, year and DOI; run again, it adds only new and changed items, and reports
(never removes) the papers whose items are gone from Zotero (``core.library.zotero_sync``).

What a library repaired by itself (an index file that failed its integrity check, rebuilt) is printed
as ``rhetorica: note: …`` on stderr, by these commands and, through the ``rhetorica.library`` logger
this module sets up when the parser is built, by every other command that opens a library.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from app.commands._options import add_model_options, bounded_int, progress_line, text_arg


def _library_dir(args: argparse.Namespace) -> Path:
    from core.paths import library_dir

    return args.library if args.library is not None else library_dir()


def note(message: str) -> None:
    """A library notice, one line on stderr."""
    print(f"rhetorica: note: {message}", file=sys.stderr, flush=True)


def _open(args: argparse.Namespace) -> Any:
    """The library, created where there is none yet (the commands that add papers)."""
    from core.library.library import Library

    return Library(_library_dir(args), on_notice=note)


def _open_existing(args: argparse.Namespace) -> Any:
    """The library; a ``--library`` folder without one is an error ("no library at …": a mistyped path),
    never a new empty library there. The user's own library (no ``--library``) may be empty: it lives in
    the user data folder and is made there on first use."""
    from core.library.store import require_library

    if args.library is not None:
        require_library(args.library)
    return _open(args)


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

    add = child("add", "add PDFs (files or folders of PDFs), or the PDFs of a Zotero library (--zotero); "
                "duplicates are skipped", _add, model=True)
    add.add_argument("paths", type=Path, nargs="*", metavar="PATH")
    add.add_argument("--zotero", nargs="?", const=ZOTERO_DEFAULT, default=None, metavar="DATA_DIR",
                     help="add the PDFs of the Zotero library in Zotero's data folder DATA_DIR, the one that "
                          "holds zotero.sqlite (default: ~/Zotero; Zotero › Settings › Advanced › Files and "
                          "Folders › Data Directory Location; not Zotero's profile folder), with their "
                          "titles, authors, years and DOIs; again later, only new and changed items")
    add.add_argument("--zotero-base", type=Path, default=None, metavar="DIR",
                     help="Zotero's base folder for linked attachments (Settings › Advanced › Files and "
                          "Folders), for linked files stored relative to it")
    add.add_argument("--workers", type=bounded_int(0, 256), default=None,
                     help="processes that parse PDFs while this one labels them (default: cores - 1, at "
                          "least 1; 0: parse here)")
    jsonl = child("import-jsonl", 'add the papers of a JSONL file ({"id","title","abstract"} or '
                  '{"id","title","sentences"} per line)', _import_jsonl, model=True)
    jsonl.add_argument("file", type=Path)
    jsonl.add_argument("--note", default="", help="licence or source note stored with each paper")
    remove = child("remove", "remove a paper by its id", _remove)
    remove.add_argument("paper_id", type=text_arg)
    listing = child("list", "the papers in the library", _list)
    listing.add_argument("--json", action="store_true",
                         help="print the papers as a JSON list (paper_id, title, kind, source, sentences, "
                              "model_id; authors, year, doi and source_key for papers from Zotero)")
    child("stats", "counts and size", _stats)
    child("rebuild", "recreate the search indexes from the database", _rebuild)
    doctor = child("doctor", "check the library and repair it: rebuild damaged indexes, salvage the papers "
                   "of a damaged database into a new one (the old file is kept)", _doctor)
    doctor.add_argument("--check", action="store_true", help="only check and report (exit 1 when damaged)")
    parser.set_defaults(func=lambda args: parser.print_help() or 2)


def _pdfs(paths: list[Path]) -> tuple[list[Path], list[tuple[str, str]]]:
    """The PDFs the paths name, and (path, reason) for folders without one; a path that does not
    exist is an error."""
    from core.library.library import find_pdfs, refuse_bad_paths

    pdfs, skipped = find_pdfs(paths)
    refuse_bad_paths(skipped)
    return pdfs, skipped


def _reason(source: str, reason: str) -> str:
    """The reason a file was skipped, without the path it repeats, with a hint for abstracts files."""
    reason = reason.removeprefix(f"{source}: ")
    if Path(source).suffix.lower() in (".jsonl", ".json") and "PDF" in reason:
        return f"{reason} (abstracts files are added with 'rhetorica library import-jsonl FILE')"
    return reason


def _print_report(report: Any, quiet: bool) -> None:
    """Papers already there on stdout (nothing went wrong); files that could not be added and
    refused lines on stderr; then the summary line."""
    from core.library.library import ALREADY_THERE

    if not quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    for source, reason in report.skipped:
        if reason == ALREADY_THERE:
            print(f"skipped {source}: {reason}")
        else:
            note(f"skipped {source}: {_reason(source, reason)}")
    for line in report.refused:
        note(str(line))
    print(f"added {len(report.added)} paper(s), {report.sentences} sentences")


ZOTERO_DEFAULT = "~/Zotero"


def _add(args: argparse.Namespace) -> int:
    from core.jobs import JobContext
    from core.library.store import LibraryError
    from models.encoder import load_model

    if args.zotero is not None and args.paths:
        raise LibraryError("give PDF files or folders, or --zotero, not both")
    if args.zotero is not None:
        return _add_zotero(args)
    if args.zotero_base is not None:
        raise LibraryError("--zotero-base goes with --zotero")
    if not args.paths:
        raise LibraryError("nothing to add: give PDF files or folders, or --zotero [DATA_DIR] (Zotero's "
                           "data folder, default ~/Zotero) for the PDFs of a Zotero library")
    pdfs, skipped = _pdfs(args.paths)
    model = load_model(args.model, device=args.device, threads=args.threads)
    started = time.perf_counter()
    with _open(args) as library:
        workers = args.workers if args.workers is not None else max(1, (os.cpu_count() or 2) - 1)
        report = library.add_pdfs(pdfs, model, JobContext(progress_line(args.quiet)), workers=workers)
    report.skipped[:0] = skipped
    _print_report(report, args.quiet)
    seconds = time.perf_counter() - started
    print(f"{seconds:.1f} s: {report.sentences / max(seconds, 1e-9):.0f} sentences/s end to end "
          f"(parse, label, embed both views, index; {workers} parse worker(s))")
    if report.failed and not report.added:
        print(f"rhetorica: error: nothing was added: {len(report.failed)} file(s) could not be added "
              "(the notes above say why)", file=sys.stderr)
        return 1
    return 0


def _add_zotero(args: argparse.Namespace) -> int:
    """Sync a Zotero library: read a copy of its database, compare with the last sync, add what is
    new or changed (the model is loaded only when there is something to label)."""
    from core.jobs import JobContext
    from core.library.zotero import read_zotero
    from core.library.zotero_sync import apply_sync, plan_sync

    started = time.perf_counter()
    ctx = JobContext(progress_line(args.quiet))
    snapshot = read_zotero(Path(args.zotero).expanduser(), ctx.child(0.0, 0.05), base_dir=args.zotero_base)
    with _open(args) as library:
        plan = plan_sync(library.store, snapshot, ctx.child(0.05, 0.15))
        model = None
        if plan.add:
            from models.encoder import load_model

            model = load_model(args.model, device=args.device, threads=args.threads)
        workers = args.workers if args.workers is not None else max(1, (os.cpu_count() or 2) - 1)
        report = apply_sync(library, plan, model, ctx.child(0.15, 1.0), workers=workers)
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    for line in report.lines():
        note(line)
    if report.gone:
        note("the papers of items gone from Zotero stay in your library: 'rhetorica library remove ID' "
             "removes one")
    print(report.summary())
    print(f"{time.perf_counter() - started:.1f} s")
    return 0


def _import_jsonl(args: argparse.Namespace) -> int:
    from core.jobs import JobContext
    from models.encoder import load_model

    model = load_model(args.model, device=args.device, threads=args.threads)
    with _open(args) as library:
        report = library.import_jsonl(args.file, model, note=args.note,
                                      ctx=JobContext(progress_line(args.quiet)))
    _print_report(report, args.quiet)
    return 1 if report.refused else 0


def _remove(args: argparse.Namespace) -> int:
    with _open_existing(args) as library:
        count = library.remove(args.paper_id)
    print(f"removed {args.paper_id} ({count} sentences)")
    return 0


def _list(args: argparse.Namespace) -> int:
    with _open_existing(args) as library:
        papers = library.store.papers()
        metadata = library.store.metadata()
    if args.json:
        print(json.dumps([{"paper_id": p.paper_id, "title": p.title, "kind": p.kind, "source": p.source,
                           "sentences": p.sentence_count, "model_id": p.model_id,
                           **_metadata(metadata, p.paper_id)} for p in papers], indent=2, ensure_ascii=False))
        return 0
    if not papers:
        print("the library is empty: add papers with 'rhetorica library add PDF…'")
    for p in papers:
        print(f"{p.paper_id[:16]:16}  {p.sentence_count:5d}  {p.kind:5}  {p.title[:70]}")
    return 0


def _metadata(metadata: dict[str, Any], paper_id: str) -> dict[str, Any]:
    """A paper's bibliographic fields for ``list --json`` (none when it has no metadata)."""
    found = metadata.get(paper_id)
    if found is None:
        return {}
    return {"authors": list(found.authors), "year": found.year, "doi": found.doi,
            "source_key": found.source_key}


def _stats(args: argparse.Namespace) -> int:
    folder = _library_dir(args)
    with _open_existing(args) as library:
        stats = library.stats()
    print(json.dumps({"library": str(folder), "papers": stats.papers, "sentences": stats.sentences,
                      "models": stats.models, "database_mb": round(stats.database_bytes / 1e6, 2)}, indent=2))
    return 0


def _rebuild(args: argparse.Namespace) -> int:
    from core.jobs import JobContext

    with _open_existing(args) as library:
        library.rebuild(JobContext(progress_line(args.quiet)))
        count = library.stats().sentences
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    print(f"rebuilt the indexes of {count} sentences")
    return 0


def _doctor(args: argparse.Namespace) -> int:
    """Check the library; repair it unless ``--check``. Exit 0: healthy, or repaired with nothing lost;
    1: damaged (``--check``), or repaired with papers, sentences or corrections lost."""
    from core.jobs import JobContext
    from core.library.doctor import diagnose, repair

    folder = _library_dir(args)
    if args.check:
        diagnosis = diagnose(folder)
        for line in diagnosis.lines():
            print(line)
        return 0 if diagnosis.healthy else 1
    report = repair(folder, JobContext(progress_line(args.quiet)))
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    for line in [*report.diagnosis.lines(), *report.lines()]:
        print(line)
    return 0 if report.complete else 1
