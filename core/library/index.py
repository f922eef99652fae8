"""Nearest-neighbour indexes over one embedding view of the library (cosine similarity).

The database (``core.library.store``) is the source of truth; an index is a cache of its vectors
that can always be rebuilt (``rhetorica library rebuild``). The engines behind one small interface
(:class:`VectorIndex`):

* :class:`core.library.ann_index.IvfSq8Index` (``new_index`` / ``load_index`` there): the engine
  libraries and packs use, faiss IVF over 8-bit codes, exact while small; about 0.4 GB per million
  384-d vectors at recall@10 >= 0.95, chosen by ``rhetorica bench index``;
* :class:`ExactIndex`: numpy, brute force; the reference for recall;
* :class:`HnswIndex`: hnswlib (HNSW graph, inner product on L2-normalised vectors), the earlier
  engine (1.7 GB per million 384-d vectors), kept for benchmarks and for reading old files.
  hnswlib is not safe for adds concurrent with queries, so every call holds the index's lock.

Saving is atomic (write a temporary file, then ``os.replace``), so a crash while saving leaves the
previous index; the database records which sentence count an index file was saved at, so a stale
or missing index is noticed and rebuilt. ``save`` returns an :class:`IndexRecord` (sha256, size,
item count of the file as written) that the library keeps, and :func:`check_index_file` must pass
before a file is loaded (hnswlib trusts the file it loads: one damaged in the middle crashes the
process; the faiss engine's files also carry their own checksum). A library whose index file is in
the earlier hnswlib format gets :class:`core.library.ann_index.IndexFormatError` from
``load_index`` and rebuilds the index from its database.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from core.errors import RhetoricaError


class IndexError_(RhetoricaError):
    """An index file that cannot be read (rebuild it from the library)."""


@dataclass(frozen=True)
class IndexRecord:
    """What an index file was when it was saved: its sha256, size in bytes and item count."""

    sha256: str
    size: int
    count: int

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> IndexRecord | None:
        """The record ``text`` holds, or None for no record or a malformed one."""
        try:
            data = json.loads(text) if text else None
            if not isinstance(data, dict):
                return None
            sha256, size, count = data["sha256"], data["size"], data["count"]
        except (ValueError, KeyError):
            return None
        numbers = all(isinstance(v, int) and not isinstance(v, bool) for v in (size, count))
        ok = isinstance(sha256, str) and numbers
        return cls(sha256, size, count) if ok else None

    @classmethod
    def of_file(cls, path: Path, count: int) -> IndexRecord:
        from core.fileio import file_sha256

        return cls(file_sha256(path), path.stat().st_size, count)


def check_index_file(path: Path, record: IndexRecord | None, count: int) -> str | None:
    """Why the index file ``path`` must not be loaded (missing, no record, out of step with the
    ``count`` vectors the database holds, another size or checksum than recorded), or None when it
    is the file that was saved."""
    from core.fileio import file_sha256

    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return "is missing"
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    if record is None:
        return "has no integrity record"
    if record.count != count:
        return f"is out of step with the database ({record.count} vectors, the database has {count})"
    if size != record.size:
        return f"is damaged ({size} bytes, {record.size} when it was saved)"
    try:
        digest = file_sha256(path)
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    if digest != record.sha256:
        return "is damaged (its checksum does not match the one recorded when it was saved)"
    return None


class VectorIndex(Protocol):
    dim: int

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None: ...

    def remove(self, ids: np.ndarray) -> None: ...

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]: ...

    def save(self, path: Path) -> IndexRecord: ...

    def ids(self) -> np.ndarray: ...

    def __len__(self) -> int: ...


def _normalised(vectors: np.ndarray) -> np.ndarray:
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def _atomic_write(path: Path, write: Callable[[Path], None], count: int) -> IndexRecord:
    """Call ``write(tmp_path)``, fsync, then move the file into place (same folder, so the move is
    atomic); returns the record of the file as written (hashed before the move, so it describes
    exactly these bytes). A full disk / read-only folder raises a one-line
    :class:`core.fileio.StorageError`."""
    from core.fileio import atomic_write_with

    records: list[IndexRecord] = []

    def write_and_record(tmp: Path) -> None:
        write(tmp)
        records.append(IndexRecord.of_file(tmp, count))

    atomic_write_with(path, write_and_record, f"the library index {path.name}", tmp_name=f".{path.name}.tmp")
    return records[-1]


class ExactIndex:
    """Brute-force cosine search in numpy (ids int64, vectors float32, normalised on add)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._ids = np.zeros(0, dtype=np.int64)
        self._vectors = np.zeros((0, dim), dtype=np.float32)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return int(self._ids.shape[0])

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        vectors = _normalised(vectors)
        if vectors.shape[1] != self.dim:
            raise ValueError(f"vectors have {vectors.shape[1]} dimensions, the index {self.dim}")
        with self._lock:
            self._ids = np.concatenate([self._ids, np.asarray(ids, dtype=np.int64)])
            self._vectors = np.concatenate([self._vectors, vectors])

    def ids(self) -> np.ndarray:
        with self._lock:
            return self._ids.copy()

    def remove(self, ids: np.ndarray) -> None:
        with self._lock:
            keep = ~np.isin(self._ids, np.asarray(ids, dtype=np.int64))
            self._ids, self._vectors = self._ids[keep], self._vectors[keep]

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(ids [q, k'], cosine similarities [q, k']) best first, k' = min(k, len)."""
        queries = _normalised(query)
        with self._lock:
            k = min(k, len(self))
            if k == 0:
                return np.zeros((len(queries), 0), dtype=np.int64), np.zeros((len(queries), 0), np.float32)
            scores = queries @ self._vectors.T
            top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
            order = np.take_along_axis(-scores, top, axis=1).argsort(axis=1)
            top = np.take_along_axis(top, order, axis=1)
            return self._ids[top], np.take_along_axis(scores, top, axis=1)

    def save(self, path: Path) -> IndexRecord:
        with self._lock:
            ids, vectors = self._ids, self._vectors

        def write(tmp: Path) -> None:
            with tmp.open("wb") as handle:
                np.savez(handle, ids=ids, vectors=vectors)

        return _atomic_write(path, write, len(ids))

    @classmethod
    def load(cls, path: Path) -> ExactIndex:
        try:
            with np.load(path) as data:
                ids, vectors = data["ids"], data["vectors"]
        except (OSError, ValueError, KeyError) as error:
            raise IndexError_(f"cannot read index {path}: {error}") from None
        index = cls(int(vectors.shape[1]))
        index._ids, index._vectors = ids.astype(np.int64), vectors.astype(np.float32)
        return index


