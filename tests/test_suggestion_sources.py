"""The suggestion use case shared by ``rhetorica suggest`` and the Suggestions panel
(``core.phrasing.suggestion_sources``, issue 26.2): which folders count, each paper read once with its PDF
path
attached, a broken library left out while another source answers, and no sources said clearly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hnswlib")

from core.document import PageRect, Paper, Section, SectionKind, Sentence
from core.errors import RhetoricaError
from core.jobs import ensure_context
from core.library.library import Library
from core.library.store import DATABASE_NAME, MissingDatabaseError
from core.phrasing.suggestion_sources import (
    NoSources,
    SuggestionRequest,
    find_suggestions,
    model_mismatch,
    opened_sources,
    search,
    source_folders,
)
from tests.tiny_bundle import make_tiny_bundle

ROWS = [
    {"id": "a", "title": "Abstracts A", "sentences": ["We propose a new method for parsing scientific text.",
                                                      "Results show that it works well."]},
    {"id": "b", "title": "Abstracts B", "sentences": [
        "We propose a simple and fast method.",
        "Experiments on two datasets demonstrate large gains."]},
]
QUERY = "We propose a method for parsing."


def _pdf_paper(pdf: Path) -> Paper:
    texts = ["We propose a simple method for parsing.", "Results show large gains in accuracy."]
    sentences = [Sentence(id=f"s{i}", text=t, section_index=0, index=i, pages=[0],
                          rects=[PageRect(0, 72, 100 + 14 * i, 300, 112 + 14 * i)])
                 for i, t in enumerate(texts)]
    return Paper(title="A paper from a PDF", source_path=str(pdf), sha256="cd" * 32,
                 page_sizes=[(612.0, 792.0)], sentences=sentences,
                 sections=[Section("Introduction", SectionKind.INTRODUCTION, sentence_count=2)])


@pytest.fixture()
def model(tmp_path: Path) -> Any:
    from models import load_model

    return load_model(make_tiny_bundle(tmp_path / "bundle"), device="cpu", threads=1)


def _library(folder: Path, model: Any, pdf: Path | None = None) -> Path:
    rows = folder.parent / f"{folder.name}.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    with Library(folder) as library:
        library.import_jsonl(rows, model)
        if pdf is not None:
            library.add_paper(_pdf_paper(pdf), model)
    return folder


def test_each_paper_is_read_once_and_a_pdf_paper_gets_its_path(tmp_path: Path, model: Any,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(b"%PDF-1.4 stand-in: only its path matters here")
    folder = _library(tmp_path / "lib", model, pdf)
    reads: list[str] = []
    real = Library.paper
    def counted(self: Library, paper_id: str) -> object:
        reads.append(paper_id)
        return real(self, paper_id)

    monkeypatch.setattr(Library, "paper", counted)
    found = find_suggestions(ensure_context(None), SuggestionRequest(QUERY, k=10), model,
                             [("library", folder)], None)
    items = found.result.suggestions
    assert items and found.left_out == []
    assert len(reads) == len(set(reads))  # the title and the path come from one read per paper
    from_pdf = [s for s in items if s.source["title"] == "A paper from a PDF"]
    others = [s for s in items if s.source["title"] != "A paper from a PDF"]
    assert from_pdf and all(s.source["path"] == str(pdf) for s in from_pdf)
    assert others and all("path" not in s.source for s in others)  # imported abstracts have no PDF


def test_a_broken_library_is_left_out_while_another_source_answers(tmp_path: Path, model: Any) -> None:
    corpus = _library(tmp_path / "corpus", model)
    broken = _library(tmp_path / "lib", model)
    (broken / DATABASE_NAME).write_bytes(b"")  # the database emptied: its papers are gone from it
    folders = [("corpus", corpus), ("library", broken)]
    with opened_sources(folders, model) as opened:
        result = search(opened, SuggestionRequest(QUERY), model)
        assert [s.kind for s in opened.sources] == ["corpus"]
        assert len(opened.left_out) == 1 and isinstance(opened.left_out[0], MissingDatabaseError)
    assert result.suggestions and {s.source["kind"] for s in result.suggestions} == {"corpus"}
    with pytest.raises(MissingDatabaseError):  # alone, the broken library's error is the answer
        find_suggestions(ensure_context(None), SuggestionRequest(QUERY), model, [("library", broken)], None)


def test_no_sources_and_the_folders_that_count(tmp_path: Path, model: Any) -> None:
    with pytest.raises(NoSources, match="rhetorica corpus build"):
        find_suggestions(ensure_context(None), SuggestionRequest(QUERY), model, [], None)
    empty, library = tmp_path / "nothing", _library(tmp_path / "lib", model)
    assert source_folders("all", corpus=empty, library=library) == [("library", library)]
    assert source_folders("corpus", corpus=empty, library=library) == []
    (library / DATABASE_NAME).unlink()  # a library whose database has gone still leaves traces
    assert source_folders("all", corpus=empty, library=library) == []
    assert source_folders("all", corpus=empty, library=library, with_traces=True) == [("library", library)]
    assert not (empty).exists()  # looking creates nothing


def test_a_library_of_another_model_is_named(tmp_path: Path, model: Any) -> None:
    from models import load_model

    folder = _library(tmp_path / "lib", model)
    other = load_model(make_tiny_bundle(tmp_path / "other", seed=3), device="cpu", threads=1)
    with opened_sources([("library", folder)], other) as opened:
        error = model_mismatch(opened.sources, other)
    assert isinstance(error, RhetoricaError)
    assert f"built with {model.model_id}" in str(error) and other.model_id in str(error)
    with opened_sources([("library", folder)], model) as opened:
        assert model_mismatch(opened.sources, model) is None
