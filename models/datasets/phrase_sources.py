"""The permissively licensed papers the default phrase corpus is built from (``rhetorica corpus build``).

Only text whose licence allows redistribution inside the product (``../shared/README.md``): every
paper keeps its dataset, id, title and licence so that each suggestion can be attributed (NOTICE).

| source | what | licence |
|---|---|---|
| ``csabstruct`` | CS abstracts (train, dev and test) | Apache-2.0 |
| ``scitldr`` | CS abstracts with titles (all splits) | Apache-2.0 |
| ``pubmedqa`` | biomedical abstracts (the question stands in for the title) | MIT |
| ``oa-stm`` | full texts in ten domains (abstract + body; Elsevier OA) | CC BY 4.0 |
| ``scirex`` | ML full texts by section | Apache-2.0 (the dataset; see below) |

``scirex`` is not in the shipped pack (:data:`SHIPPED_SOURCES`): its provenance says the papers' own
licences (arXiv's among them) apply to the text, so it is only for a corpus a user builds locally.

Pure Python (no model): the builder in ``app/commands/corpus.py`` labels and embeds the papers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from models.datasets.documents import data_root, need_file

LICENCES = {"csabstruct": "Apache-2.0", "scitldr": "Apache-2.0", "pubmedqa": "MIT",
            "oa-stm": "CC BY 4.0", "scirex": "Apache-2.0"}
PHRASE_SOURCES = tuple(LICENCES)
SHIPPED_SOURCES = ("csabstruct", "scitldr", "pubmedqa", "oa-stm")


@dataclass
class PhraseSection:
    heading: str
    kind: str  # a core.document.SectionKind value ("abstract", "method", ...)
    sentences: list[str]


@dataclass
class PhrasePaper:
    dataset: str
    paper_id: str
    title: str
    sections: list[PhraseSection] = field(default_factory=list)

    @property
    def licence(self) -> str:
        return LICENCES[self.dataset]

    def sentence_count(self) -> int:
        return sum(len(s.sentences) for s in self.sections)


def _jsonl(path: Path) -> Iterator[dict]:
    with need_file(path).open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _csabstruct(root: Path) -> Iterator[PhrasePaper]:
    for split in ("train", "dev", "test"):
        for number, row in enumerate(_jsonl(root / "csabstruct" / f"{split}.jsonl")):
            yield PhrasePaper("csabstruct", f"csabstruct-{split}-{number}", "",
                              [PhraseSection("Abstract", "abstract", list(row["sentences"]))])


def _scitldr(root: Path) -> Iterator[PhrasePaper]:
    from models.datasets.scitldr import load_scitldr

    for split in ("train", "dev", "test"):
        for paper in load_scitldr(split, root.parent):
            yield PhrasePaper("scitldr", f"scitldr-{paper.paper_id}", paper.title,
                              [PhraseSection("Abstract", "abstract", list(paper.abstract))])


def _pubmedqa(root: Path) -> Iterator[PhrasePaper]:
    from models.datasets.readers import _split_paragraph

    data = json.loads(need_file(root / "pubmedqa_labeled" / "ori_pqal.json").read_text(encoding="utf-8"))
    for pmid, item in data.items():
        sentences = [s for text in [*item["CONTEXTS"], item["LONG_ANSWER"]] for s in _split_paragraph(text)]
        yield PhrasePaper("pubmedqa", f"pmid-{pmid}", str(item.get("QUESTION", "")),
                          [PhraseSection("Abstract", "abstract", sentences)])


def _oa_stm(root: Path) -> Iterator[PhrasePaper]:
    folder = root / "oa_stm_coresc"
    titles = {}
    for line in need_file(folder / "titlesList.txt").read_text(encoding="utf-8").splitlines():
        name, _, title = line.partition(" ")
        titles[name.removesuffix(".txt")] = title.strip()
    paper: PhrasePaper | None = None
    for row in _jsonl(folder / "coresc_auto_sentences.jsonl"):
        if row["part"] == "title":
            continue
        if paper is None or paper.paper_id != f"oa-stm-{row['doc_id']}":
            if paper is not None:
                yield paper
            paper = PhrasePaper("oa-stm", f"oa-stm-{row['doc_id']}", titles.get(row["doc_id"], ""))
        # The sentence files keep abstract/body, not the body's headings: body sentences are "other".
        kind = "abstract" if row["part"] == "abstract" else "other"
        heading = "Abstract" if kind == "abstract" else "Body"
        if not paper.sections or paper.sections[-1].kind != kind:
            paper.sections.append(PhraseSection(heading, kind, []))
        paper.sections[-1].sentences.append(str(row["text"]))
    if paper is not None:
        yield paper


def _scirex(root: Path) -> Iterator[PhrasePaper]:
    from core.pdf.headings import section_kind
    from models.datasets.scirex import scirex_sections

    paper: PhrasePaper | None = None
    for section in scirex_sections(root):
        if paper is None or paper.paper_id != f"scirex-{section.doc_id}":
            if paper is not None:
                yield paper
            paper = PhrasePaper("scirex", f"scirex-{section.doc_id}", "")
        sentences = list(section.sentences())
        if section.number == 0:  # the title
            paper.title = " ".join(sentences)
            continue
        heading = section.heading or ""
        paper.sections.append(PhraseSection(heading, section_kind(heading).value if heading else "other",
                                            sentences))
    if paper is not None:
        yield paper


READERS = {"csabstruct": _csabstruct, "scitldr": _scitldr, "pubmedqa": _pubmedqa, "oa-stm": _oa_stm,
           "scirex": _scirex}


def phrase_papers(source: str, shared: Path | None = None) -> Iterator[PhrasePaper]:
    """The papers of one phrase source, in a fixed order."""
    from core.errors import DatasetError

    if source not in READERS:
        raise DatasetError(f"unknown phrase source {source!r}; known: {', '.join(PHRASE_SOURCES)}")
    return READERS[source](data_root(shared))
