"""The hand-annotated corpus (issue 24): its committed size, agreement arithmetic, reading it back as
runs and as function-supervised training documents."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from core.errors import DatasetError
from models.datasets.annotated_corpus import (
    ANNOTATED_CORPUS,
    annotated_documents,
    annotated_runs,
    annotated_sentences,
    cohen_kappa,
    is_dev_paper,
    read_rows,
)
from models.datasets.annotation import text_sha1

BODY_KINDS = {"introduction", "related-work", "method", "result", "discussion", "conclusion", "other"}


def _row(paper: str, section: int, position: int, role: str, function: str, kind: str = "method") -> dict:
    text = f"Sentence {position} of section {section} in {paper}."
    return {"uid": f"{paper}-{section}-{position}", "source": "arxiv-abs", "paper_id": paper,
            "field": "computer science", "section": section, "position": position, "section_kind": kind,
            "sha1": text_sha1(text), "role": role, "function": function, "annotator": "A1", "note": "",
            "text": text}


def _write(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _train_paper(prefix: str) -> str:
    """A paper id of the train split (the dev split is one tenth of papers by hash)."""
    return next(f"{prefix}{i}" for i in range(100) if not is_dev_paper("arxiv-abs", f"{prefix}{i}"))


def test_committed_corpus_meets_the_issue_minimums() -> None:
    rows = read_rows(ANNOTATED_CORPUS)
    papers = {(r["source"], r["paper_id"]) for r in rows}
    fields = Counter(r["field"] for r in rows)
    body = sum(1 for r in rows if r["section_kind"] in BODY_KINDS)
    assert len(rows) >= 6000 and len(papers) >= 120 and len(fields) >= 6 and body >= 4000
    assert all(r["role"] and r["function"] for r in rows)
    # text is stored only for open sources; the others carry a hash to re-read the sentence
    assert all("text" in r or len(str(r["sha1"])) >= 16 for r in rows)


def test_kappa_is_one_for_agreement_and_zero_at_chance() -> None:
    assert cohen_kappa(["a", "b", "a"], ["a", "b", "a"]) == 1.0
    assert cohen_kappa(["a", "a", "b", "b"], ["a", "b", "a", "b"]) == pytest.approx(0.0)
    with pytest.raises(ValueError):
        cohen_kappa([], [])


def test_runs_split_at_gaps_and_sections(tmp_path: Path) -> None:
    paper = _train_paper("p")
    rows = [_row(paper, 1, 0, "method", "none"), _row(paper, 1, 1, "method", "describe-procedure"),
            _row(paper, 1, 3, "result", "none"), _row(paper, 2, 0, "result", "none", "result")]
    runs = annotated_runs("train", path=_write(tmp_path, rows))
    assert [[s.position for s in run] for run in runs] == [[0, 1], [3], [0]]
    docs = annotated_documents("train", path=_write(tmp_path, rows))
    assert [d.labels for d in docs] == [["method", "method"], ["result"], ["result"]]
    assert docs[2].section_kinds == ["result"]


def test_dev_and_train_splits_are_disjoint_by_paper(tmp_path: Path) -> None:
    dev_paper = next(f"d{i}" for i in range(200) if is_dev_paper("arxiv-abs", f"d{i}"))
    train_paper = _train_paper("t")
    rows = [_row(dev_paper, 0, 0, "result", "none"), _row(train_paper, 0, 0, "method", "none")]
    path = _write(tmp_path, rows)
    assert {s.paper_id for s in annotated_sentences("dev", path=path)} == {dev_paper}
    assert {s.paper_id for s in annotated_sentences("train", path=path)} == {train_paper}
    with pytest.raises(DatasetError):
        annotated_sentences("test", path=path)


def test_function_documents_align_functions_with_sentences(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    del torch
    from models.training.function_data import annotated_function_documents, is_function_spec

    paper = _train_paper("f")
    ids = ["describe-procedure", "report-finding"]
    rows = [_row(paper, 0, 0, "method", "describe-procedure"), _row(paper, 0, 1, "method", "none"),
            _row(paper, 0, 2, "result", "report-finding"), _row(paper, 0, 3, "result", "retired-function")]
    docs, functions = annotated_function_documents("annotated:train", ids, path=_write(tmp_path, rows))
    assert len(docs) == 1 and docs[0].labels == ["method", "method", "result", "result"]
    assert functions == [[0, -1, 1, -1]]  # none and unknown functions teach roles only
    assert is_function_spec("annotated:train") and not is_function_spec("runs/labels.jsonl")
    with pytest.raises(DatasetError):
        annotated_function_documents("annotated:test", ids, path=_write(tmp_path, rows))
    with pytest.raises(DatasetError):
        annotated_function_documents("gold:dev", ids)


def test_train_roles_accepts_the_annotated_spec_and_refuses_other_splits() -> None:
    import argparse

    from app.commands.lab.train_roles import _function_source

    assert _function_source("annotated:train") == "annotated:train"
    with pytest.raises(argparse.ArgumentTypeError):
        _function_source("annotated:test")


def test_annotated_labels_are_the_roles_for_dev_scoring() -> None:
    """`train roles --dev annotated:dev` scores its documents with the dataset's own labels."""
    from core.taxonomy.labels import ROLES
    from models.datasets import dataset_key, to_dataset_label

    assert dataset_key("annotated:dev") == "annotated"
    assert [to_dataset_label("annotated", r) for r in ROLES] == list(ROLES)


