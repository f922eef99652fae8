"""What `rhetorica analyze` and `rhetorica figures rank` say to a person, and the reading exports, agree
with the GUI and with themselves (a hostile tester's findings):

- ``analyze --json -`` writes the JSON to stdout and the summary to stderr (as ``parse --json -``);
- sentences are numbered from 1, as the GUI and ``gui --select N`` number them;
- the section count says how many sections are empty; kinds are whole; a cut list ends with "…";
- HTML, Markdown and the annotated PDF's notes say "uncertain: A 39% or B 39%", percentages and plain
  function names (``core.exporting.label_words``); CSV/JSON keep ids and scores, with ``uncertain``
  and the runner-up; CSV text cells cannot start a spreadsheet formula;
- ``figures rank`` on a paper without figures says so in one sentence and makes no empty ``--png``
  folder.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from app.cli import main
from core.document import Section, SectionKind
from core.exporting.exports import (
    export_csv,
    spreadsheet_safe,
    to_csv_text,
    to_html,
    to_json_dict,
    to_markdown,
)
from core.exporting.label_words import function_words, role_words
from core.taxonomy.labels import FunctionPrediction, RolePrediction
from tests.paper_factory import make_analysis, make_paper
from tests.tiny_bundle import make_tiny_bundle

UNSURE = RolePrediction("objective", {"objective": 0.394, "background": 0.391, "method": 0.215})
SURE = RolePrediction("method", {"method": 0.83, "result": 0.17})
PROPOSAL = FunctionPrediction("proposal", (("proposal", 0.87), ("aim", 0.1)))
NO_CLEAR = FunctionPrediction("none", (("main-finding", 0.13), ("interpretation", 0.09)))


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bundle(tmp_path_factory.mktemp("reading") / "bundle", functions=True)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _paper_json(folder: Path) -> Path:
    """The factory paper as a paper JSON, with an empty last section (a heading with no sentences)."""
    paper = make_paper()
    paper.sections.append(Section(heading="Acknowledgements", kind=SectionKind.OTHER, number="",
                                  first_sentence=len(paper.sentences), sentence_count=0))
    path = folder / "paper.json"
    path.write_text(paper.to_json(), encoding="utf-8")
    return path


def _analysis_with(roles: list[RolePrediction], functions: list[FunctionPrediction]):  # type: ignore[no-untyped-def]
    paper = make_paper()
    n = len(paper.sentences)
    return paper, replace(make_analysis(paper), roles=(roles * n)[:n], functions=(functions * n)[:n])


# -- analyze: --json -, numbers from 1, counts and names that agree with the table ---------------------
def test_analyze_json_dash_goes_to_stdout_and_the_summary_to_stderr(
        bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    paper = _paper_json(tmp_path)
    code, out, err = _run(["analyze", str(paper), "--model", str(bundle), "--threads", "1", "--quiet",
                           "--json", "-"], capsys)
    assert code == 0, err
    data = json.loads(out)  # stdout is the JSON alone
    assert set(data) == {"paper", "analysis"} and len(data["analysis"]["roles"]) == 6
    assert not (tmp_path / "-").exists()
    assert "most confident sentence per role" in err and "wrote" not in err
    assert "'-' = stdout" in " ".join(_help(["analyze", "--help"], capsys).split())


def test_annotated_pdf_to_stdout_is_refused(bundle: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(b"%PDF-1.4\n")
    code, _, err = _run(["analyze", str(pdf), "--annotated-pdf", "-", "--model", str(bundle)], capsys)
    assert code == 2 and "not written to stdout" in err and err.count("\n") == 1


def test_analyze_numbers_sentences_from_1_and_counts_sections_as_listed(
        bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["analyze", str(_paper_json(tmp_path)), "--model", str(bundle), "--threads", "1",
                           "--quiet"], capsys)
    assert code == 0, err
    texts = [s.text for s in make_paper().sentences]
    examples = re.findall(r"^  \w+ +\d+%  +#(\d+)  (.+)$", out, flags=re.MULTILINE)
    assert examples, out
    for number, text in examples:
        assert texts[int(number) - 1].startswith(text.removesuffix(" …")), (number, text)
    assert not re.search(r"\bs\d+\b", out)  # no internal 0-based id
    assert "counted from 1" in out
    assert "4 sections (1 empty), 6 sentences" in out
    rows = [line for line in out.splitlines() if line.endswith("]") or "] " in line]
    assert len([r for r in rows if re.search(r"\[[a-z-]+\]", r)]) == 3  # the 3 sections with sentences
    assert "Conclusion [conclusion]" in out and "Abstract [abstract]" in out
    assert "with no clear function" in out and "sentences none" not in out


def test_a_cut_list_ends_with_an_ellipsis_after_a_whole_item() -> None:
    from app.commands.analyze import comma_list, function_line

    parts = [f"function-{i} {i}" for i in range(40)]
    line = comma_list(parts, 60)
    assert len(line) <= 60 + len(", … (40 more)")
    shown, _, rest = line.rpartition(", … (")
    assert all(item in parts for item in shown.split(", ")) and rest.endswith(" more)")
    assert int(rest.split()[0]) == 40 - len(shown.split(", "))
    assert comma_list(["a 1", "b 2"], 60) == "a 1, b 2"
    functions = [PROPOSAL] * 3 + [NO_CLEAR] * 51
    assert function_line(functions) == ("communicative functions (51 sentences with no clear function): "
                                        "proposal 3")
    assert "(1 sentence with" in function_line([NO_CLEAR])


# -- the reading exports say what the GUI says ----------------------------------------------------------
def test_label_words_are_the_guis() -> None:
    assert role_words(SURE) == "method 83%"
    assert role_words(UNSURE) == "uncertain: objective 39% or background 39%"
    assert function_words(PROPOSAL) == "Introducing the proposed approach 87%"
    assert function_words(NO_CLEAR) == ("no clear function (uncertain: Reporting a finding 13% or "
                                        "Interpreting a result 9%)")
    assert function_words(None) == ""


def test_markdown_and_html_say_uncertain_percentages_and_plain_names() -> None:
    paper, analysis = _analysis_with([UNSURE, SURE], [PROPOSAL, NO_CLEAR])
    markdown = to_markdown(paper, analysis)
    assert ("- **uncertain: objective 39% or background 39%** · *Introducing the proposed approach 87%*: "
            f"{paper.sentences[0].text}") in markdown
    assert "- **method 83%** · *no clear function (uncertain: Reporting a finding 13% or" in markdown
    page = to_html(paper, analysis)
    assert "[uncertain: objective 39% or background 39% · Introducing the proposed approach 87%]" in page
    assert 'title="sentence 1 · uncertain: objective 39%' in page  # numbered from 1, as the GUI
    for text in (markdown, page):
        assert "proposal" not in text and "(0.39)" not in text and "(0.87)" not in text


def test_csv_and_json_keep_machine_fields_with_uncertain_and_the_runner_up() -> None:
    paper, analysis = _analysis_with([UNSURE, SURE], [PROPOSAL, NO_CLEAR])
    rows = list(csv.DictReader(io.StringIO(to_csv_text(paper, analysis))))
    first, second = rows[0], rows[1]
    assert (first["id"], first["index"], first["role"]) == ("s0", "0", "objective")
    assert (first["confidence"], first["uncertain"]) == ("0.394", "True")
    assert (first["role_2"], first["role_2_confidence"]) == ("background", "0.391")
    assert (second["uncertain"], second["role_2"]) == ("False", "result")
    assert first["function"] == "proposal"
    row = to_json_dict(paper, analysis)["sentences"][0]
    assert row["uncertain"] is True and row["role_2"] == "background" and row["index"] == 0


def test_csv_text_cells_cannot_start_a_formula(tmp_path: Path) -> None:
    paper = make_paper()
    hostile = ["- T1 < T2, so the first wins.", "=HYPERLINK(\"http://x\",\"y\")", "+1 more", "@SUM(A1)",
               "\tTabbed", "Plain - text = fine"]
    for sentence, text in zip(paper.sentences, hostile, strict=True):
        sentence.text = text
    paper.sections[1].heading = "-Method"
    with open(export_csv(paper, make_analysis(paper), tmp_path / "a.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["text"] for r in rows] == ["'" + t for t in hostile[:5]] + [hostile[5]]
    assert rows[3]["section_heading"] == "'-Method"
    assert float(rows[0]["confidence"]) > 0  # numbers are left alone
    assert spreadsheet_safe(-0.5) == -0.5 and spreadsheet_safe("") == ""


def test_the_annotated_pdf_note_says_uncertain_and_plain_names() -> None:
    from core.pdf.annotate import highlight_note

    assert highlight_note(UNSURE, PROPOSAL).splitlines() == [
        "Role: uncertain: objective 39% or background 39%", "Function: Introducing the proposed approach 87%",
        "Labelled by Rhetorica"]
    unclear = highlight_note(SURE, NO_CLEAR).splitlines()[1]
    assert unclear.startswith("Function: no clear function (uncertain: ")


# -- figures rank without figures ------------------------------------------------------------------------
def _figureless_pdf(path: Path) -> Path:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 90), "A Study Without Pictures", fontsize=16)
    body = ("Abstract. We measured the growth of plants in three soils over two summers. The loam gave the "
            "tallest plants. Sand gave the shortest plants. We conclude that soil matters for growth.")
    page.insert_textbox(pymupdf.Rect(72, 120, 540, 400), body, fontsize=10, fontname="helv")
    doc.save(path)
    doc.close()
    return path


def test_figures_rank_without_figures_says_so_in_one_sentence_and_makes_no_folder(
        bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pdf = _figureless_pdf(tmp_path / "plain.pdf")
    code, _, err = _run(["figures", "rank", str(pdf), "--png", str(tmp_path / "pngs"), "--quiet",
                         "--model", str(bundle), "--threads", "1"], capsys)
    assert code == 0  # nothing to rank is a finding, as parse's "figures: 0"
    assert err == "plain.pdf: no figures found; no PNG written\n"
    assert not (tmp_path / "pngs").exists()


def test_no_figures_names_tables_only_when_the_paper_has_them() -> None:
    from app.commands.figures import nothing_to_rank

    paper = make_paper()
    table = replace(paper.figures[0], id="tab1", kind="table")
    supplementary = replace(paper.figures[0], id="figS1", number="S1")
    paper.figures = [table]
    assert nothing_to_rank(paper, False) == ("no figures found (tables are not candidates; add "
                                             "--include-tables to rank them)")
    paper.figures = [supplementary]
    assert nothing_to_rank(paper, False) == "no figures found (supplementary figures are not candidates)"
    assert nothing_to_rank(paper, True) == ("no figures or tables found (supplementary ones are not "
                                            "candidates)")
    paper.figures = []
    assert nothing_to_rank(paper, False) == "no figures found"


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(argv)
    return capsys.readouterr().out


def test_figures_rank_help_ends_with_a_described_option_and_a_newline(
        capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(["figures", "rank", "--help"], capsys)
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert not text.rstrip().endswith("{auto,cpu,cuda}")  # --device says what it does
    assert "where the model runs" in " ".join(text.split())
