"""The library's nearest-neighbour engine (``core.library.ann_index``, faiss IVF over 8-bit codes):
recall against exact search once it is approximate, exact while small, real removal, growth,
a save/load round trip, and damaged or foreign files refused with one line before faiss reads them."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import struct
from pathlib import Path

import numpy as np
import pytest

if importlib.util.find_spec("faiss") is None:  # not imported here: ann_index imports it (OpenMP setting)
    pytest.skip("faiss is not installed", allow_module_level=True)

from core.library.ann_index import (
    END,
    MAGIC,
    IndexFormatError,
    IvfSettings,
    IvfSq8Index,
    load_index,
    new_index,
)
from core.library.index import ExactIndex, IndexError_


def _clustered(n: int, dim: int = 64, seed: int = 0, centres: int = 1000) -> np.ndarray:
    """Sentence-embedding-like data: points around a few hundred topics, with noise of the same
    order as the spread of the topics (so the nearest neighbours of a query cross list borders)."""
    rng = np.random.default_rng(seed)
    topics = np.random.default_rng(99).standard_normal((centres, dim))
    return (topics[rng.integers(0, centres, n)] + 0.8 * rng.standard_normal((n, dim))).astype(np.float32)


def _recall(truth: np.ndarray, got: np.ndarray) -> float:
    hits = [len(set(a.tolist()) & set(b.tolist())) for a, b in zip(truth, got)]
    return float(np.mean(hits)) / truth.shape[1]


@pytest.fixture(scope="module")
def built() -> tuple[IvfSq8Index, ExactIndex, np.ndarray, np.ndarray]:
    """30,000 vectors (ids 7, 10, 13, ...) added 5,000 at a time, as the library adds: past
    ``exact_below`` (20,000), so the index is approximate."""
    vectors = _clustered(30_000)
    ids = np.arange(30_000, dtype=np.int64) * 3 + 7
    index, exact = IvfSq8Index(64), ExactIndex(64)
    for start in range(0, 30_000, 5_000):
        index.add(ids[start: start + 5_000], vectors[start: start + 5_000])
        exact.add(ids[start: start + 5_000], vectors[start: start + 5_000])
    return index, exact, ids, vectors


def test_recall_at_10_against_exact_search_is_at_least_095(built) -> None:  # type: ignore[no-untyped-def]
    index, exact, _, _ = built
    assert index.engine == "faiss-ivf-sq8" and index.nlist >= 64 and 0 < index.nprobe < index.nlist
    queries = _clustered(300, seed=1)
    truth, true_scores = exact.search(queries, 10)
    found, scores = index.search(queries, 10)
    assert found.shape == (300, 10) and found.dtype == np.int64
    assert _recall(truth, found) >= 0.95
    assert bool((np.diff(scores, axis=1) <= 1e-6).all())  # best first
    exact_score = {(q, int(i)): float(s) for q in range(300) for i, s in zip(truth[q], true_scores[q])}
    errors = [abs(float(s) - exact_score[(q, int(i))])
              for q in range(300) for i, s in zip(found[q], scores[q]) if (q, int(i)) in exact_score]
    assert len(errors) > 2_500 and max(errors) < 0.01  # 8-bit similarities are close to the exact ones
    assert bool((scores <= 1.0).all())
    index.set_nprobe(1)  # one list: clearly worse, so the recall above is the probes' doing
    try:
        assert _recall(truth, index.search(queries, 10)[0]) < 0.9
    finally:
        index.set_nprobe(IvfSettings().probes_for(index.nlist))


def test_a_small_index_is_exact(tmp_path: Path) -> None:
    vectors = _clustered(2_000, dim=32)
    ids = np.arange(2_000, dtype=np.int64) + 100
    index, exact = new_index(32), ExactIndex(32)
    index.add(ids, vectors)
    exact.add(ids, vectors)
    queries = _clustered(50, dim=32, seed=2)
    assert isinstance(index, IvfSq8Index) and index.engine == "faiss-flat-ip"
    assert index.search(queries, 10)[0].tolist() == exact.search(queries, 10)[0].tolist()
    assert np.allclose(index.search(queries, 10)[1], exact.search(queries, 10)[1], atol=1e-5)
    index.remove(ids[:10])
    assert len(index) == 1_990
    assert not set(ids[:10].tolist()) & set(index.search(vectors[:10], 5)[0].ravel().tolist())
    index.save(tmp_path / "small.ann")
    again = load_index(tmp_path / "small.ann", 32)
    assert sorted(again.ids().tolist()) == sorted(index.ids().tolist()) == ids[10:].tolist()
    assert again.search(queries, 10)[0].tolist() == index.search(queries, 10)[0].tolist()
    assert IvfSq8Index(8).search(np.ones(8), 3)[0].shape == (1, 0)  # empty: no results
    with pytest.raises(ValueError, match="dimensions"):
        index.add(ids[:1], np.ones((1, 7)))
    with pytest.raises(ValueError, match="ids for"):
        index.add(ids[:2], np.ones((1, 32)))


def test_removed_items_are_gone_and_a_nearly_empty_index_still_answers() -> None:
    settings = IvfSettings(exact_below=1_000)
    vectors = _clustered(4_000, dim=16, seed=3)
    ids = np.arange(4_000, dtype=np.int64)
    index = IvfSq8Index(16, settings)
    index.add(ids, vectors)
    assert index.engine == "faiss-ivf-sq8"
    index.remove(ids[:3_000])
    assert len(index) == 1_000
    found, _ = index.search(vectors[:200], 10)
    assert not set(found.ravel().tolist()) & set(ids[:3_000].tolist())
    index.remove(ids[3_000:3_995])  # five left, spread over a few of the lists
    found, _ = index.search(vectors[:3], 5)  # the probed lists hold fewer: every list is scanned
    assert found.shape == (3, 5) and set(found.ravel().tolist()) == set(ids[3_995:].tolist())
    index.remove(np.array([123_456], dtype=np.int64))  # not there: nothing happens
    assert len(index) == 5 and sorted(index.ids().tolist()) == ids[3_995:].tolist()


def test_the_lists_are_made_again_as_the_collection_grows() -> None:
    settings = IvfSettings(exact_below=1_000, retrain_growth=2.0, min_lists=8)
    vectors = _clustered(12_000, dim=16, seed=4)
    ids = np.arange(12_000, dtype=np.int64)
    index, exact = IvfSq8Index(16, settings), ExactIndex(16)
    index.add(ids[:1_000], vectors[:1_000])
    first = index.nlist
    for start in range(1_000, 12_000, 1_000):
        index.add(ids[start: start + 1_000], vectors[start: start + 1_000])
    exact.add(ids, vectors)
    assert index.nlist > first and len(index) == 12_000
    assert sorted(index.ids().tolist()) == ids.tolist()
    queries = _clustered(100, dim=16, seed=5)
    assert _recall(exact.search(queries, 10)[0], index.search(queries, 10)[0]) >= 0.95


def test_a_rebuild_that_knows_its_size_partitions_once_for_it() -> None:
    settings = IvfSettings(exact_below=1_000, train_sample=4_000, min_lists=8)
    index = IvfSq8Index(16, settings, expected=20_000)
    vectors = _clustered(20_000, dim=16, seed=6)
    for start in range(0, 20_000, 2_000):
        index.add(np.arange(start, start + 2_000), vectors[start: start + 2_000])
        if start + 2_000 < 4_000:
            assert index.engine == "faiss-flat-ip"  # exact until it has its training sample
    assert index.nlist == settings.lists_for(20_000) and len(index) == 20_000


def test_save_and_load_give_the_same_index(built, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    index, _, ids, _ = built
    path = tmp_path / "content.ann"
    record = index.save(path)
    assert record.count == len(index) == 30_000 and path.read_bytes().startswith(MAGIC)
    again = IvfSq8Index.load(path, 64)
    assert (again.engine, again.nlist, again.nprobe, len(again)) == (index.engine, index.nlist, index.nprobe,
                                                                     len(index))
    queries = _clustered(20, seed=7)
    assert again.search(queries, 10)[0].tolist() == index.search(queries, 10)[0].tolist()
    assert sorted(again.ids().tolist()) == ids.tolist()
    with pytest.raises(IndexError_, match="holds 64-d vectors, not 32-d"):
        IvfSq8Index.load(path, 32)


@pytest.mark.parametrize("damage", ["truncated", "flipped", "no trailer", "bad trailer", "huge trailer",
                                    "empty", "lying trailer"])
def test_a_damaged_file_is_one_clear_error_before_faiss_reads_it(tmp_path: Path, damage: str) -> None:
    small = IvfSq8Index(64, IvfSettings(exact_below=500))
    small.add(np.arange(3_000), _clustered(3_000, seed=8))
    path = tmp_path / "content.ann"
    small.save(path)
    data = bytearray(path.read_bytes())
    if damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "flipped":
        data[len(data) // 2: len(data) // 2 + 64] = bytes(64)
    elif damage == "no trailer":
        data = data[: -len(END) - 8]
    elif damage == "bad trailer":
        end = len(data) - len(END) - 8
        (length,) = struct.unpack("<Q", bytes(data[end: end + 8]))
        data[end - length: end] = b"{" * length
    elif damage == "huge trailer":
        end = len(data) - len(END) - 8
        data[end: end + 8] = struct.pack("<Q", 1 << 40)
    elif damage == "empty":
        data = bytearray()
    elif damage == "lying trailer":  # a consistent file whose faiss data is not an index
        payload = b"not a faiss index" * 10
        trailer = json.dumps({"engine": "faiss-ivf-sq8", "dim": 64, "count": 3, "sized_for": 3,
                              "payload_bytes": len(payload), "settings": {},
                              "payload_sha256": hashlib.sha256(payload).hexdigest()}).encode()
        data = bytearray(MAGIC + payload + trailer + struct.pack("<Q", len(trailer)) + END)
    path.write_bytes(bytes(data))
    with pytest.raises(IndexError_) as caught:
        IvfSq8Index.load(path, 64)
    message = str(caught.value)
    assert "\n" not in message and "content.ann" in message
    assert not isinstance(caught.value, IndexFormatError)


def test_an_hnswlib_file_is_recognised_as_the_old_format(tmp_path: Path) -> None:
    pytest.importorskip("hnswlib")
    from core.library.index import HnswIndex

    old = HnswIndex(16)
    old.add(np.arange(50), _clustered(50, dim=16))
    old.save(tmp_path / "content.hnsw")
    with pytest.raises(IndexFormatError, match="hnswlib index of an earlier version"):
        load_index(tmp_path / "content.hnsw", 16)
    (tmp_path / "other").write_bytes(b"x" * 200)
    with pytest.raises(IndexFormatError, match="not a Rhetorica index file"):
        load_index(tmp_path / "other", 16)
    with pytest.raises(IndexError_, match="cannot read index"):
        load_index(tmp_path / "missing.ann", 16)
