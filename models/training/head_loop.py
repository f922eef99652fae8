"""The one loop that trains a small head on fixed vectors (issue 26): body head, function head, figure
head and the role heads trained on the author's corrections all go through :func:`fit_head`.

The encoder stays frozen in all of them, so a head trains on cached vectors in seconds to minutes. The
loop owns what they share: seeding (torch and Python, both from ``config.seed``, before the head is
built, so a fresh head's initialisation follows the seed too), AdamW, one seeded shuffle of the
training items per epoch, fixed-size batches, progress and cancellation through a
:class:`~core.jobs.JobContext`, and, given an ``evaluate``, the keeping of the best epoch's weights
(epoch 0, the head before training, competes). What each head learns from a batch stays with its
module: the loop calls ``loss_fn(head, batch, rng)``, whose ``rng`` is the seeded :class:`random.Random`
that also shuffles (for per-batch draws such as "fp32 or int8 vectors this batch"), so every draw comes
in the same order on every run with the same seed.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import torch
from torch import nn

from core.jobs import JobContext, ensure_context

Item = TypeVar("Item")
Head = TypeVar("Head", bound=nn.Module)


@dataclass(frozen=True)
class HeadLoopConfig:
    epochs: int
    lr: float
    batch_size: int  # training items per optimiser step
    weight_decay: float = 0.01
    seed: int = 0
    label: str = ""  # what the progress messages start with, e.g. "function head "


@dataclass(frozen=True)
class Evaluation:
    """A head measured after an epoch: ``score`` (higher is better) is what the best epoch is chosen by;
    ``record`` is what that epoch's history row shows (e.g. ``{"dev": 0.81}``)."""

    score: float
    record: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class EpochRecord:
    epoch: int  # 0: the head before training
    loss: float | None  # mean training loss of the epoch (None for epoch 0)
    evaluation: Evaluation | None


@dataclass
class HeadFitResult(Generic[Head]):
    head: Head  # with the best epoch's weights when the fit was evaluated, else the last epoch's
    epochs: list[EpochRecord]
    best_epoch: int  # the last epoch when nothing was evaluated
    best: Evaluation | None
    steps: int  # optimiser steps taken
    seconds: float  # the loop's own time (building the head, evaluating and training)

    def history(self, loss_digits: int = 5) -> list[dict[str, float]]:
        """One row per epoch: ``epoch``, ``loss`` (rounded; epoch 0 has none) and the evaluation's record."""
        rows = []
        for record in self.epochs:
            row: dict[str, float] = {"epoch": record.epoch}
            if record.loss is not None:
                row["loss"] = round(record.loss, loss_digits)
            if record.evaluation is not None:
                row.update(record.evaluation.record)
            rows.append(row)
        return rows


def train_only(root: nn.Module, *trainable: nn.Module) -> list[nn.Parameter]:
    """Freeze every parameter of ``root`` except those of ``trainable`` (modules inside it); returns them."""
    for param in root.parameters():
        param.requires_grad = False
    params = [p for module in trainable for p in module.parameters()]
    for param in params:
        param.requires_grad = True
    return params


LossFn = Callable[[Head, list[Item], random.Random], torch.Tensor]


