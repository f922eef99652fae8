"""core.alignment.align_sides: the alignment sides ``rhetorica align`` and the Alignment panel both make
(issue 26.2), with the tiny function bundle: a draft's text as a side, the one-line refusals, the embedding
check, and a PDF's side read back from the analysis cache without a second encoder run."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.alignment.align_sides import (
    DIFFERENT_MODELS,
    align_sides,
    analysed_side,
    check_comparable,
    draft_text_side,
    pdf_side,
    require_text,
)
from core.document import Paper
from core.errors import Cancelled, RhetoricaError
from core.jobs import JobContext
from tests.paper_factory import make_paper
from tests.tiny_bundle import make_tiny_bundle

DRAFT = ("# Abstract\nPrevious work has studied this problem. Our goal is to improve accuracy.\n"
         "# Method\nWe propose a simple and fast method.\n"
         "# Conclusion\nIn conclusion the approach is simple.\n")


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from models import load_model

    return load_model(make_tiny_bundle(tmp_path_factory.mktemp("sides") / "bundle", functions=True),
                      device="cpu", threads=1)


def test_a_drafts_text_is_a_side_and_two_sides_align(model: Any) -> None:
    side = draft_text_side(DRAFT, model)
    assert side.kind == "draft" and side.title == "Draft" and len(side) == 4
    assert [s.section_kind for s in side.sentences] == ["abstract", "abstract", "method", "conclusion"]
    assert np.allclose(np.linalg.norm(side.function, axis=1), 1.0)
    alignment = align_sides(side, draft_text_side(DRAFT, model), function_weight=0.5)
    assert alignment.pairs and alignment.settings.function_weight == 0.5


def test_refusals_are_one_line_naming_the_input(model: Any) -> None:
    empty = Paper(title="", source_path="x.pdf", sha256="0" * 64, page_sizes=[])
    with pytest.raises(RhetoricaError, match=r"^x\.pdf: no text found in the PDF \(a scanned paper\?\)$"):
        require_text(empty, "x.pdf")
    with pytest.raises(RhetoricaError, match=r"^the draft has no sentences$"):
        analysed_side(empty, model)
    with pytest.raises(RhetoricaError, match=r"^notes\.md: the draft has no sentences$"):
        analysed_side(empty, model, name="notes.md")
    side = draft_text_side(DRAFT, model)
    narrow = dataclasses.replace(side, function=side.function[:, :2])
    with pytest.raises(RhetoricaError, match=re.escape(DIFFERENT_MODELS)):
        check_comparable(side, narrow)
    with pytest.raises(RhetoricaError, match=r"^other words$"):
        align_sides(side, narrow, message="other words")
    ctx = JobContext()
    ctx.cancel()
    with pytest.raises(Cancelled):
        align_sides(side, side, ctx=ctx)


def test_a_pdf_side_comes_from_the_cache_the_second_time(model: Any, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import core.labelling.embedded_analysis
    from core.cache import AnalysisCache

    cache = AnalysisCache(tmp_path / "cache")
    paper = make_paper()
    first = pdf_side(paper, model, cache=cache, sha256=paper.sha256)
    assert first.side.kind == "pdf" and len(first.side) == len(paper.sentences) and first.note == ""
    assert first.analysis.embedded and first.paper is paper

    def no_encoder(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the encoder ran again")

    monkeypatch.setattr(core.labelling.embedded_analysis, "start_embedded_analysis", no_encoder)
    again = pdf_side(paper, model, cache=cache, sha256=paper.sha256)
    assert np.array_equal(again.side.content, first.side.content)
    assert [s.function for s in again.side.sentences] == [s.function for s in first.side.sentences]
