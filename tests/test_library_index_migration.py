"""A library saved by an earlier version (hnswlib index files named content.hnsw / function.hnsw, with
their integrity records) opens in this one: each index is rebuilt from the database in the faiss
engine, once, with one notice, under today's name (content.ann / function.ann; the earlier file is
gone), and answers as exact search does; adding and removing papers then keeps the new index in step."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("hnswlib")
pytest.importorskip("faiss")

from core.library.ann_index import MAGIC, IvfSq8Index
from core.library.index import HnswIndex
from core.library.library import INDEX_FILES, Library, exact_reference
from core.library.store import EARLIER_INDEX_FILES
from tests.library_damage import build_library, rows, write_rows
from tests.tiny_bundle import make_tiny_bundle


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from models import load_model

    bundle = make_tiny_bundle(tmp_path_factory.mktemp("migration") / "bundle", functions=True)
    return load_model(bundle, device="cpu", threads=1)


def _as_an_earlier_version_saved_it(folder: Path) -> None:
    """Replace each index file by the hnswlib index the earlier version wrote, under the name it
    gave it, with the records it kept (count and integrity record of the file)."""
    with Library(folder) as library:
        for view, name in EARLIER_INDEX_FILES.items():
            vectors = list(library.store.vectors(view))
            ids = np.concatenate([i for i, _ in vectors])
            old = HnswIndex(int(vectors[0][1].shape[1]), capacity=len(ids))
            old.add(ids, np.concatenate([v for _, v in vectors]))
            record = old.save(folder / name)
            (folder / INDEX_FILES[view]).unlink()
            library.store.set_metas({f"index.{view}.count": str(len(old)),
                                     f"index.{view}.file": record.to_json()})


def test_an_hnswlib_library_is_rebuilt_once_and_answers_as_exact_search(  # type: ignore[no-untyped-def]
        model, tmp_path: Path) -> None:
    folder = build_library(tmp_path / "lib", model, papers=30)
    _as_an_earlier_version_saved_it(folder)
    assert not (folder / "content.hnsw").read_bytes().startswith(MAGIC)
    assert not any(p.suffix == ".ann" for p in folder.iterdir())
    heard: list[str] = []
    query = model.embed(["We propose a new method."])
    with Library(folder, on_notice=heard.append) as library:
        index = library.index("content")
        assert isinstance(index, IvfSq8Index) and len(index) == 150
        assert heard == ["the library index content.ann (until now content.hnsw) is an hnswlib index of "
                         "an earlier version: rebuilt it from the database (150 sentences)"]
        reference = exact_reference(library, "content")
        assert reference is not None
        assert library.search("content", query, 10)[0].tolist() == reference.search(query, 10)[0].tolist()
        assert isinstance(library.index("function"), IvfSq8Index) and len(heard) == 2
    for name in INDEX_FILES.values():
        assert (folder / name).read_bytes().startswith(MAGIC)
    assert not any(p.suffix == ".hnsw" or p.name.startswith(".") for p in folder.iterdir())
    with Library(folder, on_notice=heard.append) as library:  # put right once: quiet from then on
        assert len(library.index("content")) == 150 and len(heard) == 2
        more = [{**row, "id": f"more-{number}"} for number, row in enumerate(rows(2, seed=5))]
        report = library.import_jsonl(write_rows(tmp_path / "more.jsonl", more), model)
        assert len(report.added) == 2 and len(library.index("content")) == 160
        gone = {s.id for s in library.store.sentences_of("paper-0003")}
        library.remove("paper-0003")
        found = library.search("content", query, 200)[0][0].tolist()
        assert len(found) == 155 and not gone & set(found)
    with Library(folder, on_notice=heard.append) as library:  # and the saved file says the same
        assert sorted(library.index("content").ids().tolist()) == sorted(
            np.concatenate([i for i, _ in library.store.vectors("content")]).tolist())
        assert len(heard) == 2
