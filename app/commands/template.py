"""``rhetorica template --input FILE --json OUT``: formulaic spans and a template for each line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    help_text = "The formulaic spans (character offsets) and the template of each sentence of a text file."
    parser = subparsers.add_parser("template", help=help_text, description=help_text)
    parser.add_argument("--input", type=Path, required=True, metavar="FILE", help="one sentence per line")
    parser.add_argument("--json", type=Path, default=None, metavar="OUT", help="JSON file (default: stdout)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.errors import MissingFileError
    from core.templates import template_of

    if not args.input.is_file():
        raise MissingFileError(str(args.input), "no such file")
    rows = []
    for line in args.input.read_text(encoding="utf-8").splitlines():
        if line.strip():
            spans, template = template_of(line.strip())
            rows.append({"text": line.strip(), "spans": [list(s) for s in spans], "template": template})
    text = json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
    if args.json is None:
        sys.stdout.write(text)
    else:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text, encoding="utf-8")
    return 0
