"""Issue 24.5/24.6 in the panels (offscreen): the inspector shows an uncertain role with its runner-up
and an unclear function with its top candidate; the Suggestions panel reads its query in the context
it has (the page sentence's section, the draft's heading and neighbours) and says how it read it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from core.labelling.sentence_context import SentenceContext, context_in_paper
from core.taxonomy.labels import ROLES, FunctionPrediction, RolePrediction
from tests.gui_helpers import model_bundle, show_panel
from tests.paper_factory import make_analysis, make_paper


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return model_bundle(tmp_path_factory)


def _weak() -> RolePrediction:
    probabilities = dict.fromkeys(ROLES, 0.06)
    probabilities.update(method=0.41, result=0.35)
    return RolePrediction("method", probabilities)


def test_the_inspector_shows_an_uncertain_role_and_an_unclear_function(qtbot, bundle: Path) -> None:  # type: ignore[no-untyped-def]
    from app.gui.panels.inspector import InspectorPanel
    from core.taxonomy.functions import default_taxonomy

    paper = make_paper()
    for panel in show_panel(qtbot, InspectorPanel, bundle, (420, 420), paper=paper):
        analysis = make_analysis(paper)
        roles = list(analysis.roles)
        roles[3] = _weak()
        functions = [FunctionPrediction("none", (("definition", 0.18), ("aim", 0.1)))] * len(roles)
        panel.session.analysis = dataclasses.replace(analysis, roles=roles, functions=functions)
        panel.show_sentence(3)
        assert panel.role.text() == "uncertain: method 41% or result 35%"
        assert "dashed" in panel.role.styleSheet() and "leave it out" in panel.role.toolTip()
        text = panel.function.text()
        assert "no clear function" in text and "18%" in text
        assert default_taxonomy().name_of("definition") in text
        panel.show_sentence(2)  # a confident one: the role and its probability on a solid chip
        assert panel.role.text() == "result  90%" and "dashed" not in panel.role.styleSheet()
        assert panel.role.toolTip() == ""


def test_the_suggestion_query_carries_the_draft_heading_and_neighbours(qtbot, bundle: Path) -> None:  # type: ignore[no-untyped-def]
    from app.gui.panels.suggestions import SuggestionsPanel

    paper = make_paper()
    context = SentenceContext("We used R.", ("We fit a model.",), ("We tested it.",), "method")
    for panel in show_panel(qtbot, SuggestionsPanel, bundle, (420, 500), paper=paper):
        assert isinstance(panel, SuggestionsPanel)
        panel._sources = lambda: []  # nothing to search: only the query is looked at
        panel.set_draft_context_provider(lambda: context)
        panel.set_draft_sentence("We used R.")
        assert panel.origin == "draft" and panel.query().context == context
        panel.set_draft_sentence("Something else.")  # the provider's sentence is another: read alone
        assert panel.query().context is None and panel.query().text == "Something else."
        panel.session.select_sentence(1)
        assert panel.origin == "page" and panel.query().context == context_in_paper(paper, 1, neighbours=None)
        assert panel.query().context.section_kind == "abstract"  # type: ignore[union-attr]


def test_reads_as_names_the_context_and_an_uncertain_role() -> None:
    from app.gui.panels.suggestion_text import reads_as

    query = {"text": "x", "role": "method", "function": "none",
             "role_text": "uncertain: method 41% or result 35%",
             "context": "with its heading (method) and 2+2 neighbouring sentences"}
    text = reads_as(query)
    assert text.startswith("reads as: uncertain: method 41% or result 35%; no clear function")
    assert text.endswith("· with its heading (method) and 2+2 neighbouring sentences")
    assert reads_as({"text": "x", "role": "objective", "function": "aim"}).startswith("reads as: ")


def test_the_alignment_panel_says_what_the_gaps_were_judged_on() -> None:
    from app.gui.panels.alignment import gaps_basis
    from core.alignment.align import align
    from tests.test_confidence import _side

    a = _side([("discussion", "conclusion", "limitation", 0.9), ("discussion", "result", "none", 0.3)], "A")
    b = _side([("discussion", "result", "interpretation", 0.95)], "B")
    alignment = align(a, b)
    assert "judged on the 1 of 2 sentences whose function is clear (A), 1 of 1 (B)" in gaps_basis(alignment)
    alignment.gaps.judged.clear()  # a report read from an older file does not say
    assert gaps_basis(alignment) == ""


def test_a_page_sentence_is_read_as_the_papers_analysis_reads_it(qtbot, bundle: Path) -> None:  # type: ignore[no-untyped-def]
    """The Suggestions panel and the inspector never name two functions for one sentence: a selected
    page sentence is read from the paper's embedded analysis (before it exists, with its whole section,
    the document that analysis reads)."""
    import numpy as np

    from app.gui.panels.suggestions import SuggestionsPanel
    from core.labelling.analysis import label_paper
    from models import load_model

    paper = make_paper()
    for panel in show_panel(qtbot, SuggestionsPanel, bundle, (420, 500), paper=paper):
        assert isinstance(panel, SuggestionsPanel)
        panel._sources = lambda: []  # nothing to search: only the query is looked at
        panel.session.select_sentence(4)
        assert panel.query().reading is None
        assert panel.query().context == context_in_paper(paper, 4, neighbours=None)
        analysis = label_paper(paper, load_model(bundle, device="cpu", threads=1)).embed()
        panel.session.analysis = analysis
        panel.session.analysisEmbedded.emit(analysis)  # arrives after the selection: read again
        reading = panel.query().reading
        assert reading is not None and reading.role == analysis.roles[4]
        assert analysis.functions is not None and reading.function == analysis.functions[4]
        assert analysis.function_vectors is not None
        np.testing.assert_array_equal(reading.function_vector, analysis.function_vectors[4])
        panel.session.select_sentence(1)
        assert panel.query().reading is not None and panel.query().reading.role == analysis.roles[1]  # type: ignore[union-attr]
