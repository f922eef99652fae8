"""How well do sentence rectangles cover their sentences?  For every sentence of every PDF, the
words pymupdf finds inside the sentence's rectangles are compared with the sentence's words.

    .venv/bin/python -m tests.rect_check [DIR]     # default: ../shared/pdfs

A sentence "matches" when at least 90% of its words are found inside its rectangles and at least
90% of the words inside the rectangles belong to it (words compared after NFKC, lower-casing and
dropping punctuation; hyphenated line ends are joined on both sides).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

import pymupdf

from core.document import Paper
from core.paths import shared_dir
from core.pdf import parse_pdf

_WORD = re.compile(r"[0-9a-z]+")


def _words(text: str) -> Counter:
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"(?<=[a-z])-\s+(?=[a-z])", "", text)  # hyphenated line ends
    return Counter(_WORD.findall(text))


def sentence_agreement(doc: pymupdf.Document, paper: Paper) -> tuple[int, int]:
    """(matching sentences, sentences) for one parsed paper."""
    words_by_page: dict[int, list[tuple]] = {}
    good = 0
    for sentence in paper.sentences:
        inside: list[str] = []
        for rect in sentence.rects:
            words = words_by_page.get(rect.page)
            if words is None:
                words = words_by_page[rect.page] = doc.load_page(rect.page).get_text("words")
            for x0, y0, x1, y1, word, *_rest in words:
                cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
                if rect.x0 - 1 <= cx <= rect.x1 + 1 and rect.y0 <= cy <= rect.y1:
                    inside.append(word)
        got = _words(" ".join(inside))
        want = _words(sentence.text)
        if not want:
            continue
        common = sum((got & want).values())
        if common >= 0.9 * sum(want.values()) and common >= 0.9 * max(1, sum(got.values())):
            good += 1
    return good, len(paper.sentences)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0]) if args else shared_dir() / "pdfs"
    total_good = total = 0
    for path in sorted(folder.glob("*.pdf")):
        paper = parse_pdf(path)
        with pymupdf.open(path) as doc:
            good, n = sentence_agreement(doc, paper)
        total_good += good
        total += n
        share = good / max(1, n)
        print(f"{path.name:45s} {good:5d}/{n:<5d} {share:6.1%} of sentences held by their rectangles")
    print(f"all: {total_good}/{total} = {total_good / max(1, total):.1%}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
