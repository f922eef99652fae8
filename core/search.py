"""Faceted search by example (issue 13): papers of the library like a query paper, for one facet.

The query is a library paper (its id) or an already-analysed paper (:class:`QueryPaper`: sentences,
their role labels and content-view vectors). A *facet* picks sentences by their role label:

* ``background``: background + objective sentences (the CSFCube/Aspire "background" facet also
  holds the paper's aims: what problem, and why);
* ``method``: method sentences;
* ``result``: result + conclusion sentences (what was found, and what it means);
* ``all``: every sentence (the un-faceted whole-paper ranking).

Sentences labelled ``other`` belong to ``all`` only. Ranking uses the CONTENT view (what a sentence
is about) and aggregates sentence similarities rather than one vector per paper: a candidate's score
is the max-sum of the Aspire models, normalised: for every query facet sentence, the best cosine
against the candidate's facet sentences, averaged over the query facet sentences (an asymmetric,
ColBERT-like MaxSim; it rewards a candidate that covers each query sentence, whatever else it says).
A candidate with no sentence of the facet is not ranked. The query paper itself is never returned.

Speed: every content vector of the library, with its role and paper, is loaded once (one SQL pass)
into numpy arrays sorted by paper, cached per library and reloaded when the library changes (sentence
count or highest sentence id). A query is one matrix product (query facet x all candidate facet
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
    from core.analysis import PaperAnalysis
    from core.document import Paper
    from core.library.library import Library

FACETS: tuple[str, ...] = ("background", "method", "result", "all")
# The role labels of each facet ("all": every sentence, whatever its role).
FACET_ROLES: dict[str, tuple[str, ...]] = {
    "background": ("background", "objective"),
    "method": ("method",),
    "result": ("result", "conclusion"),
}
EVIDENCE_PAIRS = 3  # evidence pairs kept per result


class SearchError(RhetoricaError):
    """A search that cannot run (unknown facet, empty library, a query without facet sentences)."""


# -- the boundary ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class QueryPaper:
    """An already-analysed paper used as a query: sentences in reading order, their role labels and
    content-view vectors (one row per sentence)."""

    paper_id: str
    title: str
    sentences: list[str]
    roles: list[str]
    content: np.ndarray = field(repr=False, compare=False)

    def __post_init__(self) -> None:
        n = len(self.sentences)
        if len(self.roles) != n or self.content.ndim != 2 or len(self.content) != n:
            raise ValueError(f"{n} sentences, {len(self.roles)} roles and content vectors "
                             f"{self.content.shape} do not match")


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
    paper_id: str
    title: str
    facet: str
    facet_sentences: list[str]


@dataclass(frozen=True)
class SearchResult:
    """Results best first; ``load_seconds`` (0 when the arrays were cached) and ``rank_seconds``
    are timings, not part of the JSON."""

    query: SearchQuery
    results: list[SearchHit]
    candidates: int = 0  # papers that have sentences of the facet (query excluded)
    load_seconds: float = 0.0
    rank_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of issue 13."""
        q = self.query
        return {
            "query": {"paper_id": q.paper_id, "title": q.title, "facet": q.facet,
                      "facet_sentences": list(q.facet_sentences)},
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
                      [r.label for r in analysis.roles], np.asarray(analysis.embeddings, dtype=np.float32))