def test_a_second_round_never_draws_a_section_the_first_labelled() -> None:
    import random

    from models.datasets.annotation import annotated_sections, pack_batches
    from models.datasets.annotation_sources import SourcePaper, SourceSection

    def section(kind: str, tag: str) -> SourceSection:
        return SourceSection(kind.title(), kind, [f"{tag} sentence {i} of a section." for i in range(12)])

    paper = SourcePaper("pdfs2", "p1", "computer science", True, "A paper",
                        [section("abstract", "a"), section("introduction", "i"), section("method", "m"),
                         section("result", "r"), section("discussion", "d")])
    labelled = {text_sha1(paper.sections[0].sentences[3]), text_sha1(paper.sections[2].sentences[5])}
    assert annotated_sections(paper, labelled) == frozenset({0, 2})
    [(_, [(_, windows, units)])] = pack_batches([paper], split="train", prefix="r2-", target=10,
                                                rng=random.Random(1), first_uid=20000,
                                                annotated_sha1=labelled)
    assert {w.section for w in windows} == {1, 3, 4}
    assert not {u.sha1 for u in units} & labelled and units[0].uid == "u20000"
    [(_, [(_, windows, _)])] = pack_batches([paper], split="train", prefix="train-", target=10,
                                            rng=random.Random(1), first_uid=0)
    assert {w.section for w in windows} == {0, 1, 2, 3, 4}  # round 1: every section may be drawn
    # round 3: fewer runs per paper when asked, still never a labelled section
    [(_, [(_, windows, _)])] = pack_batches([paper], split="train", prefix="r3-", target=10,
                                            rng=random.Random(1), first_uid=30000, annotated_sha1=labelled,
                                            windows=2)
    assert len(windows) == 2 and not {w.section for w in windows} & {0, 2}


