"""``rhetorica analyze PDF``: parse a paper and label the rhetorical role of every sentence."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from app.commands._options import (
    add_model_options,
    check_input_file,
    check_output_file,
    path_arg,
    progress_line,
    refuse_outputs_over_read_files,
)

if TYPE_CHECKING:  # pragma: no cover
    from core.cache import AnalysisCache
    from core.document import Paper
    from core.jobs import JobContext
    from core.labelling.analysis import PaperAnalysis

EXAMPLES_PER_ROLE = 1


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "analyze",
        help="Label every sentence of a paper with its rhetorical role.",
        description="Parse a PDF (or load a paper JSON written by `rhetorica parse --json` / this command, "
        "or read a draft: .tex with its \\input files, .md, .docx, .txt), "
        "label every sentence section by section with the model bundle, print the role mix per "
        "section and example sentences, and optionally write paper + analysis as JSON. A PDF's parsed "
        "paper and analysis are kept in the analysis cache the app uses (keyed by the PDF's sha256, the "
        "parser version and the model), so analysing or opening the same PDF again is instant.",
    )
    parser.add_argument("pdf", type=path_arg, metavar="PDF",
                        help="a PDF file, a paper .json, or a draft (.tex .md .markdown .docx .txt)")
    parser.add_argument("--json", type=path_arg, default=None, metavar="OUT",
                        help="write {paper, analysis} JSON here")
    parser.add_argument("--export", type=path_arg, default=None, metavar="OUT",
                        help="write the labelled paper or draft as Markdown, HTML, CSV or JSON (by the "
                        "suffix: .md .html .csv .json)")
    parser.add_argument("--annotated-pdf", type=path_arg, default=None, metavar="OUT",
                        help="write a copy of the PDF with each sentence's role as a highlight annotation "
                        "(its note: role, function, confidence); the PDF itself is not changed")
    add_model_options(parser, default_threads=None)
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the analysis cache (parse and label afresh)")
    parser.set_defaults(func=run)


PAPER_JSON_LIMIT = 500_000_000  # bytes: a paper JSON is a few MB


def _load_draft(path: Path, read: list[Path]) -> Paper:
    """A draft (.tex .md .docx .txt) as a paper; what its parser skipped goes to stderr, one line each; the
    files it includes are added to ``read``."""
    from core.draft_formats import read_draft
    from core.draft_formats.paper import paper_from_draft
    from core.errors import DraftError

    draft = read_draft(path)
    for warning in draft.warnings:
        print(f"rhetorica: note: {warning}", file=sys.stderr)
    if not draft.sentences:
        raise DraftError(f"{path}: the draft has no sentences")
    read.extend(path.parent / name for name in draft.files)
    return paper_from_draft(draft, title=path.stem, source=str(path))


def _load_paper_json(path: Path) -> Paper:
    """A paper JSON (``parse --json``'s paper or ``analyze --json``'s {paper, analysis}), checked whole
    before anything is printed: one line naming the first field that is wrong."""
    from core.document import Paper
    from core.errors import NotAPdfError
    from core.fileio import read_text_input
    from core.json_shapes import loads

    text = read_text_input(path, "a paper JSON", max_bytes=PAPER_JSON_LIMIT)
    try:
        data = loads(text)
    except json.JSONDecodeError as error:
        raise NotAPdfError(str(path), f"not valid JSON ({error.msg} at line {error.lineno}, column "
                                      f"{error.colno})") from None
    except ValueError as error:  # nested too deeply
        raise NotAPdfError(str(path), f"not a paper JSON: {error}") from None
    try:
        paper = Paper.from_dict(data["paper"] if isinstance(data, dict) and "paper" in data else data)
        paper.check_links()
    except ValueError as error:
        raise NotAPdfError(str(path), f"not a paper JSON: {' '.join(str(error).split())[:300]}") from None
    return paper


def _load_paper(path: Path, ctx: JobContext | None, read: list[Path] | None = None) -> Paper:
    from core.draft_formats import draft_format

    if draft_format(path) is not None:
        return _load_draft(path, [] if read is None else read)
    if path.suffix.lower() == ".json":
        return _load_paper_json(path)
    from core.pdf import parse_pdf

    return parse_pdf(path, ctx)


def _cached_paper(path: Path, cache: AnalysisCache | None, ctx: JobContext,
                  read: list[Path]) -> tuple[Paper, str]:
    """A PDF's paper and sha256 from ``cache`` when it holds it, else parsed (cached by ``run`` once the
    model is there: a refusal leaves no file behind); any other input (a paper JSON, a draft) is read
    as it is, with no key ("")."""
    from core.labelling.embedded_analysis import cached_pdf_paper

    if cache is None or path.suffix.lower() != ".pdf":
        paper: Paper = _load_paper(path, ctx, read)
        return paper, ""
    return cached_pdf_paper(path, cache, ctx, parse=_load_paper, save=False, on_note=_print_note)


def _print_note(note: str) -> None:
    print(f"rhetorica: note: {note}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    import contextlib
    import time
    from concurrent.futures import ThreadPoolExecutor

    from core.cache import AnalysisCache
    from core.jobs import JobContext
    from core.labelling.analysis import analyze_paper, role_mix
    from core.labelling.embedded_analysis import cached_analysis, store_analysis
    from models.encoder import load_model

    check_input_file(args.pdf, "a PDF or a paper JSON")
    check_output_file(args.json, "--json", inputs=[args.pdf])
    check_annotated_pdf_option(args)
    check_export_option(args)
    ctx = JobContext(progress_line(args.quiet))
    cache = None if args.no_cache else AnalysisCache()
    started = time.perf_counter()
    # The model loads (onnxruntime import, sha256 of the bundle, sessions) while the PDF parses.
    with ThreadPoolExecutor(max_workers=1) as pool:
        loading = pool.submit(load_model, args.model, device=args.device, threads=args.threads)
        read: list[Path] = []
        paper, sha = _cached_paper(args.pdf, cache, ctx, read)
        parse_seconds = time.perf_counter() - started
        model = loading.result()
    refuse_outputs_over_read_files((("--json", args.json), ("--export", args.export),
                                    ("--annotated-pdf", args.annotated_pdf)), read)
    cache = cache if sha else None
    if cache is not None and not cache.paper_path(sha, paper.parser_version).is_file():
        with contextlib.suppress(OSError):  # a cache that cannot be written only makes the next run slower
            cache.save_paper(paper, sha)
    # The labels of the PDF's analysis by this model (the app's embedded analysis when it made it first).
    analysis, note = cached_analysis(paper, model.model_id, cache, sha, need_vectors=False)
    if note:
        _print_note(note)
    cached = analysis is not None
    if analysis is None:
        analysis = analyze_paper(paper, model, ctx)
        store_analysis(paper, analysis, cache, sha)
    analysis.timings["parse"] = parse_seconds
    analysis.timings["model_load"] = model.load_seconds
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)

    print(f"{paper.title or args.pdf.name}")
    pages = f"{paper.page_count} pages" if paper.page_sizes else "a draft"
    print(f"{pages}, {len(paper.sections)} sections, {len(paper.sentences)} sentences; "
          f"model {model.model_id} on {model.provider}; parse {parse_seconds:.2f} s, "
          + ("labels from the cache" if cached else f"labelling {analysis.timings['roles']:.2f} s"))
    labels = list(model.labels)
    short = [x[:5] for x in labels]
    print()
    print(f"{'section':34}{'n':>5} " + "".join(f"{x:>7}" for x in short))
    for index, counts in role_mix(paper, analysis):
        if index < 0:  # a draft's text before its first heading
            name = "(before any heading)"
        else:
            section = paper.sections[index]
            name = f"{section.number} {section.heading}".strip() or section.kind.value
            name = f"{name[:24]} [{section.kind.value[:6]}]"
        n = sum(counts.values())
        print(f"{name:34}{n:5d} " + "".join(f"{counts.get(x, 0):7d}" for x in labels))
    total = {x: sum(1 for r in analysis.roles if r.label == x) for x in labels}
    print(f"{'all':34}{len(analysis.roles):5d} " + "".join(f"{total[x]:7d}" for x in labels))

    if analysis.functions is not None:
        function_counts: dict[str, int] = {}
        for function in analysis.functions:
            function_counts[function.label] = function_counts.get(function.label, 0) + 1
        shown = ", ".join(f"{f} {n}" for f, n in sorted(function_counts.items(), key=lambda x: -x[1])
                          if f != "none")
        print(f"\ncommunicative functions ({function_counts.get('none', 0)} sentences none): {shown[:400]}")

    print("\nmost confident sentence per role:")
    for label in labels:
        ranked = sorted((i for i, r in enumerate(analysis.roles) if r.label == label),
                        key=lambda i: -analysis.roles[i].confidence)
        for i in ranked[:EXAMPLES_PER_ROLE]:
            sentence = paper.sentences[i]
            text = textwrap.shorten(sentence.text, 110, placeholder=" …")
            print(f"  {label:10} {analysis.roles[i].confidence:.2f}  {sentence.id:>5}  {text}")

    if args.json is not None:
        from core.fileio import atomic_write_text

        payload = {"paper": paper.to_dict(), "analysis": analysis.to_dict()}
        atomic_write_text(args.json, json.dumps(payload, ensure_ascii=False, indent=1) + "\n")
        print(f"\nwrote {args.json}")
    if args.annotated_pdf is not None:
        write_annotated_pdf(args, paper, analysis, ctx)
    if args.export is not None:
        from core.exporting.exports import EXPORTERS

        EXPORTERS[_export_format(args.export)](paper, analysis, args.export)
        print(f"wrote {args.export}")
    return 0


_EXPORT_SUFFIXES = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".csv": "csv",
                    ".json": "json"}


def _export_format(path: Path) -> str:
    return _EXPORT_SUFFIXES.get(path.suffix.lower(), "")


def check_export_option(args: argparse.Namespace) -> None:
    """``--export``: a known suffix, a writable file, not the input nor another output."""
    from core.errors import RhetoricaError

    if args.export is None:
        return
    if not _export_format(args.export):
        raise RhetoricaError(f"--export {args.export.name}: give it a .md, .html, .csv or .json file name")
    check_output_file(args.export, "--export", inputs=[args.pdf])
    for other in (args.json, args.annotated_pdf):
        if other is not None and Path(other).absolute() == Path(args.export).absolute():
            raise RhetoricaError(f"{args.export}: given to --export and to another output")


def check_annotated_pdf_option(args: argparse.Namespace) -> None:
    """``--annotated-pdf`` needs a PDF input and a writable file that is not the input."""
    from core.errors import RhetoricaError

    if args.annotated_pdf is None:
        return
    if args.pdf.suffix.lower() != ".pdf":
        raise RhetoricaError(f"--annotated-pdf needs a PDF input, not {args.pdf.name}")
    check_output_file(args.annotated_pdf, "--annotated-pdf", inputs=[args.pdf, args.json])
    if args.json is not None and Path(args.json).absolute() == Path(args.annotated_pdf).absolute():
        raise RhetoricaError(f"{args.annotated_pdf}: given to both --json and --annotated-pdf")


def write_annotated_pdf(args: argparse.Namespace, paper: Paper, analysis: PaperAnalysis,
                        ctx: JobContext) -> None:
    from core.pdf.annotate import annotate_pdf

    written = annotate_pdf(args.pdf, paper, analysis, args.annotated_pdf, ctx=ctx)
    skipped = f" ({written.skipped} sentence(s) without a place on the page)" if written.skipped else ""
    print(f"wrote {written.path}: {written.highlights} highlight(s) for {written.sentences} sentence(s)"
          f"{skipped}")
