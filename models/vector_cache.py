"""Sentence vectors of one bundle cached on disk by sentence text (float16, ``.npz``).

Training runs that keep the encoder frozen (the body head, the figure head) encode each corpus
sentence once and train on the cached vectors; the cache belongs to one model id and starts
empty for any other, and is saved after every chunk so an interrupted run resumes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


class FeatureCache:
    """Sentence vectors of one bundle, by sentence text (float16 on disk, ``.npz``)."""

    def __init__(self, path: Path, model_id: str) -> None:
        self.path = path
        self.model_id = model_id
        self.rows: dict[str, int] = {}
        self.vectors = np.zeros((0, 0), dtype=np.float16)
        if path.is_file():
            data = np.load(path, allow_pickle=False)
            if str(data["model_id"]) == model_id:
                self.rows = {str(k): i for i, k in enumerate(data["keys"])}
                self.vectors = data["vectors"]

    def missing(self, texts: Iterable[str]) -> list[str]:
        seen: set[str] = set()
        out = []
        for text in texts:
            key = text_key(text)
            if key not in self.rows and key not in seen:
                seen.add(key)
                out.append(text)
        return out

    def add(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        start = len(self.rows)
        for i, text in enumerate(texts):
            self.rows[text_key(text)] = start + i
        block = vectors.astype(np.float16)
        self.vectors = block if self.vectors.size == 0 else np.concatenate([self.vectors, block])

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(sorted(self.rows, key=self.rows.__getitem__))
        tmp = self.path.with_name(self.path.stem + ".tmp.npz")
        np.savez(tmp, keys=keys, vectors=self.vectors, model_id=np.array(self.model_id))
        tmp.replace(self.path)

    def of(self, texts: Sequence[str]) -> np.ndarray:
        return self.vectors[[self.rows[text_key(t)] for t in texts]].astype(np.float32)
