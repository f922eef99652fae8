"""The library: add (PDFs, abstracts JSONL), search both views, remove, reopen, rebuild stale indexes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("hnswlib")

from core.library.library import INDEX_FILES, Library, exact_reference, read_jsonl_papers
from core.library.store import LibraryError
from core.paths import sample_paper_path
from tests.tiny_bundle import make_tiny_bundle

P1 = ("Previous work has studied this problem. We propose a new method for parsing scientific text. "
      "Results show that it works well.")
P2 = ["Our goal is to improve accuracy.",
      {"text": "Experiments on two datasets demonstrate large gains.", "section": "Results"}]
ROWS = [
    {"id": "p1", "title": "Parsing", "abstract": P1},
    {"id": "p2", "title": "Gains", "sentences": P2},
    {"id": "p3", "title": "Simple", "abstract": "In conclusion the approach is simple and fast."},
]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from models import load_model

    bundle = make_tiny_bundle(tmp_path_factory.mktemp("lib-model") / "bundle")
    return load_model(bundle, device="cpu", threads=1)


def _jsonl(tmp_path: Path, rows=ROWS) -> Path:
    path = tmp_path / "abstracts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_import_search_remove_and_reopen(tmp_path: Path, model) -> None:
    folder = tmp_path / "lib"
    with Library(folder) as library:
        report = library.import_jsonl(_jsonl(tmp_path), model, note="test rows")
        assert report.added == ["p1", "p2", "p3"] and report.sentences == 6
        again = library.import_jsonl(_jsonl(tmp_path), model)
        assert again.added == [] and len(again.skipped) == 3  # duplicates skipped
        sentences = library.store.sentences_of("p2")
        assert [(s.section, s.section_kind) for s in sentences] == [("", ""), ("Results", "result")]
        query = model.embed(["Results show that it works well."])
        ids, scores = library.search("content", query, k=3)
        best = library.store.sentences(ids[0].tolist())[0]
        assert best.text == "Results show that it works well."
        assert scores[0, 0] == pytest.approx(1.0, abs=1e-4)
        exact = exact_reference(library, "function")
        assert exact is not None and len(exact) == 6
        assert library.remove("p1") == 3
        ids, _ = library.search("content", query, k=10)
        assert len(ids[0]) == 3 and best.id not in ids[0]
    with Library(folder) as reopened:  # the saved index is read back, in step with the database
        assert reopened.store.get_meta("index.content.count") == "3"
        assert len(reopened.index("content")) == 3
        assert reopened.stats().papers == 2


def test_a_stale_or_missing_index_is_rebuilt(tmp_path: Path, model) -> None:
    folder = tmp_path / "lib"
    with Library(folder) as library:
        library.import_jsonl(_jsonl(tmp_path), model)
    (folder / INDEX_FILES["content"]).unlink()
    with Library(folder) as library:
        library.store.set_meta("index.function.count", "999")  # as after a crash mid-save
        assert len(library.index("content")) == 6 and len(library.index("function")) == 6
    assert (folder / INDEX_FILES["content"]).is_file()


def test_pdfs_are_added_and_bad_files_skipped_with_a_reason(tmp_path: Path, model) -> None:
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 not really")
    with Library(tmp_path / "lib") as library:
        report = library.add_pdfs([sample_paper_path(), bad, sample_paper_path()], model, workers=1)
        assert len(report.added) == 1 and report.sentences > 100
        reasons = dict(report.skipped)
        assert "already in the library" in reasons[str(sample_paper_path())]
        assert reasons[str(bad)]  # a one-line reason from the PDF reader
        paper = library.store.papers()[0]
        assert paper.kind == "pdf" and paper.sentence_count == report.sentences
        kinds = {s.section_kind for s in library.store.sentences_of(paper.paper_id)}
        assert "introduction" in kinds and "abstract" in kinds
    with Library(tmp_path / "here") as library:  # parsed in this process: the same outcome
        here = library.add_pdfs([bad, sample_paper_path()], model, workers=0)
        assert here.sentences == report.sentences and len(here.skipped) == 1


def test_bad_jsonl_rows_are_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "abstract": "Fine."}\n{"title": "no id"}\n', encoding="utf-8")
    with pytest.raises(LibraryError, match=r"bad.jsonl:2: not a paper row"):
        read_jsonl_papers(path)
