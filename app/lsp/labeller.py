"""Role and function of each sentence of a document, paragraph by paragraph, with a cache.

Each paragraph (:func:`app.lsp.drafts.paragraphs`) is one document for the model, with its heading's
section kind, as the draft pane labels the sentences under one heading: the neighbours and the kind
both count. The labels of a paragraph are cached under a hash of its section kind and its sentences'
text, so after an edit only the paragraphs whose text changed reach the model (in one
``encode_documents`` call); every other paragraph, wherever it moved, is a cache hit. The cache is
bounded (least recently used paragraphs go first) and belongs to one model.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from app.lsp.drafts import Document
    from core.model_api import RoleModel
    from core.taxonomy.labels import FunctionPrediction, RolePrediction

CACHE_PARAGRAPHS = 20_000


@dataclass(frozen=True)
class SentenceLabel:
    role: RolePrediction
    function: FunctionPrediction | None  # None: the model has no function head


@dataclass(frozen=True)
class LabelRun:
    """The labels of one document version, in sentence order, and what it cost."""

    labels: tuple[SentenceLabel, ...]
    paragraphs: int
    relabelled: int  # paragraphs that went through the model (cache misses)
    seconds: float


def paragraph_key(kind: str | None, texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    digest.update((kind or "").encode("utf-8"))
    for text in texts:
        digest.update(b"\x00" + text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


class ParagraphLabeller:
    """Labels documents with ``model``, re-labelling only paragraphs it has not seen."""

    def __init__(self, model: RoleModel, capacity: int = CACHE_PARAGRAPHS) -> None:
        self.model = model
        self.capacity = capacity
        self._cache: OrderedDict[str, tuple[SentenceLabel, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._cache)

    def label(self, document: Document) -> LabelRun:
        started = time.perf_counter()
        sentences = document.sentences
        keys: list[str] = []
        documents: dict[str, tuple[list[str], str | None]] = {}
        with self._lock:
            for first, end in document.paragraphs:
                texts = [s.text for s in sentences[first:end]]
                kind = sentences[first].section_kind
                key = paragraph_key(kind, texts)
                keys.append(key)
                if key in self._cache:
                    self._cache.move_to_end(key)
                else:
                    documents[key] = (texts, kind)
        fresh = self._run_model(documents)
        with self._lock:
            self._cache.update(fresh)
            labels: list[SentenceLabel] = []
            for key in keys:
                labels.extend(fresh[key] if key in fresh else self._cache[key])
            while len(self._cache) > self.capacity:
                self._cache.popitem(last=False)
        return LabelRun(tuple(labels), len(keys), len(documents), time.perf_counter() - started)

    def _run_model(self, documents: dict[str, tuple[list[str], str | None]]
                   ) -> dict[str, tuple[SentenceLabel, ...]]:
        if not documents:
            return {}
        keys = list(documents)
        encodings = self.model.encode_documents([documents[k] for k in keys], with_embeddings=False)
        out = {}
        for key, encoding in zip(keys, encodings, strict=True):
            functions = encoding.functions
            out[key] = tuple(SentenceLabel(role, functions[n] if functions is not None else None)
                             for n, role in enumerate(encoding.roles))
        return out
