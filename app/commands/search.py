"""``rhetorica search --like ID_OR_PDF --facet F``: papers of your library like a given paper (issue 13)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.commands._options import (
    add_model_options,
    bounded_int,
    check_input_file,
    check_output_file,
    check_text,
    nonblank,
    path_arg,
    progress_line,
)

FACETS = ("background", "method", "result", "all")  # core.phrasing.search.FACETS (not imported at startup)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    help_text = ("Papers of your library like a given paper for its background, method or result (the "
                 "sentences with those roles, compared by content and blended with whole-paper "
                 "similarity), or as a whole (--facet all). The paper itself is never listed.")
    parser = subparsers.add_parser("search", help=help_text, description=help_text)
    parser.add_argument("--like", type=nonblank, required=True, metavar="ID_OR_PDF",
                        help="a library paper id (or a unique start of one) or a PDF")
    parser.add_argument("--facet", choices=FACETS, default="all",
                        help="background (+ objective), method, result (+ conclusion) or all (default all)")
    parser.add_argument("-k", type=bounded_int(1, 10_000), default=20, help="papers to return (default 20)")
    parser.add_argument("--library", type=path_arg, default=None, metavar="DIR",
                        help="library folder (default: the user data folder's library/)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--bibtex", type=path_arg, default=None, metavar="OUT",
                        help="also write the papers found as BibTeX (authors, year, DOI where the library "
                        "keeps them)")
    parser.add_argument("--ris", type=path_arg, default=None, metavar="OUT",
                        help="also write the papers found as RIS (for Zotero, EndNote, Mendeley)")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    add_model_options(parser)
    parser.set_defaults(func=run)


def _is_pdf(spec: str) -> bool:
    path = Path(spec)
    return path.suffix.lower() == ".pdf" or path.exists()


def _pdf_query(spec: str, args: argparse.Namespace) -> Any:
    from app.commands._pdf_analysis import cached_pdf, embedded_pdf_analysis
    from core.errors import RhetoricaError
    from core.jobs import JobContext
    from core.phrasing.search import query_from_analysis
    from models.encoder import load_model

    path = Path(spec)
    ctx = JobContext(progress_line(args.quiet))
    paper, sha256, cache = cached_pdf(path, ctx)
    if not paper.sentences:
        raise RhetoricaError(f"{spec}: no text found in the PDF (a scanned paper?)")
    model = load_model(args.model, device=args.device, threads=args.threads)
    analysis = embedded_pdf_analysis(paper, sha256, cache, model, ctx)
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    return query_from_analysis(paper, analysis, paper_id=str(path))


def run(args: argparse.Namespace) -> int:
    from core.errors import RhetoricaError
    from core.library.library import Library
    from core.paths import library_dir
    from core.phrasing.search import search_like

    if _is_pdf(args.like):
        check_input_file(args.like, "a PDF")
    else:
        check_text(args.like, "paper id")
    check_bibliography_options(args)
    folder = args.library if args.library is not None else library_dir()
    if folder.exists() and not folder.is_dir():
        raise RhetoricaError(f"{folder}: is a file, not a library folder")
    if not (folder / "library.sqlite3").is_file():
        raise RhetoricaError(f"no library at {folder}: add papers with 'rhetorica library add PDF…' or "
                             "'rhetorica library import-jsonl FILE', or give --library DIR")
    query = _pdf_query(args.like, args) if _is_pdf(args.like) else args.like
    with Library(folder) as library:
        result = search_like(library, query, args.facet, k=args.k)
        written = write_bibliographies(args, library, result)
    timing = (f"ranked {result.candidates} paper(s) in {1000 * result.rank_seconds:.1f} ms"
              f" (loading the library's vectors: {1000 * result.load_seconds:.0f} ms)")
    note = result.query.fallback_note  # one line when the facet fell back to every sentence
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
        if note:
            print(f"rhetorica: note: {note}", file=sys.stderr)
        print(timing, file=sys.stderr)
        for line in written:
            print(line, file=sys.stderr)
        return 0
    print(_text(result))
    print(timing)
    for line in written:
        print(line)
    return 0


def check_bibliography_options(args: argparse.Namespace) -> None:
    """``--bibtex``/``--ris``: writable files, not the query PDF, not one file for both."""
    from core.errors import RhetoricaError

    inputs = [args.like] if _is_pdf(args.like) else []
    for option, path in (("--bibtex", args.bibtex), ("--ris", args.ris)):
        check_output_file(path, option, inputs=inputs)
    if args.bibtex is not None and args.ris is not None and \
            Path(args.bibtex).absolute() == Path(args.ris).absolute():
        raise RhetoricaError(f"{args.ris}: given to both --bibtex and --ris")


def write_bibliographies(args: argparse.Namespace, library: Any, result: Any) -> list[str]:
    """The papers found as BibTeX/RIS (best first); one line per file written."""
    from core.exporting.bibliography import library_entries, to_bibtex, to_ris
    from core.fileio import atomic_write_text

    targets = [(path, write) for path, write in ((args.bibtex, to_bibtex), (args.ris, to_ris)) if path]
    if not targets:
        return []
    query = result.query
    notes = [f"Rhetorica search: like {_clip(query.title or query.paper_id, 80)} {facet_words(query.facet)}, "
             f"rank {rank}, score {hit.score:.3f}" for rank, hit in enumerate(result.results, 1)]
    entries = library_entries(library.store, [hit.paper_id for hit in result.results], notes)
    lines = []
    for path, write in targets:
        atomic_write_text(path, write(entries))
        lines.append(f"wrote {len(entries)} paper(s) to {path}")
    return lines


def facet_words(facet: str) -> str:
    """How a result says what it compared: "for its method", or "as a whole" for the facet all."""
    return "as a whole" if facet == "all" else f"for its {facet}"


def _clip(text: str, width: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _text(result: Any) -> str:
    query = result.query
    title = query.title or query.paper_id
    lines = [f"papers like {title} ({query.paper_id}) {facet_words(query.facet)}: "
             f"{len(query.facet_sentences)} query sentence(s)"]
    if query.fallback:
        lines.append(f"note: {query.fallback_note}")
    if not result.results:
        lines.append("no other paper in the library")
    for rank, hit in enumerate(result.results, 1):
        name = hit.title or "(untitled)"
        lines.append(f"{rank:3}. {hit.score:.3f}  {hit.paper_id}  {_clip(name, 70)}")
        if hit.evidence:
            best = hit.evidence[0]
            lines.append(f"       {best.similarity:.2f}  query: {_clip(best.query_sentence)}")
            lines.append(f"             match: {_clip(best.matched_sentence)}")
    return "\n".join(lines)
