"""``rhetorica bench align``: aligning two analysed papers (issue 13 goal: two 15-page papers < 1 s).

Both PDFs are parsed and analysed first (not timed: the app has them analysed already); then
:func:`core.alignment.align.align` (sections matched, dynamic programme, fallback, gap report) runs ``--runs``
times and the median and best are reported, with the exports' time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from app.commands._options import (
    MAX_THREADS,
    as_text,
    bounded_int,
    bundle_path,
    input_file,
    output_file,
    plain_help,
    write_output,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("align", help="Aligning two analysed papers: seconds per alignment.",
                                   description=plain_help(__doc__))
    parser.add_argument("a", type=input_file, help="first PDF")
    parser.add_argument("b", type=input_file, help="second PDF")
    parser.add_argument("--runs", type=bounded_int(1, 100_000), default=5)
    parser.add_argument("--model", type=as_text(bundle_path), default=None)
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2)
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.alignment.align import align, side_from_paper
    from core.alignment.align_export import alignment_to_html, alignment_to_json
    from core.labelling.analysis import analyze_paper
    from core.pdf import parse_pdf
    from models.encoder import load_model

    model = load_model(args.model, device="cpu", threads=args.threads)
    sides, pages = [], []
    for path in (args.a, args.b):
        paper = parse_pdf(path)
        analysis = analyze_paper(paper, model, with_embeddings=True, with_function_vectors=True)
        sides.append(side_from_paper(paper, analysis))
        pages.append(paper.page_count)
    times = []
    alignment = None
    for _ in range(max(1, args.runs)):
        started = time.perf_counter()
        alignment = align(sides[0], sides[1])
        times.append(time.perf_counter() - started)
    assert alignment is not None
    started = time.perf_counter()
    alignment_to_json(alignment)
    alignment_to_html(alignment)
    export_seconds = time.perf_counter() - started
    report = {"a": str(args.a), "b": str(args.b), "pages": pages,
              "sentences": [len(sides[0]), len(sides[1])], "pairs": len(alignment.pairs),
              "seconds_median": round(statistics.median(times), 4), "seconds_best": round(min(times), 4),
              "seconds_exports": round(export_seconds, 4), "runs": len(times),
              "command": f"rhetorica bench align {args.a} {args.b} --runs {args.runs}"}
    print(json.dumps(report, indent=2))
    if args.json is not None:
        write_output(args.json, json.dumps(report, indent=2) + "\n")
    return 0
