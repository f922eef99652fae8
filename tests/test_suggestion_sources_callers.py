"""Every caller of the suggestion use case reads the same sources (``core.phrasing.suggestion_sources``):
for the same settings the language server (``app.lsp.engine.DraftEngine``) gives the suggestions that
``rhetorica suggest`` gives (same sentences, sources and similarities), leaves a broken library out the
same way, and ``rhetorica bench suggest`` opens the same folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hnswlib")

from app.cli import main
from app.lsp.engine import DraftEngine
from app.lsp.settings import LspSettings
from core.library.library import Library
from core.library.pack import build_pack, file_sha256
from core.library.store import DATABASE_NAME
from tests.phrase_paper_fakes import FakePaper, FakeSection
from tests.tiny_bundle import make_tiny_bundle

CORPUS_PAPERS = [
    FakePaper("csabstruct", "c1", "Corpus paper one", [FakeSection("Abstract", "abstract", [
        "We propose a new method for parsing scientific text.",
        "Results show that the method works well on two datasets."])]),
    FakePaper("scirex", "c2", "Corpus paper two", [FakeSection("Introduction", "introduction", [
        "Little attention has been paid to the role of syntax here.",
        "Experiments on three corpora demonstrate large gains over baselines."])]),
]
LIBRARY_ROWS = [
    {"id": "mine-1", "title": "My first paper", "sentences": [
        "We propose a fast method for tagging citations.", "Our results show clear gains in recall."]},
    {"id": "mine-2", "title": "My second paper", "sentences": [
        "Little is known about how authors revise drafts.", "We introduce a corpus of revisions."]},
]
QUERY = "We propose a simple method for parsing."


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path, Path]:
    """(model, a phrase-corpus pack, a library), all built with the same tiny model."""
    from models import load_model

    tmp = tmp_path_factory.mktemp("callers")
    model = load_model(make_tiny_bundle(tmp / "bundle"), device="cpu", threads=1)
    sha = file_sha256(model.bundle_dir / "model.onnx")
    build_pack(CORPUS_PAPERS, model, tmp / "corpus", {"model_id": model.model_id, "model_sha256": sha})
    return model, tmp / "corpus", _library(tmp / "lib", model)


def _library(folder: Path, model: Any) -> Path:
    rows = folder.parent / f"{folder.name}.jsonl"
    rows.write_text("".join(json.dumps(row) + "\n" for row in LIBRARY_ROWS), encoding="utf-8")
    with Library(folder) as library:
        library.import_jsonl(rows, model)
    return folder


def _lsp(model: Any, which: str, corpus: Path, library: Path) -> tuple[list[tuple[Any, ...]], str]:
    """The language server's suggestions for QUERY alone in a draft (no heading, no neighbours: the
    context the CLI reads it in), and its note."""
    engine = DraftEngine(model, LspSettings(suggestions=10, sources=which, corpus=str(corpus),
                                            library=str(library)))
    try:
        labelled = engine.label(QUERY, "txt")
        assert len(labelled.labels) == 1
        result, note = engine.suggestions(labelled, 0)
    finally:
        engine.close()
    return _rows(result), note


def _rows(result: Any) -> list[tuple[Any, ...]]:
    return [] if result is None else [_row(s.text, s.source, s.similarity) for s in result.suggestions]


def _cli(capsys: pytest.CaptureFixture[str], model: Any, which: str, corpus: Path,
         library: Path) -> tuple[list[tuple[Any, ...]], str]:
    """``rhetorica suggest QUERY --json`` with the same settings, and what it warned about."""
    capsys.readouterr()
    assert main(["suggest", QUERY, "--json", "-k", "10", "--source", which, "--corpus", str(corpus),
                 "--library", str(library), "--model", str(model.bundle_dir), "--threads", "1",
                 "--device", "cpu"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    return [_row(s["text"], s["source"], s["similarity"]) for s in result["suggestions"]], captured.err


def _row(text: str, source: dict[str, str], similarity: float) -> tuple[Any, ...]:
    return text, source["kind"], source["paper_id"], round(float(similarity), 4)


@pytest.mark.parametrize(("which", "kinds"), [("all", {"corpus", "library"}), ("corpus", {"corpus"}),
                                              ("library", {"library"})])
def test_the_language_server_and_the_cli_suggest_from_the_same_sources(
        sources: tuple[Any, Path, Path], capsys: pytest.CaptureFixture[str], which: str,
        kinds: set[str]) -> None:
    model, corpus, library = sources
    lsp, note = _lsp(model, which, corpus, library)
    cli, _ = _cli(capsys, model, which, corpus, library)
    assert note == "" and lsp and {row[1] for row in lsp} == kinds
    assert lsp == cli


def test_a_missing_library_or_no_sources_at_all(sources: tuple[Any, Path, Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    model, corpus, _ = sources
    nowhere = tmp_path / "no-library"
    lsp, _ = _lsp(model, "all", corpus, nowhere)
    assert lsp and {row[1] for row in lsp} == {"corpus"}
    assert lsp == _cli(capsys, model, "all", corpus, nowhere)[0]
    assert not nowhere.exists()  # looking creates nothing
    assert _lsp(model, "none", corpus, nowhere) == ([], "no suggestions: suggestions are off (sources: none)")
    lsp, note = _lsp(model, "library", corpus, nowhere)
    assert lsp == [] and "rhetorica corpus build" in note and "rhetorica library add" in note


def test_a_library_added_while_the_server_runs_is_read_as_the_cli_reads_it(
        sources: tuple[Any, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model, corpus, _ = sources
    later = tmp_path / "later"
    engine = DraftEngine(model, LspSettings(suggestions=10, corpus=str(corpus), library=str(later)))
    try:
        labelled = engine.label(QUERY, "txt")
        before = _rows(engine.suggestions(labelled, 0)[0])
        _library(later, model)  # the library is made after the first hover (same settings)
        after = _rows(engine.suggestions(labelled, 0)[0])
    finally:
        engine.close()
    assert {row[1] for row in before} == {"corpus"} and {row[1] for row in after} == {"corpus", "library"}
    assert after == _cli(capsys, model, "all", corpus, later)[0]


def test_a_broken_library_is_left_out_by_both_while_the_corpus_answers(
        sources: tuple[Any, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model, corpus, _ = sources
    broken = _library(tmp_path / "broken", model)
    (broken / DATABASE_NAME).write_bytes(b"")  # the database emptied: its papers are gone from it
    lsp, note = _lsp(model, "all", corpus, broken)
    cli, warning = _cli(capsys, model, "all", corpus, broken)
    assert lsp and {row[1] for row in lsp} == {"corpus"} and lsp == cli
    assert note.startswith("suggestions from the phrase corpus only: ")
    assert "rhetorica: warning: suggestions from the phrase corpus only: " in warning


@pytest.mark.parametrize(("with_library", "kinds"), [(False, {"corpus"}), (True, {"corpus", "library"})])
def test_bench_suggest_opens_the_folders_the_cli_reads(sources: tuple[Any, Path, Path], tmp_path: Path,
                                                        with_library: bool, kinds: set[str]) -> None:
    model, corpus, library = sources
    queries = tmp_path / "queries.txt"
    queries.write_text(QUERY + "\nOur results show large gains.\n", encoding="utf-8")
    out = tmp_path / "bench.json"
    extra = ["--library", str(library)] if with_library else []
    assert main(["bench", "suggest", "--corpus", str(corpus), "--model", str(model.bundle_dir),
                 "--input", str(queries), "--threads", "1", "-k", "3", "--json", str(out), *extra]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["sources"] == {"corpus": 4, **({"library": 4} if with_library else {})}
    assert set(report["sources"]) == kinds and report["queries"] == 2 and report["mean_suggestions"] > 0
