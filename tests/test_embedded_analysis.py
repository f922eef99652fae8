"""Issue 26.1: one embedded analysis per paper (``core.labelling.analysis.label_paper``,
``core.labelling.embedded_analysis``),
cached with its vectors (``core.cache``: a ``.npz`` read with ``allow_pickle=False``, checked against its
sha256); a damaged entry is computed again with a note; ``core.labelling.analysis_vectors`` answers ``embed``
from it;
``rhetorica analyze`` reads and writes the same cache entry."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import numpy as np
import pytest

from core.cache import AnalysisCache
from core.document import Paper
from core.labelling.analysis import PaperAnalysis, analyze_paper, label_paper
from core.labelling.analysis_vectors import AnalysisVectors
from core.labelling.embedded_analysis import embedded_analysis
from core.paths import resources_dir, sample_paper_path

SHIPPED = resources_dir() / "models" / "default"
pytestmark = pytest.mark.skipif(not (SHIPPED / "manifest.json").is_file(), reason="no shipped model")


@pytest.fixture(scope="module")
def model():  # type: ignore[no-untyped-def]
    from models import load_model

    return load_model(SHIPPED, device="cpu", threads=1)


@pytest.fixture(scope="module")
def paper() -> Paper:
    from core.pdf import parse_pdf

    return parse_pdf(sample_paper_path())


@pytest.fixture(scope="module")
def embedded(paper: Paper, model) -> PaperAnalysis:  # type: ignore[no-untyped-def]
    return label_paper(paper, model).embed()


def test_labels_then_vectors_match_the_one_shot_analysis(paper, model, embedded, encoded) -> None:  # type: ignore[no-untyped-def]
    whole = analyze_paper(paper, model, with_embeddings=True, with_function_vectors=True)
    assert [r.label for r in embedded.roles] == [r.label for r in whole.roles]
    assert embedded.functions is not None and whole.functions is not None
    assert [f.label for f in embedded.functions] == [f.label for f in whole.functions]
    assert embedded.embedded and embedded.embeddings is not None and embedded.function_vectors is not None
    np.testing.assert_allclose(embedded.embeddings, whole.embeddings, atol=1e-5)
    np.testing.assert_allclose(embedded.function_vectors, whole.function_vectors, atol=1e-5)
    assert embedded.figure_texts[0] == paper.title.strip() and len(embedded.figure_texts) > 1
    assert embedded.figure_vectors is not None and embedded.figure_vectors.shape == (
        len(embedded.figure_texts), model.embedding_dim)
    np.testing.assert_allclose(np.linalg.norm(embedded.figure_vectors, axis=1), 1.0, atol=1e-4)
    # The labels come before the content view, from the same run: embed() sends no text to the model.
    encoded.clear()
    labelled = label_paper(paper, model)
    assert labelled.analysis.embeddings is None and not labelled.analysis.embedded
    texts_labelled = sum(len(call) for call in encoded)
    assert texts_labelled == len(paper.sentences) + len(embedded.figure_texts)
    labelled.embed()
    assert sum(len(call) for call in encoded) == texts_labelled and labelled.analysis.embedded


def test_the_vectors_answer_embed_and_only_unknown_texts_reach_the_model(paper, model, embedded,  # type: ignore[no-untyped-def]
                                                                         encoded) -> None:
    vectors = AnalysisVectors(model, paper, embedded)
    wanted = [paper.sentences[3].text, f"  {embedded.figure_texts[1]} ", paper.title]
    rows = vectors.embed(wanted)
    assert encoded == [] and vectors.misses == 0
    assert embedded.embeddings is not None and embedded.figure_vectors is not None
    np.testing.assert_array_equal(rows[0], embedded.embeddings[3])
    np.testing.assert_array_equal(rows[1], embedded.figure_vectors[1])
    function = vectors.embed([paper.sentences[5].text], view="function")
    assert embedded.function_vectors is not None
    np.testing.assert_array_equal(function[0], embedded.function_vectors[5])
    fresh = vectors.embed(["A sentence this paper never wrote.", paper.sentences[0].text])
    assert vectors.misses == 1 and encoded == [["A sentence this paper never wrote."]]
    np.testing.assert_allclose(fresh[0], model.embed(["A sentence this paper never wrote."])[0], atol=1e-5)


def test_the_cache_keeps_both_views_and_reopening_runs_no_model(tmp_path, paper, model, embedded,  # type: ignore[no-untyped-def]
                                                                  encoded) -> None:
    cache = AnalysisCache(tmp_path)
    path = cache.save_analysis(paper, embedded)
    assert path.with_suffix(".npz").is_file()
    loaded = cache.load_analysis(paper, model.model_id, need_vectors=True)
    assert loaded is not None and loaded.embedded
    for name in ("embeddings", "function_vectors", "figure_vectors"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(embedded, name))
    assert loaded.figure_texts == embedded.figure_texts
    outcome = embedded_analysis(paper, model, cache=cache)
    assert outcome.from_cache and outcome.note == "" and encoded == []
    # A labels-only entry (what `rhetorica analyze` writes) serves labels, not vectors, and is kept.
    labels_only = dataclasses.replace(embedded, embeddings=None, function_vectors=None, figure_texts=[],
                                      figure_vectors=None)
    cache.save_analysis(paper, labels_only)
    assert not path.with_suffix(".npz").exists()
    assert cache.load_analysis(paper, model.model_id) is not None
    found = cache.read_analysis(paper, model.model_id, need_vectors=True)
    assert found.analysis is None and found.note == "" and path.is_file()
    made = embedded_analysis(paper, model, cache=cache)  # computed once, and cached with its vectors
    assert not made.from_cache and made.analysis.embedded and path.with_suffix(".npz").is_file()
    assert [r.label for r in made.analysis.roles] == [r.label for r in embedded.roles]


def _damage_flip(npz: Path, header: Path) -> None:
    data = bytearray(npz.read_bytes())
    data[len(data) // 2] ^= 0xFF
    npz.write_bytes(bytes(data))


def _damage_missing(npz: Path, header: Path) -> None:
    npz.unlink()


def _damage_shape(npz: Path, header: Path) -> None:
    """A well-formed .npz with one row too few, its hash put in the header: the shapes are checked too."""
    with np.load(npz, allow_pickle=False) as arrays:
        kept = {name: arrays[name] for name in arrays.files}
    kept["content"] = kept["content"][:-1]
    _replace(npz, header, kept)


class _Marker:
    """Unpickling this would create a file: the cache must never unpickle."""

    target = ""

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (Path.touch, (Path(self.target),))


def _damage_pickle(npz: Path, header: Path) -> None:
    with np.load(npz, allow_pickle=False) as arrays:
        kept: dict[str, np.ndarray] = {name: arrays[name] for name in arrays.files}
    marker = _Marker()
    marker.target = str(npz.parent / "ran-code")
    payload = np.empty(1, dtype=object)
    payload[0] = marker
    kept["content"] = payload
    _replace(npz, header, kept)  # np.savez pickles the object array


def _replace(npz: Path, header: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as the entry's .npz and its sha256 into the entry's header."""
    import hashlib

    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    data = buffer.getvalue()
    npz.write_bytes(data)
    lines = header.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["vectors"]["sha256"] = hashlib.sha256(data).hexdigest()
    header.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")


