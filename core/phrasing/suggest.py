"""Phrasing suggestions: real sentences that do the same rhetorical job as the author's sentence.

``suggest(text, model, sources, k)``: the query's role and function (``core.phrasing.query_reading``: from the
model, labelled inside the context that exists when one is given, the draft's heading and neighbouring
sentences; for a sentence of an open paper, from the paper's own analysis, so the panel and the inspector
agree), then the
nearest sentences in each source's *function* view (what a sentence does, not what it is about),
merged, filtered (``function``, ``section_kind``), with the query itself and near-duplicates removed
and the rest diversified by maximal marginal relevance (MMR: each pick trades similarity to the query
against similarity to the picks so far); the picks are listed most similar first. Every suggestion
carries its source (corpus or library, paper id, a title a reader can use: the paper's own, or
``core.phrasing.source_titles``' label such as "CSAbstruct abstract #1399 (CS, train set)", never a bare
id, and its section) and, when a ``templater`` is given, the formulaic spans and a
template.

No Qt, no torch: the model and the sources are passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from core.phrasing.source_titles import source_title
from core.taxonomy.labels import UNCERTAIN_BELOW

if TYPE_CHECKING:  # pragma: no cover
    from core.labelling.sentence_context import SentenceContext
    from core.library.store import PaperRecord, SentenceRecord
    from core.model_api import RoleModel
    from core.phrasing.query_reading import QueryReading

DUPLICATE_SIMILARITY = 0.97  # content cosine above which two sentences count as the same wording
# The same, per view: a pack (no content view) judges wording in the function view, where two
# sentences doing the same job sit closer than in the content view, hence the higher bar.
DUPLICATE_LIMITS = {"content": DUPLICATE_SIMILARITY, "function": 0.99}
# Relevance added for agreeing with the query's labels (set by reasoning, not fitted): the function
# view alone confuses jobs it was not trained to tell apart well (P@1 about 0.25 on the gold set),
# while the role is right about four times in five on abstracts. A candidate the model gives the
# query's own function is the strongest evidence of the same job.
FILTERED_DEPTH = 8  # how many times further a filtered search looks
ROLE_BONUS = 0.05
MAX_K = 100  # suggestions per query at most: the search depth and the MMR loop grow with k
FUNCTION_BONUS = 0.10  # the "label" ranking's flat bonus (the default)
# The "confidence" ranking (measured in session 18, not the default): a candidate the model gives the query's
# function gets CONFIDENCE_BONUS x the model's confidence in that label, so confident examples of the function
# come first. It scored higher against hand labels on dev (`rhetorica eval suggest-labels`) but lower in a
# blind judgement of fresh queries (v7): it helps queries whose function the model reads right and hurts the
# others (docs/benchmarks.md, "A function bonus weighted by the candidate's own confidence").
CONFIDENCE_BONUS = 0.8
# The "gated" ranking: the confidence ranking for a query whose function the model reads with at least this
# probability (the app's "confident", core.taxonomy.labels.UNCERTAIN_BELOW), the label ranking otherwise. It
# too lost a blind judgement (v8: 47.9 % against 48.75 %); both stay for comparisons only.
CONFIDENT_QUERY = UNCERTAIN_BELOW
RANKINGS = ("label", "confidence", "gated")
Templater = Callable[[str], tuple[list[tuple[int, int]], str]]


class SentenceSource(Protocol):
    """What suggestions read: a :class:`core.library.library.Library` (the user's library, or a
    corpus built as one) or a :class:`core.library.pack.PackCorpus` (the shipped phrase corpus)."""

    duplicate_view: str  # the view near-duplicate wording is judged in

    def search(self, view: str, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]: ...
    def sentences(self, ids: Sequence[int]) -> list[SentenceRecord]: ...
    def vectors_of(self, ids: Sequence[int], view: str) -> np.ndarray: ...
    def paper(self, paper_id: str) -> PaperRecord | None: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class Source:
    """Where suggestions come from (an opened library or phrase-corpus pack), and its kind."""

    kind: str  # "corpus" or "library"
    library: SentenceSource


def open_source(kind: str, folder: str | Path, model: Any = None) -> Source:
    """A folder opened as what it holds: a phrase-corpus pack or a library (close it when done).
    With ``model`` (a loaded bundle), a pack built with another model's function view is refused."""
    from core.library.pack import PackCorpus, file_sha256, is_pack

    if is_pack(folder):
        pack = PackCorpus(folder)
        graph = Path(getattr(model, "bundle_dir", "")) / "model.onnx" if model is not None else None
        if graph is not None and graph.is_file():
            pack.check_model(file_sha256(graph))
        return Source(kind, pack)
    from core.library.library import Library

    return Source(kind, Library(folder))


