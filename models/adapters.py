"""Label adapters: a dataset's own label scheme read off a bundle's two outputs (numpy, no torch).

A bundle's role head speaks the six canonical roles.  Some datasets file sentences differently
(PMC-Sents-FULL puts introductions and discussions under one "other" label and keeps a separate
"background" label for sections so named), so a role cannot be mapped back to their labels one to
one.  A label adapter is a linear layer, trained jointly with the model
(``rhetorica train roles --adapter DATASET``), on

    features = [embedding_scale * sentence_embedding, role_logits - mean(role_logits)]

Centred role logits equal centred log-probabilities, so the adapter works from
``EncoderModel.encode_document`` output alone.  Weights live in ``adapters.npz`` (listed with its
sha256 in the manifest); labels and the feature recipe in ``manifest.context["adapters"]``.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import ModelError

ADAPTERS_FILE = "adapters.npz"


@dataclass(frozen=True)
class LabelAdapter:
    """Linear map from (embedding, role probabilities) to one dataset's labels."""

    dataset: str
    labels: tuple[str, ...]
    weight: np.ndarray  # [len(labels), embedding_dim + num_roles]
    bias: np.ndarray  # [len(labels)]
    embedding_scale: float

    def features(self, embeddings: np.ndarray, role_probabilities: np.ndarray) -> np.ndarray:
        log_p = np.log(np.maximum(np.asarray(role_probabilities, dtype=np.float64), 1e-30))
        centred = log_p - log_p.mean(axis=-1, keepdims=True)
        scaled = np.asarray(embeddings, dtype=np.float64) * self.embedding_scale
        return np.concatenate([scaled, centred], axis=-1)

    def logits(self, embeddings: np.ndarray, role_probabilities: np.ndarray) -> np.ndarray:
        """[n, len(labels)] scores from embeddings [n, d] and role probabilities [n, R]."""
        features = self.features(embeddings, role_probabilities)
        if features.shape[-1] != self.weight.shape[1]:
            raise ModelError(f"label adapter {self.dataset!r} expects {self.weight.shape[1]} features, "
                             f"got {features.shape[-1]}")
        return features @ self.weight.T + self.bias

    def predict(self, embeddings: np.ndarray, role_probabilities: np.ndarray) -> list[str]:
        if len(embeddings) == 0:
            return []
        return [self.labels[i] for i in self.logits(embeddings, role_probabilities).argmax(axis=-1)]


def write_adapters(bundle_dir: str | Path, adapters: list[LabelAdapter]) -> dict[str, Any]:
    """Write ``adapters.npz``; returns the manifest ``context["adapters"]`` entry."""
    arrays: dict[str, np.ndarray] = {}
    for adapter in adapters:
        arrays[f"{adapter.dataset}/weight"] = adapter.weight.astype(np.float32)
        arrays[f"{adapter.dataset}/bias"] = adapter.bias.astype(np.float32)
    with open(Path(bundle_dir) / ADAPTERS_FILE, "wb") as handle:
        np.savez(handle, allow_pickle=False, **arrays)
    return {a.dataset: {"labels": list(a.labels), "file": ADAPTERS_FILE, "embedding_scale": a.embedding_scale,
                        "features": "[embedding_scale * sentence_embedding, role_logits - mean(role_logits)]"}
            for a in adapters}


def load_adapters(bundle_dir: str | Path, described: dict[str, Any]) -> dict[str, LabelAdapter]:
    """The adapters ``manifest.context["adapters"]`` describes (files already sha256-checked)."""
    if not described:
        return {}
    path = Path(bundle_dir) / ADAPTERS_FILE
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: np.asarray(data[key]) for key in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        raise ModelError(f"cannot read label adapters {path}: {error}") from None
    out: dict[str, LabelAdapter] = {}
    for dataset, info in described.items():
        try:
            weight, bias = arrays[f"{dataset}/weight"], arrays[f"{dataset}/bias"]
        except KeyError:
            raise ModelError(f"{path} has no weights for the {dataset!r} adapter") from None
        labels = tuple(str(x) for x in info.get("labels", []))
        if weight.shape[0] != len(labels) or bias.shape != (len(labels),):
            raise ModelError(f"label adapter {dataset!r} in {path}: shapes do not match "
                             f"its {len(labels)} labels")
        out[dataset] = LabelAdapter(dataset, labels, weight.astype(np.float64), bias.astype(np.float64),
                                    float(info.get("embedding_scale", 1.0)))
    return out
