"""Whether a sentence has a communicative function at all, read from its words (numpy, no torch; session 20).

A sentence's label is "none" when no function of the taxonomy fits it: a technical detail of a method, a
heading caught as a sentence, an affiliation. Until session 20 the runtime decided it with one threshold on
the best function's probability, and that probability separates "none" from the rest poorly (ROC AUC 0.65 on
the annotated dev papers): the encoder is sure of *a* function even for a sentence that has none. The words
say more (AUC 0.83): a logistic regression on the sentence's word 1–2-grams (TF-IDF, sublinear,
L2-normalised; numbers folded to "0") plus its section kind, fitted on the hand "none" labels of the
annotated corpus (``models/training/none_detector.py``, ``rhetorica train none-detector``). The runtime
says "none" where

    log p_none(words, kind) − w · log p(best function) > t

(an unsure best function, low p, argues for "none" too)
with ``w`` and ``t`` chosen on dev for function accuracy; this replaces the bundle's "none" threshold. The
weights live in ``none_detector.npz`` (listed with its sha256 in the manifest, read without pickle); ``w``,
``t`` and the bias in ``manifest.context["functions"]["none_detector"]``. A bundle without it keeps the
threshold. A sentence of unknown section kind (a query read alone) gets no kind term (the detector was fitted
with the kind dropped for part of its sentences).
"""

from __future__ import annotations

import itertools
import math
import re
import zipfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import ModelError

NONE_DETECTOR_FILE = "none_detector.npz"
_TOKEN = re.compile(r"\w+|[^\w\s]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
KIND_PREFIX = "kind="


def terms(text: str, kind: str | None = None) -> list[str]:
    """The terms the detector reads: lower-cased word and punctuation tokens (numbers folded to "0"), their
    adjacent pairs, and ``kind=KIND`` when the section kind is known."""
    tokens = _TOKEN.findall(_NUMBER.sub(" 0 ", text.lower()))
    out = tokens + [f"{a} {b}" for a, b in itertools.pairwise(tokens)]
    if kind and kind != "unknown":
        out.append(KIND_PREFIX + kind)
    return out


@dataclass(frozen=True)
class NoneDetector:
    """The fitted detector: vocabulary, IDF and weight per term, bias, and the decision's ``w`` and ``t``."""

    vocabulary: tuple[str, ...]
    idf: np.ndarray  # (V,) float32
    weight: np.ndarray  # (V,) float32
    bias: float
    best_weight: float = 1.0  # w: how much the best function's probability argues against "none"
    threshold: float = 0.0  # t
    _index: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (len(self.vocabulary) == len(self.idf) == len(self.weight)):
            raise ModelError("none detector: vocabulary, idf and weight differ in length")
        self._index.update({term: i for i, term in enumerate(self.vocabulary)})

    def term_row(self, term_list: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The TF-IDF row of a sentence's terms as (term indices, float64 values), L2-normalised (empty: no
        known term); training reads these rows too."""
        counts = Counter(i for i in map(self._index.get, term_list) if i is not None)
        if not counts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        columns = np.fromiter(counts, dtype=np.int64, count=len(counts))
        values = np.array([1.0 + math.log(counts[i]) for i in columns], dtype=np.float64) * self.idf[columns]
        return columns, values / max(float(np.linalg.norm(values)), 1e-12)

    def features(self, text: str, kind: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The sentence's TF-IDF row (:meth:`term_row` of :func:`terms`), values as float32."""
        columns, values = self.term_row(terms(text, kind))
        return columns, values.astype(np.float32)

    def log_p_none(self, texts: Sequence[str], kinds: Sequence[str | None]) -> np.ndarray:
        """(n,) log p_none of each sentence from its words and section kind."""
        scores = np.empty(len(texts), dtype=np.float64)
        for row, (text, kind) in enumerate(zip(texts, kinds, strict=True)):
            columns, values = self.features(text, kind)
            scores[row] = self.bias + float(values @ self.weight[columns])
        return -np.logaddexp(0.0, -scores)  # log sigmoid

    def decide(self, log_p_none: np.ndarray, function_probabilities: np.ndarray) -> np.ndarray:
        """(n,) True where the label is "none", given the detector's log p_none and the (n, F) function
        probabilities the runtime shows."""
        if not len(log_p_none):
            return np.zeros(0, dtype=bool)
        best = np.log(np.maximum(np.asarray(function_probabilities, dtype=np.float64).max(-1), 1e-12))
        return np.asarray(log_p_none - self.best_weight * best > self.threshold)

    def none(self, texts: Sequence[str], kinds: Sequence[str | None],
             function_probabilities: np.ndarray) -> np.ndarray:
        """:meth:`decide` on the sentences' own words."""
        return self.decide(self.log_p_none(texts, kinds), function_probabilities)


def write_none_detector(bundle_dir: str | Path, detector: NoneDetector, extra: Mapping[str, Any] | None = None
                        ) -> dict[str, Any]:
    """Write ``none_detector.npz``; returns its record (``context["functions"]["none_detector"]``)."""
    with open(Path(bundle_dir) / NONE_DETECTOR_FILE, "wb") as handle:
        np.savez_compressed(handle, vocabulary=np.frombuffer("\n".join(detector.vocabulary).encode("utf-8"),
                                                            dtype=np.uint8),
                            idf=detector.idf.astype(np.float32), weight=detector.weight.astype(np.float32))
    return {"file": NONE_DETECTOR_FILE, "bias": detector.bias, "best_weight": detector.best_weight,
            "threshold": detector.threshold, "terms": "word 1-2-grams (numbers as 0) + kind=KIND; tf-idf, "
            "sublinear, L2", **dict(extra or {})}


def load_none_detector(bundle_dir: str | Path, record: Mapping[str, Any]) -> NoneDetector:
    """The detector a manifest record describes (its file already sha256-checked), or ModelError."""
    if record.get("file", NONE_DETECTOR_FILE) != NONE_DETECTOR_FILE:
        raise ModelError(f"{bundle_dir}: the none detector must be {NONE_DETECTOR_FILE}, "
                         f"not {record.get('file')!r}")
    path = Path(bundle_dir) / NONE_DETECTOR_FILE
    try:
        with np.load(path, allow_pickle=False) as data:
            blob = np.asarray(data["vocabulary"])
            if blob.dtype != np.uint8:
                raise ValueError("the vocabulary is not UTF-8 bytes")
            vocabulary = tuple(blob.tobytes().decode("utf-8").split("\n")) if blob.size else ()
            idf = np.asarray(data["idf"], dtype=np.float32)
            weight = np.asarray(data["weight"], dtype=np.float32)
        numbers = [float(record[key]) for key in ("bias", "best_weight", "threshold")]
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as error:
        raise ModelError(f"{path}: unreadable none detector ({error})") from None
    finite = np.isfinite(weight).all() and np.isfinite(idf).all()
    if not all(math.isfinite(x) for x in numbers) or not finite:
        raise ModelError(f"{path}: the none detector holds a number that is not finite")
    return NoneDetector(vocabulary, idf, weight, *numbers)
