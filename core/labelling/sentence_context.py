"""The context a single sentence is labelled in: its section kind and its neighbours (issue 24.6).

A sentence of a parsed paper is labelled with its whole section around it (``core.labelling.analysis``). A
draft sentence or a suggestion query used to reach the model alone, with no section kind, and the
role head reads a lone sentence of unknown kind as an abstract sentence. :class:`SentenceContext`
carries what context exists (the heading's section kind, the sentences before and after it in the
same section) and :func:`label_in_context` labels each sentence inside its own small document, so the
label shown for a draft sentence or a query is the in-context one.

``rhetorica eval functions --isolated`` measures what each part buys on the gold sets (alone, the
kind only, the neighbours only, both, the whole section).

No Qt, no models: the model is handed in (``core.model_api.RoleModel``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from core.document import Paper
    from core.model_api import DocumentEncodingLike, RoleModel
    from core.taxonomy.labels import FunctionPrediction, RolePrediction

# Sentences taken on each side of a query, within its section. `rhetorica eval functions --data gold
# --split dev --isolated --neighbours N` (0.6.0, 180 sentences; role accuracy / macro-F1): alone 53.9 /
# 43.7, kind only 62.2 / 49.6, the whole section 66.7 / 45.6; neighbours + kind with N = 1: 69.4 / 53.4,
# N = 2: 69.4 / 55.2, N = 3: 69.4 / 57.1. Two a side: the section's gain at five sentences a query.
QUERY_NEIGHBOURS = 2
# The kind a sentence with neighbours but no heading is read with (see SentenceContext.document).
NEIGHBOURS_WITHOUT_KIND = "other"


@dataclass(frozen=True)
class SentenceContext:
    """One sentence with the context it is labelled in: the sentences right before and after it in
    its section (reading order) and the section's kind (``None``: unknown, e.g. a draft before any
    heading)."""

    text: str
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    section_kind: str | None = None

    @property
    def position(self) -> int:
        """Where the sentence sits in :meth:`sentences`."""
        return len(self.before)

    def sentences(self) -> list[str]:
        return [*self.before, self.text, *self.after]

    def document(self) -> tuple[list[str], str | None]:
        """``(sentences, section kind)``: one document as ``RoleModel.encode_documents`` takes it.

        A sentence with neighbours but no known kind (a draft paragraph before any heading) is read as
        a body section of unnamed kind (:data:`NEIGHBOURS_WITHOUT_KIND`), not as an abstract: on the dev
        sets (`rhetorica eval functions --data gold|annotated --split dev --isolated`, model 0.7.2,
        row "neighbours, kind unknown") role accuracy 57.2 -> 64.4 (gold:dev) and 56.1 -> 66.1 (the
        annotated dev papers). A sentence alone keeps the unknown kind (there the change was -2.8 / +1.7)."""
        kind = self.section_kind
        if kind is None and (self.before or self.after):
            kind = NEIGHBOURS_WITHOUT_KIND
        return self.sentences(), kind

    def describe(self) -> str:
        """"with its heading (method) and 2+2 neighbours" (for tooltips and logs)."""
        parts = []
        if self.section_kind:
            parts.append(f"its heading ({self.section_kind})")
        if self.before or self.after:
            parts.append(f"{len(self.before)}+{len(self.after)} neighbouring sentences")
        return "with " + " and ".join(parts) if parts else "alone (no heading, no neighbours)"


def alone(text: str) -> SentenceContext:
    """A sentence with no context at all (what a query was before issue 24.6)."""
    return SentenceContext(text)


def context_in_paper(paper: Paper, index: int, neighbours: int | None = QUERY_NEIGHBOURS, *,
                     with_kind: bool = True) -> SentenceContext:
    """Sentence ``index`` of ``paper`` with up to ``neighbours`` sentences on each side from its own
    section and (``with_kind``) the section's kind. ``neighbours=None``: the sentence's whole run of its
    section, the document ``core.labelling.analysis`` reads it in (what a selected page sentence is read
    with when the paper's analysis is not there yet)."""
    sentences = paper.sentences
    sentence = sentences[index]
    section = sentence.section_index

    def same(k: int) -> bool:
        return 0 <= k < len(sentences) and sentences[k].section_index == section

    if neighbours is None:
        start, end = index, index + 1
        while same(start - 1):
            start -= 1
        while same(end):
            end += 1
        before = tuple(s.text for s in sentences[start:index])
        after = tuple(s.text for s in sentences[index + 1:end])
    else:
        before = tuple(sentences[k].text for k in range(index - neighbours, index) if same(k))
        after = tuple(sentences[k].text for k in range(index + 1, index + 1 + neighbours) if same(k))
    kind = None
    if with_kind and 0 <= section < len(paper.sections):
        kind = paper.sections[section].kind.value
    return SentenceContext(sentence.text, before, after, kind)


def encode_in_context(model: RoleModel, contexts: Sequence[SentenceContext], *, with_embeddings: bool = False,
                      with_function_vectors: bool = False) -> list[tuple[DocumentEncodingLike, int]]:
    """Each context encoded as one small document in one model call: (its encoding, the position of
    the sentence in it)."""
    encodings = model.encode_documents([c.document() for c in contexts], with_embeddings=with_embeddings,
                                       with_function_vectors=with_function_vectors)
    return [(encoding, context.position) for encoding, context in zip(encodings, contexts, strict=True)]


def label_in_context(model: RoleModel, contexts: Sequence[SentenceContext]
                     ) -> list[tuple[RolePrediction, FunctionPrediction | None]]:
    """The role (and function, ``None`` without a function head) of each context's sentence, labelled
    inside its context."""
    out: list[tuple[RolePrediction, FunctionPrediction | None]] = []
    for encoding, position in encode_in_context(model, contexts):
        functions = encoding.functions
        out.append((encoding.roles[position], functions[position] if functions is not None else None))
    return out


__all__ = ["QUERY_NEIGHBOURS", "SentenceContext", "alone", "context_in_paper", "encode_in_context",
           "label_in_context"]
