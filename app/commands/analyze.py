"""``rhetorica analyze PDF``: parse a paper and label the rhetorical role of every sentence."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from app.commands._options import (
    add_model_options,
    check_input_file,
    check_output_file,
    path_arg,
    progress_line,
)

EXAMPLES_PER_ROLE = 1


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "analyze",
        help="Label every sentence of a paper with its rhetorical role.",
        description="Parse a PDF (or load a paper JSON written by `rhetorica parse --json` / this command), "
        "label every sentence section by section with the model bundle, print the role mix per "
        "section and example sentences, and optionally write paper + analysis as JSON.",
    )
    parser.add_argument("pdf", type=path_arg, metavar="PDF", help="a PDF file, or a paper .json")
    parser.add_argument("--json", type=path_arg, default=None, metavar="OUT",
                        help="write {paper, analysis} JSON here")
    add_model_options(parser, default_threads=None)
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(func=run)


PAPER_JSON_LIMIT = 500_000_000  # bytes: a paper JSON is a few MB


def _load_paper(path: Path, ctx):  # type: ignore[no-untyped-def]
    from core.document import Paper
    from core.errors import NotAPdfError
    from core.fileio import read_text_input

    if path.suffix.lower() == ".json":
        text = read_text_input(path, "a paper JSON", max_bytes=PAPER_JSON_LIMIT)
        try:
            data = json.loads(text)
            return Paper.from_dict(data.get("paper", data))
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            reason = " ".join(str(error).split())[:120]
            raise NotAPdfError(str(path), f"not a paper JSON ({type(error).__name__}: {reason})") from None
    from core.pdf import parse_pdf

    return parse_pdf(path, ctx)


def run(args: argparse.Namespace) -> int:
    import time
    from concurrent.futures import ThreadPoolExecutor

    from core.analysis import analyze_paper, role_mix
    from core.jobs import JobContext
    from models.encoder import load_model

    check_input_file(args.pdf, "a PDF or a paper JSON")
    check_output_file(args.json, "--json", inputs=[args.pdf])
    ctx = JobContext(progress_line(args.quiet))
    started = time.perf_counter()
    # The model loads (onnxruntime import, sha256 of the bundle, sessions) while the PDF parses.
    with ThreadPoolExecutor(max_workers=1) as pool:
        loading = pool.submit(load_model, args.model, device=args.device, threads=args.threads)
        paper = _load_paper(args.pdf, ctx)
        parse_seconds = time.perf_counter() - started
        model = loading.result()
    analysis = analyze_paper(paper, model, ctx)
    analysis.timings["parse"] = parse_seconds
    analysis.timings["model_load"] = model.load_seconds
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)

    print(f"{paper.title or args.pdf.name}")
    print(f"{paper.page_count} pages, {len(paper.sections)} sections, {len(paper.sentences)} sentences; "
          f"model {model.model_id} on {model.provider}; parse {parse_seconds:.2f} s, "
          f"labelling {analysis.timings['roles']:.2f} s")
    labels = list(model.labels)
    short = [x[:5] for x in labels]
    print()
    print(f"{'section':34}{'n':>5} " + "".join(f"{x:>7}" for x in short))
    for index, counts in role_mix(paper, analysis):
        section = paper.sections[index]
        name = f"{section.number} {section.heading}".strip() or section.kind.value
        name = f"{name[:24]} [{section.kind.value[:6]}]"
        n = sum(counts.values())
        print(f"{name:34}{n:5d} " + "".join(f"{counts.get(x, 0):7d}" for x in labels))
    total = {x: sum(1 for r in analysis.roles if r.label == x) for x in labels}
    print(f"{'all':34}{len(analysis.roles):5d} " + "".join(f"{total[x]:7d}" for x in labels))

    if analysis.functions is not None:
        counts: dict[str, int] = {}
        for function in analysis.functions:
            counts[function.label] = counts.get(function.label, 0) + 1
        shown = ", ".join(f"{f} {n}" for f, n in sorted(counts.items(), key=lambda x: -x[1]) if f != "none")
        print(f"\ncommunicative functions ({counts.get('none', 0)} sentences none): {shown[:400]}")

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
    return 0
