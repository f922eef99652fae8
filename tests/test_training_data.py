"""Dataset readers: counts match each dataset's PROVENANCE.md, mappings are consistent."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from models.datasets import (
    DATASET_LABELS,
    ROLE_MAPPINGS,
    DatasetError,
    load_dataset,
    pubmedqa_heading_roles,
    to_dataset_label,
)
from models.roles import ROLES

pytestmark = pytest.mark.shared


def _counts(docs):
    return len(docs), sum(len(d) for d in docs), Counter(lab for d in docs for lab in d.labels)


@pytest.mark.parametrize(("split", "abstracts", "sentences", "per_label"), [
    ("train", 1668, 11333,
     {"background": 3615, "objective": 1325, "method": 3621, "result": 2422, "other": 350}),
    ("dev", 295, 2026, {"background": 681, "objective": 244, "method": 624, "result": 410, "other": 67}),
    ("test", 226, 1349, {"background": 493, "objective": 155, "method": 421, "result": 219, "other": 61}),
])
def test_csabstruct_counts(shared, split, abstracts, sentences, per_label):
    docs = load_dataset("csabstruct", split, shared)
    assert _counts(docs) == (abstracts, sentences, Counter(per_label))
    assert len({d.doc_id for d in docs}) == abstracts  # unique ids (the files' abstract_id is always 0)
    doc = docs[0]
    assert doc.section_kinds == ["abstract"] * len(doc)
    assert all(a == ROLE_MAPPINGS["csabstruct"][lab] for a, lab in zip(doc.allowed, doc.labels))


def test_csabstruct_test_dedup_drops_the_train_and_dev_duplicates(shared):
    train = {tuple(d.sentences) for d in load_dataset("csabstruct", "train", shared)}
    dev = {tuple(d.sentences) for d in load_dataset("csabstruct", "dev", shared)}
    test = load_dataset("csabstruct", "test", shared)
    dedup = load_dataset("csabstruct", "test-dedup", shared)
    assert sum(tuple(d.sentences) in train for d in test) == 26
    assert sum(tuple(d.sentences) in dev for d in test) == 6
    assert len(test) - len(dedup) == len({tuple(d.sentences) for d in test} & (train | dev))
    assert not any(tuple(d.sentences) in train or tuple(d.sentences) in dev for d in dedup)
    dev_dedup = load_dataset("csabstruct", "dev-dedup", shared)
    tests = {tuple(d.sentences) for d in test}
    assert len(dev_dedup) == 295 - 6 and not any(tuple(d.sentences) in tests for d in dev_dedup)


@pytest.mark.parametrize(("split", "rows", "docs", "per_id"), [
    ("dev", 17309, 1558, [9288, 604, 4095, 2039, 1283]),
    ("test", 17310, 1559, [9289, 603, 4096, 2039, 1283]),
])
def test_pmc_counts_one_sentence_per_document(shared, split, rows, docs, per_id):
    data = load_dataset("pmc-sents-full", split, shared)
    assert len(data) == rows and all(len(d) == 1 and d.section_kinds is None for d in data)
    assert len({d.doc_id.split("#")[0] for d in data}) == docs
    counts = Counter(d.labels[0] for d in data)
    assert [counts[name] for name in DATASET_LABELS["pmc-sents-full"]] == per_id
    other = next(d for d in data if d.labels[0] == "other")
    assert other.allowed[0] == frozenset({"background", "other", "conclusion"})


def test_pmc_dev_fit_and_holdout_partition_dev_by_article(shared):
    fit = load_dataset("pmc-sents-full", "dev-fit", shared)
    hold = load_dataset("pmc-sents-full", "dev-holdout", shared)
    assert len(fit) + len(hold) == 17309
    assert 0.05 < len(hold) / 17309 < 0.15
    fit_ids = {d.doc_id.split("#")[0] for d in fit}
    assert not fit_ids & {d.doc_id.split("#")[0] for d in hold}


def test_pubmedqa_splits_and_conclusions(shared):
    train = load_dataset("pubmedqa", "train", shared)
    test = load_dataset("pubmedqa", "test", shared)
    assert len(train) == 500 and len(test) == 500
    assert not {d.doc_id for d in train} & {d.doc_id for d in test}
    for doc in train[:50]:
        assert doc.labels[-1] == "conclusion"  # LONG_ANSWER closes every abstract
        assert all(lab in DATASET_LABELS["pubmedqa"] for lab in doc.labels)
    counts = Counter(lab for d in train + test for lab in d.labels)
    assert set(counts) == set(DATASET_LABELS["pubmedqa"])
    assert counts["conclusion"] >= 1000  # 1,000 conclusion paragraphs, >= 1 sentence each


def test_pubmedqa_heading_mapping():
    assert pubmedqa_heading_roles("BACKGROUND") == ["background"]
    assert pubmedqa_heading_roles("PURPOSE") == ["objective"]
    assert pubmedqa_heading_roles("PATIENTS AND METHODS") == ["method"]
    assert pubmedqa_heading_roles("METHODS AND RESULTS") == ["method", "result"]
    assert pubmedqa_heading_roles("BACKGROUND AND AIMS") == ["background", "objective"]
    assert pubmedqa_heading_roles("CONCLUSIONS") == ["conclusion"]
    assert pubmedqa_heading_roles("UNLABELLED") == []


@pytest.mark.parametrize(("name", "split", "abstracts", "sentences"), [
    ("nicta-piboso", "train", 720, 6979),
    ("nicta-piboso", "dev", 80, 801),
    ("nicta-piboso", "test", 200, 1991),
    ("uci-az", "train", 2517, 2517),
    ("uci-az", "test", 600, 600),
])
def test_other_dataset_counts(shared, name, split, abstracts, sentences):
    docs = load_dataset(name, split, shared)
    assert (len(docs), sum(len(d) for d in docs)) == (abstracts, sentences)
    assert all(lab in DATASET_LABELS[name] for d in docs for lab in d.labels)


def test_sciarg_units_per_domain(shared):
    assert sum(len(d) for d in load_dataset("sciarg", "train-bio", shared)) == 2417
    assert len(load_dataset("sciarg", "train-bio", shared)) == 250
    assert sum(len(d) for d in load_dataset("sciarg", "test-cl", shared)) == 151
    docs = load_dataset("sciarg", "train", shared)
    assert all(a and a <= set(ROLES) for d in docs for a in d.allowed)


def test_sciarg_fine_scores_the_same_units_on_fine_types(shared):
    coarse = load_dataset("sciarg", "test-cl", shared)
    fine = load_dataset("sciarg-fine", "test-cl", shared)
    assert [d.sentences for d in fine] == [d.sentences for d in coarse]
    assert [d.allowed for d in fine] == [d.allowed for d in coarse]
    labels = [lab for d in fine for lab in d.labels]
    assert set(labels) <= set(DATASET_LABELS["sciarg-fine"]) and {"result", "conclusion"} <= set(labels)
    # Each fine type's allowed roles agree with its coarse type's scoring.
    for c_doc, f_doc in zip(coarse, fine):
        for c_lab, f_lab in zip(c_doc.labels, f_doc.labels):
            assert ROLE_MAPPINGS["sciarg-fine"][f_lab] & ROLE_MAPPINGS["sciarg"][c_lab] or c_lab == "other"
    # Unlike the coarse scheme, a predicted conclusion is not a result here.
    assert to_dataset_label("sciarg-fine", "conclusion") == "conclusion"
    assert to_dataset_label("sciarg-fine", "result") == "result"
    assert to_dataset_label("sciarg", "conclusion") == to_dataset_label("sciarg", "result") == "outcomes"


def test_every_mapping_is_into_roles_and_reversible():
    for name, labels in DATASET_LABELS.items():
        assert set(ROLE_MAPPINGS[name]) == set(labels)
        for label in labels:
            assert ROLE_MAPPINGS[name][label] <= set(ROLES)
        for role in ROLES:
            assert to_dataset_label(name, role) in labels
    # A role maps back to the label whose allowed set contains it.
    assert to_dataset_label("csabstruct", "conclusion") == "result"
    assert to_dataset_label("pmc-sents-full", "conclusion") == "other"
    assert to_dataset_label("pmc-sents-full", "method") == "methods"
    assert to_dataset_label("pmc-sents-full", "background") == "background"  # override: "other" allows it too
    assert ROLE_MAPPINGS["pmc-sents-full"]["other"] == {"background", "other", "conclusion"}
    assert to_dataset_label("jsonl:/x.jsonl", "method") == "method"


def test_user_formats(tmp_path):
    docs_file = tmp_path / "docs.jsonl"
    docs_file.write_text(
        json.dumps({"doc_id": "a", "sentences": ["We study X.", "X is good."],
                    "labels": ["objective", "result"]})
        + "\n", encoding="utf-8")
    rows_file = tmp_path / "rows.jsonl"
    rows_file.write_text("".join(json.dumps(r) + "\n" for r in [
        {"doc_id": "a", "text": "One.", "label": "background"},
        {"doc_id": "b", "text": "Two.", "label": "method"},
        {"doc_id": "a", "text": "Three.", "label": "result|conclusion"},
    ]), encoding="utf-8")
    csv_file = tmp_path / "rows.csv"
    csv_file.write_text('doc_id,text,label\nd1,"Hello, world.",other\nd1,Next.,method\n', encoding="utf-8")

    (doc,) = load_dataset(f"jsonl:{docs_file}")
    assert doc.sentences == ["We study X.", "X is good."] and doc.allowed[1] == {"result"}
    a, b = load_dataset(f"jsonl:{rows_file}")
    assert a.sentences == ["One.", "Three."] and a.allowed[1] == {"result", "conclusion"}
    assert b.labels == ["method"]
    (c,) = load_dataset(f"csv:{csv_file}")
    assert c.sentences == ["Hello, world.", "Next."] and c.labels == ["other", "method"]

    bad = tmp_path / "bad.csv"
    bad.write_text("doc_id,text,label\nd,x,banana\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="banana"):
        load_dataset(f"csv:{bad}")


def test_unknown_names_raise_typed_errors(shared):
    with pytest.raises(DatasetError):
        load_dataset("nope", "train", shared)
    with pytest.raises(DatasetError):
        load_dataset("csabstruct", "validation", shared)


@pytest.mark.parametrize(("name", "content", "message"), [
    ("latin1.jsonl", b'{"doc_id": "a", "text": "caf\xe9", "label": "method"}\n',
     r"not UTF-8 text \(byte 0xe9 at offset 28\); save it as UTF-8"),
    ("list.jsonl", b"[1, 2, 3]\n", r"list.jsonl:1: not a JSON object"),
    ("number.jsonl", b'{"doc_id": "a", "sentences": 5, "labels": []}\n', r"'sentences' must be a list"),
    ("deep.jsonl", b"[" * 100_000 + b"]" * 100_000 + b"\n", r"deep.jsonl:1: JSON nested too deeply"),
    ("latin1.csv", b"doc_id,text,label\nd,caf\xe9,method\n", r"not UTF-8 text \(byte 0xe9 at offset 23\)"),
])
def test_bad_user_data_files_get_one_line(tmp_path, name, content, message):
    """Hostile test D, problem 11: these were UnicodeDecodeError, AttributeError and RecursionError."""
    from core.errors import RhetoricaError

    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(RhetoricaError, match=message) as error:
        load_dataset(f"{name.rsplit('.', 1)[1]}:{path}")
    assert "\n" not in str(error.value)
