"""``rhetorica analyze PDF``: parse a paper and label the rhetorical role of every sentence."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

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
    from core.taxonomy.labels import FunctionPrediction

EXAMPLES_PER_ROLE = 1
STDOUT = "-"  # --json -: the JSON on stdout


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "analyze",
        help="Label every sentence of a paper with its rhetorical role.",
        description="Parse a PDF (or load a paper JSON written by `rhetorica parse --json` or by this "
        "command's --json or --export OUT.json, or read a draft: .tex with its \\input files, .md, .docx, "
        ".txt), "
        "label every sentence section by section with the model bundle, print the role mix per "
        "section and example sentences (#N: sentence N counted from 1, as the app and `gui --select N` "
        "count), and optionally write paper + analysis as JSON. A PDF's parsed "
        "paper and analysis are kept in the analysis cache the app uses (keyed by the PDF's sha256, the "
        "parser version and the model), so analysing or opening the same PDF again is instant.",
    )
    parser.add_argument("pdf", type=path_arg, metavar="PDF",
                        help="a PDF file, a paper .json (from parse --json, or this command's --json or "
                        "--export OUT.json: an export gives the text and sections, no places on the page), "
                        "or a draft (.tex .md .markdown .docx .txt)")
    parser.add_argument("--json", type=path_arg, default=None, metavar="OUT",
                        help="write {paper, analysis} JSON to OUT ('-' = stdout; the summary then goes to "
                        "stderr)")
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


PAPER_JSON_WRITERS = "`rhetorica parse --json`, `analyze --json` or `analyze --export OUT.json` write one"


def _load_paper_json(path: Path) -> Paper:
    """A paper JSON (``parse --json``'s paper or ``analyze --json``'s {paper, analysis}) or a JSON export
    (``analyze --export OUT.json``, the GUI's Export as JSON: its text and sections, rebuilt by
    ``core.exporting.exports.paper_from_export``), checked whole before anything is printed: one line
    naming the first field that is wrong."""
    from core.document import Paper
    from core.errors import NotAPdfError
    from core.exporting.exports import is_analysis_export, paper_from_export
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
    if is_analysis_export(data):
        try:
            return paper_from_export(data)
        except ValueError as error:
            raise NotAPdfError(str(path), "a JSON export that cannot be read back: "
                                          f"{' '.join(str(error).split())[:300]}") from None
    try:
        paper = Paper.from_dict(data["paper"] if isinstance(data, dict) and "paper" in data else data)
        paper.check_links()
    except ValueError as error:
        raise NotAPdfError(str(path), f"not a paper JSON: {' '.join(str(error).split())[:300]} "
                                      f"({PAPER_JSON_WRITERS})") from None
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
    from core.jobs import JobContext

    check_input_file(args.pdf, "a PDF or a paper JSON")
    check_output_file(args.json, "--json", inputs=[args.pdf])
    check_annotated_pdf_option(args)
    check_export_option(args)
    ctx = JobContext(progress_line(args.quiet))
    labelled = _labelled_paper(args, ctx)
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    out = sys.stderr if _json_to_stdout(args) else sys.stdout  # stdout carries the JSON alone
    _print_report(args, labelled, out)
    paper, analysis = labelled.paper, labelled.analysis
    if args.json is not None:
        _write_json(args.json, paper, analysis, out)
    if args.annotated_pdf is not None:
        write_annotated_pdf(args, paper, analysis, ctx, out)
    if args.export is not None:
        from core.exporting.exports import EXPORTERS

        EXPORTERS[_export_format(args.export)](paper, analysis, args.export)
        print(f"wrote {args.export}", file=out)
    return 0


@dataclass
class _Labelled:
    """What ``run`` reports: the paper, its analysis, the model's name, provider and labels, the
    parse time and whether the labels came from the cache."""

    paper: Paper
    analysis: PaperAnalysis
    model_id: str
    provider: str
    labels: list[str]
    parse_seconds: float
    cached: bool


def _labelled_paper(args: argparse.Namespace, ctx: JobContext) -> _Labelled:
    """The input read (a PDF through the analysis cache) and labelled, the model loading meanwhile."""
    import contextlib
    import time
    from concurrent.futures import ThreadPoolExecutor

    from core.cache import AnalysisCache
    from core.labelling.analysis import analyze_paper
    from core.labelling.embedded_analysis import cached_analysis, store_analysis
    from models.encoder import load_model

    cache = None if args.no_cache else AnalysisCache()
    started = time.perf_counter()
    # The model loads (onnxruntime import, sha256 of the bundle, sessions) while the PDF parses.
    with ThreadPoolExecutor(max_workers=1) as pool:
        loading = pool.submit(load_model, args.model, device=args.device, threads=args.threads)
        read: list[Path] = []
        paper, sha = _cached_paper(args.pdf, cache, ctx, read)
        parse_seconds = time.perf_counter() - started
        model = loading.result()
    json_file = None if _json_to_stdout(args) else args.json
    refuse_outputs_over_read_files((("--json", json_file), ("--export", args.export),
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
    return _Labelled(paper, analysis, model.model_id, model.provider, list(model.labels), parse_seconds,
                     cached)


def _print_report(args: argparse.Namespace, labelled: _Labelled, out: TextIO) -> None:
    """Title, sizes and timings, the role table, the function counts and example sentences."""
    paper, analysis = labelled.paper, labelled.analysis
    timing = ("labels from the cache" if labelled.cached else f"labelling {analysis.timings['roles']:.2f} s")
    print(f"{paper.title or args.pdf.name}", file=out)
    print(f"{_size_line(paper)}; model {labelled.model_id} on {labelled.provider}; parse "
          f"{labelled.parse_seconds:.2f} s, {timing}", file=out)
    print_role_table(paper, analysis, labelled.labels, out)
    if analysis.functions is not None:
        print(f"\n{function_line(analysis.functions)}", file=out)
    print_examples(paper, analysis, labelled.labels, out)


def _json_to_stdout(args: argparse.Namespace) -> bool:
    """``--json -``: the JSON goes to stdout, everything said to a person to stderr (as ``parse``)."""
    return args.json is not None and str(args.json) == STDOUT


def _write_json(target: Path, paper: Paper, analysis: PaperAnalysis, out: TextIO) -> None:
    """``{paper, analysis}`` as JSON to ``target`` (written atomically), or to stdout for "-"."""
    from core.fileio import atomic_write_text

    text = json.dumps({"paper": paper.to_dict(), "analysis": analysis.to_dict()}, ensure_ascii=False,
                      indent=1) + "\n"
    if str(target) == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    atomic_write_text(target, text)
    print(f"\nwrote {target}", file=out)


SECTION_COLUMN = 40  # the section column of the role table: a heading, clipped, then its whole kind
FUNCTION_LIST_WIDTH = 400  # characters of the function counts line before it is cut (at a comma, with "…")


def _counted(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _size_line(paper: Paper) -> str:
    """"12 pages, 18 sections (1 empty), 571 sentences": the sections counted as the role table lists
    them (a section without sentences has no row)."""
    pages = (_counted(paper.page_count, "page") if paper.page_sizes
             else "pages not known" if paper.parser_version else "a draft")  # a PDF's old JSON export
    empty = sum(1 for section in paper.sections if section.sentence_count == 0)
    sections = _counted(len(paper.sections), "section") + (f" ({empty} empty)" if empty else "")
    return f"{pages}, {sections}, {_counted(len(paper.sentences), 'sentence')}"


def _clipped(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def section_name(paper: Paper, index: int) -> str:
    """A row name of the role table: "3.1 Study area [method]", the heading clipped with "…" to fit
    ``SECTION_COLUMN`` and the kind whole; "(before any heading)" for a draft's opening text."""
    if index < 0:
        return "(before any heading)"
    section = paper.sections[index]
    kind = section.kind.value
    heading = f"{section.number} {section.heading}".strip() or kind
    return f"{_clipped(heading, SECTION_COLUMN - len(kind) - 4)} [{kind}]"