def fit_head(build_head: Callable[[], Head], loss_fn: LossFn[Head, Item], items: Sequence[Item],
             config: HeadLoopConfig, *,
             evaluate: Callable[[Head], Evaluation] | None = None,
             ctx: JobContext | None = None) -> HeadFitResult[Head]:
    """Seed, build the head, and train its parameters that require a gradient with AdamW on ``items``
    for ``config.epochs`` epochs (shuffled each epoch, ``config.batch_size`` items a step). With
    ``evaluate``, the head is measured (in eval mode, without gradients) before training and after
    every epoch, and ends with the weights of the first epoch that scored best. The head is left in
    eval mode. Raises :class:`core.errors.Cancelled` when ``ctx`` is cancelled."""
    if config.epochs < 0 or config.batch_size < 1:
        raise ValueError(f"a head fit needs epochs >= 0 and batch_size >= 1, not {config.epochs} and "
                         f"{config.batch_size}")
    ctx = ensure_context(ctx)
    started = time.monotonic()
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    head = build_head()
    optimiser = torch.optim.AdamW([p for p in head.parameters() if p.requires_grad], lr=config.lr,
                                  weight_decay=config.weight_decay)
    order = list(items)
    steps = max(1, (len(order) + config.batch_size - 1) // config.batch_size)
    total_steps = config.epochs * steps
    epochs: list[EpochRecord] = []
    best: Evaluation | None = None
    best_epoch = 0
    best_state: dict[str, torch.Tensor] | None = None

    def measure(epoch: int, loss: float | None) -> Evaluation | None:
        """Record the epoch; with ``evaluate``, measure the head and keep its weights if they are the best."""
        nonlocal best, best_epoch, best_state
        evaluation = None
        if evaluate is not None:
            head.eval()
            with torch.no_grad():
                evaluation = evaluate(head)
        epochs.append(EpochRecord(epoch, loss, evaluation))
        if evaluation is None:
            best_epoch = epoch
        elif best is None or evaluation.score > best.score:
            best, best_epoch = evaluation, epoch
            best_state = {k: v.detach().clone() for k, v in head.state_dict().items()}
        return evaluation

    if evaluate is not None:
        measure(0, None)
    training_started = time.monotonic()
    for epoch in range(1, config.epochs + 1):
        head.train()
        rng.shuffle(order)
        total = 0.0
        for step in range(steps):
            ctx.check()
            batch = order[step * config.batch_size : (step + 1) * config.batch_size]
            loss = loss_fn(head, batch, rng)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += float(loss.detach())
            done = (epoch - 1) * steps + step + 1
            left = (time.monotonic() - training_started) / done * (total_steps - done)
            ctx.progress(done, total_steps, f"{config.label}epoch {epoch}/{config.epochs}: "
                         f"loss {total / (step + 1):.4f}, about {left:.0f} s left")
        evaluation = measure(epoch, total / steps)
        if evaluation is not None:
            ctx.progress(epoch * steps, total_steps, f"{config.label}epoch {epoch}/{config.epochs}: "
                         f"loss {total / steps:.4f}, dev {evaluation.score:.4f}")
    if best_state is not None:
        head.load_state_dict(best_state)
    head.eval()
    return HeadFitResult(head, epochs, best_epoch, best, total_steps, time.monotonic() - started)


@dataclass
class MembersFit(Generic[Head]):
    """Heads trained one after another from consecutive seeds (:func:`fit_members`)."""

    heads: list[Head]  # each with its own best epoch's weights
    last: HeadFitResult[Head]  # the last member's fit (its best epoch and score)
    history: list[dict[str, float]]  # every member's epochs; with several, each row names its ``member``
    seconds: float


def fit_members(build_member: Callable[[int], Head], loss_fn: LossFn[Head, Item], items: Sequence[Item],
                config: HeadLoopConfig, members: int, *,
                evaluate: Callable[[Head], Evaluation] | None = None,
                ctx: JobContext | None = None) -> MembersFit[Head]:
    """:func:`fit_head` ``members`` times, member k from seed ``config.seed + k`` and built by
    ``build_member(k)`` (which also puts it where ``loss_fn`` and ``evaluate`` read it); progress says
    "k/K" after the label when there are several. The caller reads the heads as one
    (:class:`models.training.net.HeadEnsemble`)."""
    if members < 1:
        raise ValueError(f"a fit needs at least one member, not {members}")
    ctx = ensure_context(ctx)
    heads: list[Head] = []
    history: list[dict[str, float]] = []
    seconds = 0.0
    fit: HeadFitResult[Head] | None = None
    for member in range(members):
        label = config.label + (f"{member + 1}/{members} " if members > 1 else "")
        member_config = dataclasses.replace(config, seed=config.seed + member, label=label)
        fit = fit_head(functools.partial(build_member, member), loss_fn, items, member_config,
                       evaluate=evaluate, ctx=ctx.child(member / members, (member + 1) / members))
        heads.append(fit.head)
        history += [{**row, "member": member} if members > 1 else row for row in fit.history(loss_digits=5)]
        seconds += fit.seconds
    assert fit is not None
    return MembersFit(heads, fit, history, seconds)
