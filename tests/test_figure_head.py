"""The figure head (caption–text scorer): mention matching, training on tiny synthetic data, the
int8 graph added to a bundle with its parity gate, and the runtime scorer reading it back."""

from __future__ import annotations

import numpy as np
import pytest

from models.figure_matching import MatchingSet, lexical_scores, mention_report

torch = pytest.importorskip("torch")


def synthetic_set(seed: int, papers: int = 12, figures: int = 4,
                  dim: int = 16) -> tuple[MatchingSet, np.ndarray, np.ndarray]:
    """Papers whose mention vectors are a fixed rotation of their caption's vector plus noise: the
    untrained cosine is near chance, a trained text-side map recovers the pairing."""
    rng = np.random.default_rng(seed)
    rotation = np.linalg.qr(np.random.default_rng(99).normal(size=(dim, dim)))[0]
    data = MatchingSet()
    captions, texts = [], []
    for p in range(papers):
        data.papers.append(f"test:{p}")
        rows = []
        for f in range(figures):
            rows.append(len(data.caption_groups))
            data.caption_groups.append([f"caption {p} {f}"])
            data.figure_paper.append(p)
            data.figure_kind.append("figure")
            captions.append(rng.normal(size=dim))
        for f in range(figures):
            data.text_groups.append([f"mention {p} {f}"])
            data.mention_paper.append(p)
            data.positives.append([rows[f]])
            texts.append(rotation @ captions[rows[f]] + 0.3 * rng.normal(size=dim))
    unit = lambda a: (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)  # noqa: E731
    return data, unit(np.array(texts)), unit(np.array(captions))


def test_mention_report_counts_hits_ranks_and_the_first_figure_baseline() -> None:
    data = MatchingSet(papers=["a"], caption_groups=[["x"], ["y"]], figure_paper=[0, 0],
                       figure_kind=["figure", "figure"], text_groups=[["m"], ["n"]], mention_paper=[0, 0],
                       positives=[[0], [1]])
    captions = np.eye(2, dtype=np.float32)
    texts = np.array([[1.0, 0.0], [1.0, 0.0]], dtype=np.float32)  # both look like caption 0
    report = mention_report(texts, captions, data)
    assert report.mentions == 2 and report.accuracy_at_1 == 0.5 and report.mrr == 0.75
    assert report.first_figure_accuracy == 0.5
    lexical = {0: np.array([0.0, 0.0]), 1: np.array([0.0, 1.0])}
    assert mention_report(texts, captions, data, lexical=lexical, lexical_weight=2.0).accuracy_at_1 == 1.0


def test_lexical_scores_are_per_paper_word_overlap() -> None:
    data = MatchingSet(papers=["a"], caption_groups=[["Western blot of kinase levels"], ["Survival curves"]],
                       figure_paper=[0, 0], figure_kind=["figure", "figure"],
                       text_groups=[["The kinase levels rose in the western blot"]], mention_paper=[0],
                       positives=[[0]])
    scores = lexical_scores(data)
    assert scores[0][0] > 0.3 and scores[0][1] == 0.0


def _sets(dim: int = 16):
    from models.training.figure_head import SetVectors

    train = SetVectors(*synthetic_set(0, dim=dim))
    dev = SetVectors(*synthetic_set(1, papers=6, dim=dim))
    return train, dev


def test_the_head_learns_the_pairing_and_keeps_the_best_epoch() -> None:
    from models.training.figure_head import FigureHeadConfig, dev_accuracy, train_figure_head

    train, dev = _sets()
    head, result = train_figure_head(train, dev, FigureHeadConfig(rank=16, epochs=40, lr=5e-3, dropout=0.0,
                                                                  papers_per_batch=4))
    untrained = result.history[0]["dev"]
    assert result.best_dev > untrained + 0.2
    assert dev_accuracy(head, dev) == pytest.approx(result.best_dev)


def test_the_head_joins_a_bundle_and_the_app_reads_it(tmp_path) -> None:
    from core.errors import ModelError
    from models.bundle import verify_bundle
    from models.encoder import load_model
    from models.figure_scorer import load_figure_scorer, ranker_weights
    from models.training.figure_head import (
        FigureHeadConfig,
        add_head_to_bundle,
        head_vectors,
        record_ranker,
        train_figure_head,
    )
    from tests.tiny_bundle import DIM, make_tiny_bundle

    source = make_tiny_bundle(tmp_path / "source")
    train, dev = _sets(DIM)
    head, _ = train_figure_head(train, dev, FigureHeadConfig(rank=8, epochs=5, lr=5e-3, papers_per_batch=4))
    out = tmp_path / "with-figures"
    # fp32 here: with 8 dimensions int8 flips near-ties (the int8 path is the next test's)
    checked = add_head_to_bundle(head, source, out, dev, version="0.0.2", training={"command": "test"},
                                 lexical_weight=2.0, quantize=False)
    assert checked["mean_cosine"] > 0.9999 and checked["top1_agreement"] == 1.0
    manifest = verify_bundle(out)
    assert manifest.version == "0.0.2" and "figures.onnx" in manifest.files
    assert manifest.context["graphs"]["figures"] == "figures.onnx"
    with pytest.raises(ModelError, match="not empty"):
        add_head_to_bundle(head, source, out, dev, version="0.0.3", training={})

    model = load_model(out, device="cpu")
    scorer = load_figure_scorer(model)
    assert scorer.trained and scorer.lexical_weight == 2.0 and "figure head" in scorer.scorer_id
    text, _ = head_vectors(head, dev)
    projected = scorer.project(dev.text, "text")
    assert np.mean(np.sum(projected * text, axis=1)) > 0.99  # the int8 graph follows torch
    vectors = scorer.group_vectors([["We propose a model.", "It works."], []], "caption")
    assert vectors.shape == (2, DIM) and np.linalg.norm(vectors[0]) == pytest.approx(1.0, abs=1e-5)
    assert ranker_weights(model) is None
    record_ranker(out, {"caption_match": 0.6, "first_figure": 0.4}, {"fitted_on": "test"})
    again = load_model(out, device="cpu")
    assert again.model_id == model.model_id  # the manifest changed, the files did not
    assert ranker_weights(again) == {"caption_match": 0.6, "first_figure": 0.4}
    plain = load_figure_scorer(load_model(source, device="cpu"))
    assert not plain.trained and plain.lexical_weight == 0.0