def print_role_table(paper: Paper, analysis: PaperAnalysis, labels: list[str], out: TextIO) -> None:
    """The role mix per section that has sentences, then all of them."""
    from core.labelling.analysis import role_mix

    print(file=out)
    print(f"{'section':{SECTION_COLUMN}}{'n':>5} " + "".join(f"{x[:5]:>7}" for x in labels), file=out)
    for index, counts in role_mix(paper, analysis):
        row = "".join(f"{counts.get(x, 0):7d}" for x in labels)
        print(f"{section_name(paper, index):{SECTION_COLUMN}}{sum(counts.values()):5d} {row}", file=out)
    total = "".join(f"{sum(1 for r in analysis.roles if r.label == x):7d}" for x in labels)
    print(f"{'all':{SECTION_COLUMN}}{len(analysis.roles):5d} {total}", file=out)


def comma_list(parts: list[str], width: int) -> str:
    """``parts`` joined by ", " within ``width`` characters; a cut list ends ", … (N more)" after a
    whole item."""
    shown: list[str] = []
    for part in parts:
        if len(", ".join([*shown, part])) > width:
            return ", ".join([*shown, f"… ({len(parts) - len(shown)} more)"])
        shown.append(part)
    return ", ".join(shown)


def function_line(functions: list[FunctionPrediction]) -> str:
    """"communicative functions (51 sentences with no clear function): definition 43, aim 2, …"."""
    from collections import Counter

    from core.taxonomy.labels import NO_FUNCTION

    counts = Counter(function.label for function in functions)
    none = counts.pop(NO_FUNCTION, 0)
    parts = [f"{label} {n}" for label, n in counts.most_common()]
    return (f"communicative functions ({_counted(none, 'sentence')} with no clear function): "
            + comma_list(parts, FUNCTION_LIST_WIDTH))


