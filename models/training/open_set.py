"""Open-set splits of distant function labels (Sugimoto & Aizawa 2022's generalisation test).

Train the function embedding on N randomly chosen functions and retrieve sentences of the
functions it never saw: does the embedding learn "what a sentence does" in general, or only the
classes it was shown? :func:`open_set_split` chooses the seen functions (among those with enough
labelled sentences to train on and to retrieve among) and splits the rows accordingly.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OpenSetSplit:
    """Rows of the seen functions (for training) and of the unseen ones (for retrieval)."""

    seen: tuple[str, ...]
    unseen: tuple[str, ...]
    train_rows: list[dict[str, Any]]
    unseen_rows: list[dict[str, Any]]


def open_set_split(rows: Sequence[dict[str, Any]], seen_count: int, seed: int,
                   min_count: int = 10, max_unseen_per_function: int = 100) -> OpenSetSplit:
    """Choose ``seen_count`` functions at random (``seed``) among those with at least ``min_count``
    rows; the rest of those functions are the unseen ones, each with at most
    ``max_unseen_per_function`` rows drawn at random (so no single function dominates the retrieval
    figures). Rows of rarer functions go nowhere."""
    counts = Counter(str(r["function"]) for r in rows)
    eligible = sorted(f for f, n in counts.items() if n >= min_count)
    if seen_count >= len(eligible):
        raise ValueError(f"only {len(eligible)} functions have >= {min_count} labelled sentences: "
                         f"cannot hold any out when {seen_count} are seen")
    seen = tuple(sorted(random.Random(seed).sample(eligible, seen_count)))
    unseen = tuple(f for f in eligible if f not in seen)
    chosen = set(seen)
    rng = random.Random(seed + 1)
    held: list[dict[str, Any]] = []
    for function in unseen:
        own = [dict(r) for r in rows if r["function"] == function]
        held += own if len(own) <= max_unseen_per_function else rng.sample(own, max_unseen_per_function)
    return OpenSetSplit(seen, unseen, [dict(r) for r in rows if r["function"] in chosen], held)
