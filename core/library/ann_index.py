"""The library's nearest-neighbour engine: faiss IVF over 8-bit scalar-quantised vectors (cosine).

Chosen by measurement (``rhetorica bench index``; docs/benchmarks.md, "Index engines"): at a million
384-d sentence vectors (2,048 lists, 128 probed) recall@10 was 0.973 against exact search, in
381 MB as read from its file (575 MB right after building it in the process: lists grown by
appending keep spare room), built in 37 s, 2.2 / 6.6 ms p50 / p95 a query. hnswlib needs 1.7 GB;
faiss HNSW + SQ8 (ef 256) reached the same recall in 517 MB and answers faster (0.4 ms, which the
~5 ms of encoding the query hides) but takes 7 times longer to build and cannot remove items
(tombstones and a rebuild); IVF-PQ + exact re-ranking stayed under 0.93.

How it works, by size:

* below :attr:`IvfSettings.exact_below` vectors it is exact: a flat inner-product index of the
  float32 vectors (faster than anything approximate at that size, and nothing to train);
* from then on the vectors are partitioned by k-means into ``nlist`` ≈ ``lists_per_sqrt`` × √n lists
  and stored as 8-bit codes (faiss ``IndexIVFScalarQuantizer``, not by residual, per-dimension
  min/max trained on the vectors); a query scans the ``nprobe`` nearest lists;
* when the collection has grown ``retrain_growth`` times past the size the lists were trained on,
  they are trained again on the (decoded) vectors, so the lists stay about √n long.

Removal is real (``remove_ids`` drops the codes from their lists), so there are no tombstones to
compact. A query whose probed lists hold fewer than ``k`` items (a tiny index after removals) is
answered again over every list.

The file (``save``/``load``): a magic line, the faiss index as ``faiss.write_index`` writes it, and a
JSON trailer with the engine, dimension, item count and the payload's size and sha256. ``load``
checks all of them before faiss sees a byte, so a damaged or truncated file is one clear
:class:`IndexError_`, never a crash inside faiss; faiss's format holds numbers only (no code is
loaded). A file without the magic (the hnswlib indexes of earlier versions) is an
:class:`IndexFormatError`, which the library answers by rebuilding from its database.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from core.library.index import IndexError_, IndexRecord, VectorIndex, _atomic_write, _normalised

MAGIC = b"RHETORICA-ANN-1\n"
END = b"\nRHETORICA-ANN-END"
ENGINE_FLAT = "faiss-flat-ip"
ENGINE_IVF = "faiss-ivf-sq8"
_TRAILER_LENGTH = struct.Struct("<Q")
SEARCH_THREADS_FROM = 64  # queries in one call from which faiss may use every core


class IndexFormatError(IndexError_):
    """An index file in another format (an hnswlib index from an older version): rebuild it."""


@dataclass(frozen=True)
class IvfSettings:
    """When the index stops being exact, how it partitions, and how much of it a query scans."""

    exact_below: int = 20_000  # flat exact search under this many vectors
    lists_per_sqrt: float = 2.0  # nlist = lists_per_sqrt × √n, rounded to a power of two
    min_lists: int = 64
    max_lists: int = 65_536
    # nprobe = max(min_probe, nlist × probe_fraction): at 10^6 384-d sentence vectors (2,048 lists)
    # 64 probes gave recall@10 0.954 and 128 gave 0.973; at 60,000 (512 lists) 32 gave 0.947, 64 0.98
    probe_fraction: float = 1 / 16
    min_probe: int = 64
    retrain_growth: float = 8.0  # train the lists again when n > retrain_growth × trained size
    train_sample: int = 131_072  # vectors k-means sees (at least 64 per list)
    kmeans_iterations: int = 10
    range_margin: float = 0.2  # each dimension's 8-bit range: the trained min..max widened by this
    # fraction on both sides; vectors added later fall outside an exact min..max and were clipped
    # (similarities off by up to 0.05 instead of 0.007)
    seed: int = 1234

    def lists_for(self, n: int) -> int:
        wanted = self.lists_per_sqrt * math.sqrt(max(n, 1))
        power = 2 ** round(math.log2(max(wanted, 1)))
        return int(min(self.max_lists, max(self.min_lists, power, 1)))

    def training_size(self, n: int) -> int:
        """How many vectors k-means sees when the lists are made for ``n``: ``train_sample``, or 64 a
        list when that is more (faiss wants at least 39)."""
        return max(self.train_sample, 64 * self.lists_for(n))

    def probes_for(self, nlist: int) -> int:
        return int(min(nlist, max(self.min_probe, round(nlist * self.probe_fraction))))


def _faiss() -> Any:
    """faiss, imported with OpenMP's idle threads set to sleep rather than spin (unless the
    environment says otherwise): on a machine busy with other work (the encoder, a training run)
    spinning threads made a k-means six times slower. The setting is read when OpenMP loads,
    so it must be made before the first ``import faiss`` of the process."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import faiss

    return faiss


