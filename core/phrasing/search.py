"""Faceted search by example (issue 13): papers of the library like a query paper, for one facet.

The query is a library paper (its id) or an already-analysed paper (:class:`QueryPaper`: sentences,
their role labels and content-view vectors). A *facet* picks the query's sentences by their role label:

* ``background``: background + objective sentences (the CSFCube/Aspire "background" facet also
  holds the paper's aims: what problem, and why);
* ``method``: method sentences;
* ``result``: result + conclusion sentences (what was found, and what it means);
* ``all``: every sentence (the un-faceted whole-paper ranking).

Sentences labelled ``other`` belong to ``all`` only. Ranking uses the CONTENT view (what a sentence
is about). ``all`` is the max-sum of the Aspire models: for every query sentence, the best cosine
against the candidate's sentences, averaged over the query sentences (an asymmetric, ColBERT-like
MaxSim). A facet (issue 26.5: a facet must never rank worse than no facet at all) blends two things,
:class:`FacetBlend`:

* the max-sum of the query's facet sentences against EVERY sentence of the candidate, a candidate
  sentence that carries the facet's roles getting a small bonus (``sentence_bonus``): a method said in
  a sentence the model labelled "result" still counts, a method sentence counts a little more;
* the whole-paper similarity (cosine of the two papers' mean sentence vectors), weight ``whole_weight``.

Both numbers were chosen on the CSAbstruct dev split (``rhetorica eval search --data csabstruct:dev
--tune``) against three references and reported once on test (docs/benchmarks.md): the former
facet-only max-sum (facet sentences on both sides) lost to whole-paper similarity on a human-graded
benchmark. A query with no sentence of the facet's roles searches with all its sentences and says so
(``SearchQuery.fallback``). Every other paper of the library is ranked. The query paper itself is never
returned: not by library id, not by sha256 (a PDF already in the library), not as a paper with the
same sentences under another id.

Speed: every content vector of the library, with its role and paper, is loaded once (one SQL pass)
into numpy arrays sorted by paper, cached per library and reloaded when the library changes (sentence
count or highest sentence id). A query is one matrix product (query sentences x all library
sentences) and one grouped max per paper (``np.maximum.reduceat``).

No Qt, no torch, no model code: a PDF query is analysed by the caller (``analyze_paper(...,
with_embeddings=True)``) and handed in with :func:`query_from_analysis`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.errors import RhetoricaError

if TYPE_CHECKING:
    from core.document import Paper
    from core.labelling.analysis import PaperAnalysis
    from core.library.library import Library

FACETS: tuple[str, ...] = ("background", "method", "result", "all")
# The role labels of each facet ("all": every sentence, whatever its role).
FACET_ROLES: dict[str, tuple[str, ...]] = {
    "background": ("background", "objective"),
    "method": ("method",),
    "result": ("result", "conclusion"),
}
EVIDENCE_PAIRS = 3  # evidence pairs kept per result
SAME_TEXT_COSINE = 0.9999  # mean-vector cosine above which a paper with as many sentences is the query's text


class SearchError(RhetoricaError):
    """A search that cannot run (unknown facet, empty library, a query without sentences)."""


# -- the boundary ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class FacetBlend:
    """How a facet ranks a candidate: ``(1 - whole_weight)`` x the max-sum of the query's facet sentences
    against all the candidate's sentences (a candidate sentence of the facet's roles gets
    ``sentence_bonus`` more; the sum is divided by ``1 + sentence_bonus`` so scores stay at most 1)
    + ``whole_weight`` x the cosine of the two papers' mean vectors. ``confidence_weighted``: query
    sentences weigh their role confidence and the bonus is scaled by the candidate sentence's."""

    sentence_bonus: float = 0.05
    whole_weight: float = 0.25
    confidence_weighted: bool = False

    def __post_init__(self) -> None:
        if not 0.0 <= self.sentence_bonus <= 1.0 or not 0.0 <= self.whole_weight <= 1.0:
            raise ValueError(f"sentence_bonus and whole_weight must lie in [0, 1], not {self}")


# Chosen on csabstruct:dev by `rhetorica eval search --data csabstruct:dev --tune` (docs/benchmarks.md).
DEFAULT_BLEND = FacetBlend(sentence_bonus=0.05, whole_weight=0.25, confidence_weighted=False)
MAX_SUM = FacetBlend(sentence_bonus=0.0, whole_weight=0.0)  # the plain max-sum ("all")


