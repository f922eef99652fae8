"""Faceted search, issue 26.5: the query paper never comes back (by id, sha256 or identical text), a query
without the facet's roles falls back to all its sentences and says so, and a facet blends the facet
sentences' matches (against every candidate sentence, facet sentences with a bonus) with whole-paper
similarity. Hand-made vectors and roles; the command on the tiny bundle."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.library.library import Library
from core.library.store import NewSentence
from core.phrasing.search import (
    DEFAULT_BLEND,
    MAX_SUM,
    FacetBlend,
    FacetCandidates,
    FacetQuery,
    QueryPaper,
    SearchQuery,
    blend_scores,
    clear_cache,
    max_sum_scores,
    paper_means,
    search_like,
)

DIM = 12


def _axis(*weights: tuple[int, float]) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    for i, w in weights:
        v[i] = w
    return v / np.linalg.norm(v)


def _add(library: Library, paper_id: str, rows: list[tuple[str, str, np.ndarray]], *,
         sha256: str = "", confidence: float = 0.9) -> None:
    sentences = [NewSentence(text, role=role, role_confidence=confidence) for text, role, _ in rows]
    library.store.add_paper(paper_id=paper_id, sha256=sha256 or f"sha-{paper_id}", title=f"Title {paper_id}",
                            source="test", note="", kind="jsonl", model_id="hand", sentences=sentences,
                            content=np.stack([v for _, _, v in rows]))


QUERY = [("Tagging is hard.", "background", _axis((0, 1.0))),
         ("We train a tagger.", "method", _axis((1, 1.0))),
         ("It works.", "result", _axis((2, 1.0)))]


@pytest.fixture()
def library(tmp_path: Path):
    clear_cache()
    lib = Library(tmp_path / "lib")
    _add(lib, "q", QUERY, sha256="sha-of-the-pdf")
    # the method said in a sentence the model labelled "result"
    _add(lib, "mislabelled", [("Birds sing.", "background", _axis((5, 1.0))),
                              ("We train a tagger as well.", "result", _axis((1, 1.0), (6, 0.1)))])
    _add(lib, "other", [("Rocks are old.", "background", _axis((7, 1.0))),
                        ("We date rocks.", "method", _axis((8, 1.0)))])
    yield lib
    lib.close()
    clear_cache()


def _query(paper_id: str, sha256: str = "", rows: list[tuple[str, str, np.ndarray]] = QUERY) -> QueryPaper:
    return QueryPaper(paper_id, "Draft", [t for t, _, _ in rows], [r for _, r, _ in rows],
                      np.stack([v for _, _, v in rows]), sha256=sha256)


def _ids(library: Library, query: str | QueryPaper, facet: str) -> list[str]:
    return [hit.paper_id for hit in search_like(library, query, facet, k=10).results]


@pytest.mark.parametrize("facet", ["background", "method", "result", "all"])
def test_the_query_paper_never_comes_back(library: Library, facet: str) -> None:
    assert "q" not in _ids(library, "q", facet)  # by library id
    # a PDF already in the library: another path as its id, the same sha256
    assert "q" not in _ids(library, _query("/home/me/paper.pdf", sha256="sha-of-the-pdf"), facet)
    # the same text under another id and another sha256 (saved again, imported twice)
    assert "q" not in _ids(library, _query("/tmp/copy.pdf", sha256="another-sha"), facet)
    # a different paper with the same sha256 field empty is not mistaken for it
    changed = [(t, r, _axis((i + 3, 1.0))) for i, (t, r, _) in enumerate(QUERY)]
    assert "q" in _ids(library, _query("/tmp/new.pdf", rows=changed), facet)


def test_a_duplicate_in_the_library_is_the_query_too(library: Library) -> None:
    _add(library, "q-again", QUERY)  # the same abstract imported twice, another id and sha256
    assert not {"q", "q-again"} & set(_ids(library, "q", "method"))


def test_no_sentences_of_the_facet_falls_back_to_all(library: Library) -> None:
    result = search_like(library, "other", "result", k=10)  # "other" has no result/conclusion sentence
    assert result.query.fallback
    assert result.query.facet_sentences == ["Rocks are old.", "We date rocks."]
    note = result.query.fallback_note
    assert "no result sentences" in note and "all its 2 sentences" in note and "\n" not in note
    assert result.to_dict()["query"]["fallback"] is True
    assert {h.paper_id for h in result.results} == {"q", "mislabelled"}
    assert not search_like(library, "q", "result").query.fallback
    assert SearchQuery("x", "", "method", ["a"]).fallback_note == ""


def test_a_facet_finds_its_content_under_another_role(library: Library) -> None:
    # the candidate's tagger sentence is labelled "result": the facet still matches it
    hit = search_like(library, "q", "method", k=1).results[0]
    assert hit.paper_id == "mislabelled"
    assert hit.evidence[0].matched_sentence == "We train a tagger as well."
    assert hit.evidence[0].similarity > 0.99


def test_the_facet_bonus_breaks_a_tie_towards_the_facets_role(tmp_path: Path) -> None:
    clear_cache()
    with Library(tmp_path / "lib") as lib:
        _add(lib, "q", QUERY)
        same = _axis((1, 1.0), (9, 0.2))
        also = ("Also.", "other", _axis((10, 1.0)))
        _add(lib, "as-result", [("We train a tagger too.", "result", same), also])
        _add(lib, "as-method", [("We train a tagger too.", "method", same), also])
        assert _ids(lib, "q", "method")[:2] == ["as-method", "as-result"]
        tied = search_like(lib, "q", "method", blend=FacetBlend(0.0, 0.3)).results
        assert tied[0].score == pytest.approx(tied[1].score)
    clear_cache()


def _candidates(vectors: np.ndarray, starts: np.ndarray, in_facet: np.ndarray) -> FacetCandidates:
    return FacetCandidates(vectors, in_facet.astype(np.float64), starts, paper_means(vectors, starts))


def test_blend_scores_by_hand() -> None:
    query = np.array([[1.0, 0.0], [0.0, 1.0]])
    candidates = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])  # paper 0: rows 0-1, paper 1: row 2
    starts = np.array([0, 2])
    side = _candidates(candidates, starts, np.array([1, 0, 0]))
    q = FacetQuery(query, np.ones(2), paper_means(query, np.array([0]))[0])
    plain, _ = max_sum_scores(query, candidates, starts)
    assert blend_scores(q, side, MAX_SUM)[0] == pytest.approx(plain)
    bonus, _ = blend_scores(q, side, FacetBlend(0.1, 0.0))
    # paper 0: max(1 + 0.1, 0.6) and max(0 + 0.1, 0.8) -> (1.1 + 0.8) / 2 / 1.1; paper 1: (0 + 1) / 2 / 1.1
    assert bonus == pytest.approx([(1.1 + 0.8) / 2 / 1.1, 0.5 / 1.1])
    whole, _ = blend_scores(q, side, FacetBlend(0.0, 1.0))
    assert whole == pytest.approx(side.means @ q.mean)
    weighted, _ = blend_scores(FacetQuery(query, np.array([3.0, 1.0]), q.mean), side, MAX_SUM)
    assert weighted == pytest.approx([(3 * 1.0 + 0.8) / 4, (3 * 0.0 + 1.0) / 4])
    assert DEFAULT_BLEND.sentence_bonus > 0 and 0 < DEFAULT_BLEND.whole_weight < 1
    with pytest.raises(ValueError):
        FacetBlend(-0.1, 0.3)
    with pytest.raises(ValueError):
        FacetBlend(0.05, 1.5)


def test_confidences_must_match_the_sentences() -> None:
    with pytest.raises(ValueError, match="confidences"):
        QueryPaper("x", "", ["a", "b"], ["method", "result"], np.ones((2, DIM), np.float32),
                   confidences=(0.5,))


# -- the command (tiny bundle) ----------------------------------------------------------------------
@pytest.fixture()
def cli_library(tmp_path: Path):
    pytest.importorskip("hnswlib")
    from models import load_model
    from tests.tiny_bundle import make_tiny_bundle

    clear_cache()
    bundle = make_tiny_bundle(tmp_path / "bundle")
    rows = [{"id": "a", "title": "Paper A", "sentences": [
                {"text": "Previous work has studied this problem.", "section": "Introduction"},
                {"text": "We propose a new method for parsing scientific text.", "section": "Method"}]},
            {"id": "b", "title": "Paper B", "sentences": [
                {"text": "Experiments on two datasets demonstrate large gains.", "section": "Results"}]}]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    model = load_model(bundle, device="cpu", threads=1)
    with Library(tmp_path / "lib") as lib:
        lib.import_jsonl(path, model)
    yield tmp_path, model, ["--library", str(tmp_path / "lib"), "--model", str(bundle), "--threads", "1",
                            "--quiet"]
    clear_cache()


def test_search_command_says_when_it_falls_back(cli_library: tuple[Path, object, list[str]],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    _, _, options = cli_library
    with Library(options[1]) as lib:
        roles = {r.role for r in lib.store.sentences_of("b")}
    facet = next(f for f, wanted in (("background", {"background", "objective"}), ("method", {"method"}),
                                     ("result", {"result", "conclusion"})) if not roles & wanted)
    assert main(["search", "--like", "b", "--facet", facet, *options]) == 0
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and f"no {facet} sentences" in notes[0]
    assert main(["search", "--like", "b", "--facet", facet, "--json", *options]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["query"]["fallback"] is True
    assert captured.err.count("rhetorica: note: ") == 1


def test_a_pdf_in_the_library_is_not_its_own_answer(cli_library: tuple[Path, object, list[str]],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pymupdf")
    from app.cli import main
    from tests.pdf_factory import two_column_pdf

    tmp_path, model, options = cli_library
    pdf = two_column_pdf(tmp_path / "query.pdf")
    with Library(options[1]) as lib:
        lib.add_pdfs([pdf], model)  # type: ignore[arg-type]
        pdf_ids = [p.paper_id for p in lib.store.papers() if p.kind == "pdf"]
    assert len(pdf_ids) == 1
    copy = tmp_path / "elsewhere" / "renamed.pdf"
    copy.parent.mkdir()
    copy.write_bytes(pdf.read_bytes())
    for facet in ("all", "method"):
        assert main(["search", "--like", str(copy), "--facet", facet, "--json", *options]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["query"]["paper_id"] == str(copy)
        assert sorted(hit["paper_id"] for hit in data["results"]) == ["a", "b"]  # never the PDF itself