def print_examples(paper: Paper, analysis: PaperAnalysis, labels: list[str], out: TextIO) -> None:
    """The most confident sentence(s) of each role, numbered from 1 as the app and ``gui --select N``
    number them."""
    import textwrap

    print("\nmost confident sentence per role (#N: sentence N, counted from 1 as in the app):", file=out)
    for label in labels:
        ranked = sorted((i for i, r in enumerate(analysis.roles) if r.label == label),
                        key=lambda i: -analysis.roles[i].confidence)
        for i in ranked[:EXAMPLES_PER_ROLE]:
            text = textwrap.shorten(paper.sentences[i].text, 110, placeholder=" …")
            print(f"  {label:10} {analysis.roles[i].confidence:4.0%}  {f'#{i + 1}':>5}  {text}", file=out)


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
    if str(args.annotated_pdf) == STDOUT:
        raise RhetoricaError("--annotated-pdf -: a PDF is not written to stdout; give it a file name")
    if args.pdf.suffix.lower() != ".pdf":
        raise RhetoricaError(f"--annotated-pdf needs a PDF input, not {args.pdf.name}")
    check_output_file(args.annotated_pdf, "--annotated-pdf", inputs=[args.pdf, args.json])
    if args.json is not None and Path(args.json).absolute() == Path(args.annotated_pdf).absolute():
        raise RhetoricaError(f"{args.annotated_pdf}: given to both --json and --annotated-pdf")


def write_annotated_pdf(args: argparse.Namespace, paper: Paper, analysis: PaperAnalysis,
                        ctx: JobContext, out: TextIO | None = None) -> None:
    from core.pdf.annotate import annotate_pdf

    written = annotate_pdf(args.pdf, paper, analysis, args.annotated_pdf, ctx=ctx)
    skipped = f" ({written.skipped} sentence(s) without a place on the page)" if written.skipped else ""
    print(f"wrote {written.path}: {written.highlights} highlight(s) for {written.sentences} sentence(s)"
          f"{skipped}", file=out or sys.stdout)
