"""The draft checklist (core.draft_checklist): one use case for the draft pane and the language server,
per section (subsections inheriting their parent's kind), judged on clear labels only, with headlines
that say what is not known to be there rather than what is absent (tester J, problems 7 and 10)."""

from __future__ import annotations

import pytest

from core.draft_checklist import BEFORE_ANY_HEADING, DraftOutline, draft_checklist
from core.taxonomy.labels import FunctionPrediction, function_is_clear

# tester J's drafts/draft2.md, shortened: Abstract, Introduction and Conclusion headings under a title
DRAFT2 = """# Vitamin D and winter falls in care homes

## Abstract

Falls are the leading cause of injury-related admission among care-home residents. Whether vitamin D
prevents falls in this population remains uncertain. We therefore tested whether a monthly dose reduces
winter falls.

## Introduction

Older people living in care homes fall about three times as often as those in the community. Previous
trials of vitamin D have reported conflicting effects on falls. Our objective was to estimate the effect
of monthly vitamin D on the rate of falls.

## Conclusion

Monthly vitamin D reduced falls among care-home residents over one winter.
"""


def _f(*top: tuple[str, float]) -> FunctionPrediction:
    return FunctionPrediction(top[0][0], tuple(top))


FUNCTIONS = [
    _f(("topic-importance", 0.54), ("problem-challenge", 0.26)),  # abstract
    _f(("open-question", 0.42), ("problem-challenge", 0.2), ("need", 0.15)),  # a gap; no one function clear
    _f(("aim", 0.62), ("hypothesis", 0.22)),
    _f(("established-knowledge", 0.66), ("topic-importance", 0.17)),  # introduction
    _f(("prior-approach", 0.46), ("established-knowledge", 0.16), ("gap-neglected", 0.11)),
    _f(("aim", 0.73), ("scope", 0.08)),
    _f(("main-finding", 0.19), ("main-conclusion", 0.13)),  # conclusion: a weak best guess only
]


def _pane_outline(text: str, markdown: bool) -> DraftOutline:
    from app.gui.panels.draft_labelling import pane_parts

    found, kinds = pane_parts(text, markdown)
    return DraftOutline(tuple(kinds), tuple(heading for _, _, _, heading, _ in found))


def _lsp_outline(text: str, fmt: str) -> DraftOutline:
    from app.lsp.drafts import read_document
    from app.lsp.summary import outline_of

    return outline_of(read_document(text, fmt))


def _lines(outline: DraftOutline, default_kind: str | None = None) -> list[str]:
    return [s.line() for s in draft_checklist(outline, FUNCTIONS, default_kind)]


@pytest.mark.parametrize(("markdown", "fmt"), [(False, "md"), (True, "md"), (False, "txt")])
def test_the_pane_and_the_language_server_check_the_same_sections(markdown: bool, fmt: str) -> None:
    pane, lsp = _pane_outline(DRAFT2, markdown), _lsp_outline(DRAFT2, fmt)
    assert len(pane.sentence_headings) == len(lsp.sentence_headings) == len(FUNCTIONS)
    assert _lines(pane, "introduction") == _lines(lsp, "introduction")
    kinds = [line.split(":")[0] for line in _lines(pane, "introduction")]
    assert kinds == ["abstract", "introduction", "conclusion"]  # per section, not the whole as one


def test_the_pane_shows_one_line_per_section() -> None:
    from app.gui.panels.draft_text import checklist_text

    text, tip = checklist_text((_pane_outline(DRAFT2, False), FUNCTIONS), "introduction")
    lines = text.splitlines()
    assert [line.split(":")[0] for line in lines] == ["abstract", "introduction", "conclusion"]
    # the abstract's gap sentence counts for the abstract only: the introduction has none clearly
    assert "✓ a gap or problem" in lines[0] and "✗ a gap or problem" in lines[1]
    assert "No sentence of your introduction clearly makes" in tip and "never" not in tip
    assert checklist_text(None, "introduction") == ("", "")
    assert "function head" in checklist_text((_pane_outline(DRAFT2, False), None), "introduction")[0]


