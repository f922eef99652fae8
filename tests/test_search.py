"""Faceted search by example (issue 13): hand-made vectors and roles for the ranking, the tiny bundle
for the command. The query never comes back; each facet ranks the paper that shares it first."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.library.library import Library
from core.library.store import LibraryError, NewSentence
from core.phrasing.search import (
    QueryPaper,
    SearchError,
    clear_cache,
    facet_mask,
    max_sum_scores,
    search_like,
)

DIM = 12


def _axis(i: int, noise: float = 0.0, seed: int = 0) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = 1.0
    if noise:
        v += noise * np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    return v


# paper id -> [(text, role, vector axis)]: Q's background is axis 0, method 1, result 2.
PAPERS: dict[str, list[tuple[str, str, int]]] = {
    "q": [("Parsing papers is hard.", "background", 0), ("We aim to parse them.", "objective", 0),
          ("We train a tagger on sentences.", "method", 1), ("Accuracy rises by ten points.", "result", 2),
          ("Thanks to our funders.", "other", 9)],
    "same-method": [("Proteins fold.", "background", 3), ("We train a tagger on sentences too.", "method", 1),
                    ("Folding is faster.", "result", 4)],
    "same-background": [("Parsing papers is known to be hard.", "objective", 0),
                        ("We hand-write rules.", "method", 5), ("Rules cover half.", "result", 6)],
    "same-result": [("Birds migrate.", "background", 7), ("We count birds.", "method", 8),
                    ("Accuracy rises by ten points as well.", "conclusion", 2)],
    "no-facets": [("A note with no rhetorical role.", "other", 10)],
}


def _add(library: Library, paper_id: str, rows: list[tuple[str, str, int]], seed: int = 0) -> None:
    sentences = [NewSentence(text, role=role) for text, role, _ in rows]
    content = np.stack([_axis(axis, 0.05, seed + i) for i, (_, _, axis) in enumerate(rows)])
    library.store.add_paper(paper_id=paper_id, sha256=f"sha-{paper_id}", title=f"Title {paper_id}",
                            source="test", note="", kind="jsonl", model_id="hand", sentences=sentences,
                            content=content)


@pytest.fixture()
def library(tmp_path: Path):
    clear_cache()
    lib = Library(tmp_path / "lib")
    for seed, (paper_id, rows) in enumerate(PAPERS.items()):
        _add(lib, paper_id, rows, seed=10 * seed)
    yield lib
    lib.close()
    clear_cache()


@pytest.mark.parametrize("facet, first", [("method", "same-method"), ("background", "same-background"),
                                          ("result", "same-result")])
def test_each_facet_ranks_the_paper_sharing_it_first(library: Library, facet: str, first: str) -> None:
    result = search_like(library, "q", facet, k=10)
    ids = [hit.paper_id for hit in result.results]
    assert ids[0] == first
    assert "q" not in ids
    # every other paper is ranked (whole-paper similarity), one without the facet's roles last here
    assert sorted(ids) == sorted(set(PAPERS) - {"q"}) and ids[-1] == "no-facets"
    scores = [hit.score for hit in result.results]
    assert scores == sorted(scores, reverse=True) and all(s <= 1.0 + 1e-6 for s in scores)
    assert result.candidates == 4 and not result.query.fallback


def test_facet_sentences_follow_the_roles(library: Library) -> None:
    background = search_like(library, "q", "background").query.facet_sentences
    assert background == ["Parsing papers is hard.", "We aim to parse them."]  # + objective
    assert search_like(library, "q", "result").query.facet_sentences == ["Accuracy rises by ten points."]
    every = search_like(library, "q", "all", k=10)
    assert len(every.query.facet_sentences) == 5
    assert {h.paper_id for h in every.results} == set(PAPERS) - {"q"}  # whole-paper ranking: everyone


def test_evidence_pairs_are_real_sentences(library: Library) -> None:
    result = search_like(library, "q", "method", k=3)
    texts = {text for rows in PAPERS.values() for text, _, _ in rows}
    best = result.results[0]
    assert best.evidence[0].query_sentence == "We train a tagger on sentences."
    assert best.evidence[0].matched_sentence == "We train a tagger on sentences too."
    assert best.evidence[0].similarity > 0.9
    for hit in result.results:
        assert 1 <= len(hit.evidence) <= 3
        for pair in hit.evidence:
            assert pair.query_sentence in result.query.facet_sentences and pair.matched_sentence in texts
            assert -1.0001 <= pair.similarity <= 1.0001
        sims = [e.similarity for e in hit.evidence]
        assert sims == sorted(sims, reverse=True)


def test_json_shape_and_k(library: Library) -> None:
    result = search_like(library, "q", "all", k=2)
    data = json.loads(json.dumps(result.to_dict()))
    assert set(data) == {"query", "results"}
    assert set(data["query"]) == {"paper_id", "title", "facet", "facet_sentences", "fallback"}
    assert data["query"]["fallback"] is False
    assert data["query"]["paper_id"] == "q" and data["query"]["facet"] == "all"
    assert data["query"]["title"] == "Title q"
    assert len(data["results"]) == 2
    for hit in data["results"]:
        assert set(hit) == {"paper_id", "title", "score", "evidence"}
        for pair in hit["evidence"]:
            assert set(pair) == {"query_sentence", "matched_sentence", "similarity"}
    assert len(search_like(library, "q", "all", k=1).results) == 1


def test_an_analysed_query_paper(library: Library) -> None:
    vectors = np.stack([_axis(5), _axis(2)])
    query = QueryPaper("draft.pdf", "Draft", ["We hand-write rules.", "Accuracy rises."],
                       ["method", "result"], vectors)
    assert search_like(library, query, "method").results[0].paper_id == "same-background"
    assert search_like(library, query, "result").results[0].paper_id == "same-result"
    # an analysed library paper is still never returned
    again = QueryPaper("same-background", "", ["We hand-write rules."], ["method"], _axis(5)[None])
    assert "same-background" not in [h.paper_id for h in search_like(library, again, "method").results]
    with pytest.raises(ValueError):
        QueryPaper("x", "", ["one"], [], _axis(0)[None])


def test_the_cache_sees_added_and_removed_papers(library: Library) -> None:
    assert search_like(library, "q", "method").results[0].paper_id == "same-method"
    _add(library, "exact-method", [("We train a tagger on sentences.", "method", 1)])
    found = [h.paper_id for h in search_like(library, "q", "method").results]
    assert "exact-method" in found[:2]
    library.store.remove_paper("exact-method")
    assert "exact-method" not in [h.paper_id for h in search_like(library, "q", "method").results]


def test_errors(library: Library, tmp_path: Path) -> None:
    with pytest.raises(LibraryError, match="no paper"):
        search_like(library, "nope", "method")
    with pytest.raises(SearchError, match="unknown facet"):
        search_like(library, "q", "methods")
    with pytest.raises(SearchError, match="k must be"):
        search_like(library, "q", "method", k=0)
    with pytest.raises(SearchError, match="different models"):
        search_like(library, QueryPaper("x", "", ["a"], ["method"], np.ones((1, 3), np.float32)), "method")
    with Library(tmp_path / "empty") as empty, pytest.raises(SearchError, match="empty"):
        search_like(empty, "q", "method")


def test_max_sum_scores_by_hand() -> None:
    query = np.array([[1.0, 0.0], [0.0, 1.0]])
    candidates = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])  # paper 0: rows 0-1, paper 1: row 2
    scores, similarities = max_sum_scores(query, candidates, np.array([0, 2]))
    assert similarities.shape == (2, 3)
    assert np.allclose(scores, [(1.0 + 0.8) / 2, (0.0 + 1.0) / 2])
    assert np.array_equal(facet_mask(["background", "objective", "method", "other"], "background"),
                          [True, True, False, False])
    assert facet_mask(["other"], "all").tolist() == [True]


# -- the command (tiny bundle) ----------------------------------------------------------------------
ROWS = [
    {"id": "a", "title": "Paper A", "sentences": [
        {"text": "Previous work has studied this problem.", "section": "Introduction"},
        {"text": "We propose a new method for parsing scientific text.", "section": "Method"},
        {"text": "Results show that it works well.", "section": "Results"}]},
    {"id": "b", "title": "Paper B", "sentences": [
        {"text": "Our goal is to improve accuracy.", "section": "Introduction"},
        {"text": "We propose a simple and fast method.", "section": "Method"},
        {"text": "Experiments on two datasets demonstrate large gains.", "section": "Results"}]},
    {"id": "c", "title": "Paper C", "sentences": [
        {"text": "In conclusion the approach is simple and fast.", "section": "Conclusion"}]},
]


@pytest.fixture()
def cli_library(tmp_path: Path):
    pytest.importorskip("hnswlib")
    from models import load_model
    from tests.tiny_bundle import make_tiny_bundle

    clear_cache()
    bundle = make_tiny_bundle(tmp_path / "bundle")
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    with Library(tmp_path / "lib") as lib:
        lib.import_jsonl(rows, load_model(bundle, device="cpu", threads=1))
    yield ["--library", str(tmp_path / "lib"), "--model", str(bundle), "--threads", "1", "--quiet"]
    clear_cache()


def test_search_command(cli_library: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    assert main(["search", "--like", "a", "--facet", "all", "-k", "5", "--json", *cli_library]) == 0
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert data["query"]["paper_id"] == "a" and data["query"]["title"] == "Paper A"
    assert len(data["query"]["facet_sentences"]) == 3
    ids = [hit["paper_id"] for hit in data["results"]]
    assert sorted(ids) == ["b", "c"]
    assert "ranked 2 paper(s) in" in out.err
    assert main(["search", "--like", "a", "-k", "1", *cli_library]) == 0
    text = capsys.readouterr().out
    assert "papers like Paper A (a) as a whole" in text  # not "for its all"
    assert "  1. " in text and "  2. " not in text and "match: " in text and "ranked 2 paper(s)" in text


def test_search_command_errors(cli_library: list[str], tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    assert main(["search", "--like", "zzz", *cli_library]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rhetorica: error: ") and "no paper 'zzz'" in err and err.count("\n") == 1
    assert main(["search", "--like", str(tmp_path / "missing.pdf"), *cli_library]) == 2
    err = capsys.readouterr().err
    assert "missing.pdf" in err and err.count("\n") == 1
    empty = ["--library", str(tmp_path / "no-library"), "--quiet"]
    assert main(["search", "--like", "a", *empty]) == 2
    err = capsys.readouterr().err
    assert "no library at" in err and err.count("\n") == 1


def test_search_command_with_a_pdf_query(cli_library: list[str], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pymupdf")
    from app.cli import main
    from tests.pdf_factory import two_column_pdf

    pdf = two_column_pdf(tmp_path / "query.pdf")
    assert main(["search", "--like", str(pdf), "--facet", "all", "--json", *cli_library]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["query"]["paper_id"] == str(pdf)
    assert data["query"]["title"] == "A Generated Paper About Reading Order"
    assert len(data["query"]["facet_sentences"]) > 10
    assert sorted(hit["paper_id"] for hit in data["results"]) == ["a", "b", "c"]  # none is the query
