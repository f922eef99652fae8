"""Library indexes: exact (numpy) and HNSW (hnswlib) give the same neighbours, survive save/load,
forget removed items, and a crash while saving leaves the previous file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.library.index import ExactIndex, HnswIndex, IndexError_


def _data(n: int = 400, dim: int = 32, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return np.arange(1000, 1000 + n, dtype=np.int64), rng.standard_normal((n, dim)).astype(np.float32)


def test_exact_index_search_remove_save_load(tmp_path: Path) -> None:
    ids, vectors = _data()
    index = ExactIndex(32)
    index.add(ids, vectors)
    found, scores = index.search(vectors[:3], k=5)
    assert found[:, 0].tolist() == ids[:3].tolist()  # each vector is its own nearest neighbour
    assert np.allclose(scores[:, 0], 1.0, atol=1e-5) and bool((np.diff(scores, axis=1) <= 1e-6).all())
    index.remove(ids[:1])
    assert len(index) == 399 and ids[0] not in index.search(vectors[:1], k=10)[0]
    index.save(tmp_path / "content.npz")
    again = ExactIndex.load(tmp_path / "content.npz")
    assert len(again) == 399
    assert again.search(vectors[5], k=3)[0].tolist() == index.search(vectors[5], k=3)[0].tolist()
    assert ExactIndex(8).search(np.ones(8), k=3)[0].shape == (1, 0)  # empty index: no results
    with pytest.raises(ValueError, match="dimensions"):
        index.add(ids[:1], np.ones((1, 7)))
    (tmp_path / "bad.npz").write_bytes(b"junk")
    with pytest.raises(IndexError_, match="cannot read index"):
        ExactIndex.load(tmp_path / "bad.npz")


def test_hnsw_matches_exact_search_and_survives_save_load(tmp_path: Path) -> None:
    pytest.importorskip("hnswlib")
    ids, vectors = _data(2000, 32)
    exact, hnsw = ExactIndex(32), HnswIndex(32, capacity=100)  # it grows past its first capacity
    for start in range(0, 2000, 500):
        exact.add(ids[start: start + 500], vectors[start: start + 500])
        hnsw.add(ids[start: start + 500], vectors[start: start + 500])
    queries = _data(50, 32, seed=1)[1]
    truth, _ = exact.search(queries, 10)
    got, scores = hnsw.search(queries, 10)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(truth, got)])
    assert recall >= 0.95 and np.all(scores <= 1.0 + 1e-5)
    hnsw.remove(ids[:100])
    exact.remove(ids[:100])
    assert len(hnsw) == 1900 and not set(ids[:100].tolist()) & set(hnsw.search(vectors[:100], 5)[0].ravel())
    hnsw.save(tmp_path / "content.hnsw")
    again = HnswIndex.load(tmp_path / "content.hnsw", 32, live=len(hnsw))
    assert again.search(queries[:5], 10)[0].tolist() == hnsw.search(queries[:5], 10)[0].tolist()
    (tmp_path / "bad.hnsw").write_bytes(b"junk" * 10)
    with pytest.raises(IndexError_):
        HnswIndex.load(tmp_path / "bad.hnsw", 32, live=0)


def test_a_failed_save_keeps_the_previous_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ids, vectors = _data(50, 8)
    index = ExactIndex(8)
    index.add(ids, vectors)
    path = tmp_path / "content.npz"
    index.save(path)
    before = path.read_bytes()
    index.add(ids + 10_000, vectors)

    def crash(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", crash)
    with pytest.raises(OSError, match="disk full"):
        index.save(path)
    assert path.read_bytes() == before and len(ExactIndex.load(path)) == 50
