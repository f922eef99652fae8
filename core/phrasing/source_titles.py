"""A title a reader can use for every source a suggestion comes from, never a bare id.

The paper's own title when the source has one (SciTLDR and OA-STM papers, PubMedQA's question, a
library paper's parsed or imported title); otherwise a label that says what the text is: the phrase
corpus's CSAbstruct abstracts have no titles in the dataset, so "csabstruct-train-1399" reads
"CSAbstruct abstract #1399 (CS, train set)"; a library PDF without a parsed title
reads as its file name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Protocol


@dataclass(frozen=True)
class Dataset:
    """A phrase-corpus dataset as a reader should see it."""

    name: str  # as its authors spell it
    unit: str  # what one paper of it is: "abstract", "article", "paper"
    field: str  # the subject area, short ("CS" for computer science)


DATASETS = {
    "csabstruct": Dataset("CSAbstruct", "abstract", "CS"),
    "scitldr": Dataset("SciTLDR", "abstract", "CS"),
    "pubmedqa": Dataset("PubMedQA", "abstract", "biomedical"),
    "oa-stm": Dataset("OA-STM", "article", "sciences"),
    "scirex": Dataset("SciREX", "paper", "machine learning"),
}
# "csabstruct-train-1399", "scitldr-SysEexbRb", "pmid-21645374", "oa-stm-S0001870812002101"
_SPLIT_NUMBER = re.compile(r"^(?P<split>train|dev|test|validation)-(?P<number>\d+)$")
_PREFIXES = {"pmid-": "pubmedqa"}


class PaperLike(Protocol):
    """What a title is made from (``core.library.store.PaperRecord`` is one; a phrase-corpus pack's
    record keeps its dataset in ``source``)."""

    @property
    def title(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def kind(self) -> str: ...


def _clean(text: str) -> str:
    return " ".join(text.split())


def dataset_of(paper_id: str, source: str = "") -> str:
    """The phrase-corpus dataset a paper belongs to ("" when not known): its record's ``source``, or
    its id's prefix ("csabstruct-…", "pmid-…")."""
    if source in DATASETS:
        return source
    for prefix, dataset in _PREFIXES.items():
        if paper_id.startswith(prefix):
            return dataset
    return next((name for name in DATASETS if paper_id.startswith(name + "-")), "")


def corpus_label(paper_id: str, dataset: str) -> str:
    """"CSAbstruct abstract #1399 (CS, train set)" for an untitled corpus paper."""
    info = DATASETS.get(dataset)
    if info is None:
        return f"Untitled paper {paper_id} from the phrase corpus"
    rest = paper_id.removeprefix(dataset + "-") if paper_id.startswith(dataset + "-") else paper_id
    numbered = _SPLIT_NUMBER.match(rest)
    if numbered:
        return f"{info.name} {info.unit} #{numbered['number']} ({info.field}, {numbered['split']} set)"
    return f"{info.name} {info.unit} {rest} ({info.field})"


def source_title(paper: PaperLike | None, paper_id: str, kind: str) -> str:
    """The title a suggestion's source is shown with: the paper's own title, else a label saying what
    it is (``kind``: "corpus" for the phrase corpus, "library" for the user's library)."""
    title = _clean(paper.title) if paper is not None else ""
    if title:
        return title
    if kind == "corpus" or (paper is not None and paper.kind == "corpus"):
        return corpus_label(paper_id, dataset_of(paper_id, paper.source if paper is not None else ""))
    if paper is not None and paper.kind == "pdf" and paper.source:
        return f"Untitled PDF: {PurePath(paper.source).name}"
    if paper is not None and paper.kind == "jsonl":
        where = f" from {PurePath(paper.source).name}" if paper.source else ""
        return f"Untitled paper {paper_id}{where} in your library"
    return f"Untitled paper {paper_id} in your {'library' if kind == 'library' else kind or 'sources'}"
