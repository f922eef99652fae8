"""The hand-labelled full-paper gold set: its rows, its split by paper, its join to the PDFs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from core.taxonomy.functions import default_taxonomy
from core.taxonomy.labels import ROLES
from models.datasets.gold import EXCLUDED_FROM_TRAINING, GOLD_DIR, GOLD_PAPERS, load_gold_papers, text_sha1


def _rows(split: str) -> list[dict[str, str]]:
    with (GOLD_DIR / f"{split}.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_gold_is_big_enough_balanced_and_split_by_paper() -> None:
    dev, test = _rows("dev"), _rows("test")
    assert len(dev) + len(test) >= 500
    papers = {split: {r["pdf"] for r in rows} for split, rows in (("dev", dev), ("test", test))}
    assert not papers["dev"] & papers["test"]
    assert len(papers["dev"] | papers["test"]) >= 10
    for split, names in papers.items():
        assert all(GOLD_PAPERS[name][1] == split for name in names)
    domains = Counter(GOLD_PAPERS[r["pdf"]][0] == "cs" for r in dev + test)
    assert domains[True] == domains[False]  # half CS/NLP, half biomedical/other
    assert {r["section_kind"] for r in dev + test} <= {
        "introduction", "related-work", "method", "result", "discussion", "conclusion", "other"}


def test_gold_labels_are_valid_and_text_only_from_open_papers() -> None:
    ids = set(default_taxonomy().ids) | {"none"}
    for row in _rows("dev") + _rows("test"):
        assert row["role"] in ROLES and row["function"] in ids, row
        assert ("text" in row) == (GOLD_PAPERS[row["pdf"]][2] == "open"), row["pdf"]
        if "text" in row:
            assert text_sha1(row["text"]) == row["sha1"]


def test_gold_papers_are_kept_out_of_the_distant_pdf_corpus(shared: Path, tmp_path: Path) -> None:
    from core.errors import DatasetError
    from models.datasets.gold import dev5_papers
    from models.training.function_corpus import _from_pdfs

    gold = next(iter(GOLD_PAPERS))
    dev5 = sorted(p for p in (shared / "pdfs").glob("*.pdf") if p.stem not in EXCLUDED_FROM_TRAINING)
    assert dev5 and all(p.stem in dev5_papers() for p in dev5)  # since session 23, the dev set v5's
    for source in (shared / "pdfs" / f"{gold}.pdf", dev5[0]):
        (tmp_path / source.name).symlink_to(source)
    with pytest.raises(DatasetError, match="kept out of training"):
        list(_from_pdfs(tmp_path))
    other = shared / "pdfs2" / "aaaiws-2015-looking-beyond-text.pdf"  # any paper no gold or dev set holds
    (tmp_path / other.name).symlink_to(other)
    assert {s.doc_id for s in _from_pdfs(tmp_path)} == {other.stem}


@pytest.mark.shared
def test_gold_rows_join_the_parsed_sentences(shared: Path) -> None:
    papers = load_gold_papers("dev", shared / "pdfs")
    rows = _rows("dev")
    items = [item for _, found in papers for item in found]
    assert [(i.pdf, i.sid, i.role, i.function) for i in items] == [
        (r["pdf"], r["sid"], r["role"], r["function"]) for r in rows]
    for paper, found in papers:
        for item in found:
            sentence = paper.sentences[item.index]
            assert sentence.text == item.text and sentence.id == item.sid


def test_a_changed_sentence_is_refused(shared: Path, tmp_path: Path) -> None:
    from core.errors import DatasetError

    rows = _rows("dev")[:3]
    rows[1] = rows[1] | {"sha1": "0" * 16}
    (tmp_path / "dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(DatasetError, match="no longer matches"):
        load_gold_papers("dev", shared / "pdfs", tmp_path)


def test_a_functions_role_is_the_hand_given_role() -> None:
    """Why ``train roles --function-roles`` may label a sentence with its function's role: on the
    gold dev split the hand-given role is the function's taxonomy role for 152 of the 154 sentences
    that have a function (docs/training.md)."""
    from core.taxonomy.functions import default_taxonomy

    role_of = {f.id: f.role for f in default_taxonomy().functions}
    pairs = [(r["role"], role_of[r["function"]]) for r in _rows("dev") if r["function"] in role_of]
    assert len(pairs) == 154
    assert sum(given == taxonomy for given, taxonomy in pairs) == 152


def test_gold_papers_are_whole_sections_scored_only_on_gold_sentences(shared: Path) -> None:
    """``gold-papers:dev``: every sentence of each section run that holds a gold sentence, in order;
    the gold sentences carry their role, the rest none (all roles allowed, never scored)."""
    from models.datasets.gold import UNLABELLED, load_gold
    from models.datasets.registry import load_spec, refuse_test_split

    documents = load_spec("gold-papers:dev", shared)
    gold = load_gold("dev", shared / "pdfs")
    labelled = [(text, label) for d in documents for text, label in zip(d.sentences, d.labels)
                if label != UNLABELLED]
    assert sorted(labelled) == sorted((g.text, g.role) for g in gold)
    assert sum(len(d) for d in documents) > 2 * len(gold)  # the neighbours come along
    for document in documents:
        assert any(label != UNLABELLED for label in document.labels)
        assert document.section_kinds is not None and len(set(document.section_kinds)) == 1
        assert all(allowed == frozenset(ROLES) for label, allowed in zip(document.labels, document.allowed)
                   if label == UNLABELLED)
    with pytest.raises(Exception, match="test"):
        refuse_test_split("gold-papers:test", "model selection")
