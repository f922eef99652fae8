"""analyze_paper / analyze_texts on a hand-built paper with the tiny test bundle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.document import Paper, Section, SectionKind, Sentence
from core.errors import Cancelled
from core.jobs import JobContext
from core.labelling.analysis import PaperAnalysis, analyze_paper, analyze_texts, role_mix
from models import load_model
from models.encoder import EncoderModel
from tests.tiny_bundle import make_tiny_bundle

SECTIONS = [
    ("Abstract", SectionKind.ABSTRACT, ["We propose a new method.", "Results show that it works well."]),
    ("Introduction", SectionKind.INTRODUCTION,
     [f"previous work has studied this problem {i}" for i in range(20)]),  # > window: windowed
    ("Method", SectionKind.METHOD, ["our goal is to improve accuracy"]),
    ("Conclusion", SectionKind.CONCLUSION, ["in conclusion the approach is simple and fast", "fast"]),
]


def make_paper() -> Paper:
    sections, sentences = [], []
    for index, (heading, kind, texts) in enumerate(SECTIONS):
        sections.append(Section(heading, kind, first_sentence=len(sentences), sentence_count=len(texts)))
        for text in texts:
            n = len(sentences)
            sentences.append(Sentence(f"s{n}", text, section_index=index, index=n, pages=[0]))
    return Paper("A paper", "paper.pdf", "ab" * 32, [(612.0, 792.0)], sections=sections,
                 sentences=sentences)


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> EncoderModel:
    return load_model(make_tiny_bundle(tmp_path_factory.mktemp("tiny") / "b", window=8), threads=1)


def test_analyze_paper_labels_each_section_as_a_document(model: EncoderModel) -> None:
    paper = make_paper()
    events = []
    analysis = analyze_paper(paper, model, JobContext(events.append), with_embeddings=True)
    assert analysis.paper_sha256 == paper.sha256 and analysis.model_id == model.model_id
    assert len(analysis.roles) == len(paper.sentences)
    expected = []
    for section in paper.sections:
        texts = [s.text for s in paper.sentences_in(section)]
        expected.extend(model.encode_document(texts, section.kind.value).probabilities)
    got = np.array([[r.probabilities[x] for x in model.labels] for r in analysis.roles])
    np.testing.assert_allclose(got, np.array(expected), atol=1e-6)
    # Not the same as labelling the whole paper as one unsectioned document.
    whole = model.role_probabilities([s.text for s in paper.sentences])
    assert not np.allclose(got, whole, atol=1e-3)
    assert analysis.embeddings is not None and analysis.embeddings.shape == (len(paper.sentences), 8)
    assert events[-1].done == events[-1].total == len(paper.sentences)
    assert [e.done for e in events] == sorted(e.done for e in events)
    assert analysis.timings["roles"] >= 0
    mix = role_mix(paper, analysis)
    assert [i for i, _ in mix] == [0, 1, 2, 3]
    assert sum(mix[1][1].values()) == 20


def test_analysis_json_round_trip(model: EncoderModel, tmp_path: Path) -> None:
    analysis = analyze_paper(make_paper(), model)
    again = PaperAnalysis.from_json(analysis.to_json())
    assert again.labels == analysis.labels
    assert again.model_id == analysis.model_id and again.paper_sha256 == analysis.paper_sha256
    for a, b in zip(again.roles, analysis.roles):
        assert a.confidence == pytest.approx(b.confidence, abs=1e-4)
    analysis.save(tmp_path / "a.json")
    assert PaperAnalysis.load(tmp_path / "a.json").labels == analysis.labels
    with pytest.raises(ValueError, match="schema version"):
        PaperAnalysis.from_dict({**analysis.to_dict(), "schema_version": 99})


def test_analyze_paper_cancels(model: EncoderModel, monkeypatch: pytest.MonkeyPatch) -> None:
    import core.labelling.analysis

    monkeypatch.setattr(core.labelling.analysis, "ENCODE_CHUNK", 1)  # a cancel check before every section
    ctx = JobContext()

    def cancel_after_first(progress) -> None:  # type: ignore[no-untyped-def]
        if progress.done > 0:
            ctx.cancel()

    ctx._on_progress = cancel_after_first
    with pytest.raises(Cancelled):
        analyze_paper(make_paper(), model, ctx)


def test_analyze_empty_paper(model: EncoderModel) -> None:
    paper = Paper("Empty", "e.pdf", "00" * 32, [(612.0, 792.0)])
    assert analyze_paper(paper, model).roles == []


def test_analyze_texts_is_one_document(model: EncoderModel) -> None:
    texts = ["We propose a new method.", "Results show that it works well.", "in conclusion"]
    analysis = analyze_texts(texts, model)
    np.testing.assert_allclose(
        [[r.probabilities[x] for x in model.labels] for r in analysis.roles],
        model.role_probabilities(texts), atol=1e-6)
    assert analysis.paper_sha256 != analyze_texts(texts[:2], model).paper_sha256
    assert [r.label for r in model.classify_roles(texts, "abstract")] == analyze_texts(
        texts, model, section_kind="abstract").labels


def test_sections_are_grouped_into_chunks_without_splitting_one() -> None:
    from core.labelling.analysis import _chunks

    runs = [(0, 0, 3), (1, 3, 10), (2, 10, 11), (3, 11, 20)]
    assert _chunks(runs, 5) == [[(0, 0, 3), (1, 3, 10)], [(2, 10, 11), (3, 11, 20)]]
    assert _chunks(runs, 100) == [runs] and _chunks([], 5) == []
