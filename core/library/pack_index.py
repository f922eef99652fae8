"""Search over a phrase-corpus pack's int8 function vectors: the library's engine for big packs.

A pack (``core.library.pack``) stores its function-view vectors as int8 rows with a scale each
(``function.npy``, ``function-scale.npy``). Searching them:

* a pack of fewer than :data:`PACK_EXACT_BELOW` sentences is searched exactly (one matrix product
  over the rows made float32 once: a few milliseconds for 10^5 sentences);
* a bigger pack carries ``function.ann`` (:func:`write_pack_index`, run when the pack is written):
  the faiss IVF + 8-bit index of :mod:`core.library.ann_index` over the same rows, which proposes
  :data:`CANDIDATES_PER_RESULT` × k candidates that are then re-ranked exactly on the int8 rows
  (memory-mapped), so the similarities are the exact search's. The float32 copy of the rows is
  never made (512 MB per million 128-d rows), so a million-sentence pack costs the index (about
  130 MB) and the mapped rows the queries touch.

``function.ann`` records the sha256 of the ``function.npy`` it was built from; a pack whose vectors
changed since (or whose index file is damaged) is searched exactly, never wrongly.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.fileio import file_sha256
from core.library.index import IndexError_

if TYPE_CHECKING:
    from core.library.ann_index import IvfSq8Index

PACK_INDEX = "function.ann"
PACK_EXACT_BELOW = 200_000  # sentences; exact search of 10^5 x 128 int8 rows takes a few ms
CANDIDATES_PER_RESULT = 4  # candidates re-ranked exactly per result asked for (at least 64)
_BATCH = 50_000

_log = logging.getLogger(__name__)


def write_pack_index(vectors_file: Path, vectors: np.ndarray, scales: np.ndarray, *,
                     exact_below: int | None = None) -> Path | None:
    """Write ``function.ann`` beside ``vectors_file`` (the pack's ``function.npy``, holding
    ``vectors``: int8 [n, d]; ``scales`` [n]); a pack under ``exact_below`` sentences (default
    :data:`PACK_EXACT_BELOW`) gets none (and loses a stale one). Returns the file written, or None."""
    from core.library.ann_index import IvfSq8Index

    out = Path(vectors_file).parent / PACK_INDEX
    n = len(vectors)
    if n < (PACK_EXACT_BELOW if exact_below is None else exact_below) or vectors.ndim != 2:
        out.unlink(missing_ok=True)
        return None
    index = IvfSq8Index(int(vectors.shape[1]), expected=n)
    for start in range(0, n, _BATCH):
        stop = min(n, start + _BATCH)
        rows = np.asarray(vectors[start:stop], dtype=np.float32) * scales[start:stop, None]
        index.add(np.arange(start, start + len(rows), dtype=np.int64), rows)
    index.meta = {"vectors_sha256": file_sha256(vectors_file)}
    index.save(out)
    return out


class PackSearch:
    """Cosine search over a pack's int8 rows (row numbers are the pack's sentence ids); exact, or
    through the ``function.ann`` beside ``vectors_file`` when the pack has a valid one. Thread-safe."""

    def __init__(self, vectors_file: Path, vectors: np.ndarray, scales: np.ndarray) -> None:
        self.vectors_file = Path(vectors_file)
        self.folder = self.vectors_file.parent
        self._vectors, self._scales = vectors, np.asarray(scales, dtype=np.float32)
        self._dense: np.ndarray | None = None
        self._lock = threading.Lock()
        self.index = self._open_index()

    @property
    def dim(self) -> int:
        return int(self._vectors.shape[1]) if self._vectors.ndim == 2 else 0

    def _open_index(self) -> IvfSq8Index | None:
        path = self.folder / PACK_INDEX
        if not path.is_file():
            return None
        from core.library.ann_index import IvfSq8Index

        try:
            index = IvfSq8Index.load(path, self.dim)
            built_from = index.meta.get("vectors_sha256")
            if built_from != file_sha256(self.vectors_file) or len(index) != len(self._vectors):
                _log.warning("%s: %s was built from other vectors: searching exactly",
                             self.folder, PACK_INDEX)
                return None
        except (IndexError_, OSError) as error:
            _log.warning("%s: %s: searching exactly", self.folder, error)
            return None
        return index

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(row ids [q, k'], cosine similarities [q, k']) best first, k' = min(k, rows);
        ``queries`` L2-normalised [q, d]."""
        k = min(int(k), len(self._vectors))
        if k <= 0:
            empty = np.zeros((len(queries), 0))
            return empty.astype(np.int64), empty.astype(np.float32)
        if self.index is None:
            return _top(queries @ self._matrix().T, np.arange(len(self._vectors)), k)
        depth = max(CANDIDATES_PER_RESULT * k, 64)
        candidates, _ = self.index.search(queries, depth)
        ids, scores = [], []
        for query, row in zip(queries, candidates):
            row = np.sort(row)
            exact = (np.asarray(self._vectors[row], dtype=np.float32) @ query) * self._scales[row]
            found, similarity = _top(exact[None, :], row, min(k, len(row)))
            ids.append(found[0])
            scores.append(similarity[0])
        return np.stack(ids), np.stack(scores)

    def _matrix(self) -> np.ndarray:
        with self._lock:
            if self._dense is None:  # float32 once: every exact query reuses it
                self._dense = np.asarray(self._vectors, dtype=np.float32) * self._scales[:, None]
            return self._dense


def _top(scores: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best of each row of ``scores`` (columns named by ``ids``), best first."""
    top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    order = np.take_along_axis(scores, top, axis=1).argsort(axis=1)[:, ::-1]
    top = np.take_along_axis(top, order, axis=1)
    return ids[top].astype(np.int64), np.take_along_axis(scores, top, axis=1).astype(np.float32)
