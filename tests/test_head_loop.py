"""The one head-training loop (models.training.head_loop): it learns a separable toy problem, keeps the
best epoch's weights, stops on cancel, and the same seed gives the same weights."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("torch")

import torch
from torch import nn
from torch.nn import functional as F

from core.errors import Cancelled
from core.jobs import JobContext, Progress
from models.training.head_loop import (
    Evaluation,
    HeadLoopConfig,
    LossFn,
    fit_head,
    fit_members,
    train_only,
)


def blobs(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Two Gaussian blobs in 2-D, centred at (2, 2) and (-2, -2): linearly separable but for rare outliers."""
    generator = torch.Generator().manual_seed(seed)
    labels = torch.arange(n) % 2
    centres = torch.where(labels.unsqueeze(1) == 1, 2.0, -2.0) * torch.ones(n, 2)
    return centres + torch.randn(n, 2, generator=generator), labels


def accuracy(head: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return float((head(x).argmax(-1) == y).float().mean())


def toy_loss(x: torch.Tensor, y: torch.Tensor) -> LossFn[nn.Module, int]:
    def loss(head: nn.Module, batch: list[int], rng: random.Random) -> torch.Tensor:
        chosen = torch.tensor(batch)
        noisy = x[chosen] + 0.1 * torch.randn(len(batch), 2) * rng.random()  # both RNG streams in play
        return F.cross_entropy(head(noisy), y[chosen])

    return loss


def new_head() -> nn.Module:
    return nn.Sequential(nn.Linear(2, 8), nn.Dropout(0.2), nn.Linear(8, 2))


def test_the_loop_learns_a_separable_toy_problem_and_reports_progress() -> None:
    x, y = blobs(200, 0)
    dev_x, dev_y = blobs(100, 1)
    seen: list[Progress] = []
    config = HeadLoopConfig(epochs=5, lr=0.05, batch_size=16, label="toy head ")

    def dev_accuracy(head: nn.Module) -> Evaluation:
        score = accuracy(head, dev_x, dev_y)
        return Evaluation(score, {"dev": score})

    fit = fit_head(new_head, toy_loss(x, y), range(200), config, evaluate=dev_accuracy,
                   ctx=JobContext(seen.append))
    before = fit.epochs[0].evaluation
    assert before is not None and fit.best is not None
    assert fit.best.score >= 0.95 and fit.best.score > before.score
    assert accuracy(fit.head, dev_x, dev_y) == fit.best.score  # the kept weights are the best epoch's
    assert not fit.head.training  # left in eval mode
    assert fit.steps == 5 * 13  # ceil(200 / 16) steps an epoch
    history = fit.history()
    assert [row["epoch"] for row in history] == [0, 1, 2, 3, 4, 5]
    assert "loss" not in history[0] and all("loss" in row and "dev" in row for row in history[1:])
    assert history[-1]["loss"] < history[1]["loss"]
    assert seen[-1].done == seen[-1].total == fit.steps
    assert seen[0].message.startswith("toy head epoch 1/5: loss ")


def test_keep_best_restores_the_best_epochs_weights_not_the_last() -> None:
    x, y = blobs(64, 0)
    scores = iter([0.1, 0.4, 0.9, 0.3, 0.9])  # epoch 2 is best; epoch 4 only ties it
    snapshots: list[dict[str, torch.Tensor]] = []

    def evaluate(head: nn.Module) -> Evaluation:
        snapshots.append({k: v.clone() for k, v in head.state_dict().items()})
        score = next(scores)
        return Evaluation(score, {"dev": score})

    fit = fit_head(new_head, toy_loss(x, y), range(64), HeadLoopConfig(epochs=4, lr=0.05, batch_size=8),
                   evaluate=evaluate)
    assert fit.best_epoch == 2 and fit.best == Evaluation(0.9, {"dev": 0.9})
    kept = fit.head.state_dict()
    assert all(torch.equal(kept[k], snapshots[2][k]) for k in kept)
    assert not all(torch.equal(kept[k], snapshots[4][k]) for k in kept)  # the last epoch's weights differ


def test_without_evaluation_the_last_epoch_is_kept_and_epoch_zero_has_no_row() -> None:
    x, y = blobs(40, 0)
    fit = fit_head(new_head, toy_loss(x, y), range(40), HeadLoopConfig(epochs=3, lr=0.05, batch_size=16))
    assert fit.best is None and fit.best_epoch == 3 and fit.steps == 9
    assert [row["epoch"] for row in fit.history(loss_digits=3)] == [1, 2, 3]


def test_cancel_raises_cancelled_and_stops_training() -> None:
    x, y = blobs(64, 0)
    calls = 0
    loss = toy_loss(x, y)

    def counting(head: nn.Module, batch: list[int], rng: random.Random) -> torch.Tensor:
        nonlocal calls
        calls += 1
        return loss(head, batch, rng)

    ctx = JobContext(lambda progress: ctx.cancel() if progress.done == 3 else None)
    with pytest.raises(Cancelled):
        fit_head(new_head, counting, range(64), HeadLoopConfig(epochs=10, lr=0.05, batch_size=8), ctx=ctx)
    assert calls == 3


def test_the_same_seed_gives_the_same_weights_and_another_seed_others() -> None:
    x, y = blobs(64, 0)

    def weights(seed: int) -> dict[str, torch.Tensor]:
        torch.manual_seed(1234 + seed)  # whatever came before: the loop seeds itself
        config = HeadLoopConfig(epochs=3, lr=0.05, batch_size=8, seed=seed)
        fit = fit_head(new_head, toy_loss(x, y), range(64), config,
                       evaluate=lambda head: Evaluation(-float(F.cross_entropy(head(x), y))))
        return fit.head.state_dict()

    first, again, other = weights(0), weights(0), weights(1)
    assert all(torch.equal(first[k], again[k]) for k in first)
    assert not all(torch.equal(first[k], other[k]) for k in first)


def test_members_are_the_fits_of_consecutive_seeds_each_built_for_its_index() -> None:
    x, y = blobs(64, 0)
    config = HeadLoopConfig(epochs=2, lr=0.05, batch_size=8, seed=5, label="toy ")
    built: list[int] = []

    def build(member: int) -> nn.Module:
        built.append(member)
        return new_head()

    def measure(head: nn.Module) -> Evaluation:
        return Evaluation(-float(F.cross_entropy(head(x), y)))

    messages: list[str] = []
    ctx = JobContext(lambda p: messages.append(p.message))
    fit = fit_members(build, toy_loss(x, y), range(64), config, 3, evaluate=measure, ctx=ctx)
    assert built == [0, 1, 2] and len(fit.heads) == 3
    for member, seed in enumerate((5, 6, 7)):  # member k is fit_head's fit with seed 5 + k
        alone = fit_head(new_head, toy_loss(x, y), range(64),
                         HeadLoopConfig(epochs=2, lr=0.05, batch_size=8, seed=seed), evaluate=measure).head
        expected = alone.state_dict()
        assert all(torch.equal(v, expected[k]) for k, v in fit.heads[member].state_dict().items())
    assert [row["member"] for row in fit.history if row["epoch"] == 0] == [0, 1, 2]
    assert any(m.startswith("toy 3/3 epoch") for m in messages)
    single = fit_members(lambda _m: new_head(), toy_loss(x, y), range(64), config, 1)
    assert "member" not in single.history[0] and len(single.heads) == 1
    with pytest.raises(ValueError):
        fit_members(build, toy_loss(x, y), range(64), config, 0)


def test_train_only_freezes_all_but_the_named_modules() -> None:
    root = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2))
    params = train_only(root, root[1])
    assert params == list(root[1].parameters())
    assert [p.requires_grad for p in root.parameters()] == [False, False, True, True, False, False]
    x, y = blobs(16, 0)
    before = [p.clone() for p in root.parameters()]
    fit_head(lambda: root, toy_loss(x, y), range(16), HeadLoopConfig(epochs=1, lr=0.1, batch_size=8))
    moved = [not torch.equal(b, p) for b, p in zip(before, root.parameters(), strict=True)]
    assert moved == [False, False, True, True, False, False]