def has_sentences(folder: str | Path) -> bool:
    """True when ``folder`` holds a phrase-corpus pack or a library database."""
    from core.library.pack import is_pack
    from core.library.store import DATABASE_NAME

    return is_pack(folder) or (Path(folder) / DATABASE_NAME).is_file()


@dataclass
class Suggestion:
    text: str
    source: dict[str, str]  # kind, paper_id, title, section
    similarity: float
    role: str
    function: str
    spans: list[tuple[int, int]] = field(default_factory=list)
    template: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["similarity"] = round(self.similarity, 4)
        data["spans"] = [list(span) for span in self.spans]
        return data


@dataclass
class SuggestionResult:
    # text, role, function; with a model: "role_text" (core.taxonomy.labels.role_text: "uncertain: method
    # (0.41) or
    # result (0.35)" below core.taxonomy.labels.UNCERTAIN_BELOW) and "context" (what the query was labelled
    # with)
    query: dict[str, str]
    suggestions: list[Suggestion]

    def to_dict(self) -> dict[str, Any]:
        return {"query": dict(self.query), "suggestions": [s.to_dict() for s in self.suggestions]}


def mmr(query: np.ndarray, candidates: np.ndarray, k: int, trade_off: float = 0.7,
        bonus: np.ndarray | None = None) -> list[int]:
    """Indices of ``k`` candidates picked by maximal marginal relevance (``trade_off`` = weight of
    the similarity to the query, plus ``bonus`` per candidate; the rest penalises similarity to
    what was picked already)."""
    if len(candidates) == 0:
        return []
    relevance = candidates @ query
    if bonus is not None:
        relevance = relevance + bonus
    picked: list[int] = []
    redundancy = np.full(len(candidates), -np.inf)
    for _ in range(min(k, len(candidates))):
        score = trade_off * relevance - (1 - trade_off) * np.where(np.isinf(redundancy), 0.0, redundancy)
        score[picked] = -np.inf
        best = int(np.argmax(score))
        picked.append(best)
        redundancy = np.maximum(redundancy, candidates @ candidates[best])
    return picked


def _usable(reading: QueryReading | None, text: str, model: RoleModel, needs_content: bool) -> bool:
    """Whether a reading handed in stands for this query and model (else the model reads it)."""
    return (reading is not None and _normalise(reading.text) == _normalise(text)
            and reading.model_id == model.model_id
            and (reading.content_vector is not None or not needs_content))


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())


