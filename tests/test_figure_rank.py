"""Graphical-abstract ranking (core.figures.figure_rank), its weight fit (core.figures.figure_fit), the
leave-one-paper-out
report (models.figure_eval) and its measures."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import numpy as np
import pytest

from core.document import Figure
from core.figures.figure_features import FigureLook
from core.figures.figure_fit import LabelledPaper, bagged, fit_weights, leave_one_paper_out, normalised
from core.figures.figure_rank import (
    FEATURES,
    WITHIN_PAPER,
    caption_body,
    combine,
    figure_features,
    rank_figures,
    scale_within_paper,
    shared_words,
    strongest,
)
from core.model_api import CaptionScorer
from models.datasets.figure_gold import FigureGold
from models.figure_eval import (
    AVERAGED,
    BAGGED,
    CONFIGS,
    FEATURE_SETS,
    NESTED,
    GoldCase,
    average_fit,
    bagged_fit,
    dev_report,
    held_out_rankings,
    measures,
    nested_fit,
    select_config,
)
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
    from core.figures.figure_rank import is_prose

    assert is_prose("We propose a citation encoder for papers.")
    assert not is_prose("§ github.com/allenai/papermage")
    assert not is_prose("Code: https://example.org/code is here")
    assert not is_prose("Short fragment.")
    assert not is_prose("* Equal contribution by the authors")


# -- issue 25: the look, the words, the fitted ranker and its leave-one-paper-out report ----------------
def _diagram_look() -> FigureLook:
    return FigureLook(found=True, vector_share=0.5, boxes=4, text_boxes=4, arrows=3, segments=6, words=12)


def test_looks_and_words_become_features() -> None:
    paper = paper_with_figures()
    feats = figure_features(paper, WordScorer(), looks=[FigureLook(), _diagram_look()])
    assert feats.column("diagram")[1] == 1.0
    assert feats.column("diagram")[0] == 1.0  # an unknown look takes the paper's median: no evidence
    assert list(feats.column("caption_overview")) == [0.0, 1.0]  # "Overview of the citation encoder …"
    assert list(feats.column("last_figure")) == [0.0, 1.0]
    assert list(feats.column("title_overlap")) == [0.0, 0.0]  # "A | Test *Paper*": no title word in a caption
    with pytest.raises(ValueError):
        figure_features(paper, WordScorer(), looks=[FigureLook()])


def test_first_figure_and_position_follow_the_printed_number() -> None:
    paper = paper_with_figures()
    paper.figures[0].page, paper.figures[1].page = 1, 0  # Figure 2 printed before Figure 1
    feats = figure_features(paper, WordScorer(), looks=[FigureLook(), FigureLook()])
    assert [f.number for f in feats.figures] == ["2", "1"]
    assert list(feats.column("first_figure")) == [0.0, 1.0]
    assert list(feats.column("position")) == [1.0, 0.0]


def test_new_features_are_used_as_they_are_and_old_weights_still_rank() -> None:
    values = np.zeros((3, len(FEATURES)))
    values[:, FEATURES.index("diagram")] = [0.0, 0.5, 1.0]
    values[:, FEATURES.index("size")] = [0.1, 0.3, 0.2]
    scores, _parts = combine(values, {"diagram": 2.0})
    assert scores.tolist() == pytest.approx([-1.0, 0.0, 1.0])  # centred, not rescaled
    assert "diagram" not in WITHIN_PAPER and "size" in WITHIN_PAPER
    scores, _parts = combine(values, {"size": 1.0, "a feature of a newer bundle": 5.0})
    assert int(np.argmax(scores)) == 1


def test_the_ranking_explains_in_words_and_carries_the_features() -> None:
    paper = paper_with_figures()
    ranking = rank_figures(paper, WordScorer(), {"diagram": 1.0, "caption_match": 0.5},
                           looks=[FigureLook(), _diagram_look()])
    top = ranking.figures[0]
    assert top.number == "2" and top.figure_type == "diagram"
    assert top.reason.startswith("A diagram") and "pointed to 2 times (the methods)" in top.reason
    assert "the caption presents it as an overview" in top.reason
    assert "never pointed to" in ranking.figures[1].reason
    for figure in ranking.figures:
        assert not re.search(r"\d\.\d", figure.reason)  # no raw scores in the reason
    data = json.loads(json.dumps(ranking.to_dict()))
    first = data["figures"][0]
    assert set(FEATURES) == set(first["features"])
    assert first["figure_type"] == "diagram" and first["look"]["text_boxes"] == 4
    assert first["mentions"] == {"count": 2, "sections": ["method"], "overview": False, "overview_words": "",
                                 "first_at": 0.6}


def _papers_picking(feature: str, seed: int, n: int = 8) -> list[LabelledPaper]:
    """Synthetic papers whose readers pick the figure that has ``feature``, every other feature noise:
    the fit must weigh ``feature`` up (and a feature set without it cannot learn them)."""
    rng = np.random.default_rng(seed)
    out = []
    for p in range(n):
        values = rng.normal(size=(4, len(FEATURES)))
        values[:, FEATURES.index(feature)] = 0.0
        pick = int(rng.integers(4))
        values[pick, FEATURES.index(feature)] = 1.0
        numbers = [str(i + 1) for i in range(4)]
        rest = [numbers[i] for i in range(4) if i != pick]
        out.append(LabelledPaper(f"p{p}", numbers, values, [numbers[pick], *rest[:2]]))
    return out


def _raw_papers(seed: int, n: int = 8) -> list[LabelledPaper]:
    """Synthetic papers whose readers pick the diagram."""
    return _papers_picking("diagram", seed, n)


def test_the_fit_finds_a_raw_feature_and_skips_papers_it_cannot_learn_from() -> None:
    papers = _raw_papers(2)
    weights = fit_weights(papers, FEATURES, l2=0.1)
    assert max(weights, key=lambda k: abs(weights[k])) == "diagram" and weights["diagram"] > 0
    for paper in papers:
        assert paper.top[0] == paper.numbers[int(np.argmax(paper.scores(weights)))]
    single = LabelledPaper("one", ["1"], np.zeros((1, len(FEATURES))), ["1"])
    assert fit_weights([single]) == {}
    assert sum(abs(v) for v in normalised(weights).values()) == pytest.approx(1.0, abs=1e-3)


def _cases(n: int = 6) -> list[GoldCase]:
    fields = ["biomedical/life", "computer science", "physical/engineering", "social/other"]
    out = []
    for k, paper in enumerate(_raw_papers(3, n)):
        gold = FigureGold(paper.name, "0" * 64, tuple(paper.numbers), tuple(paper.top), ("",) * 3,
                          fields[k % 4], "v2")
        out.append(GoldCase(gold, None, paper.numbers, paper.values))  # type: ignore[arg-type]
    return out


def test_leave_one_paper_out_never_scores_a_paper_with_weights_fitted_on_it() -> None:
    cases = _cases()
    seen: list[set[str]] = []

    def spy(train: Sequence[LabelledPaper]) -> dict[str, float]:
        seen.append({p.name for p in train})
        return fit_weights(train, FEATURES, 0.3)

    rankings = held_out_rankings(cases, spy)
    names = {c.name for c in cases}
    assert set(rankings) == names
    assert sorted(map(sorted, seen)) == sorted(sorted(names - {n}) for n in names)


def test_nested_selection_never_sees_the_held_out_paper(monkeypatch: pytest.MonkeyPatch) -> None:
    import core.figures.figure_fit
    import models.figure_eval

    cases = _cases(5)
    names = {c.name for c in cases}
    calls: list[set[str]] = []
    real = core.figures.figure_fit.fit_weights

    def spy(papers: Sequence[LabelledPaper], *args: object, **kwargs: object) -> dict[str, float]:
        calls.append({p.name for p in papers})
        return real(papers, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(core.figures.figure_fit, "fit_weights", spy)
    monkeypatch.setattr(models.figure_eval, "fit_weights", spy)
    held_out_rankings(cases, nested_fit)
    assert calls and all(len(c) < len(names) for c in calls)  # every fit lacks (at least) the paper it ranks


def test_the_report_has_every_method_overall_and_per_field() -> None:
    report = dev_report(_cases(8), {"diagram": 1.0})
    assert "first figure" in report and "previous ranker (issue 14 weights)" in report
    assert NESTED in report and BAGGED in report and AVERAGED in report
    assert "bundle ranker weights (in-sample)" in report
    for config in CONFIGS:  # every configuration the selection chooses from, on its own
        assert f"ranker, leave-one-paper-out ({config.features}, L2 {config.l2:g})" in report
    row = report[NESTED]
    assert set(row) == {"all", "biomedical", "CS", "physical", "social"}
    assert row["all"]["papers"] == 8 and row["biomedical"]["papers"] == 2
    assert report["bundle ranker weights (in-sample)"]["all"]["mrr_top1"] == 1.0


def test_measures_leave_out_single_figure_papers() -> None:
    cases = _cases(2)
    one = GoldCase(FigureGold("solo", "0" * 64, ("1",), ("1",), ("",)), None,  # type: ignore[arg-type]
                   ["1"], np.zeros((1, len(FEATURES))))
    rankings = {c.name: list(c.numbers) for c in [*cases, one]}
    assert measures(rankings, [*cases, one])["all"]["papers"] == 2


# -- session 13: relative evidence, and the feature set chosen inside the leave-one-paper-out -------------
def test_the_strongest_overview_cue_marks_only_the_strongest_captions() -> None:
    assert strongest([0.0, 0.5, 1.0, 1.0]) == [0.0, 0.0, 1.0, 1.0]
    assert strongest([0.0, 0.5]) == [0.0, 1.0]  # a cue later in the caption, when no caption has more
    assert strongest([0.0, 0.0]) == [0.0, 0.0]  # no caption names an overview: no evidence
    assert strongest([]) == []
    paper = paper_with_figures()
    feats = figure_features(paper, WordScorer(), looks=[FigureLook(), FigureLook()])
    assert list(feats.column("overview_strongest")) == [0.0, 1.0]  # "Overview of the citation encoder …"
    paper.figures[0].caption = "Figure 1: Overview of the venues."  # now both captions open with the cue
    feats = figure_features(paper, WordScorer(), looks=[FigureLook(), FigureLook()])
    assert list(feats.column("overview_strongest")) == [1.0, 1.0]


def _overview_papers(seed: int, n: int = 8) -> list[LabelledPaper]:
    """Synthetic papers whose readers pick the figure with the strongest overview cue."""
    return _papers_picking("overview_strongest", seed, n)


def test_the_selection_chooses_the_feature_set_by_leave_one_paper_out() -> None:
    papers = _overview_papers(4)
    config, scores = select_config(papers)
    assert "overview_strongest" in FEATURE_SETS[config.features]
    assert "overview_strongest" not in FEATURE_SETS["every feature (issue 25)"]
    assert len(scores) == len(CONFIGS) == len({(c.features, c.l2) for c in CONFIGS})
    with_cue = [v for k, v in scores.items() if k.startswith("issue 25 + strongest overview cue")]
    without = [v for k, v in scores.items() if k.startswith("every feature (issue 25)")]
    assert min(with_cue) > max(without)
    weights = nested_fit(papers)
    assert max(weights, key=lambda k: abs(weights[k])) == "overview_strongest"


# -- session 23: the shipped fit averages every configuration over bootstrap resamples --------------------
def test_bagging_is_seeded_and_draws_papers_with_replacement() -> None:
    papers = _overview_papers(5)
    seen: list[list[str]] = []

    def spy(sample: Sequence[LabelledPaper]) -> dict[str, float]:
        seen.append([p.name for p in sample])
        return fit_weights(sample, FEATURES, 0.3)

    first = bagged(papers, spy, rounds=6, seed=3)
    assert bagged(papers, spy, rounds=6, seed=3) == first  # the same papers give the same weights
    assert bagged(papers, spy, rounds=6, seed=4) != first
    draws = [[name.split("#")[0] for name in names] for names in seen[:6]]
    assert all(len(d) == len(papers) for d in draws)
    assert any(len(set(d)) < len(d) for d in draws)  # some paper drawn twice, as its own copies
    assert all(len(set(names)) == len(names) for names in seen)
    assert 0.0 < sum(abs(v) for v in first.values()) <= 1.0 + 1e-5  # a mean of normalised weights


def test_the_averaged_fit_weighs_every_configuration_and_finds_the_cue() -> None:
    papers = _overview_papers(4)
    averaged = average_fit(papers)
    per_config = [normalised(fit_weights(papers, FEATURE_SETS[c.features], c.l2)) for c in CONFIGS]
    expected = np.mean([c.get("overview_strongest", 0.0) for c in per_config])
    assert averaged["overview_strongest"] == pytest.approx(expected, abs=1e-5)
    weights = bagged_fit(papers)
    assert max(weights, key=lambda k: abs(weights[k])) == "overview_strongest"


def test_the_bagged_fit_never_sees_the_held_out_paper(monkeypatch: pytest.MonkeyPatch) -> None:
    import models.figure_eval

    cases = _cases(5)
    names = {c.name for c in cases}
    calls: list[set[str]] = []
    real = models.figure_eval.fit_weights

    def spy(papers: Sequence[LabelledPaper], *args: object, **kwargs: object) -> dict[str, float]:
        calls.append({p.name.split("#")[0] for p in papers})
        return real(papers, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(models.figure_eval, "fit_weights", spy)
    monkeypatch.setattr(models.figure_eval, "BAG_ROUNDS", 3)
    rankings = held_out_rankings(cases, bagged_fit)
    assert set(rankings) == names
    assert calls and all(len(c) < len(names) for c in calls)
