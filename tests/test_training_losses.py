"""Losses and samplers of models.training on tiny tensors: known values, brute force, descent."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from core.errors import DatasetError, ModelError

torch = pytest.importorskip("torch")
F = torch.nn.functional

from models.training.losses import make_loss, pair_masks  # noqa: E402
from models.training.samplers import PKSampler, budget_batches  # noqa: E402


def _data(seed: int = 0, n: int = 12, d: int = 8, classes: int = 3):
    g = torch.Generator().manual_seed(seed)
    emb = torch.randn(n, d, generator=g)
    labels = torch.arange(n) % classes
    return emb, labels


def test_partial_ce_equals_cross_entropy_for_single_labels_and_sums_allowed_probabilities():
    logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3]])
    loss = make_loss("partial_ce")
    assert torch.allclose(loss(logits, torch.tensor([0, 2])), F.cross_entropy(logits, torch.tensor([0, 2])))
    allowed = torch.tensor([[1, 1, 0], [0, 0, 1]], dtype=torch.bool)
    p = logits.softmax(-1)
    expected = -(torch.log(p[0, 0] + p[0, 1]) + torch.log(p[1, 2])) / 2
    assert torch.allclose(loss(logits, allowed), expected)
    # Allowing every class costs nothing.
    assert loss(logits, torch.ones(2, 3, dtype=torch.bool)).abs() < 1e-6


def test_pair_masks_with_partial_labels():
    hot = torch.tensor([[1, 0, 0], [1, 0, 0], [1, 1, 0], [0, 0, 1]], dtype=torch.bool)
    pos, neg = pair_masks(hot)
    assert pos[0, 1] and not pos[0, 2] and not neg[0, 2]  # overlapping sets: ignored
    assert neg[0, 3] and neg[2, 3] and not pos.diagonal().any() and not neg.diagonal().any()


def _cos_dist(e):
    x = F.normalize(e, dim=-1)
    return 1 - x @ x.T


def test_triplet_batch_all_matches_brute_force():
    emb, labels = _data()
    margin = 0.3
    dist = _cos_dist(emb)
    losses = []
    n = len(labels)
    for a, p, q in itertools.product(range(n), repeat=3):
        if a != p and labels[a] == labels[p] and labels[a] != labels[q]:
            value = float(dist[a, p] - dist[a, q] + margin)
            if value > 1e-12:
                losses.append(value)
    expected = sum(losses) / len(losses)
    got = float(make_loss("triplet_all", margin=margin)(emb, labels))
    assert got == pytest.approx(expected, rel=1e-5)


def test_triplet_batch_hard_matches_brute_force():
    emb, labels = _data(1)
    margin = 0.2
    dist = _cos_dist(emb)
    n = len(labels)
    per_anchor = []
    for a in range(n):
        hardest_pos = max(float(dist[a, p]) for p in range(n) if p != a and labels[p] == labels[a])
        hardest_neg = min(float(dist[a, q]) for q in range(n) if labels[q] != labels[a])
        per_anchor.append(max(0.0, hardest_pos - hardest_neg + margin))
    got = float(make_loss("triplet_hard", margin=margin)(emb, labels))
    assert got == pytest.approx(sum(per_anchor) / n, rel=1e-5)


def test_supcon_matches_brute_force():
    emb, labels = _data(2)
    t = 0.5
    x = F.normalize(emb, dim=-1)
    sim = (x @ x.T).tolist()
    n = len(labels)
    total = 0.0
    for i in range(n):
        others = [a for a in range(n) if a != i]
        denom = sum(math.exp(sim[i][a] / t) for a in others)
        positives = [p for p in others if labels[p] == labels[i]]
        total += -sum(math.log(math.exp(sim[i][p] / t) / denom) for p in positives) / len(positives)
    got = float(make_loss("supcon", temperature=t)(emb, labels))
    assert got == pytest.approx(total / n, rel=1e-5)


def test_multi_similarity_matches_brute_force():
    emb, labels = _data(3)
    alpha, beta, base, eps = 2.0, 50.0, 0.5, 0.1
    x = F.normalize(emb, dim=-1)
    sim = (x @ x.T).tolist()
    n = len(labels)
    total = 0.0
    for i in range(n):
        pos = [sim[i][j] for j in range(n) if j != i and labels[j] == labels[i]]
        neg = [sim[i][j] for j in range(n) if labels[j] != labels[i]]
        neg_kept = [s for s in neg if s + eps > min(pos)]
        pos_kept = [s for s in pos if s - eps < max(neg)]
        total += math.log1p(sum(math.exp(-alpha * (s - base)) for s in pos_kept)) / alpha
        total += math.log1p(sum(math.exp(beta * (s - base)) for s in neg_kept)) / beta
    got = float(make_loss("multi_similarity", alpha=alpha, beta=beta, base=base, epsilon=eps)(emb, labels))
    assert got == pytest.approx(total / n, rel=1e-4)


def test_arcface_without_margin_is_scaled_cosine_softmax():
    emb, labels = _data(4)
    loss = make_loss("arcface", embedding_dim=8, num_classes=3, scale=10.0, margin=0.0)
    cos = F.normalize(emb, dim=-1) @ F.normalize(loss.weight, dim=-1).T
    expected = F.cross_entropy(10.0 * cos, labels)
    assert torch.allclose(loss(emb, labels), expected, atol=1e-4)
    with_margin = make_loss("arcface", embedding_dim=8, num_classes=3, scale=10.0, margin=0.3)
    with_margin.weight.data.copy_(loss.weight.data)
    assert with_margin(emb, labels) > loss(emb, labels)  # the margin makes the target harder


@pytest.mark.parametrize("name", ["partial_ce", "triplet_all", "triplet_hard", "arcface",
                                  "multi_similarity", "supcon", "ntxent"])
def test_every_loss_decreases_under_gradient_descent(name):
    torch.manual_seed(0)
    emb, labels = _data(5, n=24, d=16, classes=4)
    param = torch.nn.Parameter(emb.clone() if name != "partial_ce" else torch.randn(24, 4))
    kwargs = {"embedding_dim": 16, "num_classes": 4} if name == "arcface" else {}
    loss_fn = make_loss(name, **kwargs)
    opt = torch.optim.Adam([param, *loss_fn.parameters()], lr=0.05)
    first = float(loss_fn(param, labels).detach())
    for _ in range(60):
        opt.zero_grad()
        loss = loss_fn(param, labels)
        loss.backward()
        opt.step()
    assert float(loss_fn(param, labels).detach()) < 0.7 * first


def test_unknown_loss_name_raises():
    with pytest.raises(ModelError, match="unknown loss"):
        make_loss("nope")


def test_pk_sampler_gives_p_classes_times_k_samples():
    labels = ["a"] * 20 + ["b"] * 7 + ["c"] * 3 + ["d"] * 30
    sampler = PKSampler(labels, p=3, k=4, seed=1)
    batches = list(sampler)
    assert len(batches) == len(sampler) == 60 // 12
    for batch in batches:
        counts = Counter(labels[i] for i in batch)
        assert len(batch) == 12 and len(counts) == 3 and set(counts.values()) == {4}
    assert list(sampler) != batches  # a new shuffle each epoch
    with pytest.raises(DatasetError, match="only 4"):
        PKSampler(labels, p=5, k=2)


def test_budget_batches_cover_every_item_once_within_budget():
    sizes = [1, 7, 3, 9, 1, 1, 5, 70, 2, 6] * 5
    lengths = list(range(len(sizes)))
    for kwargs in ({}, {"lengths": lengths, "pool": 2}):
        batches = budget_batches(sizes, 16, seed=3, **kwargs)
        flat = sorted(i for b in batches for i in b)
        assert flat == list(range(len(sizes)))
        for b in batches:
            assert sum(sizes[i] for i in b) <= 16 or len(b) == 1


def test_dev_bias_calibration_recovers_a_shifted_prior():
    import numpy as np

    from models.training.calibrate import DevLogits, fit_bias

    rng = np.random.default_rng(0)
    n = 400
    gold_roles = rng.integers(0, 6, n)
    logits = rng.normal(0, 1, (n, 6))
    logits[np.arange(n), gold_roles] += 2.0  # informative...
    logits[:, 5] -= 1.5  # ...but class 5 is under-predicted (as after subsampling it)
    item = DevLogits("x:dev", logits, gold_roles, np.arange(6))
    calibration = fit_bias([item])
    assert calibration.after["x:dev"] > calibration.before["x:dev"] + 0.02
    assert calibration.bias[5] > 0.5  # the bias pushes the under-predicted class back up


def test_soft_targets_from_allowed_sets_and_soft_cross_entropy():
    from models.training.batching import Batch, primary_role

    allowed = torch.tensor([[0, 0, 0, 1, 1, 0], [1, 0, 0, 0, 0, 0]], dtype=torch.bool)
    batch = Batch(None, None, None, [2], allowed, torch.tensor([3, 0]))  # type: ignore[arg-type]
    targets = batch.soft_targets(0.7)
    assert torch.allclose(targets, torch.tensor([[0, 0, 0, 0.7, 0.3, 0], [1.0, 0, 0, 0, 0, 0]]))
    logits = torch.randn(2, 6)
    expected = -(targets * logits.log_softmax(-1)).sum(-1).mean()
    assert torch.allclose(make_loss("partial_ce")(logits, targets), expected)
    assert primary_role("other", frozenset({"other", "conclusion"})) == "other"
    assert primary_role("other", frozenset({"background", "other", "conclusion"}), "pmc-sents-full") is None
    assert primary_role("methods", frozenset({"method"})) == "method"
    assert primary_role("outcome", frozenset({"result", "conclusion"})) == "result"


def test_rows_without_a_primary_role_get_exactly_the_partial_label_gradient():
    from models.training.batching import Batch

    allowed = torch.tensor([[1, 0, 0, 0, 1, 1], [0, 0, 0, 1, 1, 0]], dtype=torch.bool)
    batch = Batch(None, None, None, [2], allowed, torch.tensor([-1, 3]))  # type: ignore[arg-type]
    logits = torch.randn(2, 6, requires_grad=True)
    soft = make_loss("partial_ce")(logits, batch.soft_targets(0.7, logits))
    (grad_soft,) = torch.autograd.grad(soft, logits)
    targets = batch.soft_targets(0.7, logits)
    assert torch.allclose(targets.sum(-1), torch.ones(2)) and float(targets[0, 1:4].sum()) == 0.0
    partial = -torch.logsumexp(logits[0].log_softmax(-1)[allowed[0]], 0)
    (grad_partial,) = torch.autograd.grad(partial / 2, logits)
    assert torch.allclose(grad_soft[0], grad_partial[0], atol=1e-6)
    assert not torch.allclose(grad_soft[1], torch.zeros(6))


def test_dev_selection_uses_each_sets_best_head():
    from models.training.trainer import DevResult

    result = DevResult({"csabstruct:dev": 0.66, "csabstruct:dev#adapter": 0.61,
                        "pmc-sents-full:dev-holdout": 0.46, "pmc-sents-full:dev-holdout#adapter": 0.70}, {})
    assert result.mean == pytest.approx((0.66 + 0.70) / 2)
    assert DevResult({"a:dev": 0.5}, {}).mean == 0.5 and DevResult({}, {}).mean == 0.0


def test_calibration_ties_roles_the_dev_sets_cannot_tell_apart():
    import numpy as np

    from models.training.calibrate import DevLogits, fit_bias, tied_roles

    rng = np.random.default_rng(1)
    n = 400
    gold_roles = rng.integers(0, 5, n)  # dataset labels 0..4
    role_to_label = np.array([0, 1, 2, 3, 3, 4])  # result and conclusion both count as label 3
    logits = rng.normal(size=(n, 6))
    logits[np.arange(n), np.where(gold_roles == 4, 5, gold_roles)] += 2.0
    logits[:, 2] -= 1.5  # label 2 under-predicted
    item = DevLogits("x:dev", logits, gold_roles, role_to_label)
    assert tied_roles([item]) == [[0], [1], [2], [3, 4], [5]]
    calibration = fit_bias([item])
    assert calibration.bias[3] == calibration.bias[4]  # moved together, balance kept
    assert calibration.bias[2] > 0.5


def test_dev_logits_score_only_the_labelled_sentences(monkeypatch):
    """A gold paper's or the annotated corpus's context sentences carry no label: the export's bias
    calibration reads them with their section and scores only the labelled ones (it stopped on them)."""
    from pathlib import Path

    import numpy as np

    from models.datasets import DATASET_LABELS, LabelledDocument
    from models.datasets.gold import UNLABELLED
    from models.training import calibrate, trainer

    document = LabelledDocument("d", ["a", "b", "c"], ["method", UNLABELLED, "result"],
                                [frozenset({"method"}), frozenset(), frozenset({"result"})], None)

    class Encoded:
        doc = document

    monkeypatch.setattr(trainer, "load_corpora",
                        lambda specs, tokenizer, shared: {"annotated:dev": [Encoded()]})
    monkeypatch.setattr(trainer, "predict_documents",
                        lambda net, corpus, device: ([np.full((3, 6), 1 / 6)], None))
    monkeypatch.setattr(calibrate, "load_tokenizer", lambda base, length: None)
    (item,) = calibrate.dev_logits(None, ["annotated:dev"], Path("."), 64)  # type: ignore[arg-type]
    labels = DATASET_LABELS["annotated"]
    assert item.gold.tolist() == [labels.index("method"), labels.index("result")]
    assert item.log_probs.shape == (2, 6)