def suggest(text: str, model: RoleModel, sources: Sequence[Source], k: int = 10, *,
            function: str | None = None, section_kind: str | None = None,
            templater: Templater | None = None, pool: int = 8,
            context: SentenceContext | None = None, reading: QueryReading | None = None,
            ranking: str = "label") -> SuggestionResult:
    """Up to ``k`` diverse sentences from ``sources`` doing the same job as ``text`` (``k`` is clamped
    to 1..``MAX_K``, so no caller can make the search run over the whole corpus).

    ``context`` (its ``text`` is ``text``'s): the heading's section kind and the neighbouring sentences
    the query's role and function are read with (``section_kind`` is a filter on the suggestions, not
    the query's kind). Without it the query is labelled alone, kind unknown. ``reading`` (a sentence of
    an open paper: ``core.phrasing.query_reading.reading_from_analysis``) is used instead of a model run
    when it is of ``text`` by this model and carries what the sources need. ``ranking`` (:data:`RANKINGS`):
    "label" (the default: a flat bonus for the query's function), "confidence" (the bonus scaled by the
    candidate's own function confidence) or "gated" (confidence for a query read with p >=
    :data:`CONFIDENT_QUERY`)."""
    from core.labelling.sentence_context import SentenceContext
    from core.phrasing.query_reading import read_query
    from core.taxonomy.labels import role_text

    if ranking not in RANKINGS:
        raise ValueError(f"unknown ranking {ranking!r}: use one of {', '.join(RANKINGS)}")
    k = min(max(int(k), 1), MAX_K)
    # The content view only when a source judges duplicates in it (a library; a pack has none).
    needs_content = any(source.library.duplicate_view == "content" for source in sources)
    if not _usable(reading, text, model, needs_content):
        if context is None or _normalise(context.text) != _normalise(text):
            context = SentenceContext(text)
        reading = read_query(model, context, with_content=needs_content)
    assert reading is not None
    role = reading.role.label
    predicted = reading.function_label
    query_function = reading.function_vector
    query_content = reading.content_vector
    query = {"text": text, "role": role, "function": predicted, "role_text": role_text(reading.role),
             "context": reading.described}
    candidates: list[tuple[Source, int, float]] = []
    for source in sources:
        # A filter throws most neighbours away: look further so that rare matches still come back.
        depth = k * pool * (FILTERED_DEPTH if function is not None or section_kind is not None else 1)
        ids, scores = source.library.search("function", query_function, depth)
        candidates.extend((source, int(i), float(s)) for i, s in zip(ids[0], scores[0]))
    rows: list[tuple[Source, Any, float]] = []
    for source in sources:
        chosen = [(i, s) for src, i, s in candidates if src is source]
        records = source.library.sentences([i for i, _ in chosen])
        by_id = {r.id: r for r in records}
        rows.extend((source, by_id[i], s) for i, s in chosen if i in by_id)
    query_key = _normalise(text)
    rows = [(src, r, s) for src, r, s in rows
            if _normalise(r.text) != query_key
            and (function is None or r.function == function)
            and (section_kind is None or r.section_kind == section_kind)]
    if not rows:
        return SuggestionResult(query, [])
    function_vectors = _vectors(rows, "function")
    # Near-identical wording (the query's, or an earlier pick's) is no suggestion: judged in each
    # source's duplicate view (content for a library; function for a pack, which has no content).
    duplicate_vectors, duplicate_limits = _duplicate_vectors(rows)
    query_views = {"function": query_function}
    if query_content is not None:
        query_views["content"] = query_content
    keep = [i for i in range(len(rows))
            if float(_padded(query_views[rows[i][0].library.duplicate_view], duplicate_vectors.shape[1])
                     @ duplicate_vectors[i]) < duplicate_limits[i]]
    rows = [rows[i] for i in keep]
    function_vectors, duplicate_vectors = function_vectors[keep], duplicate_vectors[keep]
    duplicate_limits = duplicate_limits[keep]
    picked: list[int] = []
    if ranking == "gated":
        confident = reading.function is not None and reading.function.confidence >= CONFIDENT_QUERY
        ranking = "confidence" if confident else "label"
    agreement = np.array([ROLE_BONUS * (record.role == role) + _function_bonus(record, predicted, ranking)
                          for _, record, _ in rows], dtype=np.float32)
    for index in mmr(query_function, function_vectors, len(rows), bonus=agreement):
        duplicate = any(rows[index][0].library.duplicate_view == rows[j][0].library.duplicate_view
                        and float(duplicate_vectors[index] @ duplicate_vectors[j]) >= duplicate_limits[index]
                        for j in picked)
        if not duplicate:
            picked.append(index)
        if len(picked) == k:
            break
    suggestions = []
    # MMR chose which sentences (diverse, agreeing with the query's labels); the reader sees them most
    # similar first, so the similarity shown goes down the list
    for index in sorted(picked, key=lambda i: -rows[i][2]):
        source, record, similarity = rows[index]
        paper = source.library.paper(record.paper_id)
        spans, template = templater(record.text) if templater is not None else ([], "")
        title = source_title(paper, record.paper_id, source.kind)
        suggestions.append(Suggestion(
            record.text, {"kind": source.kind, "paper_id": record.paper_id, "title": title,
                          "section": record.section},
            similarity, record.role, record.function, spans, template))
    return SuggestionResult(query, suggestions)


def _function_bonus(record: SentenceRecord, predicted: str, ranking: str) -> float:
    """Relevance added to a candidate that the model gives the query's function ("none": nothing)."""
    if predicted in ("", "none") or record.function != predicted:
        return 0.0
    return CONFIDENCE_BONUS * float(record.function_confidence) if ranking == "confidence" else FUNCTION_BONUS


def _duplicate_vectors(rows: Sequence[tuple[Source, Any, float]]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's vector in its source's duplicate view (zero-padded to one width) and the cosine
    at or above which two sentences count as the same wording in that view."""
    views = sorted({row[0].library.duplicate_view for row in rows})
    blocks = {view: _vectors([r for r in rows if r[0].library.duplicate_view == view], view)
              for view in views}
    matrix = np.zeros((len(rows), max(b.shape[1] for b in blocks.values())), dtype=np.float32)
    limits = np.zeros(len(rows), dtype=np.float32)
    for view, block in blocks.items():
        positions = [i for i, r in enumerate(rows) if r[0].library.duplicate_view == view]
        matrix[positions, : block.shape[1]] = block
        limits[positions] = DUPLICATE_LIMITS[view]
    return matrix, limits


def _padded(vector: np.ndarray, width: int) -> np.ndarray:
    out = np.zeros(width, dtype=np.float32)
    out[: min(width, len(vector))] = vector[:width]
    return out


def _vectors(rows: Sequence[tuple[Source, Any, float]], view: str) -> np.ndarray:
    """The stored ``view`` vectors of ``rows`` (normalised), in order: one query per source."""
    out = np.zeros((len(rows), 0), dtype=np.float32)
    for source in {id(src): src for src, _, _ in rows}.values():
        positions = [i for i, (src, _, _) in enumerate(rows) if src is source]
        found = source.library.vectors_of([rows[i][1].id for i in positions], view)
        if out.shape[1] == 0:
            out = np.zeros((len(rows), found.shape[1]), dtype=np.float32)
        out[positions] = found
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
