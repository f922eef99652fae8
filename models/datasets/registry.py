"""Dataset names to readers: ``load_dataset(name, split)`` and ``load_spec("name:split")``.

Also the evaluation-hygiene guard :func:`refuse_test_split`: model selection (early stopping,
calibration, export parity samples) must never look at a test split.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.errors import DatasetError
from models.datasets import readers
from models.datasets.documents import LabelledDocument, data_root
from models.datasets.scirex import load_scirex_sections
from models.datasets.user import load_csv, load_jsonl

Reader = Callable[[Path, str], list[LabelledDocument]]

def _load_gold(root: Path, split: str) -> list[LabelledDocument]:
    from models.datasets.gold import gold_documents

    return gold_documents(split, root.parent / "pdfs")


def _load_gold_papers(root: Path, split: str) -> list[LabelledDocument]:
    from models.datasets.gold import gold_paper_documents

    return gold_paper_documents(split, root.parent / "pdfs")


def _load_annotated(root: Path, split: str) -> list[LabelledDocument]:
    from models.datasets.annotated_corpus import annotated_documents

    return annotated_documents(split, root.parent)


def _load_annotated_sections(root: Path, split: str) -> list[LabelledDocument]:
    from models.datasets.annotated_corpus import annotated_section_documents

    return annotated_section_documents(split, root.parent)


def _gold_test_papers(name: str) -> Reader:
    """The reader of one pdfs2 gold test (``annotated_corpus.GOLD_TESTS``), as gold-papers; test only."""

    def load(root: Path, split: str) -> list[LabelledDocument]:
        from models.datasets.annotated_corpus import GOLD_TESTS
        from models.datasets.gold import gold_paper_documents

        if split != "test":
            raise DatasetError(f"{name}-papers has only a test split, not {split!r}")
        return gold_paper_documents("test", root.parent / "pdfs2", GOLD_TESTS[name])

    return load


READERS: dict[str, Reader] = {
    "csabstruct": readers.load_csabstruct,
    "pmc-sents-full": readers.load_pmc,
    "pubmedqa": readers.load_pubmedqa,
    "nicta-piboso": readers.load_nicta,
    "sciarg": readers.load_sciarg,
    "sciarg-fine": readers.load_sciarg_fine,
    "uci-az": readers.load_uci,
    "scirex-sections": load_scirex_sections,
    "gold": _load_gold,
    "gold-papers": _load_gold_papers,  # whole sections; only the gold sentences are scored
    "annotated": _load_annotated,  # the hand-annotated full-paper corpus (issue 24): train, dev, all
    "annotated-sections": _load_annotated_sections,  # the same inside whole sections (context unlabelled)
    "gold2-papers": _gold_test_papers("gold2"),  # the pdfs2 gold test (issue 24), as gold-papers
    "gold3-papers": _gold_test_papers("gold3"),  # more sentences of the same papers (session 18)
    "gold4-papers": _gold_test_papers("gold4"),  # further sentences of the same papers (session 19)
}


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``name:split`` (or ``jsonl:PATH`` / ``csv:PATH``) into (name, split)."""
    if spec.startswith(("jsonl:", "csv:")):
        return spec, ""
    if ":" not in spec:
        raise DatasetError(f"dataset spec {spec!r} must be NAME:SPLIT (e.g. csabstruct:train)")
    name, split = spec.split(":", 1)
    return name, split


def load_spec(spec: str, shared: Path | None = None) -> list[LabelledDocument]:
    """:func:`load_dataset` for a ``name:split`` string."""
    name, split = parse_spec(spec)
    return load_dataset(name, split, shared)


def load_dataset(name: str, split: str = "", shared: Path | None = None) -> list[LabelledDocument]:
    """Read one split of a named dataset (or a user file ``jsonl:PATH`` / ``csv:PATH``)."""
    if name.startswith("jsonl:"):
        return load_jsonl(Path(name[6:]))
    if name.startswith("csv:"):
        return load_csv(Path(name[4:]))
    if name not in READERS:
        known = ", ".join(sorted(READERS))
        raise DatasetError(f"unknown dataset {name!r}; known: {known}, jsonl:PATH, csv:PATH")
    return READERS[name](data_root(shared), split)


def is_test_split(spec: str) -> bool:
    """True for ``name:test`` and its variants (``test-dedup``, ``test-cl``, ...)."""
    if spec.startswith(("jsonl:", "csv:")):
        return False
    _, split = parse_spec(spec)
    return split == "test" or split.startswith("test-")


def refuse_test_split(spec: str, purpose: str) -> None:
    """Raise a one-line :class:`DatasetError` when ``spec`` names a test split.

    ``purpose`` says what the data would have been used for ("early stopping (--dev)").
    """
    if is_test_split(spec):
        raise DatasetError(f"{spec}: a test split cannot be used for {purpose}; "
                           "use a dev split (test splits are for the reported figures only)")
