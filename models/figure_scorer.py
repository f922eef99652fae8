"""The caption–text scorer of graphical-abstract suggestion (issue 14), run with onnxruntime.

A figure head is a small graph (``figures.onnx`` in a bundle, named by the manifest's
``context.graphs.figures``) on top of the content view: it maps a group's mean content vector
to a "text" vector (a paragraph that mentions a figure, or an abstract) and to a "caption"
vector; their cosine says how well the text and the caption match. It was trained
self-supervised on paragraphs that say "Figure N" and Figure N's caption
(``models.training.figure_head``).

A bundle without a figure head still scores: both sides are then the content view unchanged
(the untrained all-MiniLM-L6-v2 cosine), and :attr:`FigureScorer.trained` is False.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from core.errors import ModelError
from models.encoder import EncoderModel, create_session, l2_normalise, quiet_run

SIDES = ("text", "caption")
FIGURE_GRAPH_KEY = "figures"
OUTPUTS = {"text": "text_vector", "caption": "caption_vector"}
MAX_GROUP_SENTENCES = 8  # a caption or paragraph longer than this is cut (the first sentences carry it)


def unit_means(vectors: np.ndarray, groups: Sequence[Sequence[int]]) -> np.ndarray:
    """One L2-normalised mean per group of row indices (an empty group gives a zero row)."""
    out = np.zeros((len(groups), vectors.shape[1]), dtype=np.float32)
    for i, rows in enumerate(groups):
        if len(rows):
            out[i] = vectors[list(rows)].mean(axis=0)
    return l2_normalise(out)


def group_sentences(groups: Sequence[Sequence[str]]) -> tuple[list[str], list[list[int]]]:
    """The distinct sentences of all groups (each cut to :data:`MAX_GROUP_SENTENCES`) and, per
    group, the indices of its sentences in that list: every sentence is embedded once."""
    index: dict[str, int] = {}
    rows: list[list[int]] = []
    for group in groups:
        picked = [s for s in (t.strip() for t in group) if s][:MAX_GROUP_SENTENCES]
        rows.append([index.setdefault(s, len(index)) for s in picked])
    return list(index), rows


class FigureScorer:
    """:class:`core.model_api.CaptionScorer` over an :class:`EncoderModel`'s content view."""

    def __init__(self, model: EncoderModel, session: Any | None = None, lexical_weight: float = 0.0) -> None:
        self.model = model
        self.session = session
        self._lexical_weight = float(lexical_weight)

    @property
    def lexical_weight(self) -> float:
        return self._lexical_weight

    @property
    def trained(self) -> bool:
        return self.session is not None

    @property
    def scorer_id(self) -> str:
        suffix = "content view, no figure head"
        if self.trained:
            words = f" + {self._lexical_weight:g} x word overlap" if self._lexical_weight else ""
            suffix = f"figure head{words}"
        return f"{self.model.model_id} ({suffix})"

    def project(self, vectors: np.ndarray, side: str) -> np.ndarray:
        """Unit content vectors (n, d) -> unit vectors on ``side`` (unchanged without a head)."""
        if side not in SIDES:
            raise ValueError(f"unknown side {side!r}: use one of {', '.join(SIDES)}")
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if self.session is None or len(vectors) == 0:
            return l2_normalise(vectors) if len(vectors) else vectors
        try:
            (out,) = self.session.run([OUTPUTS[side]], {"content": vectors}, quiet_run())
        except Exception as error:  # onnxruntime raises its own exception types
            text = str(error).strip()
            raise ModelError(f"model bundle {self.model.bundle_dir}: its figure head failed to run "
                             f"({text.splitlines()[0] if text else type(error).__name__}); re-export or "
                             "reinstall the model") from None
        return l2_normalise(np.asarray(out, dtype=np.float32))

    def group_vectors(self, groups: Sequence[Sequence[str]], side: str) -> np.ndarray:
        """One unit vector per group of sentences on ``side`` (see the module docstring)."""
        sentences, rows = group_sentences(groups)
        content = self.model.embed(sentences, view="content") if sentences else np.zeros(
            (0, self.model.embedding_dim), dtype=np.float32)
        return self.project(unit_means(content, rows), side)


def load_figure_scorer(model: EncoderModel, *, device: str = "cpu",
                       threads: int | None = None) -> FigureScorer:
    """The model's figure scorer: its bundle's figure head when it has one, else the content view."""
    graph = dict(model.manifest.context.get("graphs", {})).get(FIGURE_GRAPH_KEY)
    if not graph:
        return FigureScorer(model)
    lexical_weight = float(dict(model.manifest.context.get("figures", {})).get("lexical_weight", 0.0))
    path = model.bundle_dir / str(graph)
    session = create_session(path, device, threads)
    names = {o.name for o in session.get_outputs()}  # type: ignore[attr-defined]
    missing = [name for name in OUTPUTS.values() if name not in names]
    if missing:
        raise ModelError(f"model bundle {model.bundle_dir}: {path.name} has no output(s) "
                         f"{', '.join(missing)}")
    return FigureScorer(model, session, lexical_weight)


def ranker_weights(model: EncoderModel) -> dict[str, float] | None:
    """The graphical-abstract ranking weights the bundle carries (fitted on the dev set), or None."""
    ranker = dict(dict(model.manifest.context.get("figures", {})).get("ranker", {}))
    weights = ranker.get("weights")
    return {str(k): float(v) for k, v in weights.items()} if weights else None