def test_round_four_takes_free_runs_also_inside_labelled_sections() -> None:
    import random

    from models.datasets.annotation import free_runs, pack_batches
    from models.datasets.annotation_sources import SourcePaper, SourceSection

    sentences = [f"Method sentence {i} of a long section." for i in range(30)]
    paper = SourcePaper("pdfs2", "p1", "computer science", True, "A paper",
                        [SourceSection("Abstract", "abstract", ["An abstract sentence.", "Another one."]),
                         SourceSection("Method", "method", sentences),
                         SourceSection("Results", "result", [f"Result {i} here." for i in range(6)])])
    # sentences 5..12 were labelled: the free runs of 8 lie in 0..4 (none: too short) and 13..29
    labelled = {text_sha1(t) for t in sentences[5:13]}
    runs = free_runs(paper, random.Random(3), labelled, window=8, windows=4)
    assert runs and all(w.section == 1 and w.start >= 13 and w.end - w.start == 8 for w in runs)
    assert len(runs) == 2  # 17 free sentences hold two runs that do not overlap
    assert runs[0].end <= runs[1].start
    [(_, [(_, windows, units)])] = pack_batches([paper], split="train", prefix="r4-", target=10,
                                                rng=random.Random(3), first_uid=40000,
                                                annotated_sha1=labelled, windows=8, free_runs_only=True)
    assert windows == free_runs(paper, random.Random(3), labelled, windows=8)
    assert units[0].uid == "u40000" and not {u.sha1 for u in units} & labelled


def test_round_six_takes_free_runs_only_from_results_sections() -> None:
    import random

    from models.datasets.annotation import free_runs, pack_batches
    from models.datasets.annotation_sources import SourcePaper, SourceSection

    results = [f"Result sentence {i} of the findings." for i in range(12)]
    paper = SourcePaper("oa-stm", "p2", "biomedical", True, "A paper",
                        [SourceSection("Methods", "method", [f"Method {i} here." for i in range(20)]),
                         SourceSection("Results", "result", results),
                         SourceSection("Results › More", "result", [f"More {r}" for r in results]),
                         SourceSection("Discussion", "discussion", [f"Discussion {i}." for i in range(20)])])
    labelled = {text_sha1(t) for t in results[:4]} | {text_sha1(f"More {r}") for r in results[:4]}
    kinds = frozenset({"result"})
    runs = free_runs(paper, random.Random(5), labelled, window=8, windows=3, kinds=kinds)
    assert [(w.section, w.start, w.end) for w in runs] == [(1, 4, 12), (2, 4, 12)]  # no other section
    unfiltered = free_runs(paper, random.Random(5), labelled, window=8, windows=4)
    assert {w.section for w in unfiltered} == {0, 1, 2, 3}
    [(_, [(_, windows, units)])] = pack_batches([paper], split="train", prefix="r6-", target=10,
                                                rng=random.Random(5), first_uid=50000,
                                                annotated_sha1=labelled, windows=3, free_runs_only=True,
                                                kinds=kinds)
    assert windows == runs and units[0].uid == "u50000"
    assert {u.section_kind for u in units} == {"result"} and not {u.sha1 for u in units} & labelled


