"""The hand-labelled graphical-abstract dev set (``gold_data/graphical-abstract``, issue 14).

Twelve shared PDFs with at least three figures each, and the top-3 figures a knowledgeable
reader picked as the paper's graphical abstract (see that folder's README: written before any
ranker existed). The PDFs are parsed again from ``../shared/pdfs``; a PDF whose sha256 differs
from the one recorded is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from core.document import Paper
from core.errors import DatasetError
from core.fileio import file_sha256
from core.paths import shared_dir

FIGURE_GOLD = Path(__file__).resolve().parent / "gold_data" / "graphical-abstract" / "gold.jsonl"


@dataclass(frozen=True)
class FigureGold:
    """One labelled paper: its printed figure numbers and the reader's top 3, best first."""

    pdf: str
    sha256: str
    figures: tuple[str, ...]
    top3: tuple[str, ...]
    reasons: tuple[str, ...]


def read_figure_gold(path: Path = FIGURE_GOLD) -> list[FigureGold]:
    """The labelled papers, in file order."""
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            top3 = row["top3"]
            out.append(FigureGold(row["pdf"], row["sha256"], tuple(row["figures"]),
                                  tuple(t["number"] for t in top3), tuple(t["reason"] for t in top3)))
        except (KeyError, TypeError, json.JSONDecodeError) as error:
            raise DatasetError(f"{path}:{number}: bad gold line ({error})") from None
    return out


def gold_pdf_names(path: Path = FIGURE_GOLD) -> set[str]:
    """File names of the labelled PDFs (kept out of the figure head's training pairs)."""
    return {g.pdf for g in read_figure_gold(path)} if path.is_file() else set()


def gold_pdf_dir() -> Path:
    return shared_dir() / "pdfs"


def gold_papers(pdf_dir: Path | None = None, path: Path = FIGURE_GOLD) -> Iterator[tuple[FigureGold, Paper]]:
    """Each labelled paper with its parse; :class:`DatasetError` when a PDF is absent or changed."""
    from core.pdf import parse_pdf

    folder = pdf_dir or gold_pdf_dir()
    for gold in read_figure_gold(path):
        pdf = folder / gold.pdf
        if not pdf.is_file():
            raise DatasetError(f"{pdf} is missing: the graphical-abstract dev set needs the shared PDFs")
        if file_sha256(pdf) != gold.sha256:
            raise DatasetError(f"{pdf} is not the PDF that was labelled (sha256 differs)")
        yield gold, parse_pdf(pdf)