@contextmanager
def _threads_for(queries: int) -> Iterator[None]:
    """One OpenMP thread for a few queries (faiss splits a search by query, so more threads only
    wait: on a busy machine their spinning made single queries 2-10 times slower); the setting is
    the calling thread's own and is put back afterwards."""
    if queries >= SEARCH_THREADS_FROM:
        yield
        return
    faiss = _faiss()
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


class IvfSq8Index:
    """Cosine nearest neighbours over int64 ids (the :class:`core.library.index.VectorIndex`
    interface): exact while small, faiss IVF + 8-bit codes once large. Thread-safe (one lock)."""

    def __init__(self, dim: int, settings: IvfSettings | None = None, *, expected: int = 0) -> None:
        """``expected``: how many vectors are about to be added (a rebuild knows): the lists are then
        trained once, on the first ``train_sample`` of them, for that size."""
        if dim < 1:
            raise ValueError(f"an index needs at least one dimension, not {dim}")
        faiss = _faiss()
        self.dim = dim
        self.settings = settings or IvfSettings()
        self._index: Any = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        self._sized_for = 0  # the collection size the lists were made for (0: flat, exact)
        self._expected = max(int(expected), 0)
        self.meta: dict[str, str] = {}  # saved with the index (what it was built from: a pack's vectors)
        self._lock = threading.Lock()

    # -- what it is ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self._index.ntotal)

    @property
    def engine(self) -> str:
        return ENGINE_IVF if self._sized_for else ENGINE_FLAT

    @property
    def nlist(self) -> int:
        return int(self._index.nlist) if self._sized_for else 0

    @property
    def nprobe(self) -> int:
        return int(self._index.nprobe) if self._sized_for else 0

    def set_nprobe(self, nprobe: int) -> None:
        """Scan ``nprobe`` lists per query (more: higher recall, slower); no effect while exact."""
        with self._lock:
            if self._sized_for:
                self._index.nprobe = int(min(max(nprobe, 1), self._index.nlist))

    def ids(self) -> np.ndarray:
        """Every id in the index (int64, in no particular order)."""
        with self._lock:
            return self._contents(with_vectors=False)[0]

    # -- adding, removing, searching ------------------------------------------------------------
    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        vectors = _normalised(vectors)
        ids = np.ascontiguousarray(ids, dtype=np.int64).reshape(-1)
        if vectors.shape[1] != self.dim:
            raise ValueError(f"vectors have {vectors.shape[1]} dimensions, the index {self.dim}")
        if len(ids) != len(vectors):
            raise ValueError(f"{len(ids)} ids for {len(vectors)} vectors")
        if not len(ids):
            return
        with self._lock:
            self._index.add_with_ids(vectors, ids)
            n = len(self)
            if not self._sized_for and n >= self.settings.exact_below:
                # a rebuild of a known size waits for enough vectors to train for that size
                enough = min(self._expected, self.settings.training_size(self._expected))
                if n >= enough:
                    self._retrain(max(n, self._expected))
            elif self._sized_for and n > self.settings.retrain_growth * self._sized_for:
                self._retrain(n)

    def remove(self, ids: np.ndarray) -> None:
        ids = np.ascontiguousarray(ids, dtype=np.int64).reshape(-1)
        if not len(ids):
            return
        faiss = _faiss()
        with self._lock:
            self._index.remove_ids(faiss.IDSelectorBatch(ids))

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(ids [q, k'], cosine similarities [q, k']) best first, k' = min(k, len). Similarities
        of an 8-bit index are approximate (within about 0.002) and clipped to [-1, 1]."""
        queries = _normalised(query)
        if queries.shape[1] != self.dim:
            raise ValueError(f"queries have {queries.shape[1]} dimensions, the index {self.dim}")
        with self._lock:
            k = min(int(k), len(self))
            if k <= 0:
                return np.zeros((len(queries), 0), dtype=np.int64), np.zeros((len(queries), 0), np.float32)
            with _threads_for(len(queries)):
                scores, labels = self._index.search(queries, k)
                if self._sized_for and bool((labels < 0).any()):  # too few items in the probed lists
                    nprobe = self._index.nprobe
                    self._index.nprobe = self._index.nlist
                    try:
                        scores, labels = self._index.search(queries, k)
                    finally:
                        self._index.nprobe = nprobe
        return labels.astype(np.int64), np.clip(scores, -1.0, 1.0).astype(np.float32)

    # -- training -------------------------------------------------------------------------------
    def _contents(self, *, with_vectors: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """(ids, float32 vectors or None) of everything in the index; an 8-bit index gives its
        decoded vectors."""
        faiss = _faiss()
        if not self._sized_for:
            flat = self._index
            ids = faiss.vector_to_array(flat.id_map).astype(np.int64)
            if not with_vectors:
                return ids, None
            vectors = faiss.downcast_index(flat.index).reconstruct_n(0, len(ids))
            return ids, np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        lists = self._index.invlists
        id_parts, code_parts = [], []
        for number in range(self._index.nlist):
            size = lists.list_size(number)
            if not size:
                continue
            id_parts.append(np.array(faiss.rev_swig_ptr(lists.get_ids(number), size), dtype=np.int64))
            if with_vectors:
                codes = faiss.rev_swig_ptr(lists.get_codes(number), size * lists.code_size)
                code_parts.append(np.array(codes, dtype=np.uint8).reshape(size, lists.code_size))
        ids = np.concatenate(id_parts) if id_parts else np.zeros(0, np.int64)
        if not with_vectors:
            return ids, None
        if not code_parts:
            return ids, np.zeros((0, self.dim), np.float32)
        return ids, self._index.sq.decode(np.concatenate(code_parts))

    def _retrain(self, size: int) -> None:
        """Partition everything afresh into lists made for ``size`` vectors (the caller holds the lock)."""
        faiss = _faiss()
        ids, vectors = self._contents(with_vectors=True)
        assert vectors is not None
        n = len(ids)
        nlist = min(self.settings.lists_for(size), max(1, n // 64))  # k-means wants >= 39 a list
        ivf = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(self.dim), self.dim, nlist,
                                            faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT,
                                            False)
        ivf.sq.rangestat = faiss.ScalarQuantizer.RS_minmax
        ivf.sq.rangestat_arg = self.settings.range_margin  # room for vectors added after training
        ivf.cp.seed = self.settings.seed
        ivf.cp.niter = self.settings.kmeans_iterations
        sample = min(n, self.settings.training_size(size))
        ivf.cp.max_points_per_centroid = max(1, math.ceil(sample / nlist))
        rng = np.random.default_rng(self.settings.seed)
        train = vectors if sample >= n else vectors[np.sort(rng.choice(n, size=sample, replace=False))]
        ivf.train(np.ascontiguousarray(train))
        ivf.add_with_ids(vectors, ids)
        ivf.nprobe = self.settings.probes_for(nlist)
        self._index, self._sized_for = ivf, size

    # -- files ----------------------------------------------------------------------------------
    def save(self, path: Path) -> IndexRecord:
        """Write the index atomically (see the module's docstring for the format)."""
        with self._lock:
            return _atomic_write(Path(path), self._write, len(self))

    def _write(self, tmp: Path) -> None:
        faiss = _faiss()
        digest, written = hashlib.sha256(), 0

        with tmp.open("wb") as handle:
            def sink(chunk: bytes) -> int:
                nonlocal written
                digest.update(chunk)
                written += len(chunk)
                handle.write(chunk)
                return len(chunk)

            handle.write(MAGIC)
            writer = faiss.PyCallbackIOWriter(sink)
            faiss.write_index(self._index, writer)
            del writer  # flushes its buffer into the file
            trailer = json.dumps({
                "engine": self.engine, "dim": self.dim, "count": len(self),
                "sized_for": self._sized_for, "payload_bytes": written,
                "payload_sha256": digest.hexdigest(), "settings": asdict(self.settings), "meta": self.meta,
            }, sort_keys=True).encode("utf-8")
            handle.write(trailer + _TRAILER_LENGTH.pack(len(trailer)) + END)

    @classmethod
    def load(cls, path: Path, dim: int | None = None) -> IvfSq8Index:
        """Read an index written by :meth:`save`, checking it whole first; ``dim``: the dimension
        the caller expects (None: any)."""
        path = Path(path)
        try:
            with path.open("rb") as handle:
                return cls._read(handle, path, dim)
        except OSError as error:
            raise IndexError_(f"cannot read index {path}: {error.strerror or error}") from None

    @classmethod
    def _read(cls, handle: BinaryIO, path: Path, dim: int | None) -> IvfSq8Index:
        faiss = _faiss()
        size = path.stat().st_size
        head = handle.read(len(MAGIC))
        if head != MAGIC:
            handle.seek(0)
            if _looks_like_hnswlib(handle.read(48)):
                raise IndexFormatError(f"{path.name} is an hnswlib index of an earlier version")
            if size >= len(MAGIC):
                raise IndexFormatError(f"{path.name} is not a Rhetorica index file")
            raise IndexError_(f"index {path.name} is damaged (it ends early)")
        info = _trailer(handle, path, size)
        payload = size - len(MAGIC) - info["trailer_bytes"]
        if payload != info["payload_bytes"]:
            raise IndexError_(f"index {path.name} is damaged ({payload} bytes of index data, "
                              f"{info['payload_bytes']} when it was saved)")
        handle.seek(len(MAGIC))
        digest, left = hashlib.sha256(), payload
        while left:
            block = handle.read(min(left, 1 << 20))
            if not block:
                raise IndexError_(f"index {path.name} is damaged (it ends early)")
            digest.update(block)
            left -= len(block)
        if digest.hexdigest() != info["payload_sha256"]:
            raise IndexError_(f"index {path.name} is damaged "
                              "(its checksum does not match the one saved with it)")
        if dim is not None and info["dim"] != dim:
            raise IndexError_(f"index {path.name} holds {info['dim']}-d vectors, not {dim}-d")
        handle.seek(len(MAGIC))
        try:
            raw = faiss.read_index(faiss.PyCallbackIOReader(handle.read))
        except RuntimeError as error:
            first = (str(error).strip().splitlines() or ["unreadable"])[-1][:200]
            raise IndexError_(f"cannot read index {path.name}: {first}") from None
        inner = raw  # faiss's Python read_index gives the concrete class (and owns it)
        expected = faiss.IndexIVFScalarQuantizer if info["engine"] == ENGINE_IVF else faiss.IndexIDMap2
        if not isinstance(inner, expected) or inner.d != info["dim"] or inner.ntotal != info["count"] \
                or inner.metric_type != faiss.METRIC_INNER_PRODUCT:
            raise IndexError_(f"index {path.name} is not what its trailer says it is")
        index = cls(int(info["dim"]), info["settings"])
        index._index, index._sized_for = inner, int(info["sized_for"])
        index.meta = info["meta"]
        return index


def new_index(dim: int, *, expected: int = 0) -> VectorIndex:
    """An empty index of ``dim``-d vectors in the library's engine; ``expected``: how many are about
    to be added (a rebuild knows), so the engine partitions once, for that size."""
    return IvfSq8Index(dim, expected=expected)


def load_index(path: Path, dim: int) -> VectorIndex:
    """The index saved at ``path`` (``dim``-d vectors). :class:`IndexError_` (one line) when it
    cannot be read; its subclass :class:`IndexFormatError` when it is in another format (the
    hnswlib files of earlier versions): rebuild it then."""
    return IvfSq8Index.load(path, dim)


def _looks_like_hnswlib(head: bytes) -> bool:
    """Whether ``head`` (a file's first 48 bytes) is the header hnswlib writes: six size_t fields,
    offsetLevel0 (always 0), max_elements, cur_element_count, size_data_per_element, label_offset,
    offsetData."""
    if len(head) < 48:
        return False
    offset0, capacity, count, per_element, label_offset, data_offset = struct.unpack("<6Q", head[:48])
    return offset0 == 0 and count <= capacity and data_offset < label_offset < per_element < 1 << 24


def _trailer(handle: BinaryIO, path: Path, size: int) -> dict[str, Any]:
    """The JSON trailer of an index file, checked field by field (with ``trailer_bytes``: its
    length on disk, length field and end marker included)."""
    damaged = f"index {path.name} is damaged"
    tail = len(END) + _TRAILER_LENGTH.size
    if size < len(MAGIC) + tail:
        raise IndexError_(f"{damaged} (it ends early)")
    handle.seek(size - tail)
    end = handle.read(tail)
    if end[_TRAILER_LENGTH.size:] != END:
        raise IndexError_(f"{damaged} (it ends early, or was cut short while saving)")
    (length,) = _TRAILER_LENGTH.unpack(end[: _TRAILER_LENGTH.size])
    if length > min(size - len(MAGIC) - tail, 1 << 16):
        raise IndexError_(f"{damaged} (its trailer is unreadable)")
    handle.seek(size - tail - length)
    try:
        info = json.loads(handle.read(length).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise IndexError_(f"{damaged} (its trailer is unreadable)") from None
    if not isinstance(info, dict):
        raise IndexError_(f"{damaged} (its trailer is unreadable)")
    numbers = ("dim", "count", "sized_for", "payload_bytes")
    fields_ok = (info.get("engine") in (ENGINE_FLAT, ENGINE_IVF)
                 and all(isinstance(info.get(f), int) and not isinstance(info.get(f), bool) and info[f] >= 0
                         for f in numbers)
                 and info["dim"] >= 1 and isinstance(info.get("payload_sha256"), str)
                 and isinstance(info.get("settings"), dict))
    if not fields_ok:
        raise IndexError_(f"{damaged} (its trailer is unreadable)")
    try:
        settings = IvfSettings(**info["settings"])
    except TypeError:
        raise IndexError_(f"{damaged} (its trailer is unreadable)") from None
    meta = info.get("meta", {})
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise IndexError_(f"{damaged} (its trailer is unreadable)")
    return {**info, "settings": settings, "meta": meta, "trailer_bytes": length + tail}
