"""The gap report a reader can trust (issue 26.5): every gap checked against the two texts' structure,
ranked by importance, phrased in words, the top ten first; no score above 1 shown; core.alignment.align and
core.alignment.align_gaps without an import cycle. Small constructed documents, one false gap each that real
papers from ../shared/pdfs2 produced before (named in each test)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from core.alignment.align import AlignedPair, AlignSentence, AlignSide, align, method_text
from core.alignment.align_export import (
    alignment_from_json,
    alignment_to_html,
    alignment_to_json,
    alignment_to_markdown,
    summary_text,
)
from core.alignment.align_gaps import TOP_GAPS, GapReport, gap_report, heading_kinds, where_phrase

ROOT = Path(__file__).resolve().parents[1]
Row = tuple[str, str, str, str]  # (heading, section kind, role, function)


def side(rows: list[Row], title: str, kind: str = "pdf") -> AlignSide:
    """A side whose sentences each get a vector axis of their own (no two sentences alike)."""
    sentences = [AlignSentence(f"{title} sentence {i}", heading, section_kind, role, function)
                 for i, (heading, section_kind, role, function) in enumerate(rows)]
    vectors = np.eye(len(rows), 64, dtype=np.float32)
    return AlignSide(title, sentences, vectors, vectors.copy(), kind=kind)


Section = tuple[str, str, list[tuple[str, str]]]


def paper(*sections: Section, title: str = "P", kind: str = "pdf") -> AlignSide:
    """A side from (heading, kind, [(role, function), …]) sections."""
    rows = [(heading, section_kind, role, function)
            for heading, section_kind, sentences in sections for role, function in sentences]
    return side(rows, title, kind)


ABSTRACT = ("Abstract", "abstract", [("background", "topic-importance"), ("objective", "aim"),
                                     ("method", "study-design"), ("result", "main-finding")])
INTRO = ("Introduction", "introduction", [("background", "topic-importance"), ("background", "gap-neglected"),
                                          ("objective", "aim"), ("background", "established-knowledge")])
METHODS = ("Methods", "method", [("method", "participants"), ("method", "lab-procedure"),
                                 ("method", "statistics-method"), ("method", "lab-procedure")])
RESULTS = ("Results", "result", [("result", "main-finding"), ("result", "statistical-result"),
                                 ("result", "main-finding"), ("result", "pointing-to-figure")])
DISCUSSION = ("Discussion", "discussion", [("conclusion", "interpretation"), ("conclusion", "limitation"),
                                           ("conclusion", "implication"), ("conclusion", "earlier-findings")])


def texts(report: GapReport) -> list[str]:
    return [item.text for item in report.items]


# -- checked against the structure ---------------------------------------------------------------
def test_a_joined_results_and_discussion_heading_is_both_sections() -> None:
    # hindawi-801626 / mdpi-entropy ("Results and Discussion") were called "no discussion"
    a = paper(ABSTRACT, INTRO, METHODS, RESULTS, DISCUSSION, title="A")
    joined = ("3 Results and Discussion", "result", RESULTS[2] + DISCUSSION[2])
    b = paper(ABSTRACT, INTRO, METHODS, joined, title="B")
    report = gap_report(a, b)
    assert not [t for t in texts(report) if "has no" in t], texts(report)
    # B's joined section does what A's discussion does: nothing "in the discussion, B never …"
    assert not [t for t in texts(report) if t.startswith("In the discussion, B")], texts(report)
    assert heading_kinds("Results and Discussion") == {"result", "discussion"}
    assert heading_kinds("Discussion & Conclusions") == {"discussion", "conclusion"}
    assert heading_kinds("Results") == frozenset()  # a single name: the section's own kind decides
    # a results section B really lacks is still reported, most important first
    no_results = paper(ABSTRACT, INTRO, METHODS, DISCUSSION, title="B")
    first = gap_report(a, no_results).items[0]
    assert first.text == "B has no results section (A's has 4 sentences)."
    assert first.what == "section" and first.present_in == "a"


def test_a_finding_in_the_abstract_is_a_finding() -> None:
    # "B never reports a finding" for a paper whose abstract reports one with another function
    a = paper(ABSTRACT, INTRO, METHODS, RESULTS, DISCUSSION, title="A")
    abstract = ("Abstract", "abstract", [("background", "topic-importance"),
                                         ("result", "statistical-result")])
    b = paper(abstract, INTRO, METHODS, DISCUSSION, title="B")
    report = gap_report(a, b)
    assert not [t for t in texts(report) if "clearly reports a finding" in t], texts(report)
    # a confident result sentence whose function is below the threshold reports a finding too
    unclear = ("Abstract", "abstract", [("background", "topic-importance"), ("result", "none")])
    report = gap_report(a, paper(unclear, INTRO, METHODS, DISCUSSION, title="B"))
    assert not [t for t in texts(report) if "clearly reports a finding" in t]
    # ... and in a section: B's abstract reports one, so "In the abstract, B never reports a finding" is false
    assert not [t for t in texts(report) if t.startswith("In the abstract") and "finding" in t]
    # without any finding, the gap is there
    silent = ("Abstract", "abstract", [("background", "topic-importance"), ("objective", "aim")])
    report = gap_report(a, paper(silent, INTRO, METHODS, DISCUSSION, title="B"))
    found = [t for t in texts(report) if t.startswith("No sentence of B clearly reports a finding")]
    assert found, texts(report)


def test_a_paper_whose_headings_were_not_recognised_has_no_section_called_missing() -> None:
    # arxiv-1706.03791 (everything after the abstract under one unrecognised heading)
    a = paper(ABSTRACT, INTRO, METHODS, RESULTS, DISCUSSION, title="A")
    body = ("PSNR). Our method leads the rest", "other", RESULTS[2] + METHODS[2] + DISCUSSION[2])
    b = paper(ABSTRACT, body, title="B")
    report = gap_report(a, b)
    assert not [t for t in texts(report) if "has no" in t], texts(report)
    assert any("B's text sits under headings the reader did not recognise" in c for c in report.caveats)
    assert not [t for t in texts(report) if t.startswith("In the other")]  # unrecognised: not compared


def test_an_abstract_that_swallowed_the_paper_is_read_as_other_text() -> None:
    # ieee-2011 (203 "abstract" sentences) and natneurosci-2011 (81): no "in the abstract" claims on them
    a = paper(ABSTRACT, INTRO, METHODS, RESULTS, DISCUSSION, title="A")
    swallowed = ("Abstract", "abstract", (INTRO[2] + METHODS[2] + RESULTS[2]) * 3)
    b = paper(swallowed, DISCUSSION, title="B")
    report = gap_report(a, b)
    assert any("B's abstract runs to 36 sentences" in c for c in report.caveats), report.caveats
    assert not [t for t in texts(report) if "has no" in t or "In the abstract" in t], texts(report)


def test_a_pdf_abstract_is_never_called_missing_but_a_drafts_is() -> None:
    # epjc-1998 / mdpi-entropy: the parser found no abstract heading in the PDF
    a = paper(ABSTRACT, INTRO, METHODS, RESULTS, DISCUSSION, title="A")
    b_sections = (INTRO, METHODS, RESULTS, DISCUSSION)
    report = gap_report(a, paper(*b_sections, title="B", kind="pdf"))
    assert not [t for t in texts(report) if "abstract" in t.split("(")[0]], texts(report)
    assert any(c.startswith("No abstract was found in B's text") for c in report.caveats)
    draft = gap_report(a, paper(*b_sections, title="B", kind="draft"))
    assert "B has no abstract (A's has 4 sentences)." in texts(draft)


def test_a_section_whose_job_is_done_under_other_headings_is_not_called_missing_content() -> None:
    # a paper with a Discussion only was told it "has no conclusion" though it concludes in its discussion
    conclusion = ("Conclusions", "conclusion", [("conclusion", "work-summary"),
                                                ("conclusion", "future-work")])
    a = paper(ABSTRACT, INTRO, METHODS, RESULTS, DISCUSSION, conclusion, title="A")
    b = paper(ABSTRACT, INTRO, METHODS, RESULTS, DISCUSSION, title="B")
    (item,) = [g for g in gap_report(a, b).items if g.section_kind == "conclusion" and not g.function]
    assert item.what == "section-elsewhere"
    assert item.text == ("B has no conclusion of its own: 4 of its sentences draw conclusions in the "
                         "discussion (A's conclusion has 2 sentences).")
    assert item.importance < 0.25


def test_a_section_whose_job_is_done_under_unrecognised_headings_may_be_there() -> None:
    # tandf-ijn-2016: its "Results" heading was missed, its results sat under "On-study MRI changes"
    # (a heading of no known kind), and it was told "A has no results"
    a = paper(ABSTRACT, INTRO, METHODS, RESULTS, DISCUSSION, title="A")
    b = paper(ABSTRACT, INTRO, METHODS, ("On-study MRI changes", "other", RESULTS[2]), DISCUSSION, title="B")
    report = gap_report(a, b)
    assert not [t for t in texts(report) if "has no" in t], texts(report)
    assert ("4 of B's sentences report results under headings the reader did not recognise: its results "
            "section may be there, so it is not called missing.") in report.caveats


# -- ranked, in words, the top ten first ---------------------------------------------------------
def test_gaps_are_ranked_by_importance_between_0_and_1() -> None:
    a = paper(ABSTRACT, INTRO, METHODS, RESULTS,
              ("Discussion", "discussion", [*[("conclusion", "limitation")] * 5,
                                            ("conclusion", "interpretation")]),
              ("Acknowledgements", "other", [("other", "acknowledgement")]), title="A")
    b = paper(ABSTRACT, INTRO, METHODS, RESULTS,
              ("Discussion", "discussion", [("conclusion", "interpretation")] * 3), title="B")
    report = gap_report(a, b)
    importances = [g.importance for g in report.items]
    assert importances == sorted(importances, reverse=True)
    assert all(0.0 <= x <= 1.0 for x in importances)
    order = [g.function for g in report.items]
    assert order.index("limitation") < order.index("acknowledgement")  # 5 limitations before a thank-you
    limitation = next(g for g in report.items if g.function == "limitation")
    assert limitation.text == ("No sentence of B clearly admits a limitation (A does, in 5 sentences in the "
                               "discussion).")


def test_the_report_shows_the_top_ten_first_and_the_rest_behind_more() -> None:
    functions = ["limitation", "future-work", "implication", "recommendation", "generality",
                 "earlier-findings", "error-analysis", "hypothesis", "research-question", "scope",
                 "contributions", "paper-outline"]
    a = paper(ABSTRACT, INTRO, METHODS, RESULTS,
              ("Discussion", "discussion", [("conclusion", f) for f in functions]), title="A")
    b = paper(ABSTRACT, INTRO, METHODS, RESULTS,
              ("Discussion", "discussion", [("conclusion", "interpretation")] * 3), title="B")
    alignment = align(a, b)
    report = alignment.gaps
    assert len(report.items) > TOP_GAPS
    assert report.top() == report.items[:TOP_GAPS] and report.more() == report.items[TOP_GAPS:]
    rest = len(report.items) - TOP_GAPS
    summary = summary_text(alignment, more_hint="--all-gaps lists them")
    assert f"Gaps, most important first ({TOP_GAPS} of {len(report.items)}):" in summary
    assert f"… and {rest} more (--all-gaps lists them)." in summary
    assert report.items[TOP_GAPS].text not in summary
    assert report.items[TOP_GAPS].text in summary_text(alignment, gaps=None)
    markdown = alignment_to_markdown(alignment)
    assert f"### {rest} more gap{'s' if rest != 1 else ''}" in markdown and f"{TOP_GAPS + 1}. " in markdown
    page = alignment_to_html(alignment)
    top, more = page.split(f"<summary>{rest} more gap{'s' if rest != 1 else ''}</summary>")
    assert report.items[0].text in top and report.items[TOP_GAPS].text in more.split("</details>")[0]


def test_no_score_above_1_and_no_jargon_is_shown() -> None:
    # identical sentences with the same role, function and place: the pair score (with its bonuses)
    # is about 1.5; the reader sees the similarity, 1.00 at most
    a = paper(ABSTRACT, INTRO, METHODS, RESULTS, DISCUSSION, title="A")
    b = paper(ABSTRACT, INTRO, METHODS, RESULTS, DISCUSSION, title="B")
    alignment = align(a, b)
    assert max(p.score for p in alignment.pairs) > 1.2
    assert all(0.0 <= p.similarity <= 1.0 and p.shown_score == p.similarity for p in alignment.pairs)
    outputs = {"summary": summary_text(alignment), "markdown": alignment_to_markdown(alignment),
               "html": re.sub(r"<script>.*?</script>|<style>.*?</style>", "", alignment_to_html(alignment),
                              flags=re.S)}
    for name, text in outputs.items():
        numbers = [float(x) for x in re.findall(r"(?<![\w.])\d+\.\d\d(?![\d%])", text)]
        assert numbers and max(numbers) <= 1.0, (name, max(numbers))
        for jargon in ("fallback", "reordered", "one-to-many", "function weight"):
            assert jargon not in text.lower(), (name, jargon)
    assert method_text("fallback") == "elsewhere in the text"
    assert "close match" in method_text("fallback", explained=True)


def test_an_older_file_without_similarity_shows_its_score_held_to_1() -> None:
    older = AlignedPair.from_dict({"a": [0], "b": [1], "score": 1.37, "role": "method", "method": "fallback"})
    assert older.similarity == -1.0 and older.shown_score == 1.0
    again = AlignedPair.from_dict(AlignedPair((0,), (1,), 1.37, similarity=0.82).to_dict())
    assert again.shown_score == pytest.approx(0.82)


def test_the_report_round_trips_through_json() -> None:
    a = paper(ABSTRACT, INTRO, METHODS, RESULTS, DISCUSSION, title="A")
    b = paper(INTRO, METHODS, DISCUSSION, title="B")  # a PDF without abstract: a caveat
    alignment = align(a, b)
    again = alignment_from_json(alignment_to_json(alignment))
    assert again.gaps.items == alignment.gaps.items and again.gaps.caveats == alignment.gaps.caveats
    assert again.gaps.caveats and [p.similarity for p in again.pairs] == pytest.approx(
        [p.similarity for p in alignment.pairs], abs=1e-4)


def test_where_phrase_says_places_in_words() -> None:
    assert where_phrase(["abstract", "method", "other"]) == (
        "in the abstract, the method section and under other headings")
    assert where_phrase(["other"]) == "under other headings"
    assert where_phrase(["abstract", "introduction", "method", "result"]) == (
        "in the abstract, the introduction and 2 other places")
    assert where_phrase([]) == ""


# -- no import cycle -----------------------------------------------------------------------------
def _imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return found | {node.module for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module}


def test_align_gaps_never_imports_align() -> None:
    # the gap types live in core.alignment.align_gaps, which reads the sides through a protocol:
    # core.alignment.align
    # imports it at the top, and it imports core.alignment.align nowhere (not even for type checking)
    assert "core.alignment.align" not in _imported(ROOT / "core" / "alignment" / "align_gaps.py")
    assert "core.alignment.align_gaps" in _imported(ROOT / "core" / "alignment" / "align.py")
    source = (ROOT / "core" / "alignment" / "align.py").read_text(encoding="utf-8")
    # a top-level import, not a lazy one
    assert "from core.alignment.align_gaps import" in source.split("\ndef ")[0]


def test_a_function_under_a_heading_of_no_known_kind_may_be_in_that_section() -> None:
    # tandf-ijn-2016: "Subjects" (no known kind) sat under its missed "Methods" heading; it was told
    # "In the method section, A never describes participants or samples"
    participants = [("method", "participants"), ("method", "participants")]
    methods_a = ("Methods", "method", METHODS[2] + participants)
    a = paper(ABSTRACT, INTRO, methods_a, RESULTS, DISCUSSION, title="A")
    methods_b = ("Methods", "method", [("method", "lab-procedure")] * 3)
    b = paper(ABSTRACT, INTRO, methods_b, ("Subjects", "other", participants), RESULTS, DISCUSSION, title="B")
    assert not [t for t in texts(gap_report(a, b)) if "participants" in t]
    # back matter is no section of the paper: a function only there is still "elsewhere"
    back = paper(ABSTRACT, INTRO, methods_b, RESULTS, DISCUSSION, ("Acknowledgements", "other", participants),
                 title="B")
    assert ("In the method section, no sentence of B clearly describes participants or samples (A does, in 3 "
            "sentences); B does so under other headings.") in texts(gap_report(a, back))
