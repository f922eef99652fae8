"""Rhetorica models: the ONNX runtime encoder and heads (no torch here).

Stable API::

    from models import load_model
    m = load_model()            # bundled default (resources/models/default)
    m.embed(sentences)          # (n, d) float32, L2-normalised
    m.classify_roles(sentences) # one document's sentences in order -> list[RolePrediction]

Training lives in :mod:`models.training` and is the only place torch is imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from core.privacy import disable_runtime_telemetry
from core.taxonomy.labels import ROLES, RolePrediction

if TYPE_CHECKING:
    from models.encoder import EncoderModel

__all__ = ["ROLES", "RolePrediction", "load_model"]

disable_runtime_telemetry()  # before anything imports onnxruntime (core/privacy.py)


def load_model(path: str | Path | None = None, *, device: str = "auto",
               threads: int | None = None) -> EncoderModel:
    """Load a model bundle (the bundled default when ``path`` is None); see :mod:`models.encoder`."""
    from models.encoder import load_model as _load

    return _load(path, device=device, threads=threads)
