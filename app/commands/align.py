"""``rhetorica align A B``: line up two papers (or a draft and a paper) by what each sentence does."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.commands._options import (
    add_model_options,
    bounded_float,
    bounded_int,
    check_input_file,
    check_input_folder,
    check_output_file,
    check_text,
    nonblank,
    path_arg,
    progress_line,
    refuse_outputs_over_read_files,
)

DRAFT_SUFFIXES = (".txt", ".md", ".markdown", ".text", ".tex", ".ltx", ".docx")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    help_text = ("Align two papers sentence by sentence by rhetorical function and content, and report what "
                 "one does that the other does not. A and B are each a PDF, a library paper id, or a draft "
                 "(.tex with its \\input files, .md, .docx, .txt).")
    parser = subparsers.add_parser("align", help=help_text, description=help_text)
    for side in ("a", "b"):
        parser.add_argument(side, type=nonblank, metavar=side.upper(),
                            help="PDF, library paper id, or draft .tex/.md/.docx/.txt")
    parser.add_argument("--json", type=path_arg, default=None, metavar="OUT",
                        help="write the alignment as JSON")
    parser.add_argument("--md", type=path_arg, default=None, metavar="OUT", help="write a Markdown report")
    parser.add_argument("--html", type=path_arg, default=None, metavar="OUT",
                        help="write a standalone HTML page: both texts side by side with the links drawn")
    parser.add_argument("--function-weight", type=bounded_float(0.0, 1.0), default=0.7, metavar="W",
                        help="weight of the function view against the content view, 0..1 (default 0.7)")
    parser.add_argument("--library", type=path_arg, default=None, metavar="DIR",
                        help="library folder for paper ids (default: the user data folder's library/)")
    parser.add_argument("--top", type=bounded_int(0, 10_000), default=10,
                        help="most similar aligned pairs shown in the printed summary (default 10); the "
                        "--json/--md/--html files hold every pair")
    parser.add_argument("--all-gaps", action="store_true",
                        help="list every gap in the printed summary (default: the ten most important, then "
                        "how many more); the --json/--md/--html files always hold every gap")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    add_model_options(parser)
    parser.set_defaults(func=run)


def _kind(spec: str) -> str:
    """"pdf", "draft" or "id" for one command-line input."""
    suffix = Path(spec).suffix.lower()
    if suffix == ".pdf":
        return "pdf"
    if suffix in DRAFT_SUFFIXES:
        return "draft"
    if suffix in _NOT_PROSE:
        return "data"
    if Path(spec).exists():
        return "draft" if Path(spec).is_file() else "other"
    return "id"


# files that are text but not prose: read as a draft, their markup would be "sentences"
_NOT_PROSE = {".json", ".jsonl", ".xml", ".html", ".htm", ".csv", ".tsv", ".bib", ".ris"}


def _draft_paper(path: Path, read: list[Path]) -> Any:
    """A draft file as a paper: a .tex/.md/.docx through ``core.draft_formats`` (headings as sections,
    citations as "[1]", no markup); any other text file read as plain text. The files it includes are
    added to ``read``."""
    from core.draft_formats import draft_format, parse_draft_text, read_draft
    from core.draft_formats.files import read_text_draft
    from core.draft_formats.paper import paper_from_draft

    if draft_format(path) is not None:
        draft = read_draft(path)
    else:  # a text file with another suffix (or none)
        draft = parse_draft_text(read_text_draft(path, "a draft text file"), "txt", name=str(path))
    for warning in draft.warnings:
        print(f"rhetorica: note: {warning}", file=sys.stderr)
    read.extend(path.parent / name for name in draft.files)
    return paper_from_draft(draft, title=path.stem, source=str(path))


def _side(spec: str, args: argparse.Namespace, get_model: Any, library: Any, read: list[Path]) -> Any:
    from core.alignment.align import side_from_library
    from core.alignment.align_sides import analysed_side, pdf_side, require_text
    from core.errors import NotAPdfError
    from core.jobs import JobContext

    kind = _kind(spec)
    path = Path(spec)
    if kind == "other":
        raise NotAPdfError(spec, "is a folder, not a PDF, a draft text file or a library paper id")
    if kind == "data":
        raise NotAPdfError(spec, f"is a {path.suffix.lower()} file, not a PDF, a draft (.tex .md .docx .txt) "
                                 "or a library paper id")
    if kind == "id":
        from core.library.store import LibraryError

        try:
            return side_from_library(library(spec), spec)
        except LibraryError as error:
            raise LibraryError(f"{spec}: no such file, and {error}") from None
    ctx = JobContext(progress_line(args.quiet))
    if kind == "pdf":
        from app.commands._pdf_analysis import cached_pdf

        paper, sha256, cache = cached_pdf(path, ctx)
        require_text(paper, spec)
        found = pdf_side(paper, get_model(), cache=cache, sha256=sha256, ctx=ctx, name=spec)
        if found.note:
            print(f"rhetorica: note: {found.note}", file=sys.stderr)
        return found.side
    return analysed_side(_draft_paper(path, read), get_model(), ctx, kind="draft", name=spec)


def run(args: argparse.Namespace) -> int:
    from core.alignment.align_export import (
        alignment_to_html,
        alignment_to_json,
        alignment_to_markdown,
        summary_text,
    )
    from core.alignment.align_gaps import TOP_GAPS
    from core.alignment.align_sides import align_sides
    from core.errors import RhetoricaError
    from core.fileio import atomic_write_text
    from core.paths import library_dir

    # Every path is checked before any work: a file named like a PDF or draft must be one, and the
    # outputs must be writable files that are not one of the inputs.
    for spec in (args.a, args.b):
        kind = _kind(spec)
        if kind in ("pdf", "draft", "other"):
            check_input_file(spec, {"pdf": "a PDF", "draft": "a draft text file"}.get(
                kind, "a PDF, a draft text file or a library paper id"))
        else:
            check_text(spec, "paper id")
    if args.library is not None and args.library.exists():
        check_input_folder(args.library, "a library folder")
    for option, out in (("--json", args.json), ("--md", args.md), ("--html", args.html)):
        check_output_file(out, option, inputs=[args.a, args.b])
    outs = [out.absolute() for out in (args.json, args.md, args.html) if out is not None]
    if len(set(outs)) < len(outs):
        raise RhetoricaError("--json, --md and --html name the same file: give each its own")
    opened: dict[str, Any] = {}

    def get_model() -> Any:
        if "model" not in opened:
            from models.encoder import load_model

            opened["model"] = load_model(args.model, device=args.device, threads=args.threads)
        return opened["model"]

    def library(spec: str) -> Any:
        if "library" not in opened:
            from core.library.library import Library

            folder = args.library if args.library is not None else library_dir()
            if not (folder / "library.sqlite3").is_file():
                raise RhetoricaError(f"{spec}: no such file, and no library at {folder} to look it up "
                                     "as a paper id (give a PDF, a draft .tex/.md/.docx/.txt, or "
                                     "--library DIR)")
            opened["library"] = Library(folder)
        return opened["library"]

    try:
        read: list[Path] = []
        sides = [_side(spec, args, get_model, library, read) for spec in (args.a, args.b)]
    finally:
        if "library" in opened:
            opened["library"].close()
    refuse_outputs_over_read_files((("--json", args.json), ("--md", args.md), ("--html", args.html)), read)
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    a, b = sides
    alignment = align_sides(a, b, function_weight=args.function_weight,
                            message="the two papers were embedded by different models (a library paper "
                            "from another model?): re-add it to the library with this model")
    written = []
    for out, render in ((args.json, alignment_to_json), (args.md, alignment_to_markdown),
                        (args.html, alignment_to_html)):
        if out is not None:
            atomic_write_text(out, render(alignment) + ("" if render is alignment_to_markdown else "\n"))
            written.append(str(out))
    # The summary is printed whatever is written (with --top and --all-gaps); the files hold every pair
    # and every gap.
    reports = [str(out) for out in (args.md, args.html) if out is not None]
    print(summary_text(alignment, top=args.top, gaps=None if args.all_gaps else TOP_GAPS,
                       more_hint="--all-gaps lists them all; "
                       + (f"{' and '.join(reports)} {'has' if len(reports) == 1 else 'have'} them all"
                          if reports else "--md or --html writes them")))
    if written:
        print(f"\nWrote {', '.join(written)}.")
    return 0