class HnswIndex:
    """hnswlib HNSW over normalised vectors (space "ip" = cosine); grows as items are added."""

    def __init__(self, dim: int, *, m: int = 16, ef_construction: int = 200, ef_search: int = 64,
                 capacity: int = 1024) -> None:
        import hnswlib

        self.dim = dim
        self.m, self.ef_construction, self.ef_search = m, ef_construction, ef_search
        self._index = hnswlib.Index(space="ip", dim=dim)
        self._index.init_index(max_elements=max(capacity, 16), ef_construction=ef_construction, M=m,
                               allow_replace_deleted=True)
        self._index.set_ef(ef_search)
        self._lock = threading.Lock()
        self._live = 0  # items not deleted (hnswlib counts deleted slots too)

    def __len__(self) -> int:
        return self._live

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        vectors = _normalised(vectors)
        if vectors.shape[1] != self.dim:
            raise ValueError(f"vectors have {vectors.shape[1]} dimensions, the index {self.dim}")
        with self._lock:
            needed = self._index.get_current_count() + len(vectors)
            if needed > self._index.get_max_elements():
                self._index.resize_index(max(needed, 2 * self._index.get_max_elements()))
            self._index.add_items(vectors, np.asarray(ids, dtype=np.int64), replace_deleted=True)
            self._live += len(vectors)

    def ids(self) -> np.ndarray:
        """The ids not deleted (hnswlib lists deleted labels too, and refuses their vectors)."""
        with self._lock:
            labels = self._index.get_ids_list()
            return np.asarray([i for i in labels if self._is_live(int(i))], dtype=np.int64)

    def _is_live(self, label: int) -> bool:
        try:
            self._index.get_items([label])
        except RuntimeError:
            return False  # marked deleted
        return True

    def remove(self, ids: np.ndarray) -> None:
        with self._lock:
            for label in np.asarray(ids, dtype=np.int64).tolist():
                try:
                    self._index.mark_deleted(int(label))
                    self._live -= 1
                except RuntimeError:
                    pass  # not in the index (already removed)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        queries = _normalised(query)
        with self._lock:
            k = min(k, self._live)
            if k == 0:
                return np.zeros((len(queries), 0), dtype=np.int64), np.zeros((len(queries), 0), np.float32)
            self._index.set_ef(max(self.ef_search, k))
            labels, distances = self._index.knn_query(queries, k=k)
        return labels.astype(np.int64), (1.0 - distances).astype(np.float32)

    def save(self, path: Path) -> IndexRecord:
        with self._lock:
            return _atomic_write(path, self._write, self._live)

    def _write(self, tmp: Path) -> None:
        """``save_index`` to ``tmp``, checked: hnswlib writes with a C++ stream and does not report a
        failed write (a full disk left an empty index file in place), so a file shorter than the
        vectors, labels and level-0 links it must hold is an error here."""
        self._index.save_index(str(tmp))
        count = self._index.get_current_count()
        links = 2 * int(getattr(self._index, "M", self.m))
        per_item = links * 4 + 4 + self.dim * 4 + 8 + 4  # level-0 links, vector, label, list size
        if tmp.stat().st_size < count * per_item:
            import errno
            import shutil

            full = shutil.disk_usage(tmp.parent).free < count * per_item
            raise OSError(errno.ENOSPC if full else errno.EIO,
                          f"hnswlib wrote a short index file ({tmp.stat().st_size} bytes for {count} items)")

    @classmethod
    def load(cls, path: Path, dim: int, live: int, *, ef_search: int = 64) -> HnswIndex:
        """Read a saved index; ``live`` = how many items it holds that are not deleted (the
        library records it when it saves)."""
        import hnswlib

        index = cls.__new__(cls)
        index._live = live
        index.dim, index.m, index.ef_construction, index.ef_search = dim, 16, 200, ef_search
        index._lock = threading.Lock()
        index._index = hnswlib.Index(space="ip", dim=dim)
        try:
            index._index.load_index(str(path), allow_replace_deleted=True)
        except (RuntimeError, OSError) as error:
            raise IndexError_(f"cannot read index {path}: {error}") from None
        index._index.set_ef(ef_search)
        return index
