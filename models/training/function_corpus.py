"""The sentences that distant function labels are drawn from, with where they come from.

Sources (``--source`` of ``rhetorica data functions``):

- any ``models.datasets`` spec whose text may be used for training (``csabstruct:train``,
  ``pubmedqa:all``, ...): abstract sentences, section kind "abstract";
- ``scirex``: every section of the 306 SciREX full texts (detokenised), section kind read off the
  heading, or from its place for a topical heading (as the PDF parser does);
- ``scitldr``: the sentences of the SciTLDR-A *train* abstracts (its test split is the content-retrieval
  test of ``rhetorica eval content``), section kind "abstract";
- ``pdfs``: the body sentences of the PDFs in ``../shared/pdfs`` (parsed by ``core.pdf``), with
  their section kinds, except the twelve papers of the hand-labelled gold set
  (``models.datasets.gold``), which are never training data.

The shared PDFs include papers whose licences do not allow redistribution: the labelled
sentences are training data written under ``runs/``, never bundled.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from core.errors import DatasetError
from core.paths import shared_dir


@dataclass(frozen=True)
class CorpusSentence:
    source: str
    doc_id: str
    section_kind: str
    text: str


def _from_dataset(spec: str) -> Iterator[CorpusSentence]:
    from models.datasets import load_spec, refuse_test_split

    refuse_test_split(spec, "distant function labels (training data)")
    for doc in load_spec(spec):
        kinds = doc.section_kinds or ["unknown"] * len(doc)
        for text, kind in zip(doc.sentences, kinds, strict=True):
            yield CorpusSentence(spec, doc.doc_id, kind, text)


def _from_scirex() -> Iterator[CorpusSentence]:
    from itertools import groupby

    from core.pdf.headings import section_kind
    from models.datasets.annotation_sources import kinds_by_place
    from models.datasets.scirex import scirex_sections

    for doc_id, group in groupby(scirex_sections(shared_dir() / "data"), key=lambda section: section.doc_id):
        sections = [section for section in group if section.number != 0]  # the first "section" is the title
        headings = [section.heading or "(no heading)" for section in sections]
        own = [section_kind(section.heading).value if section.heading else "unknown" for section in sections]
        kinds = kinds_by_place(headings, own)
        for section, kind in zip(sections, kinds, strict=True):
            for text in section.sentences():
                yield CorpusSentence("scirex", doc_id, kind, text)


def _from_pdfs(folder: Path | None = None) -> Iterator[CorpusSentence]:
    from core.pdf import parse_pdf
    from models.datasets.gold import EXCLUDED_FROM_TRAINING, dev5_papers

    folder = folder or shared_dir() / "pdfs"
    held_out = EXCLUDED_FROM_TRAINING | dev5_papers()  # the dev set v5's papers since session 23
    found = sorted(folder.glob("*.pdf"))
    if not found:
        raise DatasetError(f"{folder}: no PDFs")
    pdfs = [p for p in found if p.stem not in held_out]
    if not pdfs:  # the shared PDFs since session 23: gold v1 and the dev set v5 hold them all
        raise DatasetError(f"{folder}: every PDF here is a gold or dev paper, kept out of training")
    for pdf in pdfs:
        paper = parse_pdf(pdf)
        for sentence in paper.sentences:
            section = paper.sections[sentence.section_index] if 0 <= sentence.section_index < len(
                paper.sections) else None
            kind = section.kind.value if section is not None else "unknown"
            yield CorpusSentence("pdfs", pdf.stem, kind, sentence.text)


def _from_scitldr() -> Iterator[CorpusSentence]:
    from models.datasets.scitldr import load_scitldr

    for paper in load_scitldr("train"):
        for text in paper.abstract:
            yield CorpusSentence("scitldr:train", f"scitldr-{paper.paper_id}", "abstract", text)


def corpus_sentences(source: str) -> Iterator[CorpusSentence]:
    """The sentences of one ``--source``."""
    if source == "scirex":
        return _from_scirex()
    if source == "scitldr":
        return _from_scitldr()
    if source == "pdfs":
        return _from_pdfs()
    if ":" in source:
        return _from_dataset(source)
    raise DatasetError(f"unknown source {source!r}: use scirex, scitldr, pdfs or a dataset spec "
                       "like csabstruct:train")
