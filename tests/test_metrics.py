"""Metrics against brute-force versions written from the definitions."""

from __future__ import annotations

import numpy as np
import pytest

from models.metrics import (
    classification_report,
    confusion_matrix,
    map_at_r,
    paired_difference,
    precision_at_1,
    retrieval_report,
)

LABELS = ["a", "b", "c", "d"]  # "d" never occurs: counts in the macro mean with F1 0
GOLD = ["a", "a", "a", "b", "b", "c", "c", "c", "c", "a"]
PRED = ["a", "b", "a", "b", "c", "c", "c", "a", "c", "a"]


def brute_f1(gold: list[str], pred: list[str], label: str) -> float:
    tp = sum(g == label and p == label for g, p in zip(gold, pred))
    fp = sum(g != label and p == label for g, p in zip(gold, pred))
    fn = sum(g == label and p != label for g, p in zip(gold, pred))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def test_classification_report_matches_brute_force() -> None:
    report = classification_report(GOLD, PRED, LABELS)
    for label in LABELS:
        assert report.f1[label] == pytest.approx(brute_f1(GOLD, PRED, label))
    assert report.f1_macro == pytest.approx(sum(brute_f1(GOLD, PRED, x) for x in LABELS) / 4)
    # Micro F1 from pooled counts.
    tp = sum(g == p for g, p in zip(GOLD, PRED))
    fp = fn = len(GOLD) - tp
    assert report.f1_micro == pytest.approx(2 * tp / (2 * tp + fp + fn))
    assert report.f1_micro == pytest.approx(0.7)
    # Hand-checked values: a: P 3/4 R 3/4; b: P 1/2 R 1/2; c: P 3/4 R 3/4.
    assert report.f1["a"] == pytest.approx(0.75)
    assert report.f1["b"] == pytest.approx(0.5)
    assert report.support == {"a": 4, "b": 2, "c": 4, "d": 0}
    assert report.to_dict()["per_class"]["c"]["f1"] == pytest.approx(0.75)


def test_confusion_matrix_counts() -> None:
    matrix = confusion_matrix(GOLD, PRED, LABELS)
    for i, g in enumerate(LABELS):
        for j, p in enumerate(LABELS):
            assert matrix[i, j] == sum(x == g and y == p for x, y in zip(GOLD, PRED))
    assert matrix.sum() == len(GOLD)


def test_confusion_matrix_rejects_unknown_labels() -> None:
    with pytest.raises(ValueError, match="zzz"):
        confusion_matrix(["a"], ["zzz"], LABELS)
    with pytest.raises(ValueError):
        confusion_matrix(["a", "b"], ["a"], LABELS)


def brute_retrieval(x: np.ndarray, labels: list[str]) -> tuple[float, float]:
    """Straight from Musgrave et al. 2020: per query, rank all others by cosine."""
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    p1, aps = [], []
    for q in range(len(x)):
        others = [i for i in range(len(x)) if i != q]
        ranked = sorted(others, key=lambda i: (-float(x[q] @ x[i]), i))
        r = sum(labels[i] == labels[q] for i in others)
        if r == 0:
            continue
        p1.append(float(labels[ranked[0]] == labels[q]))
        total = 0.0
        for k in range(1, r + 1):
            if labels[ranked[k - 1]] == labels[q]:
                total += sum(labels[i] == labels[q] for i in ranked[:k]) / k
        aps.append(total / r)
    return float(np.mean(p1)), float(np.mean(aps))


def test_retrieval_matches_brute_force_random() -> None:
    rng = np.random.default_rng(0)
    for trial in range(5):
        x = rng.normal(size=(23, 4)).astype(np.float32)
        labels = list(rng.choice(["p", "q", "r", "s"], size=23))
        labels[0] = "lonely-" + str(trial)  # a query with R = 0 is left out
        report = retrieval_report(x, labels, chunk=5)  # chunking must not change anything
        p1, mapr = brute_retrieval(x, labels)
        assert report.precision_at_1 == pytest.approx(p1)
        assert report.map_at_r == pytest.approx(mapr)
        singletons = sum(labels.count(x) == 1 for x in labels)
        assert report.queries == 23 - singletons and report.items == 23