@pytest.mark.parametrize("damage", [_damage_flip, _damage_missing, _damage_shape, _damage_pickle],
                         ids=["changed", "missing", "wrong-shape", "pickled-object"])
def test_a_damaged_entry_is_computed_again_with_a_note(tmp_path, paper, model, embedded, damage) -> None:  # type: ignore[no-untyped-def]
    cache = AnalysisCache(tmp_path)
    path = cache.save_analysis(paper, embedded)
    damage(path.with_suffix(".npz"), path)
    found = cache.read_analysis(paper, model.model_id, need_vectors=True)
    assert found.analysis is None and found.note.startswith("The cached analysis of ")
    assert "computed again" in found.note and "\n" not in found.note
    assert not path.exists() and not path.with_suffix(".npz").exists()  # the damaged entry is gone
    assert not (path.parent / "ran-code").exists()
    cache.save_analysis(paper, embedded)
    damage(path.with_suffix(".npz"), path)
    outcome = embedded_analysis(paper, model, cache=cache)
    assert not outcome.from_cache and outcome.analysis.embedded and "damaged" in outcome.note
    assert cache.load_analysis(paper, model.model_id, need_vectors=True) is not None  # cached whole again


def test_a_truncated_entry_is_a_note_not_a_crash(tmp_path, paper, model, embedded) -> None:  # type: ignore[no-untyped-def]
    cache = AnalysisCache(tmp_path)
    path = cache.save_analysis(paper, embedded)
    path.write_bytes(path.read_bytes()[:200])
    found = cache.read_analysis(paper, model.model_id)
    assert found.analysis is None and "damaged" in found.note and not path.exists()


def test_rhetorica_analyze_shares_the_cache(tmp_path, monkeypatch, capsys, paper, model, embedded) -> None:  # type: ignore[no-untyped-def]
    from app.cli import main

    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    args = ["analyze", str(sample_paper_path()), "--model", str(SHIPPED), "--device", "cpu", "--quiet"]
    assert main([*args, "--no-cache"]) == 0
    assert "labelling" in capsys.readouterr().out and not (tmp_path / "home" / "cache").exists()
    assert main(args) == 0
    assert "labels from the cache" not in capsys.readouterr().out
    cache = AnalysisCache()
    cached = cache.load_analysis(paper, model.model_id)
    assert cached is not None and [r.label for r in cached.roles] == [r.label for r in embedded.roles]
    assert main(args) == 0
    assert "labels from the cache" in capsys.readouterr().out
    # The app's embedded analysis, when it is there, is what analyze reads (the same entry).
    cache.save_analysis(paper, embedded)
    assert main([*args, "--json", str(tmp_path / "out.json")]) == 0
    assert "labels from the cache" in capsys.readouterr().out
    assert cache.load_analysis(paper, model.model_id, need_vectors=True) is not None  # not overwritten


def test_align_of_a_pdf_shares_the_cached_analysis(tmp_path, monkeypatch, capsys,  # type: ignore[no-untyped-def]
                                                   paper, encoded) -> None:
    """`rhetorica align PDF ...` embeds the PDF once; a second run encodes none of its sentences (the
    embedded analysis is read from the cache the app shares; `search --like` reads it the same way)."""
    from app.cli import main

    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    draft = tmp_path / "draft.txt"
    draft.write_text("We propose a method for labelling sentences. It works well.", encoding="utf-8")
    pdf = str(sample_paper_path())
    common = ["--model", str(SHIPPED), "--device", "cpu", "--quiet"]
    assert main(["align", pdf, str(draft), *common]) == 0
    encoded_texts = [t for call in encoded for t in call]
    assert paper.sentences[0].text in encoded_texts
    encoded.clear()
    assert main(["align", pdf, str(draft), *common]) == 0
    again = {t for call in encoded for t in call}
    assert not again & {s.text for s in paper.sentences}  # the PDF's sentences were not encoded again
    capsys.readouterr()