# -- the loaded library ---------------------------------------------------------------------------
@dataclass
class _Loaded:
    """Every content vector of a library, sorted by paper (then reading order)."""

    stamp: tuple[int, int]  # (sentence count, highest sentence id): the cache key's version
    sentence_ids: np.ndarray  # (n,) int64
    papers: np.ndarray  # (n,) int32: index into paper_ids
    roles: np.ndarray  # (n,) object: role labels
    vectors: np.ndarray  # (n, d) float32, L2-normalised
    paper_ids: list[str]
    titles: list[str]
    facets: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)

    def facet(self, facet: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows of the facet's sentences, their vectors, segment starts per paper), built once."""
        if facet not in self.facets:
            if facet == "all":
                rows = np.arange(len(self.papers))
                vectors = self.vectors
            else:
                rows = np.flatnonzero(np.isin(self.roles, FACET_ROLES[facet]))
                vectors = np.ascontiguousarray(self.vectors[rows])
            papers = self.papers[rows]
            starts = np.flatnonzero(np.r_[True, papers[1:] != papers[:-1]]) if len(rows) else rows
            self.facets[facet] = (rows, vectors, starts)
        return self.facets[facet]


_CACHE: dict[str, _Loaded] = {}
_LOCK = threading.Lock()


def _normalised(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


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
        paper_rows = db.execute("SELECT id, paper_id, title FROM papers ORDER BY id").fetchall()
        index = {int(row[0]): i for i, row in enumerate(paper_rows)}
        rows = db.execute("SELECT id, paper, role, content FROM sentences WHERE content IS NOT NULL "
                          "ORDER BY paper, position").fetchall()
        if rows:
            vectors = _normalised(np.stack([np.frombuffer(r[3], dtype=np.float32) for r in rows]))
        else:
            vectors = np.zeros((0, 0), dtype=np.float32)
        loaded = _Loaded(stamp, np.array([r[0] for r in rows], dtype=np.int64),
                         np.array([index[int(r[1])] for r in rows], dtype=np.int32),
                         np.array([str(r[2]) for r in rows], dtype=object), vectors,
                         [str(r[1]) for r in paper_rows], [str(r[2]) for r in paper_rows])
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


def search_like(library: Library, query: str | QueryPaper, facet: str, k: int = 20) -> SearchResult:
    """The ``k`` library papers most like ``query`` (a library paper id, or a unique start of one, or
    an analysed :class:`QueryPaper`) on ``facet``, best first, each with its best evidence pairs."""
    _check_facet(facet)
    if k < 1:
        raise SearchError(f"k must be at least 1, not {k}")
    loaded, load_seconds = _load(library)
    if not loaded.paper_ids:
        raise SearchError(f"the library {library.folder} is empty: add papers first "
                          "(rhetorica library add / import-jsonl)")
    started = time.perf_counter()
    exclude = -1
    if isinstance(query, QueryPaper):
        mask = facet_mask(query.roles, facet)
        texts = [t for t, m in zip(query.sentences, mask) if m]
        query_vectors = _normalised(query.content[mask]) if mask.any() else np.zeros((0, 0), np.float32)
        query_id, query_title = query.paper_id, query.title
        if query_id in loaded.paper_ids:  # an analysed library paper: still never returned
            exclude = loaded.paper_ids.index(query_id)
    else:  # a library paper: its stored labels and vectors
        query_id = library.store.resolve_paper_id(query)  # LibraryError (one line) for an unknown id
        exclude = loaded.paper_ids.index(query_id)
        query_title = loaded.titles[exclude]
        mine = np.flatnonzero(loaded.papers == exclude)
        mine = mine[facet_mask(loaded.roles[mine], facet)]
        texts = [r.text for r in library.store.sentences([int(i) for i in loaded.sentence_ids[mine]])]
        query_vectors = loaded.vectors[mine]
    if not texts:
        roles = "every role" if facet == "all" else " or ".join(FACET_ROLES[facet])
        raise SearchError(f"the query {query_id!r} has no {facet} sentences (role {roles}) to search with")
    if loaded.vectors.shape[1] != query_vectors.shape[1]:
        raise SearchError(f"the query's vectors ({query_vectors.shape[1]} dimensions) and the library's "
                          f"({loaded.vectors.shape[1]}) come from different models: use the library's model")
    rows, vectors, starts = loaded.facet(facet)
    scores, similarities = max_sum_scores(query_vectors, vectors, starts)
    group_papers = loaded.papers[rows[starts]] if len(starts) else np.zeros(0, np.int32)
    scores = np.where(group_papers == exclude, -np.inf, scores)
    candidates = int(np.count_nonzero(group_papers != exclude))
    take = min(k, candidates)
    top = np.argpartition(-scores, take - 1)[:take] if take else np.zeros(0, np.int64)
    top = top[np.lexsort((group_papers[top], -scores[top]))]  # best first; ties by library order
    ends = np.r_[starts[1:], len(rows)]
    picks: list[tuple[int, list[tuple[int, int, float]]]] = []
    for group in top:
        block = similarities[:, starts[group]:ends[group]]
        best = block.argmax(axis=1)
        pairs = sorted(((qi, int(rows[starts[group] + best[qi]]), float(block[qi, best[qi]]))
                        for qi in range(len(texts))), key=lambda p: -p[2])[:EVIDENCE_PAIRS]
        picks.append((int(group), pairs))
    wanted = sorted({int(loaded.sentence_ids[row]) for _, pairs in picks for _, row, _ in pairs})
    text_of = {r.id: r.text for r in library.store.sentences(wanted)}
    results = []
    for group, pairs in picks:
        paper = int(group_papers[group])
        evidence = [Evidence(texts[qi], text_of.get(int(loaded.sentence_ids[row]), ""), sim)
                    for qi, row, sim in pairs]
        results.append(SearchHit(loaded.paper_ids[paper], loaded.titles[paper], float(scores[group]),
                                 evidence))
    rank_seconds = time.perf_counter() - started
    return SearchResult(SearchQuery(query_id, query_title, facet, texts), results, candidates,
                        load_seconds, rank_seconds)
