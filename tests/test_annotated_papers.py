"""The annotated corpus's parsed-PDF dev papers read whole (``rhetorica eval functions --data annotated``)."""

from __future__ import annotations

import pytest

from core.errors import DatasetError
from models.datasets.annotated_corpus import ANNOTATED_CORPUS, is_dev_paper, read_rows
from models.datasets.annotated_papers import load_annotated_pdf_papers
from models.datasets.annotation import text_sha1
from tests.conftest import SHARED, requires_shared


def test_only_the_dev_split_is_offered() -> None:
    with pytest.raises(DatasetError, match="dev split only"):
        load_annotated_pdf_papers("train", SHARED / "pdfs2")


@requires_shared
def test_every_dev_row_is_joined_to_its_sentence_in_the_freshly_parsed_paper() -> None:
    rows = [r for r in read_rows(ANNOTATED_CORPUS)
            if r["source"] == "pdfs2" and is_dev_paper("pdfs2", str(r["paper_id"]))]
    papers = load_annotated_pdf_papers("dev", SHARED / "pdfs2")
    items = [item for _, found in papers for item in found]
    assert len(items) == len(rows) and len(papers) == len({r["paper_id"] for r in rows})
    for (paper, found) in papers:
        for item in found:
            assert paper.sentences[item.index].text == item.text
    assert sorted(text_sha1(i.text) for i in items) == sorted(str(r["sha1"]) for r in rows)
