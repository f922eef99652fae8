"""The none detector: a sentence without a communicative function, read from its words
(models/none_detector.py)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from core.errors import ModelError
from models.none_detector import (
    NONE_DETECTOR_FILE,
    NoneDetector,
    load_none_detector,
    terms,
    write_none_detector,
)


def _department_detector(best_weight: float = 0.0) -> NoneDetector:
    """p_none is near 1 for a sentence with "department" and near 0 for any other."""
    return NoneDetector(("department", "kind=other"), np.ones(2, np.float32),
                        np.array([20.0, 0.0], np.float32), -10.0, best_weight, math.log(0.5))


def test_terms_fold_numbers_pair_words_and_name_a_known_kind_only() -> None:
    got = terms("In 2019, 12.5 % rose.", "result")
    assert got[:7] == ["in", "0", ",", "0", "%", "rose", "."]
    assert "in 0" in got and "0 %" in got
    assert got[-1] == "kind=result"
    assert not any(t.startswith("kind=") for t in terms("In 2019 it rose.", None))
    assert not any(t.startswith("kind=") for t in terms("In 2019 it rose.", "unknown"))


def test_features_are_tf_idf_rows_of_unit_length_over_known_terms() -> None:
    detector = NoneDetector(("a", "b", "a b"), np.array([1.0, 2.0, 3.0], np.float32),
                            np.zeros(3, np.float32), 0.0)
    columns, values = detector.features("a b a zzz")
    assert sorted(columns.tolist()) == [0, 1, 2]
    by_term = dict(zip(columns.tolist(), values.tolist(), strict=True))
    raw = np.array([(1 + math.log(2)) * 1.0, 2.0, 3.0])  # "a" twice (sublinear), "b" and "a b" once
    assert np.allclose([by_term[0], by_term[1], by_term[2]], raw / np.linalg.norm(raw), atol=1e-6)
    empty_columns, empty_values = detector.features("zzz")
    assert len(empty_columns) == 0 and len(empty_values) == 0


def test_the_decision_weighs_the_words_against_the_best_function() -> None:
    detector = _department_detector()
    texts = ["Department of Chemistry, Imperial College.", "We propose a new method."]
    log_p = detector.log_p_none(texts, ["other", "method"])
    assert log_p[0] > math.log(0.9) and log_p[1] < math.log(0.01)
    sure = np.array([[0.9, 0.1], [0.9, 0.1]])
    assert detector.decide(log_p, sure).tolist() == [True, False]
    # With w > 0 an unsure best function argues for "none" (−w · log p grows as p falls): here more than the
    # words argue against it.
    strong = NoneDetector(detector.vocabulary, detector.idf, detector.weight, detector.bias, 10.0,
                          math.log(0.5))
    assert strong.decide(log_p, sure).tolist() == [True, False]
    assert strong.decide(log_p, np.array([[0.9, 0.1], [0.05, 0.05]])).tolist() == [True, True]
    assert detector.decide(np.zeros(0), np.zeros((0, 2))).tolist() == []


def test_a_detector_round_trips_through_its_file_and_a_damaged_one_is_refused(tmp_path: Path) -> None:
    detector = _department_detector(0.5)
    record = write_none_detector(tmp_path, detector, {"fitted_on": "test"})
    read = load_none_detector(tmp_path, record)
    assert read.vocabulary == detector.vocabulary and read.bias == detector.bias
    assert read.best_weight == 0.5 and read.threshold == pytest.approx(math.log(0.5))
    assert np.array_equal(read.weight, detector.weight) and np.array_equal(read.idf, detector.idf)
    with pytest.raises(ModelError, match="must be"):
        load_none_detector(tmp_path, {**record, "file": "../elsewhere.npz"})
    path = tmp_path / NONE_DETECTOR_FILE
    with pytest.raises(ModelError, match="not finite"):
        load_none_detector(tmp_path, {**record, "threshold": float("nan")})
    with pytest.raises(ModelError, match="unreadable"):
        load_none_detector(tmp_path, {k: v for k, v in record.items() if k != "bias"})
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(ModelError, match="unreadable"):
        load_none_detector(tmp_path, record)
    np.savez(path, vocabulary=np.array(["a"]), idf=np.ones(1, np.float32), weight=np.ones(1, np.float32))
    with pytest.raises(ModelError, match="unreadable"):
        load_none_detector(tmp_path, record)  # a string array (needs no pickle, but is not the format)
    np.savez(path, vocabulary=np.frombuffer(b"a\nb", np.uint8), idf=np.ones(1, np.float32),
             weight=np.ones(1, np.float32))
    with pytest.raises(ModelError, match="differ in length"):
        load_none_detector(tmp_path, record)


def test_the_runtime_lets_the_detector_decide_none_in_every_reading() -> None:
    from models.encoder import load_model

    model = load_model(None, device="cpu", threads=1)
    if not model.has_functions:
        pytest.skip("the shipped bundle has no function head")
    model._none_detector = _department_detector()
    texts = ["Department of Chemistry, Imperial College of Science, London, UK.",
             "We propose a new method for aligning two papers."]
    for encoding in (model.encode_document(texts, "other"), model.encode_documents([(texts, "method")])[0],
                     model.encode_documents([(texts, None)])[0]):
        functions = encoding.functions
        assert functions is not None
        assert functions[0].label == "none"
        # Not "none": the best function, whatever its probability (the detector replaces the threshold).
        assert functions[1].label == functions[1].top[0][0] != "none"


def test_the_fit_learns_the_words_of_sentences_without_a_function() -> None:
    pytest.importorskip("torch")
    from models.training.none_detector import choose_decision, decision_accuracy, fit_none_detector

    none_texts = [f"Department of {s}, University of {c}." for s in ("Physics", "Biology", "Chemistry")
                  for c in ("Oslo", "Lyon", "Kyoto", "Leeds")]
    function_texts = [f"We propose a {a} method for {b}." for a in ("new", "fast", "simple", "robust")
                      for b in ("parsing", "ranking", "alignment")]
    texts = none_texts + function_texts
    detector = fit_none_detector(texts, ["other"] * len(none_texts) + ["method"] * len(function_texts),
                                 [True] * len(none_texts) + [False] * len(function_texts), kind_dropout=0.0)
    held_out = detector.log_p_none(["Department of Geology, University of Bergen.",
                                    "We propose a compact method for retrieval."], [None, None])
    assert held_out[0] > held_out[1]
    # The decision: with these words and a flat best-function probability the chosen rule separates them.
    best = np.full(2, 0.3)
    decision = choose_decision(held_out, best, best_right=[False, True], gold_none=[True, False])
    assert decision.accuracy == 1.0
    assert decision_accuracy(held_out, best, np.array([False, True]), np.array([True, False]),
                             decision.best_weight, decision.threshold)[0] == 1.0
    with pytest.raises(ValueError, match="both kinds"):
        fit_none_detector(texts[:3], [None] * 3, [True] * 3)


def test_a_bundle_that_describes_a_detector_it_does_not_pin_is_refused(tmp_path: Path) -> None:
    import json
    import shutil

    from models.bundle import default_bundle_path
    from models.encoder import load_model

    bundle = tmp_path / "bundle"
    shutil.copytree(default_bundle_path(), bundle)
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    functions = manifest.get("context", {}).get("functions")
    if not functions:
        pytest.skip("the shipped bundle has no function head")
    functions["none_detector"] = {"file": NONE_DETECTOR_FILE, "bias": 0.0, "best_weight": 1.0,
                                  "threshold": 0.0}
    manifest["files"].pop(NONE_DETECTOR_FILE, None)
    (bundle / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ModelError, match="does not pin"):
        load_model(bundle, device="cpu", threads=1)
