"""What ``core`` needs of a loaded model, as a :class:`typing.Protocol`.

``core`` never imports ``models``: the analysis pipeline and the GUI type the model they
are handed against :class:`RoleModel`; :class:`models.encoder.EncoderModel` satisfies it
(``tests/test_boundaries.py`` checks that).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from core.jobs import JobContext
from core.taxonomy.labels import FunctionPrediction, RolePrediction

if TYPE_CHECKING:  # numpy stays off the GUI's start-up path
    import numpy as np


class DocumentEncodingLike(Protocol):
    """Both outputs of one run over a document (see ``models.encoder.DocumentEncoding``)."""

    @property
    def embeddings(self) -> np.ndarray: ...  # (n, d) float32, L2-normalised

    @property
    def roles(self) -> list[RolePrediction]: ...

    @property
    def functions(self) -> list[FunctionPrediction] | None: ...  # None: the model has no function head

    # The function view (n, k) when asked for (encode_documents(with_function_vectors=True)).
    function_vectors: np.ndarray | None


class StagedEncodingLike(Protocol):
    """Labels now, the content view later, from ONE sentence-graph run
    (``models.encoder.StagedEncoding``): ``encodings`` (their embeddings are zeros until then) and
    ``content()``, the content view (n, d) of every sentence of the documents in their order."""

    @property
    def encodings(self) -> Sequence[DocumentEncodingLike]: ...

    def content(self) -> np.ndarray: ...


@runtime_checkable
class RoleModel(Protocol):
    """A loaded sentence encoder with a role head."""

    @property
    def model_id(self) -> str: ...

    @property
    def provider(self) -> str: ...

    @property
    def embedding_dim(self) -> int: ...

    def embed(self, sentences: Sequence[str], batch_size: int | None = None,
              view: str = "content") -> np.ndarray: ...

    def classify_roles(self, sentences: Sequence[str],
                       section_kinds: Sequence[str] | str | None = None) -> list[RolePrediction]: ...

    def encode_document(self, sentences: Sequence[str],
                        section_kinds: Sequence[str] | str | None = None) -> DocumentEncodingLike: ...

    # ``ctx``: cancellation checked between the model's batches (a long document stops within one).
    def encode_documents(self, documents: Sequence[tuple[Sequence[str], Sequence[str] | str | None]],
                         with_embeddings: bool = True,
                         with_function_vectors: bool = False, *,
                         ctx: JobContext | None = None) -> Sequence[DocumentEncodingLike]: ...

    def encode_documents_staged(self, documents: Sequence[tuple[Sequence[str], Sequence[str] | str | None]],
                                with_function_vectors: bool = False) -> StagedEncodingLike: ...


__all__ = ["DocumentEncodingLike", "RoleModel", "StagedEncodingLike"]


@runtime_checkable
class CaptionScorer(Protocol):
    """Vectors for caption–text matching (issue 14, ``models.figure_scorer``).

    ``group_vectors`` turns each group of sentences (a caption's sentences, an abstract, the
    sentences that mention a figure) into one L2-normalised vector on the given side: "text"
    for the paragraph/abstract side, "caption" for the caption side. The cosine of a text
    vector and a caption vector, plus ``lexical_weight`` times their word overlap
    (``core.phrasing.lexical.tfidf_similarity``), is the match score. ``trained`` is False when the model has
    no figure head and the vectors are the content view unchanged (the untrained baseline).
    """

    @property
    def trained(self) -> bool: ...

    @property
    def scorer_id(self) -> str: ...

    @property
    # weight of word overlap (core.phrasing.lexical) added to the cosine
    def lexical_weight(self) -> float: ...

    def group_vectors(self, groups: Sequence[Sequence[str]], side: str) -> np.ndarray: ...
