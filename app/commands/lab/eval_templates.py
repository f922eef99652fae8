"""``rhetorica eval templates``: formulaic spans (core.phrasing.templates) against spans marked by hand.

Token-level precision, recall and F1 over the words of the 150 hand-marked gold sentences
(``models/datasets/gold_data/formulaic-spans.jsonl``, 75 dev, 75 test; rows of non-CC-BY papers
carry no text and are read from the parsed shared PDFs, checked against their sha1).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from app.commands._options import input_file, output_file, write_output


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("templates", help="Formulaic-span extraction against hand-marked spans.",
                                   description=__doc__)
    parser.add_argument("--split", choices=("dev", "test"), default="test")
    parser.add_argument("--lexicon", type=input_file, default=None,
                        help="lexicon JSON (default: the bundled one)")
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT")
    parser.set_defaults(func=run)


def marked_rows(split: str) -> list[tuple[str, list[tuple[int, int]]]]:
    """(sentence text, hand-marked spans) of one split; texts that are not stored come from the PDFs."""
    from core.errors import DatasetError
    from core.paths import shared_dir
    from models.datasets.gold import GOLD_DIR, load_gold_papers, text_sha1

    rows = [json.loads(line) for line in (GOLD_DIR / "formulaic-spans.jsonl").read_text(encoding="utf-8")
            .splitlines() if line.strip()]
    rows = [r for r in rows if r["split"] == split]
    texts = {(r["pdf"], r["sid"]): r["text"] for r in rows if r.get("text")}
    if any((r["pdf"], r["sid"]) not in texts for r in rows):
        for _paper, items in load_gold_papers(split, shared_dir() / "pdfs"):
            for item in items:
                texts.setdefault((item.pdf, item.sid), item.text)
    out = []
    for row in rows:
        text = texts.get((row["pdf"], row["sid"]))
        if text is None or text_sha1(text) != row["sha1"]:
            raise DatasetError(f"formulaic span row {row['pdf']} {row['sid']}: sentence text not found")
        out.append((text, [tuple(span) for span in row["spans"]]))
    return out


def _words(text: str, spans: list[tuple[int, int]]) -> set[int]:
    """Indices of the word tokens of ``text`` that fall inside ``spans``."""
    from core.phrasing.templates import tokens

    words = [(s, e) for s, e, t in tokens(text) if t[0].isalnum()]
    return {i for i, (s, e) in enumerate(words) if any(a <= s and e <= b for a, b in spans)}


def score(rows: list[tuple[str, list[tuple[int, int]]]], lexicon: Any = None) -> dict[str, Any]:
    from core.phrasing.templates import formulaic_spans

    tp = fp = fn = 0
    empty_right = 0
    for text, gold in rows:
        predicted = formulaic_spans(text, lexicon)
        g, p = _words(text, gold), _words(text, predicted)
        tp, fp, fn = tp + len(g & p), fp + len(p - g), fn + len(g - p)
        empty_right += int(not gold and not predicted)
    precision = tp / max(1, tp + fp)
    recall = tp / max(1, tp + fn)
    return {"sentences": len(rows), "token_precision": round(precision, 4), "token_recall": round(recall, 4),
            "token_f1": round(2 * precision * recall / max(1e-9, precision + recall), 4),
            "no_span_both": empty_right}


def run(args: argparse.Namespace) -> int:
    from core.phrasing.templates import load_lexicon

    lexicon = load_lexicon(str(args.lexicon) if args.lexicon else None)
    scores = score(marked_rows(args.split), lexicon)
    result = {"split": args.split, "lexicon_words": len(lexicon.words), **scores,
              "command": f"rhetorica eval templates --split {args.split}"
                         + (f" --lexicon {args.lexicon}" if args.lexicon else "")}
    print(json.dumps(result, indent=2))
    if args.json is not None:
        write_output(args.json, json.dumps(result, indent=2) + "\n")
    return 0
