"""Score matrices of ``rhetorica eval search``: the systems, the three references, and the dev tuning
of the facet blend (issue 26.5: a facet must never rank worse than no facet at all).

Every matrix is (documents x documents): row q ranks the candidates for query document q; ``-inf``
marks a candidate a system cannot rank, ``nan`` a query it cannot run. ``vectors`` are the content view
of every sentence (L2-normalised), ``owner`` the document of each (sorted, documents 0..n-1, none empty).

**References** (what counts as relevant for a query and a facet, always from the GOLD role labels):

- ``content``: max-sum of the content view over the gold facet sentences of both sides (issue 13's
  reference; it shares the systems' own embedding and aggregation, so it favours them);
- ``lexical-facet``: TF-IDF cosine of the query's gold facet sentences against the candidate's gold
  facet sentences (independent of the embedding);
- ``lexical-whole``: the query's gold facet sentences against the candidate's whole abstract (a reader
  who judges the query's facet against everything the candidate says, as CSFCube's annotators did).

The tuning picks the blend whose worst margin over facets and references (NDCG%20 of the blended
facet minus that of the better whole-paper ranking, ``all`` or ``mean``) is highest; ties by mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy loads inside the functions (fast CLI start-up)
    import numpy as np

    from core.phrasing.search import FacetBlend

REFERENCES: tuple[str, ...] = ("content", "lexical-facet", "lexical-whole")
TUNE_BONUS: tuple[float, ...] = (0.0, 0.025, 0.05, 0.075, 0.1, 0.15)
TUNE_WHOLE_WEIGHT: tuple[float, ...] = (0.0, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5)
TUNE_CONFIDENCE: tuple[bool, ...] = (False, True)
_CHUNK = 2048  # query sentences per matrix product (bounds memory on large splits)


def fraction_cutoff(n_candidates: int, fraction: float = 0.2) -> int:
    """NDCG%20's cut-off: 20 % of the candidates, rounded up (CSFCube's NDCG%20), at least 1."""
    return max(1, math.ceil(fraction * n_candidates))


def max_sum_matrix(vectors: np.ndarray, owner: np.ndarray, query_mask: np.ndarray,
                   candidate_mask: np.ndarray, n_docs: int) -> np.ndarray:
    """(n_docs, n_docs) max-sum scores: [q, c] = mean over q's selected sentences of the best cosine
    against c's selected sentences (as :func:`core.phrasing.search.max_sum_scores`). A row whose query has no
    selected sentence is nan; a column whose candidate has none is -inf."""
    import numpy as np

    from core.phrasing.search import paper_starts

    out = np.full((n_docs, n_docs), -np.inf, dtype=np.float64)
    q_rows, c_rows = np.flatnonzero(query_mask), np.flatnonzero(candidate_mask)
    q_docs, c_docs = owner[q_rows], owner[c_rows]
    q_starts, c_starts = paper_starts(q_docs), paper_starts(c_docs)
    has_query = np.zeros(n_docs, dtype=bool)
    has_query[q_docs] = True
    if len(q_rows) and len(c_rows):
        similarities = vectors[q_rows] @ vectors[c_rows].T
        best = np.maximum.reduceat(similarities, c_starts, axis=1)  # (query sentences, candidate docs)
        sums = np.add.reduceat(best.astype(np.float64), q_starts, axis=0)  # (query docs, candidate docs)
        counts = np.diff(np.r_[q_starts, len(q_rows)])
        out[np.ix_(q_docs[q_starts], c_docs[c_starts])] = sums / counts[:, None]
    out[~has_query] = np.nan
    return out


def mean_vector_matrix(vectors: np.ndarray, owner: np.ndarray, n_docs: int) -> np.ndarray:
    """(n_docs, n_docs) cosines of one vector per document (the L2-normalised mean of its sentences')."""
    import numpy as np

    sums = np.zeros((n_docs, vectors.shape[1]), dtype=np.float64)
    np.add.at(sums, owner, vectors)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    means = sums / np.maximum(norms, 1e-12)
    return means @ means.T


def blend_matrix(vectors: np.ndarray, owner: np.ndarray, roles: Sequence[str], confidences: np.ndarray,
                 facet: str, blend: FacetBlend) -> np.ndarray:
    """(n_docs, n_docs) scores of what ``rhetorica search --facet F`` ranks
    (:func:`core.phrasing.search.blend_scores`
    for every query at once, with the same fallback to all sentences for a query without the facet's
    roles); a test checks each row against core."""
    import numpy as np

    from core.phrasing.search import candidate_bonus, facet_mask, paper_means, paper_starts

    starts = paper_starts(owner)
    means = paper_means(vectors, starts).astype(np.float64)
    in_facet = facet_mask(list(roles), facet)
    has_facet = np.add.reduceat(in_facet.astype(np.int64), starts) > 0
    searched = in_facet | ~has_facet[owner]  # a query without the facet's sentences: all of them
    confidences = np.asarray(confidences, dtype=np.float64)
    weights = searched.astype(np.float64)
    if blend.confidence_weighted:
        weights = np.where(in_facet, np.maximum(confidences, 1e-3), 1.0) * weights
    bonus = blend.sentence_bonus * candidate_bonus(in_facet, confidences, blend)
    best = np.empty((len(owner), len(starts)), dtype=np.float64)
    for lo in range(0, len(owner), _CHUNK):
        similarities = vectors[lo:lo + _CHUNK] @ vectors.T + bonus[None, :]
        best[lo:lo + _CHUNK] = np.maximum.reduceat(similarities, starts, axis=1)
    sums = np.add.reduceat(best * weights[:, None], starts, axis=0)
    facet_part = sums / np.add.reduceat(weights, starts)[:, None] / (1.0 + blend.sentence_bonus)
    return (1.0 - blend.whole_weight) * facet_part + blend.whole_weight * (means @ means.T)


def _document_texts(texts: Sequence[str], owner: np.ndarray, mask: np.ndarray, n_docs: int) -> list[str]:
    parts: list[list[str]] = [[] for _ in range(n_docs)]
    for text, doc, keep in zip(texts, owner, mask):
        if keep:
            parts[int(doc)].append(text)
    return [" ".join(p) for p in parts]


def reference_matrix(name: str, vectors: np.ndarray, owner: np.ndarray, gold_mask: np.ndarray,
                     texts: Sequence[str] | None, n_docs: int) -> np.ndarray:
    """The reference scores of ``name`` (:data:`REFERENCES`) for one facet's gold mask; candidates
    without gold facet sentences are -inf for the facet-to-facet references."""
    import numpy as np

    from core.phrasing.lexical import tfidf_similarity

    if name == "content":
        return max_sum_matrix(vectors, owner, gold_mask, gold_mask, n_docs)
    if name not in REFERENCES:
        raise ValueError(f"unknown reference {name!r}: use one of {', '.join(REFERENCES)}")
    if texts is None:
        raise ValueError(f"the {name} reference needs the sentence texts")
    facet_texts = _document_texts(texts, owner, gold_mask, n_docs)
    has_gold = np.zeros(n_docs, dtype=bool)
    has_gold[owner[gold_mask]] = True
    if name == "lexical-facet":
        scores = tfidf_similarity(facet_texts, facet_texts).astype(np.float64)
        scores[:, ~has_gold] = -np.inf
    else:
        whole = _document_texts(texts, owner, np.ones(len(owner), dtype=bool), n_docs)
        scores = tfidf_similarity(facet_texts, whole).astype(np.float64)
    scores[~has_gold] = np.nan
    return scores


def tune(vectors: np.ndarray, owner: np.ndarray, gold: Sequence[str], predicted: Sequence[str],
         confidences: np.ndarray, texts: Sequence[str], queries: Sequence[int], *, r: int = 10,
         facets: Sequence[str] = ("background", "method", "result")) -> dict[str, Any]:
    """Every blend of the grid scored by NDCG%20 against every reference; the chosen one first."""
    import numpy as np

    from app.commands.lab.eval_search_metrics import ndcg_at_k, ranking_of, reference_judgements
    from core.phrasing.search import FacetBlend, facet_mask

    n_docs = int(owner.max()) + 1
    cut = fraction_cutoff(n_docs - 1)
    every = np.ones(len(owner), dtype=bool)
    whole = {"all": max_sum_matrix(vectors, owner, every, every, n_docs),
             "mean": mean_vector_matrix(vectors, owner, n_docs)}
    judgements: dict[tuple[str, str], list[tuple[int, dict[int, float]]]] = {}
    for facet in facets:
        gold_mask = facet_mask(list(gold), facet)
        for ref in REFERENCES:
            matrix = reference_matrix(ref, vectors, owner, gold_mask, texts, n_docs)
            pairs = [(int(q), reference_judgements(matrix[q], q, r)[1]) for q in queries
                     if np.isfinite(matrix[q]).any()]
            judgements[(facet, ref)] = [(q, g) for q, g in pairs if g]

    def ndcg20(matrix: np.ndarray, facet: str, ref: str) -> float:
        values = [ndcg_at_k(ranking_of(matrix[q], q), gains, cut) for q, gains in judgements[(facet, ref)]]
        return float(np.mean(values)) if values else 0.0

    baseline = {f"{facet}/{ref}": max(ndcg20(m, facet, ref) for m in whole.values())
                for facet in facets for ref in REFERENCES}
    rows: list[dict[str, Any]] = []
    for bonus in TUNE_BONUS:
        for weight in TUNE_WHOLE_WEIGHT:
            for confident in TUNE_CONFIDENCE:
                blend = FacetBlend(bonus, weight, confident)
                scores: dict[str, float] = {}
                for facet in facets:
                    matrix = blend_matrix(vectors, owner, predicted, confidences, facet, blend)
                    scores.update({f"{facet}/{ref}": ndcg20(matrix, facet, ref) for ref in REFERENCES})
                margins = [scores[key] - baseline[key] for key in scores]
                rows.append({"sentence_bonus": bonus, "whole_weight": weight,
                             "confidence_weighted": confident, "worst_margin": min(margins),
                             "mean_ndcg20": float(np.mean(list(scores.values()))), "ndcg20": scores})
    rows.sort(key=lambda row: (-float(row["worst_margin"]), -float(row["mean_ndcg20"])))
    return {"cutoff": cut, "whole_paper_ndcg20": baseline, "grid": rows, "chosen": rows[0]}
