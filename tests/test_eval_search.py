"""``rhetorica eval search`` (issue 13): the metrics on hand-made rankings with known answers, the
vectorised max-sum against :func:`core.phrasing.search.max_sum_scores`, and tiny end-to-end runs on hand-made
documents and vectors (no real model, no dataset)."""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from app.commands.lab import eval_search
from app.commands.lab.eval_search import (
    average_precision,
    evaluate,
    max_sum_matrix,
    mean_vector_matrix,
    ndcg_at_k,
    ranking_of,
    reference_judgements,
    sample_queries,
)
from app.commands.lab.eval_search_scoring import (
    REFERENCES,
    blend_matrix,
    fraction_cutoff,
    reference_matrix,
    tune,
)
from core.phrasing.search import (
    DEFAULT_BLEND,
    FacetBlend,
    FacetCandidates,
    FacetQuery,
    blend_scores,
    candidate_bonus,
    facet_mask,
    facet_sides,
    max_sum_scores,
    paper_means,
    paper_starts,
)


# -- metrics --------------------------------------------------------------------------------------
def test_average_precision_known_answers() -> None:
    assert average_precision([1, 2, 3, 4], {1, 2}) == 1.0
    assert average_precision([1, 2, 3, 4], {1, 3}) == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert average_precision([2, 4, 1, 3], {1, 3}) == pytest.approx((1 / 3 + 2 / 4) / 2)
    assert average_precision([5, 1], {1, 9}) == pytest.approx((1 / 2) / 2)  # 9 never retrieved: adds 0
    assert average_precision([], {1}) == 0.0
    assert average_precision([1, 2], set()) == 0.0


def test_ndcg_known_answers() -> None:
    gains = {10: 1.0, 11: 0.0, 12: 2.0}
    assert ndcg_at_k([12, 10, 11], gains) == pytest.approx(1.0)
    dcg = 1.0 / math.log2(2) + 0.0 + 2.0 / math.log2(4)
    idcg = 2.0 / math.log2(2) + 1.0 / math.log2(3)
    assert ndcg_at_k([10, 11, 12], gains) == pytest.approx(dcg / idcg)
    # cut-off: the best item below rank k earns nothing, the ideal still counts it
    assert ndcg_at_k([10, 11, 12], gains, k=1) == pytest.approx(1.0 / 2.0)
    assert ndcg_at_k([11, 99], gains) == 0.0
    assert ndcg_at_k([1, 2], {}) == 0.0


def test_reference_judgements_and_ranking() -> None:
    scores = np.array([0.9, 0.5, -np.inf, 0.7, 0.2, 0.6])
    relevant, gains = reference_judgements(scores, query=0, r=2)
    assert relevant == {3, 5}  # the query (0.9) is never its own answer
    assert gains == pytest.approx({3: 0.7 - 0.5, 5: 0.6 - 0.5})  # above the (r+1)-th's score
    assert ranking_of(scores, query=0) == [3, 5, 1, 4]  # -inf (no facet sentences) not ranked
    assert ranking_of(np.array([0.1, 0.3, 0.3, np.nan]), query=0) == [1, 2]  # ties by index
    few, few_gains = reference_judgements(np.array([0.0, 0.4, -np.inf]), query=0, r=5)
    assert few == {1} and few_gains[1] > 0


def test_sample_queries_is_seeded_and_sorted() -> None:
    assert sample_queries(5, 0, 1) == [0, 1, 2, 3, 4]
    assert sample_queries(5, 9, 1) == [0, 1, 2, 3, 4]
    first = sample_queries(100, 10, 7)
    assert first == sample_queries(100, 10, 7) == sorted(first) and len(set(first)) == 10


# -- hand-made documents --------------------------------------------------------------------------
DIM = 24
ROLES = ("background", "objective", "method", "result", "other")