def test_retrieval_hand_example() -> None:
    # 1-D points: two tight clusters, one item of "a" sits in the "b" cluster.
    x = np.array([[1.0, 0.0], [0.99, 0.1], [0.0, 1.0], [0.1, 0.99], [0.05, 1.0]])
    labels = ["a", "a", "b", "b", "a"]
    # q0 (a, R=2): ranking 1(a), 3(b) (cos .10 > .05 for 4) -> AP = (1/1 + 0)/2 = .5; P@1 1
    # q1 (a, R=2): 0(a), 3(b) -> AP .5; P@1 1
    # q2 (b, R=1): nearest 4 (a) -> AP 0, P@1 0
    # q3 (b, R=1): nearest 4 (a)? cos(3,4) > cos(3,2) -> AP 0, P@1 0
    # q4 (a, R=2): nearest 3 (b), 2 (b) -> AP 0, P@1 0
    p1, mapr = brute_retrieval(x, labels)
    assert precision_at_1(x, labels) == pytest.approx(p1) == pytest.approx(2 / 5)
    assert map_at_r(x, labels) == pytest.approx(mapr) == pytest.approx(1 / 5)


def test_perfect_clusters_score_one() -> None:
    x = np.array([[1, 0], [1, 0.01], [0, 1], [0.01, 1]], dtype=np.float32)
    report = retrieval_report(x, ["a", "a", "b", "b"])
    assert report.precision_at_1 == 1.0 and report.map_at_r == 1.0


def test_ranking_report_by_hand() -> None:
    from models.metrics import ranking_report

    items = np.eye(3, dtype=np.float32)
    # query 0 finds item 0 first; query 1 is closest to item 2, then item 1; query 2 ranks item 2 third
    queries = np.array([[1, 0, 0], [0, 0.6, 0.8], [0.8, 0.6, 0]], dtype=np.float32)
    report = ranking_report(queries, items)
    assert report.queries == 3
    assert report.recall_at_1 == pytest.approx(1 / 3)
    assert report.recall_at_5 == 1.0
    assert report.mrr == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)


def test_ranking_report_counts_ties_against_the_query() -> None:
    from models.metrics import ranking_report

    items = np.array([[1, 0], [1, 0]], dtype=np.float32)
    report = ranking_report(items.copy(), items)
    assert report.recall_at_1 == 0.0 and report.mrr == 0.5


def test_expected_calibration_error_by_hand() -> None:
    from models.metrics import expected_calibration_error

    # Bin [0.9, 1.0): confidences 0.95, 0.95, right once -> |0.5 - 0.95| = 0.45, weight 2/4;
    # bin [0.3, 0.4): 0.35, 0.35, right once -> |0.5 - 0.35| = 0.15, weight 2/4.
    assert expected_calibration_error([0.95, 0.95, 0.35, 0.35], [True, False, True, False]) == \
        pytest.approx(0.5 * 0.45 + 0.5 * 0.15)
    assert expected_calibration_error([0.8] * 10, [True] * 8 + [False] * 2) == pytest.approx(0.0)
    assert expected_calibration_error([], []) == 0.0
    assert expected_calibration_error([1.0], [True]) == 0.0  # 1.0 falls in the last bin


def test_the_paired_difference_of_a_model_with_itself_is_zero_with_no_spread() -> None:
    groups = ["p1"] * 3 + ["p2"] * 2
    right = [True, False, True, True, False]
    same = paired_difference(groups, right, right)
    assert (same.difference, same.low, same.high, same.a_only, same.b_only) == (0.0, 0.0, 0.0, 0, 0)
    assert same.a == same.b == 0.6 and same.groups == 2 and same.items == 5


def test_a_gain_in_every_paper_stays_above_zero_and_one_papers_gain_does_not() -> None:
    groups = [f"p{i}" for i in range(10) for _ in range(10)]
    a = [False] * 100
    everywhere = [j == 0 for _ in range(10) for j in range(10)]  # one more sentence right in each paper
    one_paper = [i == 0 and j < 9 for i in range(10) for j in range(10)]  # nine more, all in paper 0
    spread = paired_difference(groups, a, everywhere, resamples=500)
    lumped = paired_difference(groups, a, one_paper, resamples=500)
    assert spread.difference == pytest.approx(0.1) and spread.low == pytest.approx(0.1)
    assert lumped.difference == pytest.approx(0.09) and lumped.low == 0.0 < lumped.high
    assert (lumped.b_only, lumped.a_only) == (9, 0)
    assert paired_difference(groups, a, one_paper, resamples=500) == lumped  # seeded


def test_paired_differences_refuse_what_cannot_be_paired() -> None:
    with pytest.raises(ValueError):
        paired_difference(["p"], [True], [True, False])
    with pytest.raises(ValueError):
        paired_difference([], [], [])
    with pytest.raises(ValueError):
        paired_difference(["p"], [True], [True], level=1.0)
