"""``rhetorica parse PDF``: parse a paper, print a short summary, write the JSON document."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TextIO

from app.commands._options import bounded_int, nonblank

if TYPE_CHECKING:  # pragma: no cover
    from core.document import Paper


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "parse",
        help="Parse a PDF paper into sections, sentences and figures.",
        description="Parse a PDF paper: print a summary and optionally write the JSON document "
        "and the figure crops.",
    )
    parser.add_argument("pdf", type=nonblank, help="the PDF file")
    parser.add_argument("--json", type=nonblank, metavar="OUT",
                        help="write the parsed paper as JSON to OUT ('-' = stdout)")
    parser.add_argument("--figures-dir", type=nonblank, metavar="DIR",
                        help="write each figure/table crop as DIR/<id>.png")
    parser.add_argument("--max-pages", type=bounded_int(1, 1_000_000), default=None, metavar="N",
                        help="refuse PDFs with more than N pages")
    parser.add_argument("--quiet", action="store_true", help="no summary")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from app.commands._options import check_input_file, check_output_file, check_output_folder
    from core.fileio import atomic_write_bytes, atomic_write_text
    from core.pdf import parse_pdf, render_figure_png

    check_input_file(args.pdf, "a PDF")
    check_output_file(args.json, "--json", inputs=[args.pdf])
    check_output_folder(args.figures_dir, "--figures-dir")
    paper = parse_pdf(args.pdf, max_pages=args.max_pages)
    out = sys.stdout if args.json != "-" else sys.stderr
    if not args.quiet:
        _summary(paper, out)
    if args.json == "-":
        sys.stdout.write(paper.to_json() + "\n")
    elif args.json:
        atomic_write_text(args.json, paper.to_json())
        print(f"wrote {args.json}", file=out)
    if args.figures_dir:
        folder = Path(args.figures_dir)
        folder.mkdir(parents=True, exist_ok=True)
        for figure in paper.figures:
            target = folder / f"{figure.id}.png"
            atomic_write_bytes(target, render_figure_png(args.pdf, figure))
        print(f"wrote {len(paper.figures)} figure crops to {folder}", file=out)
    return 0


def _summary(paper: Paper, out: TextIO) -> None:
    print(f"title:     {paper.title or '(not found)'}", file=out)
    if paper.authors:
        print(f"authors:   {', '.join(paper.authors)}", file=out)
    print(f"pages:     {paper.page_count}", file=out)
    print(f"sentences: {len(paper.sentences)}", file=out)
    print(f"sections:  {len(paper.sections)}", file=out)
    for section in paper.sections:
        indent = "  " * (section.level - 1)
        label = f"{section.number} {section.heading}".strip()
        print(f"  {indent}{label}  [{section.kind.value}, {section.sentence_count} sentences, "
              f"p. {section.page + 1}]", file=out)
    print(f"figures:   {len(paper.figures)}", file=out)
    for figure in paper.figures:
        caption = figure.caption if len(figure.caption) <= 70 else figure.caption[:67] + "..."
        found = "" if figure.region_found else " (region guessed)"
        print(f"  {figure.id:7s} p. {figure.page + 1:<3d} {len(figure.mentioned_by)} mentions{found}: "
              f"{caption}", file=out)
