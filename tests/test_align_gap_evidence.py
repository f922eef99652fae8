"""The gap report says only what the papers' own data allows (session 32, tester J problems 3 and 4,
tester L problem 3): structural evidence (figure and table mentions, headings that name a move,
formulaic back-matter statements) is checked before a gap says a paper does not make a move; a
function named like its move is judged as that move, as the draft checklist judges it; back matter is
said for the whole paper; gaps are worded for what is known; ``rhetorica align`` prints its summary
with ``--top`` and ``--all-gaps`` also when it writes files. Each constructed case is one that a real
pair of papers from ../shared/pdfs2 produced (named in the test)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.alignment.align import AlignSentence, AlignSide, align
from core.alignment.align_evidence import heading_functions, side_functions, text_functions
from core.alignment.align_export import alignment_from_json, alignment_to_json
from core.alignment.align_gaps import GapItem, GapReport, gap_report
from core.taxonomy.moves import AIM, check_moves

Row = tuple[str, str, str, str, str]  # (heading, section kind, role, function, text)


def side(rows: list[Row], title: str) -> AlignSide:
    sentences = [AlignSentence(text or f"{title} sentence {i}.", heading, kind, role, function)
                 for i, (heading, kind, role, function, text) in enumerate(rows)]
    vectors = np.eye(len(rows), 64, dtype=np.float32)
    return AlignSide(title, sentences, vectors, vectors.copy(), kind="pdf")


def body(title: str, extra: list[Row] | None = None) -> list[Row]:
    """An ordinary paper: abstract, introduction, methods, results, discussion (3+ sentences each)."""
    rows: list[Row] = [("Abstract", "abstract", "objective", "aim", ""),
                       ("Abstract", "abstract", "result", "main-finding", "")]
    rows += [("Introduction", "introduction", "background", f, "") for f in
             ("topic-importance", "established-knowledge", "gap-neglected")]
    rows += [("Methods", "method", "method", f, "") for f in ("participants", "lab-procedure",
                                                              "statistics-method")]
    rows += [("Results", "result", "result", f, "") for f in ("main-finding", "statistical-result", "trend")]
    rows += [("Discussion", "discussion", "conclusion", f, "") for f in ("interpretation", "implication",
                                                                         "earlier-findings")]
    return rows + (extra or [])


def texts(report: GapReport) -> list[str]:
    return [item.text for item in report.items]


def gaps_of(report: GapReport, function: str) -> list[GapItem]:
    return [item for item in report.items if item.function == function]


# -- 1. the structure is checked before a gap says "none" -------------------------------------------
def test_a_paper_that_mentions_its_figures_points_to_figures() -> None:
    # jss tidy-data vs frontiers dog-cooperation: "B never points to a table or figure", though six
    # sentences of B mention Figures 1-4 (their labels were other functions)
    a = side(body("A", [("Results", "result", "result", "pointing-to-figure", "Table 1 shows the counts."),
                        ("Results", "result", "result", "pointing-to-figure", "Table 2 lists them.")]), "A")
    b = side(body("B", [("Results", "result", "result", "main-finding",
                         "Dogs looked longer at the human (Figure 3)."),
                        ("Methods", "method", "method", "study-design",
                         "The set-up is drawn in Figure 1.")]), "B")
    report = gap_report(a, b)
    assert not gaps_of(report, "pointing-to-figure"), texts(report)
    # without the mentions, the gap is there
    plain = side(body("B"), "B")
    (item,) = gaps_of(gap_report(a, plain), "pointing-to-figure")
    assert item.text.startswith("No sentence of B clearly points to a table or figure")
    assert item.sentences == (len(body("A")), len(body("A")) + 1)  # the sentences of A that do it


def test_a_section_whose_heading_names_the_move_makes_it() -> None:
    # bmc COPD vs hindawi rats: "A never declares interests", though A has a "Competing interests" section
    # (its one sentence's function was unclear) that the same report aligned with B's statement
    a = side(body("A", [("Competing interests", "other", "other", "none",
                         "The authors report nothing to disclose.")]), "A")
    b = side(body("B", [("Conflict of Interests", "other", "other", "conflict-of-interest",
                         "There is none.")]), "B")
    assert not gaps_of(gap_report(a, b), "conflict-of-interest")
    for heading, function in (("Funding", "funding"), ("Acknowledgments", "acknowledgement"),
                              ("Data availability", "availability"), ("5. Limitations", "limitation"),
                              ("Aims", "aim"), ("Objectives", "aim"), ("Conflicts of interest",
                                                                        "conflict-of-interest")):
        assert function in heading_functions(heading), heading
    assert heading_functions("Funding / Acknowledgments / Conflicts of Interest") == {
        "funding", "acknowledgement", "conflict-of-interest"}
    assert not heading_functions("Materials and Methods") and not heading_functions("Results")


def test_back_matter_evidence_overrules_a_wrong_back_matter_label() -> None:
    # bmc COPD: "A declares funding in 3 sentences", two of them an ethics approval and an affiliation line
    rows = [("This work was supported by grants 123 from the Science Foundation.", "Funding", "funding"),
            ("The study was approved by the Ethical Review Committee.", "Ethics approval and consent to "
             "participate", "funding"),
            ("1Department of Chronic Disease Control, Suzhou.", "Author details", "funding"),
            ("LA acknowledges the support of the NSF with grants DMS-0407732.", "Acknowledgments", "funding"),
            ("The authors declare no conflict of interest.", "5 Conclusions", "funding")]
    doing, evidenced = side_functions(rows)
    assert [("funding" in d) for d in doing] == [True, False, False, True, False]
    assert "ethics" in doing[1] and "conflict-of-interest" in doing[4]
    assert evidenced == 4  # "Author details" names no move: it only overrules
    assert "pointing-to-figure" in text_functions("as presented in Figure 2 and Table 1")
    assert not text_functions("Thanks to the new method, parsing is fast.")  # "thanks to" is no thank-you


# -- 2. one judgement with the move model ----------------------------------------------------------
def test_a_proposal_is_an_aim_statement_as_the_draft_checklist_says() -> None:
    # naacl ELMo vs usenix Copysets: "A never states the aim", though A's introduction proposes ("In this
    # paper, we introduce …"), which the move model and the draft checklist count as an aim statement
    rows = [r for r in body("A") if r[3] != "aim"]
    proposal = "In this paper, we introduce X."
    rows.insert(2, ("Introduction", "introduction", "objective", "proposal", proposal))
    a = side(rows, "A")
    b = side(body("B", [("Introduction", "introduction", "objective", "aim", "Our goal is Y.")]), "B")
    functions = [s.function for s in a.sentences if s.section_kind == "introduction"]
    assert next(c for c in check_moves(functions, "introduction") if c.move is AIM).present
    assert not gaps_of(gap_report(a, b), "aim"), texts(gap_report(a, b))
    # a confident objective sentence states the aim too; a paper with neither gets the gap
    neither = [r if r[3] != "proposal" else (r[0], r[1], "background", "established-knowledge", "")
               for r in rows]
    assert gaps_of(gap_report(side(neither, "A"), b), "aim")


# -- 3. back matter is said for the paper ------------------------------------------------------------
def test_back_matter_merged_into_the_last_section_is_no_gap_of_that_section() -> None:
    # jcap 0807.3577 vs mdpi entropy: "In the conclusion, A never declares funding (B does, in 3
    # sentences)": B's funding lines were merged into its Conclusions section
    conclusion_a = [("Conclusions", "conclusion", "conclusion", "work-summary", "")] * 3
    a = side(body("A", [*conclusion_a, ("Acknowledgments", "other", "other", "funding",
                                        "This work was funded by the NSF grant 12.")]), "A")
    conclusion_b = [("5 Conclusions", "conclusion", "conclusion", "work-summary", "")] * 3 + [
        ("5 Conclusions", "conclusion", "other", "funding", "This research received no external funding."),
        ("5 Conclusions", "conclusion", "other", "funding",
         "The authors acknowledge the financial support of the Research Agency.")]
    b = side(body("B", conclusion_b), "B")
    report = gap_report(a, b)
    assert not [g for g in report.items if g.function in ("funding", "acknowledgement")], texts(report)
    # a paper without any: one gap for the paper, counting all of the other paper, no section named
    bare = side(body("A", conclusion_a), "A")
    (item,) = gaps_of(gap_report(bare, b), "funding")
    assert item.what == "never" and item.section_kind == ""
    assert item.text == "No sentence of A clearly declares funding (B does, in 2 sentences)."


# -- 4. worded for what is known, said once what it rests on ----------------------------------------
def test_every_function_gap_says_what_is_known_and_the_note_says_what_it_rests_on() -> None:
    a = side(body("A", [("Discussion", "discussion", "conclusion", "limitation", "")] * 3), "A")
    b = side(body("B", [("Discussion", "discussion", "conclusion", "none", "")] * 2
                  + [("Conclusion", "conclusion", "conclusion", "limitation", "")] * 3), "B")
    report = align(a, b).gaps
    functions = [g for g in report.items if g.function]
    assert functions and not [g.text for g in functions if " never " in g.text or "never" in g.text[:8]]
    assert all("no sentence of" in g.text.lower() and "clearly" in g.text for g in functions)
    assert report.note.startswith("Gaps judged on the ")
    assert "a sentence whose function is unclear may still do what no sentence clearly does" in report.note
    assert report.judged["b"]["functions"] == len(b.sentences) - 2


def test_the_sentences_of_a_gap_survive_json_and_an_older_file_still_reads() -> None:
    a = side(body("A", [("Discussion", "discussion", "conclusion", "limitation", "")]), "A")
    alignment = align(a, side(body("B"), "B"))
    again = alignment_from_json(alignment_to_json(alignment))
    assert again.gaps.items == alignment.gaps.items
    (item,) = gaps_of(again.gaps, "limitation")
    assert item.sentences == (len(body("A")),)
    old: dict[str, Any] = item.to_dict()
    del old["sentences"]
    assert GapItem.from_dict(old).sentences == ()


def test_the_gui_goes_to_a_sentence_that_does_it_by_its_structure() -> None:
    from app.gui.panels.alignment_text import gap_target

    a = side(body("A", [("Results", "result", "result", "main-finding", "Figure 2 shows the map.")]), "A")
    alignment = align(a, side(body("B"), "B"))
    (item,) = gaps_of(alignment.gaps, "pointing-to-figure")
    assert gap_target(alignment, item) == len(body("A"))


# -- 5. the command's summary and its flags with --md / --html / --json -----------------------------
@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_path_factory.mktemp("gap-evidence") / "bundle", functions=True)


def test_align_prints_its_summary_with_top_and_all_gaps_when_it_writes_files(
        bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import core.alignment.align_export as export
    from app.cli import main

    asked: list[dict[str, Any]] = []
    summary_text = export.summary_text

    def spy(alignment: Any, top: int = 10, **options: Any) -> str:
        asked.append({"top": top, **options})
        return summary_text(alignment, top, **options)

    monkeypatch.setattr(export, "summary_text", spy)
    (tmp_path / "a.md").write_text("# Abstract\nOur goal is to improve accuracy. We propose a parser.\n\n"
                                   "# Conclusion\nThe approach is simple.\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("Abstract\nExperiments on two datasets show large gains.\n",
                                    encoding="utf-8")
    args = [str(tmp_path / "a.md"), str(tmp_path / "b.txt"), "--model", str(bundle), "--threads", "1",
            "--quiet"]
    out = tmp_path / "x.md"
    assert main(["align", *args, "--md", str(out), "--html", str(tmp_path / "x.html"), "--all-gaps",
                 "--top", "1"]) == 0
    printed = capsys.readouterr().out
    assert asked == [{"top": 1, "gaps": None, "more_hint": asked[0]["more_hint"]}]
    assert "Gaps" in printed and "aligned pairs" in printed
    assert printed.rstrip().endswith(f"Wrote {out}, {tmp_path / 'x.html'}.")
    assert out.read_text(encoding="utf-8").startswith("# Rhetorical alignment")
    assert main(["align", *args, "--json", str(tmp_path / "x.json"), "--top", "0"]) == 0
    assert asked[-1]["top"] == 0 and asked[-1]["gaps"] == 10
    assert "most similar aligned pairs" not in capsys.readouterr().out