def test_a_subsection_takes_its_parents_kind_in_both() -> None:
    text = "# Introduction\n\nA matters.\n\n## Scope\n\nB is open.\n\n# Methods\n\nWe did C.\n"
    functions = [_f(("topic-importance", 0.9)), _f(("aim", 0.9)), _f(("data-source", 0.9))]
    for outline in (_pane_outline(text, False), _pane_outline(text, True), _lsp_outline(text, "md")):
        (intro,) = draft_checklist(outline, functions)
        assert intro.kind == "introduction" and intro.heading == 0 and intro.judged == (2, 2)


def test_text_before_any_heading_is_checked_as_the_chosen_kind() -> None:
    outline = DraftOutline((), (BEFORE_ANY_HEADING, BEFORE_ANY_HEADING))
    functions = [_f(("aim", 0.9)), _f(("main-finding", 0.8))]
    assert draft_checklist(outline, functions) == []
    (section,) = draft_checklist(outline, functions, "abstract")
    assert section.heading == BEFORE_ANY_HEADING and section.kind == "abstract"
    assert draft_checklist(outline, None, "abstract") == []  # no function head: nothing judged


# -- what counts as clear (problem 10) -------------------------------------------------------------
def test_a_weak_best_guess_is_not_a_clear_function() -> None:
    assert not function_is_clear(_f(("main-finding", 0.19), ("main-conclusion", 0.13)))
    assert not function_is_clear(_f(("limitation", 0.36)))
    assert not function_is_clear(_f(("participants", 0.50), ("study-design", 0.37)))  # too close
    assert function_is_clear(_f(("aim", 0.62), ("hypothesis", 0.22)))
    assert function_is_clear(_f(("aim", 0.5)))
    assert not function_is_clear(FunctionPrediction("none", (("aim", 0.9),)))


def test_headlines_say_what_is_not_clearly_made_never_that_it_is_absent() -> None:
    sections = draft_checklist(_pane_outline(DRAFT2, False), FUNCTIONS)
    abstract, intro, conclusion = sections
    # "whether … remains uncertain": no single function is clear, but its candidates are all gaps
    assert abstract.checks[0].present and abstract.judged == (3, 3)
    assert intro.headline() == ("No sentence of your introduction clearly makes these moves: "
                                "a gap or problem, the contributions or an outline")
    assert intro.line().endswith("(judged on the 2 of 3 sentences whose function or move is clear)")
    # the conclusion's only sentence is a weak best guess: "?" in the line, "may" in the headline
    assert conclusion.judged == (0, 1)
    assert "✗ what the findings mean" in conclusion.line() and "never" not in conclusion.headline()
    weak = draft_checklist(DraftOutline(("conclusion",), (0,)), [_f(("limitation", 0.36))])[0]
    assert "? limitations or future work" in weak.line()
    assert weak.headline().endswith("limitations or future work (1 sentence may)")


def test_the_draft_pane_checks_each_headed_section(qtbot, tmp_path_factory, tmp_path,  # type: ignore[no-untyped-def]
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Problem 7: the pane judged a draft with Abstract/Introduction/Conclusion headings as one
    introduction; now it shows a line per section, as the language server does."""
    pytest.importorskip("pytestqt")
    from app.gui.panels.draft import DraftPanel
    from tests.gui_helpers import TIMEOUT_MS, model_bundle, show_panel

    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    for panel in show_panel(qtbot, DraftPanel, model_bundle(tmp_path_factory), (800, 500)):
        assert isinstance(panel, DraftPanel)
        with qtbot.waitSignal(panel.labelled, timeout=TIMEOUT_MS):
            panel.set_text(DRAFT2)
        if panel.editor.functions and panel.editor.functions[0] is None:
            pytest.skip("the test bundle has no function head")
        lines = panel.moves.text().splitlines()
        assert [line.split(":")[0] for line in lines] == ["abstract", "introduction", "conclusion"]
        assert panel.moves.toolTip()
        panel.checklist_kind.setCurrentText("conclusion")  # only text before any heading: none here
        assert panel.moves.text().splitlines() == lines
