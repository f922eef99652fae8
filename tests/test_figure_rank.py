"""Graphical-abstract ranking (core.figure_rank), its weight fit (core.figure_fit) and measures."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest

from core.document import Figure
from core.figure_fit import LabelledPaper, fit_weights, leave_one_paper_out
from core.figure_rank import (
    FEATURES,
    caption_body,
    combine,
    figure_features,
    rank_figures,
    scale_within_paper,
    shared_words,
)
from core.model_api import CaptionScorer
from models.metrics import average_precision, reciprocal_rank
from tests.paper_factory import make_paper

VOCAB = ["citation", "encoder", "overview", "triplet", "loss", "baseline", "points", "histogram", "venue"]


class WordScorer:
    """A bag-of-words stand-in for the caption–text scorer (one dimension per vocabulary word)."""

    trained = False
    scorer_id = "words"
    lexical_weight = 0.0

    def group_vectors(self, groups: Sequence[Sequence[str]], side: str) -> np.ndarray:
        out = np.zeros((len(groups), len(VOCAB) + 1))
        for i, group in enumerate(groups):
            words = re.findall(r"[a-z]+", " ".join(group).lower())
            for word in words:
                if word in VOCAB:
                    out[i, VOCAB.index(word)] += 1
            out[i, -1] = 0.1  # never all zero
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def paper_with_figures():
    paper = make_paper()
    paper.figures = [
        Figure("fig1", "figure", "1", "Figure 1: A histogram of venues.", 0, (72, 100, 200, 150)),
        Figure("fig2", "figure", "2", "Figure 2: Overview of the citation encoder with its triplet loss.", 1,
               (72, 100, 540, 500), mentioned_by=["s3", "s4"]),
        Figure("tab1", "table", "1", "Table 1: Baseline points.", 2, (72, 100, 540, 300)),
    ]
    return paper


def test_the_scorer_is_a_caption_scorer() -> None:
    assert isinstance(WordScorer(), CaptionScorer)


def test_caption_body_drops_the_printed_label() -> None:
    assert caption_body("Figure 3: The pipeline.") == "The pipeline."
    assert caption_body("Fig. 2. Results on dev") == "Results on dev"
    assert caption_body("Table IV | Scores") == "Scores"
    assert caption_body("Supplementary Figure S2. Extra") == "Extra"
    assert caption_body("No label here") == "No label here"


def test_shared_words_are_caption_words_found_in_the_text() -> None:
    words = shared_words("Overview of the citation encoders and their losses",
                         "We propose a citation encoder.")
    assert words == ["citation", "encoders"]


def test_features_follow_the_scorer_and_the_layout() -> None:
    paper = paper_with_figures()
    feats = figure_features(paper, WordScorer())
    assert [f.id for f in feats.figures] == ["fig1", "fig2"]  # tables are not candidates
    caption = feats.column("caption_match")
    assert caption[1] > caption[0]  # the abstract speaks of a citation encoder
    assert list(feats.column("first_figure")) == [1.0, 0.0]
    assert list(feats.column("position")) == [0.0, 1.0]
    assert feats.column("size")[1] > feats.column("size")[0]
    assert feats.column("mentions")[1] == pytest.approx(np.log1p(2))
    assert feats.column("mention_match")[0] == 0.0  # nothing mentions figure 1
    assert feats.best_sentences[1] in {"Citation graphs carry signal.",
                                       "We propose SPECTER, a document encoder."}
    assert feats.best_sentences[0] != ""
    with_tables = figure_features(paper, WordScorer(), include_tables=True)
    assert [f.id for f in with_tables.figures] == ["fig1", "fig2", "tab1"]


def test_rank_figures_orders_by_weighted_features_and_explains() -> None:
    paper = paper_with_figures()
    ranking = rank_figures(paper, WordScorer())  # no weights: the scorer alone
    assert [f.number for f in ranking.figures] == ["2", "1"]
    assert [f.rank for f in ranking.figures] == [1, 2]
    top = ranking.figures[0]
    assert set(top.parts) == {"caption_match"}
    assert "citation" in top.words and "encoder" in top.reason
    first_wins = rank_figures(paper, WordScorer(), {"first_figure": 1.0})
    assert first_wins.figures[0].number == "1"
    data = ranking.to_dict()
    assert data["figures"][0]["number"] == "2" and data["weights_source"].startswith("scorer only")


def test_a_paper_without_figures_ranks_nothing() -> None:
    paper = make_paper()
    paper.figures = []
    assert rank_figures(paper, WordScorer()).figures == []


def test_scaling_is_within_the_paper_and_flat_columns_stay_zero() -> None:
    values = np.array([[1.0, 5.0], [3.0, 5.0]])
    scaled = scale_within_paper(values)
    assert scaled[:, 0].tolist() == [-1.0, 1.0]
    assert scaled[:, 1].tolist() == [0.0, 0.0]
    scores, parts = combine(np.zeros((2, len(FEATURES))), {"size": 2.0})
    assert scores.tolist() == [0.0, 0.0] and parts.shape == (2, len(FEATURES))


def _papers(seed: int, n: int = 8) -> list[LabelledPaper]:
    """Synthetic papers whose readers pick the biggest figure: the fit must find "size"."""
    rng = np.random.default_rng(seed)
    out = []
    for p in range(n):
        values = rng.normal(size=(5, len(FEATURES)))
        numbers = [str(i + 1) for i in range(5)]
        order = np.argsort(-values[:, FEATURES.index("size")])
        out.append(LabelledPaper(f"p{p}", numbers, values, [numbers[i] for i in order[:3]]))
    return out


def test_fit_finds_the_feature_the_readers_follow() -> None:
    weights = fit_weights(_papers(0))
    assert max(weights, key=lambda k: abs(weights[k])) == "size" and weights["size"] > 0
    only = fit_weights(_papers(0), features=("position", "mentions"))
    assert set(only) == {"position", "mentions"}
    held_out = leave_one_paper_out(_papers(1, 4))
    assert set(held_out) == {"p0", "p1", "p2", "p3"}
    assert all(w["size"] > 0 for w in held_out.values())
    assert fit_weights([]) == {}


def test_ranking_measures() -> None:
    assert reciprocal_rank(["3", "1", "2"], "1") == 0.5
    assert reciprocal_rank(["3"], "9") == 0.0
    assert average_precision(["a", "x", "b", "c"], ["a", "b", "c"]) == pytest.approx((1 + 2 / 3 + 3 / 4) / 3)
    assert average_precision(["x", "y"], ["a"]) == 0.0


def test_links_and_fragments_are_not_query_sentences() -> None:
    from core.figure_rank import is_prose

    assert is_prose("We propose a citation encoder for papers.")
    assert not is_prose("§ github.com/allenai/papermage")
    assert not is_prose("Code: https://example.org/code is here")
    assert not is_prose("Short fragment.")
    assert not is_prose("* Equal contribution by the authors")
