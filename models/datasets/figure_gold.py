"""The hand-labelled graphical-abstract dev set (``gold_data/graphical-abstract``, issues 14 and 25).

Two parts, both labelled before the ranker they evaluate (see that folder's README):

* **v1** (``gold.jsonl``): twelve shared PDFs (``../shared/pdfs``) with at least three figures, mostly
  CS; a row without a ``field`` counts as computer science.
* **v2** (``pdfs2.jsonl``): the 52 papers of ``../shared/pdfs2`` in four fields (biomedical, CS,
  physical, social), with a second annotator's top-1 for 24 of them (``pdfs2-second.jsonl``).

Each row is a paper's printed figure numbers and the reader's top 3 (best first). The PDFs are parsed
again; a PDF whose sha256 differs from the one recorded is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.document import Paper
from core.errors import DatasetError
from core.fileio import file_sha256
from core.paths import shared_dir

GOLD_DIR = Path(__file__).resolve().parent / "gold_data" / "graphical-abstract"
FIGURE_GOLD = GOLD_DIR / "gold.jsonl"
FIGURE_GOLD_V2 = GOLD_DIR / "pdfs2.jsonl"
# set name -> (labels, the shared folder of its PDFs)
GOLD_SETS: dict[str, tuple[Path, str]] = {"v1": (FIGURE_GOLD, "pdfs"), "v2": (FIGURE_GOLD_V2, "pdfs2")}
DEFAULT_FIELD = "computer science"
# the manifest's field names -> the short names reports use
FIELD_NAMES = {"biomedical/life": "biomedical", "computer science": "CS", "physical/engineering": "physical",
               "social/other": "social"}


@dataclass(frozen=True)
class FigureGold:
    """One labelled paper: its printed figure numbers and the reader's top 3, best first."""

    pdf: str
    sha256: str
    figures: tuple[str, ...]
    top3: tuple[str, ...]
    reasons: tuple[str, ...]
    field: str = DEFAULT_FIELD  # the pdfs2 manifest's field ("biomedical/life", ...)
    set_name: str = "v1"
    parser_missed: tuple[str, ...] = ()

    @property
    def field_name(self) -> str:
        """The short field name of reports: biomedical, CS, physical or social."""
        return FIELD_NAMES.get(self.field, self.field)


def read_figure_gold(path: Path = FIGURE_GOLD, set_name: str = "v1") -> list[FigureGold]:
    """The labelled papers, in file order."""
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            top3 = row["top3"]
            out.append(FigureGold(row["pdf"], row["sha256"], tuple(row["figures"]),
                                  tuple(t["number"] for t in top3), tuple(t["reason"] for t in top3),
                                  str(row.get("field") or DEFAULT_FIELD), set_name,
                                  tuple(row.get("parser_missed") or ())))
        except (KeyError, TypeError, json.JSONDecodeError) as error:
            raise DatasetError(f"{path}:{number}: bad gold line ({error})") from None
    return out


def gold_pdf_names(path: Path = FIGURE_GOLD) -> set[str]:
    """File names of the v1 labelled PDFs (kept out of the figure head's training pairs)."""
    return {g.pdf for g in read_figure_gold(path)} if path.is_file() else set()


def gold_pdf_dir(set_name: str = "v1") -> Path:
    return shared_dir() / GOLD_SETS[set_name][1]


def check_sets(sets: Sequence[str]) -> tuple[str, ...]:
    unknown = [s for s in sets if s not in GOLD_SETS]
    if unknown or not sets:
        raise DatasetError(f"unknown graphical-abstract gold set(s) {', '.join(unknown) or '(none)'}: "
                           f"use {', '.join(GOLD_SETS)}")
    return tuple(sets)


def read_gold_sets(sets: Sequence[str] = ("v1", "v2")) -> list[FigureGold]:
    """The labelled papers of ``sets``, in order."""
    return [g for name in check_sets(sets) for g in read_figure_gold(GOLD_SETS[name][0], name)]


def gold_papers(pdf_dir: Path | None = None, path: Path | None = None,
                sets: Sequence[str] = ("v1", "v2")) -> Iterator[tuple[FigureGold, Paper]]:
    """Each labelled paper with its parse, every set by default (``path``: one labels file instead, its
    PDFs in ``pdf_dir``, by default the v1 folder); :class:`DatasetError` when a PDF is absent or changed."""
    from core.pdf import parse_pdf

    if path is not None:
        rows = [(g, pdf_dir or gold_pdf_dir("v1")) for g in read_figure_gold(path)]
    else:
        rows = [(g, pdf_dir or gold_pdf_dir(g.set_name)) for g in read_gold_sets(sets)]
    for gold, folder in rows:
        pdf = folder / gold.pdf
        if not pdf.is_file():
            raise DatasetError(f"{pdf} is missing: the graphical-abstract dev set needs the shared PDFs")
        if file_sha256(pdf) != gold.sha256:
            raise DatasetError(f"{pdf} is not the PDF that was labelled (sha256 differs)")
        yield gold, parse_pdf(pdf)