def test_annotated_sentences_are_read_inside_their_whole_sections(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import models.datasets.annotated_corpus as corpus
    from models.datasets.annotation_sources import SourcePaper, SourceSection

    paper = _train_paper("p")
    rows = [_row(paper, 1, 2, "method", "none"), _row(paper, 1, 3, "result", "main-finding"),
            _row(paper, 2, 0, "conclusion", "none")]
    whole = [f"Sentence {i} of section 1 in {paper}." for i in range(6)]
    source = SourcePaper("arxiv-abs", paper, "computer science", True, "", [
        SourceSection("Intro", "introduction", ["x"]), SourceSection("Method", "method", whole),
        SourceSection("End", "conclusion", ["A changed sentence."])])
    monkeypatch.setattr(corpus, "source_papers", lambda keys, shared: {("arxiv-abs", paper): source})
    documents = corpus.annotated_section_documents("train", path=_write(tmp_path, rows))
    section, fallback = documents
    assert section.sentences == whole and section.section_kinds == ["method"] * 6
    assert section.allowed == [frozenset(), frozenset(), frozenset({"method"}), frozenset({"result"}),
                               frozenset(), frozenset()]  # the unlabelled sentences are context only
    # section 2's text no longer matches the source: its annotated run is used as it is
    assert fallback.sentences == [f"Sentence 0 of section 2 in {paper}."]
    assert fallback.labels == ["conclusion"]
    # the same sections with each sentence's annotation (functions too): the contextual function head's data
    sections = corpus.annotated_sections("train", path=_write(tmp_path, rows))
    assert [s.texts for s in sections] == [whole, fallback.sentences] and sections[0].kind == "method"
    assert [c.function if c else None for c in sections[0].annotated] == [None, None, "none", "main-finding",
                                                                         None, None]


def test_the_corpus_file_is_gzip_json_lines_written_the_same_way_twice(tmp_path: Path) -> None:
    from models.datasets.annotated_corpus import write_jsonl

    rows = [_row(_train_paper("g"), 1, i, "method", "none") for i in range(3)]
    first, second = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    assert write_jsonl(first, rows) == 3 and write_jsonl(second, rows) == 3
    assert first.read_bytes() == second.read_bytes() and first.read_bytes()[:2] == b"\x1f\x8b"
    assert read_rows(first) == rows
    (tmp_path / "bad.jsonl.gz").write_bytes(b"\x1f\x8b not really gzip")
    with pytest.raises(DatasetError, match="not a readable annotated corpus file"):
        read_rows(tmp_path / "bad.jsonl.gz")


def test_an_annotated_documents_source_is_read_from_its_id() -> None:
    from models.datasets.annotated_corpus import document_source

    assert document_source("annotated-section-oa-stm-paper7-3") == "oa-stm"
    assert document_source("annotated-pdfs2-x12-4-0") == "pdfs2"
    assert document_source("annotated-section-pmc-jats-PMC1-0") == "pmc-jats"
    assert document_source("pmc-sents-full-123") is None


def test_gold_test_batches_are_committed_to_their_own_test_and_never_to_the_corpus() -> None:
    from models.datasets.annotated_corpus import DEV5_DIR, GOLD2_DIR, GOLD3_DIR, GOLD4_DIR, gold_test_dir

    assert gold_test_dir("dev5-02") == DEV5_DIR  # the dev set v5 (session 23), never the corpus either
    assert gold_test_dir("gold-01") == GOLD2_DIR
    assert gold_test_dir("gold3-02") == GOLD3_DIR
    assert gold_test_dir("gold4-01") == GOLD4_DIR
    assert gold_test_dir("r4-01") is None and gold_test_dir("train-03") is None


def test_the_gold_test_v3_shares_no_sentence_with_v2_or_the_corpus_and_no_paper_with_the_corpus() -> None:
    from models.datasets.annotated_corpus import ANNOTATED_CORPUS, GOLD2_DIR, GOLD3_DIR, read_rows

    def rows(path: Path) -> list[dict]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    if not (GOLD3_DIR / "test.jsonl").is_file():
        pytest.skip("no gold test v3 in this checkout")
    gold3, gold2 = rows(GOLD3_DIR / "test.jsonl"), rows(GOLD2_DIR / "test.jsonl")
    corpus = read_rows(ANNOTATED_CORPUS)
    assert len(gold3) >= 400
    assert {r["pdf"] for r in gold3} <= {r["pdf"] for r in gold2}  # gold v2's papers, never trained on
    assert not {r["pdf"] for r in gold3} & {str(r["paper_id"]) for r in corpus if r["source"] == "pdfs2"}
    assert not {r["sha1"] for r in gold3} & ({r["sha1"] for r in gold2} | {str(r["sha1"]) for r in corpus})
    assert all("+adjudicated" in r["annotators"] for r in gold3)  # every row annotated twice


def test_the_gold_test_v4_shares_no_sentence_with_v2_v3_or_the_corpus_and_no_paper_with_the_corpus() -> None:
    from models.datasets.annotated_corpus import ANNOTATED_CORPUS, GOLD2_DIR, GOLD3_DIR, GOLD4_DIR, read_rows

    def rows(path: Path) -> list[dict]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    if not (GOLD4_DIR / "test.jsonl").is_file():
        pytest.skip("no gold test v4 in this checkout")
    gold4, gold3, gold2 = (rows(folder / "test.jsonl") for folder in (GOLD4_DIR, GOLD3_DIR, GOLD2_DIR))
    corpus = read_rows(ANNOTATED_CORPUS)
    assert len(gold4) >= 200
    assert {r["pdf"] for r in gold4} <= {r["pdf"] for r in gold2}  # gold v2's papers, never trained on
    assert not {r["pdf"] for r in gold4} & {str(r["paper_id"]) for r in corpus if r["source"] == "pdfs2"}
    earlier = {r["sha1"] for r in gold2} | {r["sha1"] for r in gold3} | {str(r["sha1"]) for r in corpus}
    assert not {r["sha1"] for r in gold4} & earlier
    assert all("+adjudicated" in r["annotators"] for r in gold4)  # every row annotated twice


def test_a_gold_row_names_only_a_known_folder(tmp_path: Path) -> None:
    from core.errors import DatasetError
    from models.datasets.gold import load_gold_papers

    (tmp_path / "dev.jsonl").write_text(json.dumps({"pdf": "p", "folder": "../etc", "sid": "s0", "sha1": "0",
                                                    "role": "method", "function": "none"}) + "\n",
                                        encoding="utf-8")
    with pytest.raises(DatasetError, match="unknown folder"):
        load_gold_papers("dev", tmp_path / "pdfs", tmp_path)


def test_assembling_from_a_folder_without_the_batches_never_shrinks_the_corpus(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main
    from models.datasets.annotated_corpus import ANNOTATED_CORPUS

    before = ANNOTATED_CORPUS.read_bytes()
    (tmp_path / "labels").mkdir()
    assert main(["data", "annotation-assemble", "--batches", str(tmp_path)]) != 0  # runs/ is not in git
    err = capsys.readouterr().err
    assert "labelled sentences" in err and "--gold-only" in err
    assert ANNOTATED_CORPUS.read_bytes() == before
    assert main(["data", "annotation-assemble", "--batches", str(tmp_path), "--gold-only"]) == 0
    assert ANNOTATED_CORPUS.read_bytes() == before


def test_a_dev5_paper_never_goes_into_a_training_batch() -> None:
    import random

    from models.datasets.annotation import pack_batches
    from models.datasets.annotation_sources import SourcePaper, SourceSection
    from models.datasets.gold import dev5_papers

    name = sorted(dev5_papers())[0]
    sections = [SourceSection(kind.title(), kind, [f"Sentence {i} of the {kind}." for i in range(12)])
                for kind in ("method", "result")]
    paper = SourcePaper("pdfs", name, "computer science", False, "A dev paper", sections)
    with pytest.raises(DatasetError, match="dev set v5"):
        pack_batches([paper], split="train", prefix="r9-", target=10, rng=random.Random(0), first_uid=0)
    # the dev set's own round draws it
    [(_, [(_, _, units)])] = pack_batches([paper], split="gold-dev", prefix="dev5-", target=10,
                                          rng=random.Random(0), first_uid=98000)
    assert units and units[0].split == "gold-dev"


def test_a_sentence_repeated_in_the_paper_is_found_under_its_heading() -> None:
    """A parser change that renumbers sections leaves a row's (section, position) pointing elsewhere; a text
    the paper has twice (an abstract's sentence repeated in the conclusions) is then told apart by the
    heading recorded with the row, and never guessed."""
    from models.datasets.annotated_corpus import locate
    from models.datasets.annotation_sources import SourcePaper, SourceSection

    repeated = "The possibility of use depends on the final concentration."
    paper = SourcePaper("pdfs2", "p", "biomedical/life", True, sections=[
        SourceSection("Abstract", "abstract", ["We study it.", repeated]),
        SourceSection("Results", "result", ["It rose."]),
        SourceSection("Conclusions", "conclusion", ["In short:", repeated])])
    sha1 = text_sha1(repeated)
    assert locate(paper, 3, 1, sha1) is None  # the old place is gone, and the text is there twice
    assert locate(paper, 3, 1, sha1, "Conclusions") == (2, 1)
    assert locate(paper, 3, 1, sha1, "Discussion") is None
    assert locate(paper, 0, 1, sha1) == (0, 1)  # still at its recorded place
