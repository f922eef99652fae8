"""Section kinds (issue 24, item 4): a subsection inherits its parent's kind unless its own heading
is decisive; the section-kind gold and ``rhetorica eval sections``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.commands.lab.eval_sections import DEFAULT_GOLD, MIXED, agreement, heading_sha1, read_gold, score
from core.document import Section, SectionKind
from core.pdf.headings import is_decisive_heading, section_kind
from core.pdf.outline import settle_levels_and_kinds
from core.pdf.paragraphs import BuiltSection

K = SectionKind


def _built(*specs: tuple[str, str, int] | tuple[str, str, int, float]) -> list[BuiltSection]:
    """(number, heading, level[, size]) -> sections as the body pass opens them (kind from the heading)."""
    out = []
    for spec in specs:
        number, heading, level = spec[:3]
        size = spec[3] if len(spec) > 3 else 10.0
        kind = K.ABSTRACT if heading == "Abstract" else section_kind(heading)
        out.append(BuiltSection(heading, kind, level, number, 0, size))
    return out


def _kinds(built: list[BuiltSection]) -> dict[str, SectionKind]:
    return {f"{b.number} {b.heading}".strip(): b.kind for b in built}


@pytest.mark.parametrize(("heading", "decisive"), [
    ("Results", True), ("Materials and Methods", True), ("Results and Discussion", True),
    ("Conclusions and Future Work", True), ("Related Work", True), ("Comparison with related work", True),
    ("Experimental Setup", True), ("Experiment settings", True), ("Training details", True),
    ("Evaluation methodology", True), ("Strengths and limitations", True), ("Error analysis", True),
    ("Motivation and contributions", True), ("Datasets", True), ("Analysis", True), ("Discussion", True),
    ("Overview", False), ("Data analysis", False), ("Statistical analysis", False), ("Training", False),
    ("Health economic analysis", False), ("Principal findings", False), ("Preliminaries", False),
    ("Background: Pretrained Transformers", False), ("Experiments", False), ("Evaluation", False),
    ("Summary", False), ("Model architecture", False), ("Acknowledgements", False),
    ("Wild meat barter", False),
])
def test_decisive_headings(heading: str, decisive: bool) -> None:
    assert is_decisive_heading(heading) is decisive


def test_a_subsection_takes_its_parents_kind_unless_its_heading_is_decisive() -> None:
    built = _built(("1", "Introduction", 1), ("2", "Model", 1), ("2.1", "Overview", 2),
                   ("2.2", "Background: Pretrained Transformers", 2), ("2.3", "Training", 2),
                   ("3", "Experiments", 1), ("3.1", "Training details", 2), ("3.2", "Data analysis", 2),
                   ("3.3", "Results", 2), ("3.3.1", "Performance overview", 3), ("3.4", "Error analysis", 2),
                   ("4", "Related work", 1), ("4.1", "Models for documents", 2),
                   ("5", "Conclusion", 1), ("5.1", "Availability of data", 2))
    settle_levels_and_kinds(built)
    assert _kinds(built) == {
        "1 Introduction": K.INTRODUCTION, "2 Model": K.METHOD, "2.1 Overview": K.METHOD,
        "2.2 Background: Pretrained Transformers": K.METHOD, "2.3 Training": K.METHOD,
        "3 Experiments": K.RESULT, "3.1 Training details": K.METHOD, "3.2 Data analysis": K.RESULT,
        "3.3 Results": K.RESULT, "3.3.1 Performance overview": K.RESULT, "3.4 Error analysis": K.DISCUSSION,
        "4 Related work": K.RELATED_WORK, "4.1 Models for documents": K.RELATED_WORK,
        "5 Conclusion": K.CONCLUSION, "5.1 Availability of data": K.OTHER,
    }


def test_the_same_heading_gets_the_kind_of_where_it_stands() -> None:
    built = _built(("2", "Materials and Methods", 1), ("2.3", "Surface Analysis", 2),
                   ("3", "Results and Discussion", 1), ("3.2", "Surface Analysis", 2),
                   ("3.2.1", "Optical Microscopy", 3))
    settle_levels_and_kinds(built)
    assert [b.kind for b in built] == [K.METHOD, K.METHOD, K.RESULT, K.RESULT, K.RESULT]


def test_numbers_give_the_parent() -> None:
    # the heading "3" was missed: "3.1" does not belong to "2 Related work"
    built = _built(("2", "Related Work", 1), ("3.1", "The MGP-RNN classifier", 2),
                   ("3.2", "Improving the classifier", 2))
    settle_levels_and_kinds(built)
    assert [b.kind for b in built] == [K.RELATED_WORK, K.OTHER, K.OTHER]
    # the heading "4.2" was missed: "4.2.1" belongs to "4", not to "4.1"
    built = _built(("4", "Results", 1), ("4.1", "Main results", 2), ("4.2.1", "Ablation", 3),
                   ("4.2.2", "Per-class scores", 3))
    settle_levels_and_kinds(built)
    assert [b.kind for b in built] == [K.RESULT, K.RESULT, K.DISCUSSION, K.RESULT]


def test_a_topical_or_abstract_parent_gives_nothing() -> None:
    built = _built(("", "Abstract", 1), ("", "Data", 2), ("2", "The ZooKeeper service", 1),
                   ("2.1", "Service overview", 2), ("2.2", "Client API", 2))
    settle_levels_and_kinds(built)
    assert [b.kind for b in built] == [K.ABSTRACT, K.METHOD, K.OTHER, K.INTRODUCTION, K.OTHER]


def test_back_matter_stays_other_and_its_children_too() -> None:
    built = _built(("", "Introduction", 1, 12.0), ("", "Conclusions", 1, 12.0),
                   ("", "Declaration of conflicting interests", 2, 10.0),
                   ("", "Additional information and declarations", 1, 12.0), ("", "Data model", 2, 10.0))
    settle_levels_and_kinds(built)
    assert [b.kind for b in built] == [K.INTRODUCTION, K.CONCLUSION, K.OTHER, K.OTHER, K.OTHER]


def test_unnumbered_levels_come_from_the_size_of_the_standard_headings() -> None:
    # many subsections whose words map to a kind ("Statistical analysis") must not set the main size
    built = _built(("", "Abstract", 1, 10.5), ("", "Introduction", 1, 10.5), ("", "Methods", 1, 10.5),
                   ("", "Study design and participants", 1, 9.0), ("", "Assessment of covariates", 1, 9.0),
                   ("", "Statistical analysis", 1, 9.0), ("", "Results", 1, 10.5),
                   ("", "Baseline characteristics", 1, 9.0), ("", "Stratified analyses", 1, 9.0),
                   ("", "Sensitivity analysis", 1, 9.0), ("", "Discussion", 1, 10.5),
                   ("", "Principal findings", 1, 9.0), ("", "Comparison with other studies", 1, 9.0),
                   ("", "Strengths and limitations", 1, 9.0), ("", "Conclusion", 1, 10.5))
    settle_levels_and_kinds(built)
    assert [b.level for b in built] == [1, 1, 1, 2, 2, 2, 1, 2, 2, 2, 1, 2, 2, 2, 1]
    assert _kinds(built) == {
        "Abstract": K.ABSTRACT, "Introduction": K.INTRODUCTION, "Methods": K.METHOD,
        "Study design and participants": K.METHOD, "Assessment of covariates": K.METHOD,
        "Statistical analysis": K.METHOD, "Results": K.RESULT, "Baseline characteristics": K.RESULT,
        "Stratified analyses": K.RESULT, "Sensitivity analysis": K.RESULT, "Discussion": K.DISCUSSION,
        "Principal findings": K.DISCUSSION, "Comparison with other studies": K.DISCUSSION,
        "Strengths and limitations": K.DISCUSSION, "Conclusion": K.CONCLUSION,
    }


def test_unnumbered_levels_from_capitals() -> None:
    built = _built(("", "METHODS", 1, 12.0), ("", "Household surveys", 1, 12.0), ("", "RESULTS", 1, 12.0),
                   ("", "Wild meat barter", 1, 12.0), ("", "DISCUSSION", 1, 12.0),
                   ("", "Wildlife trade and the urban frontier", 1, 12.0))
    settle_levels_and_kinds(built)
    assert [b.level for b in built] == [1, 2, 1, 2, 1, 2]
    assert [b.kind for b in built] == [K.METHOD, K.METHOD, K.RESULT, K.RESULT, K.DISCUSSION, K.DISCUSSION]


def test_a_topical_top_level_section_takes_its_kind_from_its_place() -> None:
    # a systems paper: the approach under its own names, then the experiments
    built = _built(("1", "Introduction", 1), ("2", "Related Work", 1),
                   ("3", "Constraints on Rule Patterns", 1), ("3.1", "Syntactic Constraint", 2),
                   ("4", "QUILL", 1), ("5", "Experiments", 1),
                   ("6", "Phrase alignment", 1), ("7", "Conclusion", 1), ("8", "Acknowledgements", 1))
    settle_levels_and_kinds(built)
    assert [b.kind for b in built] == [K.INTRODUCTION, K.RELATED_WORK, K.METHOD, K.METHOD, K.METHOD,
                                       K.RESULT, K.RESULT, K.CONCLUSION, K.OTHER]


def test_topical_sections_between_methods_and_discussion_are_results() -> None:
    built = _built(("", "Introduction", 1), ("", "Methods", 1), ("", "Experience of programmes", 1),
                   ("", "Quality of care", 1), ("", "Discussion", 1), ("", "Wider lessons", 1))
    settle_levels_and_kinds(built)
    # after the discussion nothing is known: the last section stays other
    assert [b.kind for b in built] == [K.INTRODUCTION, K.METHOD, K.RESULT, K.RESULT, K.DISCUSSION, K.OTHER]


def test_a_topical_section_with_no_named_neighbour_on_one_side_stays_other() -> None:
    built = _built(("1", "The Quill service", 1), ("2", "Evaluation", 1), ("3", "Lessons learned", 1))
    settle_levels_and_kinds(built)
    assert [b.kind for b in built] == [K.OTHER, K.RESULT, K.OTHER]
    built = _built(("", "Introduction", 1), ("", "Appendix", 1), ("", "Methods", 1))
    settle_levels_and_kinds(built)
    assert [b.kind for b in built] == [K.INTRODUCTION, K.OTHER, K.METHOD]


def test_appendices_run_to_the_end() -> None:
    built = _built(("8", "Conclusion", 1), ("A", "Background & Terminology", 1), ("", "B PDF filters", 1),
                   ("", "C The paper clustering problem", 1), ("", "D Evaluation criteria", 1),
                   ("", "Appendix", 1), ("", "Literature values", 1))
    built[1].kind = K.OTHER  # the body pass opens a lettered section after the references as an appendix
    settle_levels_and_kinds(built)
    assert [b.kind for b in built] == [K.CONCLUSION] + [K.OTHER] * 6


def test_a_digit_numbered_heading_ends_an_appendix_run() -> None:
    # a table of contents listed "Appendix" before the body
    built = _built(("", "Appendix", 1), ("1", "Introduction", 1), ("2", "Proposed method", 1))
    settle_levels_and_kinds(built)
    assert [b.kind for b in built] == [K.OTHER, K.INTRODUCTION, K.METHOD]


# --- the eval ---------------------------------------------------------------------------------------

def _section(heading: str, kind: SectionKind, level: int, count: int, number: str = "") -> Section:
    return Section(heading, kind, level, number, 0, 0, count)


def _row(pdf: str, index: int, heading: str, kind: str, folder: str = "pdfs2") -> dict[str, object]:
    return {"pdf": pdf, "folder": folder, "section": index, "heading_sha1": heading_sha1(heading),
            "kind": kind}


def test_score_weights_by_sentence_and_by_section() -> None:
    sections = [_section("Methods", K.METHOD, 1, 0), _section("Data analysis", K.METHOD, 2, 10),
                _section("Results", K.RESULT, 1, 30), _section("Principal findings", K.RESULT, 2, 5),
                _section("Everything", K.OTHER, 1, 100)]
    rows = [_row("p", 0, "Methods", "method"), _row("p", 1, "Data analysis", "method"),
            _row("p", 2, "Results", "result"), _row("p", 3, "Principal findings", "discussion"),
            _row("p", 4, "Everything", MIXED), _row("p", 5, "Gone", "other"),
            _row("q", 0, "Not parsed", "other")]
    result = score(rows, {("pdfs2", "p"): sections})
    block = result["folders"]["pdfs2"]
    assert block["papers"] == 1 and block["sections"] == 3  # the empty section is not scored
    assert block["section_accuracy"] == pytest.approx(2 / 3, abs=1e-4)
    assert block["sentences"] == 45 and block["sentence_accuracy"] == pytest.approx(40 / 45, abs=1e-4)
    sub = block["subsections"]
    assert sub["sections"] == 2 and sub["sentence_accuracy"] == pytest.approx(10 / 15, abs=1e-4)
    assert block["mixed_rows"] == 1 and block["unmatched_rows"] == 1
    assert block["confusions"] == [{"gold": "discussion", "parsed": "result", "sentences": 5}]
    assert [(e["section"], e["gold"], e["parsed"]) for e in result["errors"]] == [(3, "discussion", "result")]
    assert list(result["folders"]) == ["pdfs2", "all"]


def test_a_renamed_section_is_unmatched_not_scored() -> None:
    sections = [_section("Results and discussion", K.RESULT, 1, 7)]
    result = score([_row("p", 0, "Results", "result")], {("pdfs2", "p"): sections})
    assert result["folders"]["all"]["unmatched_rows"] == 1 and result["folders"]["all"]["sections"] == 0


def test_the_gold_file_is_well_formed() -> None:
    rows = read_gold(DEFAULT_GOLD)
    kinds = {k.value for k in SectionKind} | {MIXED}
    assert len(rows) == 1189 and all(row["kind"] in kinds for row in rows)
    assert {row["folder"] for row in rows} == {"pdfs", "pdfs2"}
    assert len({(row["folder"], row["pdf"]) for row in rows}) == 64
    # heading text only for papers of the open tier (checked against the manifests when present)
    for row in rows:
        if "heading" in row:
            assert heading_sha1(row["heading"]) == row["heading_sha1"]


@pytest.mark.shared
def test_headings_are_stored_only_for_open_papers(shared: Path) -> None:
    import csv

    tiers = {}
    for folder in ("pdfs", "pdfs2"):
        with (shared / folder / "manifest.csv").open(encoding="utf-8") as handle:
            tiers.update({(folder, r["file"][:-4]): r["tier"] for r in csv.DictReader(handle)})
    for row in read_gold(DEFAULT_GOLD):
        assert ("heading" in row) == (tiers[(row["folder"], row["pdf"])] == "open"), row["pdf"]


@pytest.mark.shared
def test_eval_sections_on_two_gold_papers(shared: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    rows = [row for row in read_gold(DEFAULT_GOLD)
            if row["pdf"] in ("acl2020-main-207", "hindawi-PMC4738708")]
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "figures.json"
    assert main(["eval", "sections", "--gold", str(gold), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "pdfs " in printed and "pdfs2" in printed
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["folders"]["all"]["papers"] == 2 and figures["folders"]["all"]["unmatched_rows"] == 0
    # SPECTER: "2.1 Overview" and "2.2 Background: ..." under "2 Model" are method, as labelled
    assert not any(e["pdf"] == "acl2020-main-207" and e["section"] in (3, 4) for e in figures["errors"])
    assert figures["folders"]["pdfs2"]["sentence_accuracy"] == 1.0


def test_a_second_annotation_is_scored_by_field_with_kappa() -> None:
    gold = [_row("a", 0, "Intro", "introduction"), _row("a", 1, "Setup", "method"),
            _row("a", 2, "Runs", "result"), _row("b", 0, "Methods", "method"),
            _row("b", 1, "Findings", "result"), _row("c", 0, "Model", "method", folder="pdfs")]
    second = [_row("a", 0, "Intro", "introduction"), _row("a", 1, "Setup", "result"),
              _row("a", 2, "Runs", "result"), _row("b", 0, "Methods", "method"),
              _row("b", 1, "Findings", "result"), _row("c", 0, "Model", "method", folder="pdfs"),
              _row("b", 2, "Not in the gold", "other")]
    result = agreement(gold, second, {"a": "biomedical", "b": "social"})
    groups = result["groups"]
    assert groups["all"]["sections"] == 6 and groups["all"]["agreement"] == pytest.approx(5 / 6, abs=1e-4)
    # observed 5/6; expected from the marginals (gold 1 intro, 3 method, 2 result; second 1, 2, 3): 13/36
    assert groups["all"]["kappa"] == pytest.approx((5 / 6 - 13 / 36) / (1 - 13 / 36), abs=1e-4)
    assert groups["social"] == {"sections": 2, "agreement": 1.0, "kappa": 1.0}
    assert groups["CS"]["sections"] == 1  # the shared pdfs count as CS
    assert groups["biomedical"]["agreement"] == pytest.approx(2 / 3, abs=1e-4)
    assert result["unmatched_rows"] == 1
    assert result["disagreements"] == [{"folder": "pdfs2", "pdf": "a", "section": 1, "gold": "method",
                                        "second": "result"}]


def test_eval_sections_second_reads_no_pdf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold, second, out = tmp_path / "gold.jsonl", tmp_path / "second.jsonl", tmp_path / "agreement.json"
    gold.write_text(json.dumps(_row("a", 0, "Intro", "introduction")) + "\n"
                    + json.dumps(_row("a", 1, "Setup", "method")) + "\n", encoding="utf-8")
    second.write_text(json.dumps(_row("a", 1, "Setup", "method")) + "\n", encoding="utf-8")
    # the shared folder holds no PDF (and no manifest: the field is "unknown")
    assert main(["eval", "sections", "--gold", str(gold), "--second", str(second), "--shared", str(tmp_path),
                 "--json", str(out)]) == 0
    assert "agreement 100.0%" in capsys.readouterr().out
    assert json.loads(out.read_text(encoding="utf-8"))["groups"]["unknown"]["sections"] == 1
    second.write_text(json.dumps(_row("z", 0, "Elsewhere", "method")) + "\n", encoding="utf-8")
    assert main(["eval", "sections", "--gold", str(gold), "--second", str(second),
                 "--shared", str(tmp_path)]) != 0
    assert "no row matches" in capsys.readouterr().err


def test_the_corpus_readers_place_topical_sections_as_the_parser_does() -> None:
    from models.datasets.annotation_sources import kinds_by_place

    headings = ["Abstract", "Introduction", "QUILL", "QUILL › Syntactic constraint", "QUILL › Evaluation",
                "Experiments", "Phrase alignment", "Conclusion", "Acknowledgements", "Appendix › Data"]
    kinds = ["abstract", "introduction", "other", "other", "result", "result", "other", "conclusion", "other",
             "other"]
    # a decisive subsection heading ("Evaluation") keeps its own kind; back matter and appendices stay other
    assert kinds_by_place(headings, kinds) == [
        "abstract", "introduction", "method", "method", "result", "result", "result", "conclusion", "other",
        "other"]
    # the same top-level heading twice, apart: each place counts on its own
    headings = ["Prototype", "Methods", "Prototype", "Results"]
    kinds = ["other", "method", "other", "result"]
    assert kinds_by_place(headings, kinds) == ["other", "method", "method", "result"]


def test_findings_before_a_late_related_work_and_front_matter() -> None:
    """Session 29: a topical section between the findings and a late "Related work" (a CS paper's
    evaluation chapters) holds more findings, not ``other``; what the parser took for sections before
    the abstract (running head, title, authors) is front matter, ``other``, whatever its words."""
    built = _built(("", "Design and Implementation", 1), ("", "Yongle Zhang, Pranay U. Jain", 2),
                   ("", "Abstract", 1), ("1", "Introduction", 1), ("2", "Methodology", 1),
                   ("3", "General Findings", 1), ("4", "Catastrophic Failures", 1),
                   ("4.1", "Trivial Mistakes in Error Handlers", 2), ("5", "Related Work", 1),
                   ("6", "Conclusions", 1))
    settle_levels_and_kinds(built)
    assert [b.kind for b in built] == [K.OTHER, K.OTHER, K.ABSTRACT, K.INTRODUCTION, K.METHOD, K.RESULT,
                                       K.RESULT, K.RESULT, K.RELATED_WORK, K.CONCLUSION]
