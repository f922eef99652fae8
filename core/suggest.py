"""Phrasing suggestions: real sentences that do the same rhetorical job as the author's sentence.

``suggest(text, model, sources, k)``: the query's role and function (from the model), then the
nearest sentences in each source's *function* view (what a sentence does, not what it is about),
merged, filtered (``function``, ``section_kind``), with the query itself and near-duplicates removed
and the rest diversified by maximal marginal relevance (MMR: each pick trades similarity to the query
against similarity to the picks so far). Every suggestion carries its source (corpus or library,
paper id, title, section) and, when a ``templater`` is given, the formulaic spans and a template.

No Qt, no torch: the model and the sources are passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from core.library.library import Library
    from core.model_api import RoleModel

DUPLICATE_SIMILARITY = 0.97  # content cosine above which two sentences count as the same wording
Templater = Callable[[str], tuple[list[tuple[int, int]], str]]


@dataclass(frozen=True)
class Source:
    """Where suggestions come from: a library folder opened as :class:`Library`, and its kind."""

    kind: str  # "corpus" or "library"
    library: Library


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
    query: dict[str, str]  # text, role, function
    suggestions: list[Suggestion]

    def to_dict(self) -> dict[str, Any]:
        return {"query": dict(self.query), "suggestions": [s.to_dict() for s in self.suggestions]}


def mmr(query: np.ndarray, candidates: np.ndarray, k: int, trade_off: float = 0.7) -> list[int]:
    """Indices of ``k`` candidates picked by maximal marginal relevance (``trade_off`` = weight of
    the similarity to the query; the rest penalises similarity to what was picked already)."""
    if len(candidates) == 0:
        return []
    relevance = candidates @ query
    picked: list[int] = []
    redundancy = np.full(len(candidates), -np.inf)
    for _ in range(min(k, len(candidates))):
        score = trade_off * relevance - (1 - trade_off) * np.where(np.isinf(redundancy), 0.0, redundancy)
        score[picked] = -np.inf
        best = int(np.argmax(score))
        picked.append(best)
        redundancy = np.maximum(redundancy, candidates @ candidates[best])
    return picked


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())


def suggest(text: str, model: RoleModel, sources: Sequence[Source], k: int = 10, *,
            function: str | None = None, section_kind: str | None = None,
            templater: Templater | None = None, pool: int = 8) -> SuggestionResult:
    """Up to ``k`` diverse sentences from ``sources`` doing the same job as ``text``."""
    encoding = model.encode_document([text])
    role = encoding.roles[0].label
    predicted = encoding.functions[0].label if encoding.functions else ""
    query_function = model.embed([text], view="function")[0]
    query_content = encoding.embeddings[0]
    candidates: list[tuple[Source, int, float]] = []
    for source in sources:
        ids, scores = source.library.search("function", query_function, k * pool)
        candidates.extend((source, int(i), float(s)) for i, s in zip(ids[0], scores[0]))
    rows: list[tuple[Source, Any, float]] = []
    for source in sources:
        chosen = [(i, s) for src, i, s in candidates if src is source]
        records = source.library.store.sentences([i for i, _ in chosen])
        by_id = {r.id: r for r in records}
        rows.extend((source, by_id[i], s) for i, s in chosen if i in by_id)
    query_key = _normalise(text)
    rows = [(src, r, s) for src, r, s in rows
            if _normalise(r.text) != query_key
            and (function is None or r.function == function)
            and (section_kind is None or r.section_kind == section_kind)]
    if not rows:
        return SuggestionResult({"text": text, "role": role, "function": predicted}, [])
    function_vectors = _vectors(rows, "function")
    content_vectors = _vectors(rows, "content")
    # The same wording as the query (near-identical content) is not a suggestion either.
    keep = [i for i in range(len(rows)) if float(content_vectors[i] @ query_content) < DUPLICATE_SIMILARITY]
    rows = [rows[i] for i in keep]
    function_vectors, content_vectors = function_vectors[keep], content_vectors[keep]
    picked: list[int] = []
    for index in mmr(query_function, function_vectors, len(rows)):
        duplicate = any(float(content_vectors[index] @ content_vectors[j]) >= DUPLICATE_SIMILARITY
                        for j in picked)
        if not duplicate:
            picked.append(index)
        if len(picked) == k:
            break
    suggestions = []
    for index in picked:
        source, record, similarity = rows[index]
        paper = source.library.store.paper(record.paper_id)
        spans, template = templater(record.text) if templater is not None else ([], "")
        suggestions.append(Suggestion(
            record.text, {"kind": source.kind, "paper_id": record.paper_id,
                          "title": paper.title if paper else "", "section": record.section},
            similarity, record.role, record.function, spans, template))
    return SuggestionResult({"text": text, "role": role, "function": predicted}, suggestions)


def _vectors(rows: Sequence[tuple[Source, Any, float]], view: str) -> np.ndarray:
    """The stored ``view`` vectors of ``rows`` (normalised), in order: one query per source."""
    out = np.zeros((len(rows), 0), dtype=np.float32)
    for source in {id(src): src for src, _, _ in rows}.values():
        positions = [i for i, (src, _, _) in enumerate(rows) if src is source]
        found = source.library.store.vectors_of([rows[i][1].id for i in positions], view)
        if out.shape[1] == 0:
            out = np.zeros((len(rows), found.shape[1]), dtype=np.float32)
        out[positions] = found
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