@dataclass(frozen=True)
class QueryPaper:
    """An already-analysed paper used as a query: sentences in reading order, their role labels and
    content-view vectors (one row per sentence); ``sha256`` of its source (a PDF's bytes: the library's
    key, so the paper is recognised when it is in the library) and the role confidences (optional)."""

    paper_id: str
    title: str
    sentences: list[str]
    roles: list[str]
    content: np.ndarray = field(repr=False, compare=False)
    sha256: str = ""
    confidences: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        n = len(self.sentences)
        if len(self.roles) != n or self.content.ndim != 2 or len(self.content) != n:
            raise ValueError(f"{n} sentences, {len(self.roles)} roles and content vectors "
                             f"{self.content.shape} do not match")
        if self.confidences is not None and len(self.confidences) != n:
            raise ValueError(f"{n} sentences and {len(self.confidences)} role confidences do not match")


@dataclass(frozen=True)
class Evidence:
    """One query facet sentence and its best match in a result paper."""

    query_sentence: str
    matched_sentence: str
    similarity: float


@dataclass(frozen=True)
class SearchHit:
    paper_id: str
    title: str
    score: float
    evidence: list[Evidence]


@dataclass(frozen=True)
class SearchQuery:
    """``facet_sentences``: the query sentences searched with; ``fallback``: the query has no sentence
    of the facet's roles, so these are all its sentences."""

    paper_id: str
    title: str
    facet: str
    facet_sentences: list[str]
    fallback: bool = False

    @property
    def fallback_note(self) -> str:
        """One line saying the facet fell back to every sentence ("" when it did not)."""
        if not self.fallback:
            return ""
        roles = " or ".join(FACET_ROLES.get(self.facet, (self.facet,)))
        return (f"the query has no {self.facet} sentences (role {roles}): searched with all its "
                f"{len(self.facet_sentences)} sentences instead")


@dataclass(frozen=True)
class SearchResult:
    """Results best first; ``load_seconds`` (0 when the arrays were cached) and ``rank_seconds``
    are timings, not part of the JSON."""

    query: SearchQuery
    results: list[SearchHit]
    candidates: int = 0  # papers ranked (the query paper excluded)
    load_seconds: float = 0.0
    rank_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of issue 13 (``query.fallback`` added by issue 26)."""
        q = self.query
        return {
            "query": {"paper_id": q.paper_id, "title": q.title, "facet": q.facet,
                      "facet_sentences": list(q.facet_sentences), "fallback": q.fallback},
            "results": [{"paper_id": hit.paper_id, "title": hit.title, "score": round(hit.score, 4),
                         "evidence": [{"query_sentence": e.query_sentence,
                                       "matched_sentence": e.matched_sentence,
                                       "similarity": round(e.similarity, 4)} for e in hit.evidence]}
                        for hit in self.results],
        }


def query_from_analysis(paper: Paper, analysis: PaperAnalysis, *, paper_id: str = "") -> QueryPaper:
    """A query from a parsed paper and ``analyze_paper(paper, model, with_embeddings=True)``."""
    if analysis.embeddings is None:
        raise ValueError("the analysis has no embeddings: run analyze_paper(..., with_embeddings=True)")
    if len(analysis.roles) != len(paper.sentences):
        raise ValueError(f"analysis has {len(analysis.roles)} roles for {len(paper.sentences)} sentences")
    title = paper.title or Path(paper.source_path).name
    return QueryPaper(paper_id or paper.source_path, title, [s.text for s in paper.sentences],
                      [r.label for r in analysis.roles], np.asarray(analysis.embeddings, dtype=np.float32),
                      sha256=paper.sha256, confidences=tuple(float(r.confidence) for r in analysis.roles))


# -- the loaded library ---------------------------------------------------------------------------
@dataclass
class _Loaded:
    """Every content vector of a library, sorted by paper (then reading order)."""

    stamp: tuple[int, int]  # (sentence count, highest sentence id): the cache key's version
    sentence_ids: np.ndarray  # (n,) int64
    papers: np.ndarray  # (n,) int32: index into paper_ids
    roles: np.ndarray  # (n,) object: role labels
    confidences: np.ndarray  # (n,) float32: role confidences
    vectors: np.ndarray  # (n, d) float32, L2-normalised
    paper_ids: list[str]
    sha256s: list[str]
    titles: list[str]
    starts: np.ndarray = field(init=False)  # first row of each paper that has vectors (its group)
    group_papers: np.ndarray = field(init=False)  # the paper of each group
    means: np.ndarray = field(init=False)  # (groups, d): each paper's normalised mean vector
    masks: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.starts = paper_starts(self.papers)
        self.group_papers = self.papers[self.starts] if len(self.starts) else np.zeros(0, np.int32)
        self.means = paper_means(self.vectors, self.starts)

    def in_facet(self, facet: str) -> np.ndarray:
        """Which library sentences carry the facet's roles (built once per facet)."""
        if facet not in self.masks:
            self.masks[facet] = facet_mask(self.roles, facet)
        return self.masks[facet]


