"""SciTLDR-A (``../shared/data/scitldr_abstracts``): CS abstracts, each with its TLDRs.

Used by ``rhetorica eval content``: each paper's first TLDR (the author's own, or the first
reviewer-derived one) queries all abstracts of the split; the hit is the paper's own abstract.
A test of *topical* similarity that no role or function label helps with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from models.datasets.documents import bad_split, data_root, need_file

SPLITS = ("train", "dev", "test")


@dataclass(frozen=True)
class TldrPaper:
    paper_id: str
    title: str
    abstract: list[str]  # the abstract's sentences
    tldr: str


def load_scitldr(split: str, shared: Path | None = None) -> list[TldrPaper]:
    """The papers of one split that have an abstract and at least one TLDR."""
    if split not in SPLITS:
        raise bad_split("scitldr", split, SPLITS)
    path = need_file(data_root(shared) / "scitldr_abstracts" / f"{split}.jsonl")
    papers = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            sentences = [" ".join(s.split()) for s in row.get("source", []) if s.strip()]
            targets = [t.strip() for t in row.get("target", []) if t.strip()]
            if sentences and targets:
                papers.append(TldrPaper(str(row.get("paper_id", "")), str(row.get("title", "")),
                                        sentences, targets[0]))
    return papers