def test_the_int8_graph_follows_torch_and_a_bad_graph_fails_the_gate(tmp_path) -> None:
    from models.training.figure_head import FigureHeadConfig, export_head, parity, train_figure_head
    from models.training.quantize import quantize_int8

    train, dev = _sets(64)
    head, _ = train_figure_head(train, dev, FigureHeadConfig(rank=16, epochs=5, lr=5e-3, papers_per_batch=4))
    export_head(head, tmp_path / "fp32.onnx")
    quantize_int8(tmp_path / "fp32.onnx", tmp_path / "int8.onnx")
    checked = parity(head, tmp_path / "int8.onnx", dev)
    assert checked["mean_cosine"] > 0.995
    other, _ = train_figure_head(train, dev, FigureHeadConfig(rank=16, epochs=5, lr=5e-2, seed=3, dropout=0.5,
                                                              papers_per_batch=2))
    export_head(other, tmp_path / "other.onnx")
    assert parity(head, tmp_path / "other.onnx", dev)["mean_cosine"] < 0.995  # another head fails


WORDS = ("kinase", "survival", "microscopy", "histogram")


def worded_set(seed: int, papers: int = 8) -> tuple[MatchingSet, np.ndarray, np.ndarray]:
    """The synthetic set with one telling word shared by each caption and its mentions (the vectors
    carry the pairing as before): word overlap alone finds every figure."""
    data, text, caption = synthetic_set(seed, papers=papers)
    data.caption_groups = [[f"Caption of the {WORDS[k % 4]} data."] for k in range(len(data.caption_groups))]
    data.text_groups = [[f"The {WORDS[k % 4]} values rose."] for k in range(len(data.text_groups))]
    return data, text, caption


def test_the_epoch_and_the_word_overlap_weight_are_chosen_together() -> None:
    from models.training.figure_head import FigureHeadConfig, SetVectors, dev_accuracy, train_figure_head

    train, dev = SetVectors(*worded_set(0)), SetVectors(*worded_set(1, papers=4))
    dev.text = np.roll(dev.text, 1, axis=0)  # the dev vectors now point at the wrong figures
    head, result = train_figure_head(train, dev, FigureHeadConfig(rank=8, epochs=3, lr=5e-3, dropout=0.0,
                                                                  papers_per_batch=4))
    assert dev_accuracy(head, dev) < 0.5  # the cosine alone fails
    assert result.best_dev == 1.0 and result.lexical_weight > 0  # with the chosen overlap weight it does not
    assert all("dev_with_overlap" in row and "lexical_weight" in row for row in result.history)


def test_own_paper_negatives_learn_and_overlap_in_the_loss_enters_the_logits() -> None:
    from dataclasses import replace

    from models.training.figure_head import FigureHeadConfig, SetVectors, train_figure_head

    train, dev = _sets()
    paper_only = FigureHeadConfig(rank=16, epochs=40, lr=5e-3, dropout=0.0, negatives="paper")
    _, result = train_figure_head(train, dev, paper_only)
    assert result.best_dev > result.history[0]["dev"] + 0.2
    worded = SetVectors(*worded_set(0))
    plain = FigureHeadConfig(rank=8, epochs=1, lr=5e-3, dropout=0.0, papers_per_batch=4)
    _, without = train_figure_head(worded, worded, plain)
    _, with_overlap = train_figure_head(worded, worded, replace(plain, lexical_in_loss=4.0))
    # the overlap points at the answer, so the loss starts much lower
    assert with_overlap.history[1]["loss"] < without.history[1]["loss"] - 0.5
    with pytest.raises(ValueError, match="unknown negatives"):
        train_figure_head(worded, worded, FigureHeadConfig(negatives="nope"))


def test_a_new_head_replaces_the_one_its_source_bundle_has(tmp_path) -> None:
    from core.fileio import file_sha256
    from models.encoder import load_model
    from models.figure_scorer import load_figure_scorer
    from models.training.figure_head import (
        FigureHeadConfig,
        add_head_to_bundle,
        head_vectors,
        train_figure_head,
    )
    from tests.tiny_bundle import DIM, make_tiny_bundle

    train, dev = _sets(DIM)
    first, _ = train_figure_head(train, dev, FigureHeadConfig(rank=8, epochs=2, lr=5e-3, papers_per_batch=4))
    second, _ = train_figure_head(train, dev, FigureHeadConfig(rank=8, epochs=6, lr=5e-3, papers_per_batch=4,
                                                                seed=3))
    with_head = tmp_path / "with-head"
    add_head_to_bundle(first, make_tiny_bundle(tmp_path / "source"), with_head, dev, version="0.0.2",
                       training={}, quantize=False)
    again = tmp_path / "again"
    add_head_to_bundle(second, with_head, again, dev, version="0.0.3", training={}, quantize=False)
    assert file_sha256(again / "figures.onnx") != file_sha256(with_head / "figures.onnx")
    scorer = load_figure_scorer(load_model(again, device="cpu"))
    text, _ = head_vectors(second, dev)
    assert np.allclose(scorer.project(dev.text, "text"), text, atol=1e-5)  # the second head, not the first
