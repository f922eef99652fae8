"""Issue 26.1: the open paper goes through the encoder once. Opening it in the window and then using
Search, Alignment, Graphical abstract and "Add this paper to my library" runs the sentence graph once
over each of its texts (its sentences, its title and caption sentences): the panels and the library
read the session's embedded analysis. Reopening it runs the model on none of them (the cache holds the
vectors). Counted on the model API: every text ``EncoderModel.tokenize`` hands to the sentence graph."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from core.document import PageRect, Paper, Section, SectionKind, Sentence
from core.paths import sample_paper_path
from tests.gui_helpers import TIMEOUT_MS, model_bundle, open_window, own_user_folder

DRAFT = ("We study how authors structure their papers. We propose a method that labels every sentence. "
         "Results show that the labels agree with human judges.")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return model_bundle(tmp_path_factory)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return own_user_folder(tmp_path, monkeypatch)


def other_paper() -> Paper:
    texts = ["Prior work labels abstracts only.", "We label full papers with a small encoder.",
             "The encoder agrees with annotators on most sentences."]
    sentences = [Sentence(id=f"s{i}", text=t, section_index=0, index=i, pages=[0],
                          rects=[PageRect(0, 72, 100 + 14 * i, 300, 112 + 14 * i)])
                 for i, t in enumerate(texts)]
    return Paper(title="Another paper", source_path="/nowhere/other.pdf", sha256="0e" * 32,
                 page_sizes=[(612.0, 792.0)], sentences=sentences,
                 sections=[Section("Introduction", SectionKind.INTRODUCTION, sentence_count=len(texts))])


def texts_seen(calls: list[list[str]], texts: set[str]) -> Counter[str]:
    return Counter(t.strip() for call in calls for t in call if t.strip() in texts)


def test_the_open_paper_is_encoded_once_whatever_the_panels_do(qtbot, bundle, folder, encoded) -> None:  # type: ignore[no-untyped-def]
    from core.library.library import Library
    from models import load_model

    with Library(folder) as library:  # a library with one other paper, so the search ranks something
        library.add_paper(other_paper(), load_model(bundle, device="cpu", threads=1))
    encoded.clear()
    for window in open_window(qtbot, bundle):
        session = window.session
        with qtbot.waitSignal(session.analysisEmbedded, timeout=TIMEOUT_MS):
            assert window.open_path(str(sample_paper_path()))
        analysis = session.embedded
        paper = session.paper
        assert analysis is not None and paper is not None and analysis.embedded
        assert len(analysis.figure_texts) > 1  # the title and the caption sentences rode along
        texts = {s.text.strip() for s in paper.sentences} | set(analysis.figure_texts)
        once = texts_seen(encoded, texts)
        assert set(once) == texts and max(once.values()) == max(
            Counter(s.text.strip() for s in paper.sentences).values())  # each text once (repeats: as often)
        runs_after_opening = len(encoded)

        search = window.panels["search"]
        assert search.search()
        qtbot.waitUntil(lambda p=search: not p.busy, timeout=TIMEOUT_MS)
        assert search.outcome is not None
        assert [h.paper_id for h in search.outcome.result.results] == ["0e" * 32]

        alignment = window.panels["alignment"]
        assert alignment.compare_with_draft(DRAFT)
        qtbot.waitUntil(lambda p=alignment: not p.busy, timeout=TIMEOUT_MS)
        assert alignment.alignment is not None
        assert len(alignment.alignment.a.sentences) == len(paper.sentences)

        abstract = window.panels["graphical_abstract"]
        assert abstract.suggest()
        qtbot.waitUntil(lambda p=abstract: p.ranking is not None and not p.busy, timeout=TIMEOUT_MS)
        assert abstract.ranking is not None and abstract.ranking.figures

        library_panel = window.panels["library"]
        library_panel.add_current_paper()
        qtbot.waitUntil(lambda p=library_panel: not p.busy, timeout=TIMEOUT_MS)
        with Library(folder) as library:
            assert library.store.has_sha256(paper.sha256)
            stored = library.store.paper(paper.sha256)
            assert stored is not None

        # Only the draft went through the encoder since the paper was opened; none of the paper's texts.
        later = encoded[runs_after_opening:]
        assert texts_seen(later, texts) == Counter()
        assert any("We propose a method that labels every sentence." in call for call in later)

        # Reopened: the cache holds the embedded analysis with its vectors; the model runs on nothing.
        window.close_paper()
        before = len(encoded)
        with qtbot.waitSignal(session.analysisEmbedded, timeout=TIMEOUT_MS):
            assert window.open_path(str(sample_paper_path()))
        assert session.vectors_from_cache is True and session.embedded is not None
        assert session.from_cache == {"paper": True, "analysis": True}
        assert encoded[before:] == []

        # A damaged vectors file: said in one line (``noted``), computed again, never a crash.
        window.close_paper()
        npz = next((Path(folder.parent / "home" / "cache" / "analyses")).glob("*.npz"))
        npz.write_bytes(npz.read_bytes()[:-100])
        with qtbot.waitSignal(session.noted, timeout=TIMEOUT_MS) as noted, \
                qtbot.waitSignal(session.analysisEmbedded, timeout=TIMEOUT_MS):
            assert window.open_path(str(sample_paper_path()))
        assert noted.args is not None and "damaged" in noted.args[0] and "\n" not in noted.args[0]
        assert session.vectors_from_cache is False and session.embedded is not None