def test_no_other_module_writes_its_own_training_loop() -> None:
    """Backward passes live in the head loop and the encoder trainer only (issue 26.3), and the teacher's
    fine-tuning (session 24): another encoder, run where a GPU is lent, with its own optimiser groups,
    schedule and bf16 autocast, that neither the head loop nor the trainer's net and config describe."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    writers = set()
    for path in [*root.glob("core/**/*.py"), *root.glob("models/**/*.py"), *root.glob("app/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "backward":
                writers.add(path.relative_to(root).as_posix())
    assert writers == {"models/training/head_loop.py", "models/training/trainer.py",
                       "models/training/teacher.py"}


def test_absurd_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        fit_head(new_head, toy_loss(*blobs(4, 0)), range(4), HeadLoopConfig(epochs=1, lr=0.1, batch_size=0))


@pytest.fixture(scope="module")
def net():  # type: ignore[no-untyped-def]
    """An untrained net on the base encoder, with a function head of three functions."""
    pytest.importorskip("transformers")
    from models.training.checkpoint import build_net
    from models.training.net import FunctionConfig

    torch.manual_seed(0)
    built, _ = build_net(None, functions=FunctionConfig(functions=["a", "b", "c"]))
    return built.eval()


def _pooled_cache(tmp_path, classes: tuple[str, ...], n: int, signal: float):  # type: ignore[no-untyped-def]
    """Cached pooled vectors whose direction says the class (plus noise), and their (text, class) pairs."""
    import numpy as np

    from models.vector_cache import FeatureCache

    rng = np.random.default_rng(0)
    directions = {c: rng.normal(size=384) for c in classes}
    pairs = [(f"sentence {i}", classes[i % len(classes)]) for i in range(n)]
    cache = FeatureCache(tmp_path / "features.npz", "test-model")
    vectors = [directions[c] * signal + rng.normal(size=384) for _, c in pairs]
    cache.add([t for t, _ in pairs], np.array(vectors, dtype=np.float32))
    return cache, pairs


@pytest.mark.slow
def test_the_function_head_fit_goes_through_the_loop_and_keeps_its_best_epoch(net, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import copy

    from models.training.function_fit import (
        FunctionFitConfig,
        fit_function_head,
        head_accuracy,
        labelled_pairs,
    )

    cache, pairs = _pooled_cache(tmp_path, ("a", "b", "c", "none"), 240, 1.0)
    fitted = copy.deepcopy(net)
    result = fit_function_head(fitted, pairs[:180], pairs[180:], cache, FunctionFitConfig(epochs=4, lr=2e-3))
    assert result.counts["train"] == 135 and result.counts["train_none"] == 45  # "none" is not a class
    dev = labelled_pairs(pairs[180:], ["a", "b", "c"])
    assert result.best_dev >= 0.9 and result.best_dev > result.history[0]["dev"]
    assert head_accuracy(fitted, dev, cache) == result.best_dev
    assert [row["epoch"] for row in result.history] == [0, 1, 2, 3, 4]
    frozen = dict(net.named_parameters())
    assert all(torch.equal(p, frozen[name]) for name, p in fitted.named_parameters()
               if not name.startswith("function_head."))  # only the function head moved


@pytest.mark.slow
def test_training_on_corrections_moves_both_role_heads_and_nothing_else(net, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import copy

    from models.training.body_roles import BodyRun, body_accuracy
    from models.training.corrections import CorrectionTrainingConfig, train_role_heads

    cache, pairs = _pooled_cache(tmp_path, ("background", "method"), 200, 1.5)
    runs = [BodyRun(f"doc{i}", "method" if i % 2 else "abstract", [pairs[i][0]], [frozenset({pairs[i][1]})])
            for i in range(200)]
    fitted = copy.deepcopy(net)
    fitted.enable_body_head()
    before = body_accuracy(fitted, runs[150:], cache)[0]
    history, per_step, steps = train_role_heads(fitted, runs[:150], cache,
                                                CorrectionTrainingConfig(epochs=3, lr=3e-3, batch_runs=16))
    assert steps == 3 * 10 and per_step > 0 and [row["epoch"] for row in history] == [1, 2, 3]
    assert body_accuracy(fitted, runs[150:], cache)[0] >= max(0.9, before + 0.2)
    frozen = dict(net.named_parameters())
    moved = {name.split(".")[0] for name, p in fitted.named_parameters()
             if name in frozen and not torch.equal(p, frozen[name])}
    assert moved == {"head"}  # the role head; the body head is new, the encoder untouched
    body = dict(fitted.body_head.named_parameters())
    assert any(not torch.equal(p, body[name]) for name, p in net.head.named_parameters())  # it moved too
    assert not fitted.training
