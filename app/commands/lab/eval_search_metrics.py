"""Ranking metrics of ``rhetorica eval search`` (average precision, NDCG@k) and the judgements and
rankings they read off one row of a (documents x documents) score matrix (``-inf``: a candidate that
cannot be ranked, ``nan``: a query that cannot run). Shared by the evaluation and the blend tuning."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads inside the functions (fast CLI start-up)
    import numpy as np


def average_precision(ranking: Sequence[int], relevant: set[int] | frozenset[int]) -> float:
    """AP of a ranked list against a relevant set: (1 / |relevant|) * sum of P@i at each relevant hit.

    Relevant items missing from the ranking add 0; an empty relevant set gives 0."""
    if not relevant:
        return 0.0
    hits, total = 0, 0.0
    for i, item in enumerate(ranking):
        if item in relevant:
            hits += 1
            total += hits / (i + 1)
    return total / len(relevant)


def ndcg_at_k(ranking: Sequence[int], gains: Mapping[int, float], k: int = 10) -> float:
    """NDCG@k with linear gains: sum gain / log2(rank + 1) over the first k, divided by the ideal's."""
    import math

    dcg = sum(gains.get(item, 0.0) / math.log2(i + 2) for i, item in enumerate(ranking[:k]))
    ideal = sorted((g for g in gains.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def reference_judgements(scores: np.ndarray, query: int, r: int) -> tuple[frozenset[int], dict[int, float]]:
    """From one row of reference scores (-inf: the candidate has no gold facet sentence): the top ``r``
    other candidates (relevant) and their graded gains (score above the (r+1)-th's; all 1 when there
    is no (r+1)-th and the scores tie)."""
    import numpy as np

    candidates = np.flatnonzero(np.isfinite(scores))
    candidates = candidates[candidates != query]
    order = candidates[np.lexsort((candidates, -scores[candidates]))]
    top = order[:r]
    if len(top) == 0:
        return frozenset(), {}
    floor = float(scores[order[r]]) if len(order) > r else float(scores[top[-1]]) - 1e-3
    gains = {int(i): max(float(scores[i]) - floor, 0.0) for i in top}
    return frozenset(int(i) for i in top), gains


def ranking_of(scores: np.ndarray, query: int) -> list[int]:
    """Candidates best first (ties by index); the query and unrankable ones (-inf, nan) left out."""
    import numpy as np

    candidates = np.flatnonzero(np.isfinite(scores))
    candidates = candidates[candidates != query]
    return [int(i) for i in candidates[np.lexsort((candidates, -scores[candidates]))]]
