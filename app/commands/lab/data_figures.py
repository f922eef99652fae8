"""``rhetorica data figure-pairs``: count (mention paragraph, figure caption) pairs per source and split.

Pairs for the graphical-abstract caption-text scorer (models.datasets.figure_pairs): every paragraph
that mentions "Figure N" / "Table N" is paired with that figure's caption; references are masked and
caption labels stripped. Sources: OA-STM source XML, PMC JATS, S2ORC JSON, MedICaT sample and the
shared PDFs (through the project's parser), and (issue 25, models.datasets.figure_sources) unarXive's
figure markers (heuristic pairs: a paragraph citing "Fig. REF" and the float placed in or right after it)
and the pdfs2 papers' own "Figure N" mentions (never their graphical-abstract labels). The split
(train/dev/test, 80/10/10) is by paper.
"""

from __future__ import annotations

import argparse
import json

from app.commands._options import input_folder, output_file, write_output

COLUMNS = ("papers", "figures", "tables", "mentions", "pairs", "papers_with_2plus_figures")
SPLITS = ("train", "dev", "test")


# models.datasets.figure_sources.ALL_SOURCES, not imported here: it loads the PDF parser (and pymupdf),
# which "rhetorica parse --help" must not pay for (tests/test_boundaries.py; a test checks the two agree).
SOURCES = ("oa-stm", "pmc-jats", "s2orc", "medicat", "pdfs", "unarxive", "pdfs2")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("figure-pairs", description=__doc__,
                                   help="Count (mention paragraph, figure caption) pairs per source, split.")
    parser.add_argument("--source", action="append", choices=SOURCES, metavar="S",
                        help=f"source to read (repeatable; default all: {', '.join(SOURCES)})")
    parser.add_argument("--json", type=output_file, metavar="OUT", help="write the counts as JSON")
    parser.add_argument("--exclude-gold", action="store_true",
                        help="skip the PDFs of models/datasets/gold_data/graphical-abstract/gold.jsonl")
    parser.add_argument("--shared", type=input_folder, default=None,
                        help="shared data folder (default: the project's ../shared/data)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.errors import DatasetError
    from models.datasets.figure_pairs import pair_counts
    from models.datasets.figure_sources import read_source_papers

    sources = args.source or list(SOURCES)
    from models.datasets.figure_gold import gold_pdf_names

    excluded = sorted(gold_pdf_names()) if args.exclude_gold else []
    skipped: list[tuple[str, str, str]] = []
    table: dict[str, dict[str, dict[str, int]]] = {}
    try:
        for source in sources:
            papers = list(read_source_papers(source, root=args.shared, exclude_pdfs=excluded,
                                             on_skip=lambda *item: skipped.append(item)))
            table[source] = {split: pair_counts(p for p in papers if p.split == split) for split in SPLITS}
            table[source]["all"] = pair_counts(papers)
    except DatasetError as error:
        print(f"error: {error}")
        return 1
    totals = {split: {c: sum(table[s][split][c] for s in table) for c in COLUMNS}
              for split in (*SPLITS, "all")}
    header = f"{'source':<10} {'split':<6}" + "".join(f"{c.replace('papers_with_2plus_figures', '2+figs'):>9}"
                                                        for c in COLUMNS)
    print(header)
    for source, rows in [*table.items(), ("total", totals)]:
        for split in (*SPLITS, "all"):
            print(f"{source:<10} {split:<6}" + "".join(f"{rows[split][c]:>9}" for c in COLUMNS))
    if excluded:
        print(f"excluded {len(excluded)} gold PDF(s)")
    for source, name, reason in skipped:
        print(f"skipped {source} {name}: {reason[:120]}")
    if args.json:
        write_output(args.json, json.dumps({"sources": table, "total": totals, "excluded_pdfs": excluded,
                                         "skipped": [list(s) for s in skipped]}, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0