def _documents(n_docs: int = 9, seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Random unit vectors for 3-6 sentences per document, with gold roles of every kind."""
    rng = np.random.default_rng(seed)
    owner: list[int] = []
    gold: list[str] = []
    for d in range(n_docs):
        roles = ["background", "method", "result", *rng.choice(ROLES, size=int(rng.integers(0, 4)))]
        owner += [d] * len(roles)
        gold += [str(r) for r in roles]
    vectors = rng.normal(size=(len(owner), DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors, np.array(owner), gold


def test_max_sum_matrix_matches_core_search() -> None:
    vectors, owner, gold = _documents()
    mask = facet_mask(gold, "method")
    matrix = max_sum_matrix(vectors, owner, mask, mask, int(owner.max()) + 1)
    rows = np.flatnonzero(mask)
    starts = np.flatnonzero(np.r_[True, owner[rows][1:] != owner[rows][:-1]])
    for q in range(int(owner.max()) + 1):
        query = vectors[rows[owner[rows] == q]]
        scores, _ = max_sum_scores(query, vectors[rows], starts)
        assert matrix[q, owner[rows][starts]] == pytest.approx(scores, abs=1e-6)


def test_max_sum_matrix_marks_missing_sentences() -> None:
    vectors, owner, gold = _documents(n_docs=4)
    gold = list(gold)
    for i in np.flatnonzero(owner == 2):
        gold[i] = "other"  # document 2 has no method sentence
    mask = facet_mask(gold, "method")
    matrix = max_sum_matrix(vectors, owner, mask, mask, 4)
    assert np.isnan(matrix[2]).all()
    assert np.isneginf(matrix[[0, 1, 3], 2]).all()
    assert np.isfinite(matrix[np.ix_([0, 1, 3], [0, 1, 3])]).all()


def test_mean_vector_matrix_is_cosine_of_means() -> None:
    vectors, owner, _ = _documents(n_docs=3)
    matrix = mean_vector_matrix(vectors, owner, 3)
    means = np.stack([vectors[owner == d].mean(axis=0) for d in range(3)])
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    assert matrix == pytest.approx(means @ means.T, abs=1e-6)
    assert np.diag(matrix) == pytest.approx(1.0)


def test_faceted_system_scores_one_when_predicted_roles_equal_gold() -> None:
    vectors, owner, gold = _documents(n_docs=12)
    report = evaluate(vectors, owner, gold, list(gold), list(range(12)), r=3, k=5)
    for facet in ("background", "method", "result"):
        facet_report = report[facet]
        assert facet_report["queries"] == 12 and facet_report["no_query"] == 0
        perfect = {"map": pytest.approx(1.0), "ndcg": pytest.approx(1.0), "ndcg20": pytest.approx(1.0)}
        assert facet_report["systems"]["facet-only"] == perfect
        assert facet_report["selection"] == {"precision": 1.0, "recall": 1.0}
        assert facet_report["delta_map_faceted_all"]["mean"] >= 0
    # with random vectors every other sentence of a paper pulls the un-faceted rankings elsewhere
    for name in ("all", "mean", "random"):
        assert np.mean([report[f]["systems"][name]["map"] for f in report]) < 1.0


def test_wrong_predicted_roles_lose_to_gold() -> None:
    vectors, owner, gold = _documents(n_docs=12)
    swapped = {"method": "result", "result": "method"}
    predicted = [swapped.get(label, label) for label in gold]
    report = evaluate(vectors, owner, gold, predicted, list(range(12)), r=3, k=5)
    assert report["method"]["systems"]["facet-only"]["map"] < 1.0
    assert report["method"]["selection"]["precision"] == 0.0
    assert report["background"]["systems"]["facet-only"]["map"] == pytest.approx(1.0)  # untouched facet


def test_query_without_predicted_facet_sentences() -> None:
    vectors, owner, gold = _documents(n_docs=6)
    predicted = ["other" if (o == 0 and g == "method") else g for o, g in zip(owner, gold)]
    report = evaluate(vectors, owner, gold, predicted, [0], r=2, k=5)
    assert report["method"]["no_query"] == 1
    # facet-only cannot search; the shipped facet falls back to all the query's sentences
    assert report["method"]["systems"]["facet-only"] == {"map": 0.0, "ndcg": 0.0, "ndcg20": 0.0}
    assert report["method"]["systems"]["faceted"]["map"] > 0.0
    assert report["method"]["per_query"]["searchable"] == [False]
    assert report["method"]["searchable"]["facet-only"]["map"] == 0.0  # nothing left to average
    assert report["background"]["searchable"]["facet-only"]["map"] == pytest.approx(1.0)


# -- the command, on a fake model and fake documents ----------------------------------------------
@dataclass
class _Doc:
    doc_id: str
    sentences: list[str]
    labels: list[str]


@dataclass
class _Role:
    label: str


class _Encoding:
    def __init__(self, embeddings: np.ndarray, roles: list[str]) -> None:
        self.embeddings = embeddings
        self.roles = [_Role(r) for r in roles]


class _FakeModel:
    """Vectors and roles looked up by sentence text (the gold role: a perfect role tagger)."""

    model_id = "fake@0"

    def __init__(self, table: dict[str, tuple[np.ndarray, str]]) -> None:
        self.table = table

    def encode_documents(self, documents: list[tuple[list[str], str]],
                         with_embeddings: bool = True) -> list[_Encoding]:
        return [_Encoding(np.stack([self.table[s][0] for s in sentences]),
                          [self.table[s][1] for s in sentences]) for sentences, _ in documents]

    def embed(self, sentences: list[str], view: str = "content") -> np.ndarray:
        return np.stack([self.table[s][0] for s in sentences])


def test_command_end_to_end(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import models.datasets
    import models.encoder

    vectors, owner, gold = _documents(n_docs=10)
    docs = [_Doc(f"d{d}", [f"sentence {i}" for i in np.flatnonzero(owner == d)],
                 [gold[i] for i in np.flatnonzero(owner == d)]) for d in range(10)]
    table = {f"sentence {i}": (vectors[i], gold[i]) for i in range(len(gold))}
    monkeypatch.setattr(models.datasets, "load_spec", lambda spec: docs)
    monkeypatch.setattr(models.encoder, "load_model", lambda *a, **kw: _FakeModel(table))
    parser = argparse.ArgumentParser()
    eval_search.add_parser(parser.add_subparsers())
    out = tmp_path / "search.json"
    args = parser.parse_args(["search", "--queries", "6", "--relevant", "3", "--against", "other-bundle",
                              "--json", str(out)])
    lines: list[str] = []
    assert args.func(args, progress=lines.append) == 0
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["queries"] == 6 and results["documents"] == 10
    assert results["command"] == ("rhetorica eval search --data csabstruct:test --queries 6 --relevant 3 "
                                  "--against other-bundle") == lines[-1].removeprefix("command: ")
    for facet in ("background", "method", "result"):
        systems = results["facets"][facet]["systems"]
        assert systems["facet-only"]["map"] == pytest.approx(1.0)
        # the same vectors through --against: the same mean-vector baseline
        assert systems["mean (fake@0)"] == pytest.approx(systems["mean"])
    assert any(line.startswith("| facet-only | 1.000 | 1.000 | 1.000 |") for line in lines)
    assert set(results["references"]) == set(REFERENCES)
    assert results["facets"] == results["references"]["content"]
    assert sum(line.startswith("reference: ") for line in lines) == len(REFERENCES)


# -- issue 26.5: the blended facet, the references, the tuning -----------------------------------
@pytest.mark.parametrize("blend", [DEFAULT_BLEND, FacetBlend(0.1, 0.0, True), FacetBlend(0.0, 0.5)])
def test_blend_matrix_matches_core_search(blend: FacetBlend) -> None:
    vectors, owner, gold = _documents(n_docs=8)
    roles = ["other" if (o == 3 and g == "method") else g for o, g in zip(owner, gold)]  # 3: falls back
    confidences = np.random.default_rng(1).uniform(0.3, 1.0, size=len(owner))
    matrix = blend_matrix(vectors, owner, roles, confidences, "method", blend)
    starts = paper_starts(owner)
    means = paper_means(vectors, starts)
    bonus = candidate_bonus(facet_mask(roles, "method"), confidences, blend)
    side = FacetCandidates(vectors, bonus, starts, means)
    for q in range(8):
        mine = np.flatnonzero(owner == q)
        rows, weights, fallback = facet_sides(vectors[mine], np.array(roles, dtype=object)[mine],
                                              confidences[mine], "method", blend)
        assert fallback == (q == 3)
        scores, _ = blend_scores(FacetQuery(vectors[mine][rows], weights, means[q]), side, blend)
        assert matrix[q] == pytest.approx(scores, abs=1e-6)


def test_references() -> None:
    vectors, owner, gold = _documents(n_docs=4)
    gold = ["other" if (o == 2 and g == "method") else g for o, g in zip(owner, gold)]
    texts = [f"tagger{o} parser{o} words" if g == "method" else f"filler{i} rocks" for i, (o, g) in
             enumerate(zip(owner, gold))]
    mask = facet_mask(gold, "method")
    content = reference_matrix("content", vectors, owner, mask, None, 4)
    assert content == pytest.approx(max_sum_matrix(vectors, owner, mask, mask, 4), nan_ok=True)
    facet = reference_matrix("lexical-facet", vectors, owner, mask, texts, 4)
    assert np.isnan(facet[2]).all() and np.isneginf(facet[[0, 1, 3], 2]).all()
    assert facet[0, 0] == pytest.approx(1.0) and 0.0 < facet[0, 1] < 1.0  # "words" shared, the rest not
    whole = reference_matrix("lexical-whole", vectors, owner, mask, texts, 4)
    assert np.isfinite(whole[0]).all() and np.isnan(whole[2]).all()
    with pytest.raises(ValueError, match="unknown reference"):
        reference_matrix("people", vectors, owner, mask, texts, 4)
    with pytest.raises(ValueError, match="texts"):
        reference_matrix("lexical-whole", vectors, owner, mask, None, 4)
    assert fraction_cutoff(225) == 45 and fraction_cutoff(1) == 1 and fraction_cutoff(0) == 1


def test_never_loses_and_tune() -> None:
    vectors, owner, gold = _documents(n_docs=10)
    texts = [f"word{i % 7} topic{o}" for i, o in enumerate(owner)]
    report = evaluate(vectors, owner, gold, list(gold), list(range(10)), r=3, k=5, texts=texts,
                      reference="lexical-whole")
    holds, worst = eval_search.never_loses(report)
    margins = [f["systems"]["faceted"]["ndcg20"]
               - max(f["systems"]["all"]["ndcg20"], f["systems"]["mean"]["ndcg20"]) for f in report.values()]
    assert worst == pytest.approx(min(margins)) and holds == (min(margins) >= 0)
    tuned = tune(vectors, owner, gold, list(gold), np.ones(len(owner)), texts, list(range(10)), r=3)
    grid = tuned["grid"]
    assert tuned["chosen"] == grid[0] and len(grid) == 6 * 7 * 2
    keys = [(-row["worst_margin"], -row["mean_ndcg20"]) for row in grid]
    assert keys == sorted(keys)
    assert set(grid[0]["ndcg20"]) == {f"{f}/{r}" for f in eval_search.EVAL_FACETS for r in REFERENCES}


def test_tune_refuses_a_test_split(capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    assert main(["eval", "search", "--data", "csabstruct:test", "--tune"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rhetorica: error: ") and "test split" in err and err.count("\n") == 1
