"""The annotated corpus's parsed-PDF papers read whole, as the app reads them (a full-paper dev set).

The corpus's pdfs2 rows locate each sentence by (section, position) in the paper as
``models/datasets/annotation_sources.read_pdf_paper`` read it: the parsed sections that hold sentences,
in order. :func:`load_annotated_pdf_papers` parses each paper of a split again with today's parser and
joins every row to its sentence (by place, or by text hash when a parser change moved it), so
``rhetorica eval functions --data annotated --split dev`` scores the app's whole-paper analysis on the
corpus's dev papers (10 papers of four fields, 706 sentences in corpus v2) — a larger full-paper dev
set than gold:dev (180 sentences of 4 papers). The train split's papers trained the model: only the
dev split is offered there.
"""

from __future__ import annotations

from pathlib import Path

from core.document import Paper, Sentence
from core.errors import DatasetError
from models.datasets.annotated_corpus import ANNOTATED_CORPUS, is_dev_paper, read_rows
from models.datasets.annotation import text_sha1
from models.datasets.annotation_sources import coarse_field
from models.datasets.gold import GoldSentence, sentences_by_sha1


def _joined(paper: Paper, row: dict[str, object], by_sha1: dict[str, list[Sentence]]) -> Sentence:
    filled = [section for section in paper.sections if section.sentence_count]
    section_index, position = int(str(row["section"])), int(str(row["position"]))
    if section_index < len(filled) and position < filled[section_index].sentence_count:
        candidate = paper.sentences[filled[section_index].first_sentence + position]
        if text_sha1(candidate.text) == row["sha1"]:
            return candidate
    same = by_sha1.get(str(row["sha1"]), [])
    if len(same) != 1:
        raise DatasetError(f"annotated {row['paper_id']} {row['uid']}: the parsed sentence no longer matches "
                           "(parser changed?); re-assemble the corpus (rhetorica data annotation-assemble)")
    return same[0]


def load_annotated_pdf_papers(split: str, pdf_dir: Path, path: Path | None = None
                              ) -> list[tuple[Paper, list[GoldSentence]]]:
    """Each pdfs2 paper of the annotated corpus's ``split`` (dev only), freshly parsed, with its rows."""
    from core.pdf import parse_pdf

    if split != "dev":
        raise DatasetError("annotated papers are scored on their dev split only (the train split trained "
                           "the model)")
    grouped: dict[str, list[dict[str, object]]] = {}
    for row in read_rows(path or ANNOTATED_CORPUS):
        if row["source"] == "pdfs2" and is_dev_paper("pdfs2", str(row["paper_id"])):
            grouped.setdefault(str(row["paper_id"]), []).append(row)
    out: list[tuple[Paper, list[GoldSentence]]] = []
    for name, rows in sorted(grouped.items()):
        pdf = pdf_dir / f"{name}.pdf"
        if not pdf.is_file():
            raise DatasetError(f"{pdf}: the annotated papers need the shared PDFs")
        paper = parse_pdf(pdf)
        by_sha1 = sentences_by_sha1(paper)
        items = []
        for row in rows:
            sentence = _joined(paper, row, by_sha1)
            section = paper.sections[sentence.section_index] if 0 <= sentence.section_index < len(
                paper.sections) else None
            items.append(GoldSentence(name, f"s{sentence.index}", sentence.index, sentence.text,
                                      section.kind.value if section is not None else "other",
                                      str(row["role"]), str(row["function"]),
                                      coarse_field(str(row["field"])), "dev"))
        out.append((paper, items))
    return out
