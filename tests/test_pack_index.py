"""A big phrase-corpus pack is searched through ``function.ann`` (faiss IVF + 8-bit candidates,
re-ranked exactly on the pack's int8 rows): the recall and the similarities of exact search; a
stale or damaged index file is never used; a small pack has none."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

if importlib.util.find_spec("faiss") is None:
    pytest.skip("faiss is not installed", allow_module_level=True)

from core.library.pack_format import SCALES, VECTORS, quantise_rows
from core.library.pack_index import PACK_INDEX, PackSearch, write_pack_index


def _rows(n: int, dim: int = 32, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    topics = np.random.default_rng(99).standard_normal((300, dim))
    return (topics[rng.integers(0, 300, n)] + 0.8 * rng.standard_normal((n, dim))).astype(np.float32)


def _pack(folder: Path, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    folder.mkdir(parents=True, exist_ok=True)
    quantised, scales = quantise_rows(vectors)
    np.save(folder / VECTORS, quantised)
    np.save(folder / SCALES, scales)
    return np.load(folder / VECTORS, mmap_mode="r"), np.load(folder / SCALES)


def _unit(queries: np.ndarray) -> np.ndarray:
    return queries / np.linalg.norm(queries, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pack") / "corpus"
    vectors, scales = _pack(folder, _rows(25_000))
    assert write_pack_index(folder / VECTORS, vectors, scales, exact_below=1_000) == folder / PACK_INDEX
    return folder


def _open(folder: Path) -> PackSearch:
    return PackSearch(folder / VECTORS, np.load(folder / VECTORS, mmap_mode="r"), np.load(folder / SCALES))


def test_a_big_pack_is_searched_through_its_index_with_exact_similarities(pack: Path, tmp_path: Path) -> None:
    search = _open(pack)
    assert search.index is not None and search.index.engine == "faiss-ivf-sq8"
    exact = _open(pack)
    exact.index = None  # the same rows, searched exactly
    queries = _unit(_rows(200, seed=1))
    truth, true_scores = exact.search(queries, 10)
    found, scores = search.search(queries, 10)
    assert found.shape == (200, 10)
    hits = np.mean([len(set(a.tolist()) & set(b.tolist())) for a, b in zip(truth, found)]) / 10
    assert hits >= 0.95
    same = found == truth
    assert same.mean() > 0.9 and np.allclose(scores[same], true_scores[same], atol=1e-5)  # re-ranked exactly
    assert search.search(queries[:1], 0)[0].shape == (1, 0)


def test_an_index_of_other_vectors_or_a_damaged_one_is_not_used(pack: Path, tmp_path: Path) -> None:
    import shutil

    stale = Path(shutil.copytree(pack, tmp_path / "stale"))
    _pack(stale, _rows(25_000, seed=7))  # the pack was rebuilt; function.ann is the old one
    assert _open(stale).index is None
    damaged = Path(shutil.copytree(pack, tmp_path / "damaged"))
    data = (damaged / PACK_INDEX).read_bytes()
    (damaged / PACK_INDEX).write_bytes(data[: len(data) // 3])
    search = _open(damaged)
    assert search.index is None
    queries = _unit(_rows(5, seed=2))
    reference = _open(pack)
    reference.index = None
    assert search.search(queries, 10)[0].tolist() == reference.search(queries, 10)[0].tolist()


def test_a_small_pack_has_no_index_and_loses_a_stale_one(pack: Path, tmp_path: Path) -> None:
    import shutil

    folder = Path(shutil.copytree(pack, tmp_path / "small"))
    vectors, scales = _pack(folder, _rows(500, seed=3))
    assert write_pack_index(folder / VECTORS, vectors, scales) is None and not (folder / PACK_INDEX).exists()
    assert _open(folder).index is None


def test_a_pack_written_big_enough_carries_its_index_and_pack_corpus_uses_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import core.library.pack_index as pack_index
    from core.library.pack import PackCorpus
    from core.library.pack_format import PackPaper, PackSentence, write_pack

    monkeypatch.setattr(pack_index, "PACK_EXACT_BELOW", 20_000)
    vectors = _rows(24_000, dim=16, seed=4)
    papers = [PackPaper(f"p{i}", "csabstruct", f"Paper {i}", "Apache-2.0") for i in range(240)]
    sentences = [PackSentence(i // 100, i % 100, f"Sentence number {i} of the pack.", "Abstract", "abstract",
                              "method", "none") for i in range(24_000)]
    write_pack(tmp_path / "big", papers, sentences, vectors, {"model_id": "test"})
    assert (tmp_path / "big" / PACK_INDEX).is_file()
    queries = _unit(_rows(100, dim=16, seed=5))
    with PackCorpus(tmp_path / "big") as corpus:
        found, scores = corpus.search("function", queries, 10)
        assert corpus._search is not None and corpus._search.index is not None
    (tmp_path / "big" / PACK_INDEX).unlink()
    with PackCorpus(tmp_path / "big") as corpus:  # the same pack without it: exact
        truth, true_scores = corpus.search("function", queries, 10)
        assert corpus._search is not None and corpus._search.index is None
    hits = np.mean([len(set(a.tolist()) & set(b.tolist())) for a, b in zip(truth, found)]) / 10
    assert hits >= 0.95 and np.allclose(scores[found == truth], true_scores[found == truth], atol=1e-5)
    small = write_pack(tmp_path / "small", papers[:1], sentences[:100], vectors[:100], {"model_id": "test"})
    assert small["sentences"] == 100 and not (tmp_path / "small" / PACK_INDEX).exists()
