"""A paper's vectors read from its embedded analysis, behind the model's ``embed`` call (no Qt).

Code that embeds texts of the open paper through ``model.embed`` (the figure scorer embeds the title,
the abstract, the sentences that mention a figure and the caption sentences) gets the rows of the
paper's embedded analysis instead (:class:`AnalysisVectors`): the model runs only on a text the
analysis does not hold, and :attr:`AnalysisVectors.misses` counts those.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.errors import ModelError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from core.document import Paper
    from core.labelling.analysis import PaperAnalysis
    from core.model_api import RoleModel


class AnalysisVectors:
    """``embed(texts, view=)`` answered from ``analysis`` (both views of the sentences, the content
    view of the figure texts); texts it lacks are embedded by ``model``."""

    def __init__(self, model: RoleModel, paper: Paper, analysis: PaperAnalysis) -> None:
        if not analysis.embedded or len(analysis.roles) != len(paper.sentences):
            raise ModelError("the paper's analysis has no vectors for every sentence")
        assert analysis.embeddings is not None and analysis.function_vectors is not None
        assert analysis.figure_vectors is not None
        self.model = model
        self.misses = 0  # texts that went to the model
        texts = [s.text.strip() for s in paper.sentences]
        self._rows: dict[str, dict[str, np.ndarray]] = {
            "content": {**dict(zip(analysis.figure_texts, analysis.figure_vectors, strict=True)),
                        **dict(zip(texts, analysis.embeddings, strict=True))},
            "function": dict(zip(texts, analysis.function_vectors, strict=True)),
        }

    @property
    def model_id(self) -> str:
        return self.model.model_id

    @property
    def provider(self) -> str:
        return self.model.provider

    @property
    def embedding_dim(self) -> int:
        return self.model.embedding_dim

    def embed(self, sentences: Sequence[str], batch_size: int | None = None,
              view: str = "content") -> np.ndarray:
        """The rows of ``sentences`` (stripped) in ``view``, in the order given."""
        import numpy as np

        table = self._rows.get(view)
        if table is None:
            return self.model.embed(sentences, batch_size, view=view)
        keys = [s.strip() for s in sentences]
        missing = list(dict.fromkeys(k for k in keys if k not in table))
        if missing:
            self.misses += len(missing)
            fresh = self.model.embed(missing, batch_size, view=view)
            table = {**table, **dict(zip(missing, fresh, strict=True))}
        if not keys:
            return self.model.embed([], batch_size, view=view)
        return np.stack([table[k] for k in keys]).astype(np.float32, copy=False)


__all__ = ["AnalysisVectors"]
