"""Batch samplers: P classes x K samples (metric learning) and sentence-budget document batches."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Hashable, Iterator, Sequence

from core.errors import DatasetError


class PKSampler:
    """Yields batches of indices: P distinct classes, K samples of each.

    Classes with fewer than K samples are sampled with replacement.  One epoch is
    ``len(labels) // (P * K)`` batches; iterate again for a new shuffle (seeded by
    ``seed + epoch``).
    """

    def __init__(self, labels: Sequence[Hashable], p: int, k: int, seed: int = 0) -> None:
        self.by_class: dict[Hashable, list[int]] = defaultdict(list)
        for index, label in enumerate(labels):
            self.by_class[label].append(index)
        if p > len(self.by_class):
            raise DatasetError(f"P={p} classes per batch, but the data has only {len(self.by_class)}")
        if k < 1:
            raise DatasetError("K (examples per class in a batch) must be at least 1")
        self.p, self.k, self.seed, self.epoch = p, k, seed, 0
        self.size = len(labels)

    def __len__(self) -> int:
        return max(1, self.size // (self.p * self.k))

    def __iter__(self) -> Iterator[list[int]]:
        rng = random.Random(self.seed + self.epoch)
        self.epoch += 1
        classes = sorted(self.by_class, key=str)
        pools = {c: rng.sample(v, len(v)) for c, v in self.by_class.items()}
        cursor = dict.fromkeys(classes, 0)
        for _ in range(len(self)):
            batch: list[int] = []
            for c in rng.sample(classes, self.p):
                pool = pools[c]
                if len(pool) < self.k:
                    batch.extend(rng.choices(pool, k=self.k))
                    continue
                if cursor[c] + self.k > len(pool):
                    rng.shuffle(pool)
                    cursor[c] = 0
                batch.extend(pool[cursor[c]: cursor[c] + self.k])
                cursor[c] += self.k
            yield batch


def budget_batches(sizes: Sequence[int], budget: int, seed: int = 0, shuffle: bool = True,
                   lengths: Sequence[int] | None = None, pool: int = 50) -> list[list[int]]:
    """Group items (documents of ``sizes`` sentences) into batches of at most ``budget`` sentences
    (an item larger than the budget gets a batch of its own).

    With ``lengths`` (each item's longest sentence in tokens), items are shuffled, then sorted by
    length within pools of about ``pool`` batches, and the batches are shuffled again: batches hold
    sentences of similar length, so dynamic padding wastes little.
    """
    order = list(range(len(sizes)))
    rng = random.Random(seed)
    if shuffle:
        rng.shuffle(order)
    if lengths is not None:
        batches: list[list[int]] = []
        chunk: list[int] = []
        used = 0
        for index in [*order, -1]:
            if index < 0 or used >= pool * budget:
                chunk.sort(key=lambda i: lengths[i])
                batches.extend(pack_by_budget(chunk, sizes, budget))
                chunk, used = [], 0
            if index >= 0:
                chunk.append(index)
                used += sizes[index]
        if shuffle:
            rng.shuffle(batches)
        return batches
    return pack_by_budget(order, sizes, budget)


def pack_by_budget(order: Sequence[int], sizes: Sequence[int], budget: int) -> list[list[int]]:
    """Consecutive groups of ``order`` whose summed ``sizes`` stay within ``budget``
    (an item larger than the budget gets a group of its own)."""
    batches: list[list[int]] = []
    current: list[int] = []
    used = 0
    for index in order:
        if current and used + sizes[index] > budget:
            batches.append(current)
            current, used = [], 0
        current.append(index)
        used += sizes[index]
    if current:
        batches.append(current)
    return batches
