"""``rhetorica template --input FILE --json OUT``: formulaic spans and a template for each line."""

from __future__ import annotations

import argparse
import json
import sys

from app.commands._options import path_arg


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    help_text = "The formulaic spans (character offsets) and the template of each sentence of a text file."
    parser = subparsers.add_parser("template", help=help_text, description=help_text)
    parser.add_argument("--input", type=path_arg, required=True, metavar="FILE", help="one sentence per line")
    parser.add_argument("--json", type=path_arg, default=None, metavar="OUT",
                        help="JSON file (default: stdout)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.commands._options import check_output_file
    from core.errors import RhetoricaError
    from core.fileio import atomic_write_text, read_text_input
    from core.phrasing.templates import template_of

    check_output_file(args.json, "--json", inputs=[args.input])
    lines = [line.strip() for line in read_text_input(args.input, "a text file of sentences").splitlines()
             if line.strip()]
    if not lines:
        raise RhetoricaError(f"{args.input}: no sentences (every line is blank): give one sentence "
                             "per line")
    rows = []
    for line in lines:
        spans, template = template_of(line)
        rows.append({"text": line, "spans": [list(s) for s in spans], "template": template})
    text = json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
    if args.json is None:
        sys.stdout.write(text)
    else:
        atomic_write_text(args.json, text)
    return 0
