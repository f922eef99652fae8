"""How a suggestion query is read: its role, its function and its place in the function view.

A query typed in the draft is read by the model inside the context the draft lends (its heading and
neighbouring sentences, :func:`read_query`). A sentence selected on an open paper is read as the
inspector and the page overlay read it: from the paper's ONE embedded analysis
(:func:`reading_from_analysis`), so the Suggestions panel never names another function for the same
sentence, and no model run is needed. Without an embedded analysis yet, the sentence is read with its
whole section (``core.labelling.sentence_context.context_in_paper(..., neighbours=None)``): the same
document the analysis reads.

No Qt, no models: the model and the analysis are handed in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from core.document import Paper
    from core.labelling.analysis import PaperAnalysis
    from core.labelling.sentence_context import SentenceContext
    from core.model_api import DocumentEncodingLike, RoleModel
    from core.taxonomy.labels import FunctionPrediction, RolePrediction

FROM_ANALYSIS = "with its whole section, as the inspector reads it"


@dataclass(frozen=True)
class QueryReading:
    """The model's reading of one query sentence: what ``suggest`` searches and shows with."""

    text: str
    model_id: str
    role: RolePrediction
    function: FunctionPrediction | None  # None: the model has no function head
    function_vector: np.ndarray  # the query's place in the function view (L2-normalised)
    content_vector: np.ndarray | None  # the content view (None: not computed; only libraries need it)
    described: str  # "with its heading (method) and 2+2 neighbouring sentences", for the panel

    @property
    def function_label(self) -> str:
        return self.function.label if self.function is not None else ""


def read_query(model: RoleModel, context: SentenceContext, *, with_content: bool) -> QueryReading:
    """One model run over the query's context: its labels and both views of the query sentence."""
    (encoding,) = model.encode_documents([context.document()], with_embeddings=with_content,
                                         with_function_vectors=True)
    vectors = encoding.function_vectors
    if vectors is None or not len(vectors):  # a model without the function-vectors option
        vectors = model.embed(context.sentences(), view="function")
    return reading_at(encoding, context.position, context.text, model.model_id, context.describe(),
                      vectors=vectors, with_content=with_content)


def reading_at(encoding: DocumentEncodingLike, at: int, text: str, model_id: str, described: str, *,
               vectors: np.ndarray | None = None, with_content: bool = False) -> QueryReading:
    """Sentence ``at`` of one document's encoding as a reading (``vectors``: the function view, when not
    the encoding's own)."""
    functions = encoding.functions
    view = encoding.function_vectors if vectors is None else vectors
    assert view is not None
    return QueryReading(text, model_id, encoding.roles[at], functions[at] if functions is not None else None,
                        np.asarray(view[at]), np.asarray(encoding.embeddings[at]) if with_content else None,
                        described)


def reading_from_analysis(analysis: PaperAnalysis, index: int, text: str) -> QueryReading | None:
    """Sentence ``index`` as the paper's embedded analysis read it (None when the analysis has no
    vectors, or no such sentence)."""
    if not analysis.embedded or not 0 <= index < len(analysis.roles):
        return None
    assert analysis.function_vectors is not None and analysis.embeddings is not None
    functions = analysis.functions
    return QueryReading(text, analysis.model_id, analysis.roles[index],
                        functions[index] if functions is not None else None,
                        np.asarray(analysis.function_vectors[index]), np.asarray(analysis.embeddings[index]),
                        FROM_ANALYSIS)


def page_query(paper: Paper, analysis: PaperAnalysis | None, index: int
               ) -> tuple[str, SentenceContext, QueryReading | None]:
    """Sentence ``index`` of an open paper as a query: its text, its whole section (the document the
    paper's analysis reads it in) and, once the embedded analysis is there, that analysis's reading."""
    from core.labelling.sentence_context import context_in_paper

    text = paper.sentences[index].text
    reading = reading_from_analysis(analysis, index, text) if analysis is not None else None
    return text, context_in_paper(paper, index, neighbours=None), reading


__all__ = ["FROM_ANALYSIS", "QueryReading", "page_query", "read_query", "reading_at", "reading_from_analysis"]
