"""The JSON export (``analyze --export OUT.json``, the GUI's Export as JSON) reads back as a paper:
``rhetorica analyze OUT.json`` labels its text and sections again, as it does a paper JSON; a draft's
text before its first heading is exported in no section, and a draft with no heading at all exports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from core.document import Paper, Section, SectionKind, Sentence
from core.exporting.exports import (
    is_analysis_export,
    paper_from_export,
    sentence_rows,
    to_csv_text,
    to_json_dict,
)
from core.json_shapes import ShapeError
from tests.paper_factory import make_analysis, make_paper
from tests.tiny_bundle import make_tiny_bundle


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bundle(tmp_path_factory.mktemp("tiny") / "bundle", functions=True)


def _draft(headings: bool = True) -> Paper:
    """A draft as ``paper_from_draft`` makes one: two sentences before any heading (section -1), then a
    Method section with one sentence (or no heading at all)."""
    texts = ["We study cats.", "Cats are great.", "We measured cats with a ruler."]
    paper = Paper(title="draft", source_path="/tmp/d.md", sha256="cd" * 32, page_sizes=[])
    if headings:
        paper.sections.append(Section("Method", SectionKind.METHOD, first_sentence=2, sentence_count=1))
    for i, text in enumerate(texts):
        paper.sentences.append(Sentence(f"s{i}", text, 0 if headings and i == 2 else -1, i, []))
    return paper


def test_the_json_export_reads_back_as_the_paper_it_was_made_of() -> None:
    paper = make_paper()
    data = json.loads(json.dumps(to_json_dict(paper, make_analysis(paper))))
    assert is_analysis_export(data) and not is_analysis_export(paper.to_dict())
    back = paper_from_export(data)
    assert [s.text for s in back.sentences] == [s.text for s in paper.sentences]
    assert [s.section_index for s in back.sentences] == [s.section_index for s in paper.sentences]
    assert [s.pages for s in back.sentences] == [s.pages for s in paper.sentences]
    assert [(s.heading, s.kind, s.number, s.level, s.page, s.first_sentence, s.sentence_count)
            for s in back.sections] == [(s.heading, s.kind, s.number, s.level, s.page, s.first_sentence,
                                         s.sentence_count) for s in paper.sections]
    assert (back.title, back.authors, back.sha256, back.parser_version, back.page_sizes) == (
        paper.title, paper.authors, paper.sha256, paper.parser_version, paper.page_sizes)
    body = back.body_text()
    assert all(body[s.char_start:s.char_end] == s.text for s in back.sentences)
    assert all(not s.rects for s in back.sentences) and back.figures == []  # what an export does not carry


def test_an_older_export_without_page_sizes_reads_back_without_pages() -> None:
    paper = make_paper()
    data = to_json_dict(paper, make_analysis(paper))
    del data["paper"]["page_sizes"]
    for section in data["sections"]:
        del section["level"], section["page"]
    back = paper_from_export(data)
    assert back.page_sizes == [] and all(s.pages == [] for s in back.sentences)
    assert [s.text for s in back.sentences] == [s.text for s in paper.sentences]


def test_a_drafts_text_before_its_first_heading_is_in_no_section_and_reads_back() -> None:
    paper = _draft()
    rows = sentence_rows(paper, make_analysis(paper))
    assert [(r["section_heading"], r["section_kind"]) for r in rows] == [("", ""), ("", ""),
                                                                         ("Method", "method")]
    back = paper_from_export(to_json_dict(paper, make_analysis(paper)))
    assert [s.section_index for s in back.sentences] == [-1, -1, 0]
    assert (back.sections[0].first_sentence, back.sections[0].sentence_count) == (2, 1)


def test_a_draft_without_headings_exports_and_reads_back() -> None:
    paper = _draft(headings=False)
    assert to_csv_text(paper, make_analysis(paper)).count("\n") == 4  # header + 3 rows (IndexError before)
    back = paper_from_export(to_json_dict(paper, make_analysis(paper)))
    assert back.sections == [] and [s.section_index for s in back.sentences] == [-1, -1, -1]


def _export(edit: Any = None) -> dict[str, Any]:
    paper = make_paper()
    data = json.loads(json.dumps(to_json_dict(paper, make_analysis(paper))))
    if edit is not None:
        edit(data)
    return data


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["sentences"][1].pop("text"), "sentence 1: 'text' is missing"),
    (lambda d: d["sentences"].pop(), "the export's sections count 6 sentences, but it lists 5"),
    (lambda d: d["sentences"][3].update(section_heading="Results"),
     "sentence 3: its section 'Results' (method) is not the one the export's 'sections' counts put it in, "
     "'Method' (method)"),
    (lambda d: d["sections"][0].update(kind="prologue"), "section 0: 'kind' must be one of"),
    (lambda d: d["sentences"][0].update(page=9), "sentence 0: page"),
    (lambda d: d.update(format=2), "the export's 'format' is 2; this Rhetorica reads format 1"),
])
def test_a_damaged_export_names_the_field(edit: Any, message: str) -> None:
    with pytest.raises(ShapeError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        paper_from_export(_export(edit))


def _roles(path: Path) -> list[str]:
    return [role["label"] for role in json.loads(path.read_text(encoding="utf-8"))["analysis"]["roles"]]


def test_analyze_reads_its_own_json_export(bundle: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The tester's steps: a paper's `analyze --export ex.json`, then `analyze ex.json` (refused with
    "'page_sizes' is missing" before); its labels are the paper's."""
    paper_json = tmp_path / "paper.json"
    paper_json.write_text(make_paper().to_json(), encoding="utf-8")
    model = ["--model", str(bundle), "--quiet", "--threads", "1"]
    assert main(["analyze", str(paper_json), "--export", str(tmp_path / "ex.json"),
                 "--json", str(tmp_path / "first.json"), *model]) == 0
    capsys.readouterr()
    assert main(["analyze", str(tmp_path / "ex.json"), "--json", str(tmp_path / "again.json"), *model]) == 0
    out = capsys.readouterr().out
    assert "3 pages, 3 sections, 6 sentences" in out
    assert _roles(tmp_path / "again.json") == _roles(tmp_path / "first.json")


def test_a_damaged_export_is_one_line_and_a_foreign_json_says_which_files_load(
        bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    damaged = tmp_path / "ex.json"
    damaged.write_text(json.dumps(_export(lambda d: d["sentences"][1].pop("text"))), encoding="utf-8")
    assert main(["analyze", str(damaged), "--model", str(bundle), "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err == (f"rhetorica: error: {damaged}: a JSON export that cannot be read back: "
                            "sentence 1: 'text' is missing\n")
    foreign = tmp_path / "other.json"
    foreign.write_text('{"a": 1}', encoding="utf-8")
    assert main(["analyze", str(foreign), "--model", str(bundle), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a paper JSON: the paper: 'title' is missing" in err
    assert "`analyze --export OUT.json`" in err and "`rhetorica parse --json`" in err
