"""``rhetorica data functions``: distant communicative-function labels from marker phrases."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING

from app.commands._options import bounded_float, bounded_int, input_file, output_file, write_output

if TYPE_CHECKING:  # pragma: no cover
    from models.training.function_corpus import CorpusSentence


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "functions",
        help="Label corpus sentences with communicative functions (markers covering the root).",
        description="Parse every sentence of the sources with spaCy and give it a function of the "
        "taxonomy when one function's marker matches and covers the dependency root (Sugimoto & "
        "Aizawa 2022); markers that often co-fire with another function's are dropped. Writes one "
        "JSON line per labelled sentence and prints the count per function.",
    )
    parser.add_argument("--source", action="append", required=True, metavar="SOURCE",
                        help="scirex, scitldr, pdfs (the shared PDFs no gold or dev set holds: none since "
                        "session 23), or a dataset spec such as csabstruct:train (repeatable)")
    parser.add_argument("--out", type=output_file, required=True, help="JSON Lines of labelled sentences")
    parser.add_argument("--report", type=output_file, default=None, help="also write the counts as JSON")
    parser.add_argument("--taxonomy", type=input_file, default=None, help="taxonomy file (default: bundled)")
    parser.add_argument("--limit", type=bounded_int(1, 1_000_000_000), default=None, metavar="N",
                        help="first N sentences per source")
    parser.add_argument("--max-conflict", type=bounded_float(0.0, 1.0), default=0.3,
                        help="drop a marker when more than this share of its hits co-fire with another "
                        "function's marker (default 0.3)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import itertools

    from core.fileio import check_text_file
    from core.taxonomy.functions import load_taxonomy
    from models.training.function_corpus import corpus_sentences
    from models.training.function_labels import DistantLabeller, load_parser, parse_sentences

    if args.taxonomy is not None:
        check_text_file(args.taxonomy, "a taxonomy file (TOML)")
    taxonomy = load_taxonomy(args.taxonomy)
    nlp = load_parser()
    started = time.perf_counter()
    sentences: list[CorpusSentence] = []
    for source in args.source:
        sentences.extend(itertools.islice(corpus_sentences(source), args.limit))
        print(f"{source}: {len(sentences)} sentences so far", file=sys.stderr, flush=True)
    parsed = list(parse_sentences((s.text for s in sentences), nlp))
    labeller = DistantLabeller(taxonomy, max_conflict=args.max_conflict)
    labels, report = labeller.label(parsed, [s.section_kind for s in sentences])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as handle:
        for sentence, hit in zip(sentences, labels, strict=True):
            if hit is not None:
                role = taxonomy.get(hit.function_id).role
                handle.write(json.dumps({"source": sentence.source, "doc_id": sentence.doc_id,
                                         "section_kind": sentence.section_kind, "text": sentence.text,
                                         "function": hit.function_id, "role": role, "marker": hit.marker},
                                        ensure_ascii=False) + "\n")
    summary = report.to_dict() | {"sources": args.source, "taxonomy_version": taxonomy.version,
                                  "seconds": round(time.perf_counter() - started, 1)}
    print(f"{summary['labelled']} of {report.sentences} sentences labelled "
          f"({report.ambiguous} ambiguous, {len(report.dropped)} markers dropped) in {summary['seconds']} s")
    for function in taxonomy.functions:
        print(f"  {function.id:26s} {report.labelled.get(function.id, 0):7d}")
    if args.report is not None:
        write_output(args.report, json.dumps(summary, indent=2) + "\n")
    return 0