_CACHE: dict[str, _Loaded] = {}
_LOCK = threading.Lock()


def _normalised(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def paper_starts(owners: np.ndarray) -> np.ndarray:
    """The first row of each run of equal owners (rows grouped by paper)."""
    return np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]]) if len(owners) else np.zeros(0, np.int64)


def paper_means(vectors: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """(groups, d): the L2-normalised mean of each group's (L2-normalised) sentence vectors."""
    if not len(starts):
        return np.zeros((0, vectors.shape[1] if vectors.ndim == 2 else 0), dtype=np.float32)
    return _normalised(np.add.reduceat(vectors.astype(np.float64), starts, axis=0))


def _stamp(library: Library) -> tuple[int, int]:
    row = library.store.connection.execute("SELECT COUNT(*), COALESCE(MAX(id), 0) FROM sentences").fetchone()
    return int(row[0]), int(row[1])


def _load(library: Library) -> tuple[_Loaded, float]:
    """The library's arrays (cached; reloaded when its sentences changed) and the seconds spent loading."""
    key = str(Path(library.store.path).resolve())
    stamp = _stamp(library)
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is not None and cached.stamp == stamp:
            return cached, 0.0
        started = time.perf_counter()
        db = library.store.connection
        paper_rows = db.execute("SELECT id, paper_id, sha256, title FROM papers ORDER BY id").fetchall()
        index = {int(row[0]): i for i, row in enumerate(paper_rows)}
        rows = db.execute("SELECT id, paper, role, role_confidence, content FROM sentences "
                          "WHERE content IS NOT NULL ORDER BY paper, position").fetchall()
        if rows:
            vectors = _normalised(np.stack([np.frombuffer(r[4], dtype=np.float32) for r in rows]))
        else:
            vectors = np.zeros((0, 0), dtype=np.float32)
        loaded = _Loaded(stamp, np.array([r[0] for r in rows], dtype=np.int64),
                         np.array([index[int(r[1])] for r in rows], dtype=np.int32),
                         np.array([str(r[2]) for r in rows], dtype=object),
                         np.array([float(r[3]) for r in rows], dtype=np.float32), vectors,
                         [str(r[1]) for r in paper_rows], [str(r[2]) for r in paper_rows],
                         [str(r[3]) for r in paper_rows])
        _CACHE[key] = loaded
        return loaded, time.perf_counter() - started


def clear_cache() -> None:
    """Forget every loaded library (tests; a library folder replaced behind the cache's back)."""
    with _LOCK:
        _CACHE.clear()


# -- ranking --------------------------------------------------------------------------------------
def facet_mask(roles: list[str] | np.ndarray, facet: str) -> np.ndarray:
    """Which sentences (by role label) belong to ``facet``."""
    _check_facet(facet)
    roles = np.asarray(roles, dtype=object)
    return np.ones(len(roles), dtype=bool) if facet == "all" else np.isin(roles, FACET_ROLES[facet])


def _check_facet(facet: str) -> None:
    if facet not in FACETS:
        raise SearchError(f"unknown facet {facet!r}: use one of {', '.join(FACETS)}")


def max_sum_scores(query: np.ndarray, candidates: np.ndarray,
                   starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Max-sum scores of candidate papers against the query sentences.

    ``query`` (q, d) and ``candidates`` (n, d) are L2-normalised; the candidate sentences are grouped
    by paper, group g being rows ``starts[g]:starts[g + 1]`` (no empty group). Returns (scores (P,):
    the mean over query sentences of the best cosine in each paper, similarities (q, n))."""
    similarities = query @ candidates.T
    best = np.maximum.reduceat(similarities, starts, axis=1) if len(starts) else np.zeros((len(query), 0))
    return best.mean(axis=0), similarities


@dataclass(frozen=True)
class FacetQuery:
    """The query side of a blended ranking: the sentences searched with (L2-normalised, (q, d)),
    their weights (q,) and the whole query paper's normalised mean vector (d,)."""

    vectors: np.ndarray
    weights: np.ndarray
    mean: np.ndarray


@dataclass(frozen=True)
class FacetCandidates:
    """The candidate side: every sentence (L2-normalised, (n, d)) grouped by paper from ``starts``, each
    sentence's facet bonus weight (n,: 1 or its role confidence for facet sentences, else 0) and the
    papers' normalised mean vectors (groups, d)."""

    vectors: np.ndarray
    in_facet: np.ndarray
    starts: np.ndarray
    means: np.ndarray


def blend_scores(query: FacetQuery, candidates: FacetCandidates,
                 blend: FacetBlend = DEFAULT_BLEND) -> tuple[np.ndarray, np.ndarray]:
    """(scores (groups,), cosines (q, n)) of the candidate papers for one query (see :class:`FacetBlend`).

    With ``MAX_SUM`` (no bonus, no whole-paper weight) and unit weights this is :func:`max_sum_scores`."""
    similarities = query.vectors @ candidates.vectors.T
    if not len(candidates.starts):
        return np.zeros(0), similarities
    boosted = similarities + blend.sentence_bonus * candidates.in_facet[None, :] if blend.sentence_bonus \
        else similarities
    best = np.maximum.reduceat(boosted, candidates.starts, axis=1)  # (q, groups)
    weights = np.asarray(query.weights, dtype=np.float64)
    facet_part = (weights @ best) / max(float(weights.sum()), 1e-12) / (1.0 + blend.sentence_bonus)
    if not blend.whole_weight:
        return facet_part, similarities
    whole = candidates.means @ query.mean
    return (1.0 - blend.whole_weight) * facet_part + blend.whole_weight * whole, similarities


def facet_sides(vectors: np.ndarray, roles: np.ndarray, confidences: np.ndarray, facet: str,
                blend: FacetBlend) -> tuple[np.ndarray, np.ndarray, bool]:
    """For one query paper: (the rows searched with, their weights, fallback). The facet's sentences, or
    every sentence when it has none (fallback); weights are role confidences when the blend asks."""
    mask = facet_mask(roles, facet)
    fallback = facet != "all" and not mask.any()
    rows = np.arange(len(roles)) if fallback or facet == "all" else np.flatnonzero(mask)
    if blend.confidence_weighted and not fallback and facet != "all":
        weights = np.maximum(np.asarray(confidences, dtype=np.float64)[rows], 1e-3)
    else:
        weights = np.ones(len(rows), dtype=np.float64)
    return rows, weights, fallback


def candidate_bonus(in_facet: np.ndarray, confidences: np.ndarray, blend: FacetBlend) -> np.ndarray:
    """Each candidate sentence's bonus weight: 1 (or its role confidence) for the facet's, 0 otherwise."""
    bonus = in_facet.astype(np.float64)
    return bonus * np.asarray(confidences, dtype=np.float64) if blend.confidence_weighted else bonus


@dataclass(frozen=True)
class _Query:
    paper_id: str
    title: str
    texts: list[str]
    roles: np.ndarray
    confidences: np.ndarray
    vectors: np.ndarray
    exclude: frozenset[int]  # library papers that ARE the query


def _resolve(library: Library, loaded: _Loaded, query: str | QueryPaper) -> _Query:
    """The query's sentences, roles, confidences and vectors, and which library papers are the query."""
    if isinstance(query, QueryPaper):
        exclude = {i for i, (pid, sha) in enumerate(zip(loaded.paper_ids, loaded.sha256s))
                   if pid == query.paper_id or (query.sha256 and sha == query.sha256)}
        known = query.confidences
        confidences = np.asarray(known if known is not None else [1.0] * len(query.roles), dtype=np.float64)
        return _Query(query.paper_id, query.title, list(query.sentences),
                      np.asarray(query.roles, dtype=object), confidences, _normalised(query.content),
                      frozenset(exclude))
    query_id = library.store.resolve_paper_id(query)  # LibraryError (one line) for an unknown id
    me = loaded.paper_ids.index(query_id)
    mine = np.flatnonzero(loaded.papers == me)
    text_of = {r.id: r.text for r in library.store.sentences([int(i) for i in loaded.sentence_ids[mine]])}
    return _Query(query_id, loaded.titles[me], [text_of.get(int(i), "") for i in loaded.sentence_ids[mine]],
                  loaded.roles[mine], loaded.confidences[mine], loaded.vectors[mine], frozenset({me}))


def _same_text(loaded: _Loaded, query_mean: np.ndarray, n_sentences: int) -> set[int]:
    """Library papers with as many sentences as the query and (nearly) the same mean vector: the query
    paper under another id (a PDF saved again, the same abstract imported twice)."""
    counts = np.diff(np.r_[loaded.starts, len(loaded.papers)])
    same = (counts == n_sentences) & (loaded.means @ query_mean >= SAME_TEXT_COSINE)
    return {int(p) for p in loaded.group_papers[same]}


def search_like(library: Library, query: str | QueryPaper, facet: str, k: int = 20,
                blend: FacetBlend = DEFAULT_BLEND) -> SearchResult:
    """The ``k`` library papers most like ``query`` (a library paper id, or a unique start of one, or
    an analysed :class:`QueryPaper`) on ``facet``, best first, each with its best evidence pairs.

    ``blend`` scores a facet (``all`` is always the plain max-sum); the query paper (its id, its sha256,
    or the same sentences under another id) is never returned."""
    _check_facet(facet)
    if k < 1:
        raise SearchError(f"k must be at least 1, not {k}")
    loaded, load_seconds = _load(library)
    if not loaded.paper_ids:
        raise SearchError(f"the library {library.folder} is empty: add papers first "
                          "(rhetorica library add / import-jsonl)")
    started = time.perf_counter()
    q = _resolve(library, loaded, query)
    if not q.texts:
        raise SearchError(f"the query {q.paper_id!r} has no sentences to search with")
    if loaded.vectors.shape[1] != q.vectors.shape[1]:
        raise SearchError(f"the query's vectors ({q.vectors.shape[1]} dimensions) and the library's "
                          f"({loaded.vectors.shape[1]}) come from different models: use the library's model")
    if facet == "all":
        blend = MAX_SUM
    rows, weights, fallback = facet_sides(q.vectors, q.roles, q.confidences, facet, blend)
    query_mean = paper_means(q.vectors, np.zeros(1, np.int64))[0]
    exclude = q.exclude | _same_text(loaded, query_mean, len(q.texts))
    bonus = candidate_bonus(loaded.in_facet(facet), loaded.confidences, blend)
    scores, similarities = blend_scores(
        FacetQuery(q.vectors[rows], weights, query_mean),
        FacetCandidates(loaded.vectors, bonus, loaded.starts, loaded.means), blend)
    texts = [q.texts[i] for i in rows]
    keep = ~np.isin(loaded.group_papers, list(exclude))
    scores = np.where(keep, scores, -np.inf)
    candidates = int(np.count_nonzero(keep))
    take = min(k, candidates)
    top = np.argpartition(-scores, take - 1)[:take] if take else np.zeros(0, np.int64)
    top = top[np.lexsort((loaded.group_papers[top], -scores[top]))]  # best first; ties by library order
    ends = np.r_[loaded.starts[1:], len(loaded.papers)]
    picks: list[tuple[int, list[tuple[int, int, float]]]] = []
    for group in top:
        block = similarities[:, loaded.starts[group]:ends[group]]
        best = block.argmax(axis=1)
        pairs = sorted(((qi, int(loaded.starts[group] + best[qi]), float(block[qi, best[qi]]))
                        for qi in range(len(texts))), key=lambda p: -p[2])[:EVIDENCE_PAIRS]
        picks.append((int(group), pairs))
    wanted = sorted({int(loaded.sentence_ids[row]) for _, pairs in picks for _, row, _ in pairs})
    text_of = {r.id: r.text for r in library.store.sentences(wanted)}
    results = []
    for group, pairs in picks:
        paper = int(loaded.group_papers[group])
        evidence = [Evidence(texts[qi], text_of.get(int(loaded.sentence_ids[row]), ""), sim)
                    for qi, row, sim in pairs]
        results.append(SearchHit(loaded.paper_ids[paper], loaded.titles[paper], float(scores[group]),
                                 evidence))
    rank_seconds = time.perf_counter() - started
    return SearchResult(SearchQuery(q.paper_id, q.title, facet, texts, fallback), results, candidates,
                        load_seconds, rank_seconds)
