"""core.exporting.exports: JSON, CSV and Markdown carry every sentence's role and probabilities."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from core.exporting.exports import CSV_COLUMNS, export_csv, export_json, export_markdown
from models.roles import ROLES
from tests.paper_factory import LABELS, make_analysis, make_paper


def test_json_export(tmp_path: Path) -> None:
    paper = make_paper()
    analysis = make_analysis(paper)
    out = export_json(paper, analysis, tmp_path / "a.json")
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["model_id"] == analysis.model_id
    assert data["paper"]["title"] == paper.title
    assert [s["role"] for s in data["sentences"]] == LABELS
    assert data["sentences"][1]["text"] == paper.sentences[1].text
    assert data["sentences"][0]["page"] == 1
    assert set(data["role_counts"]) == set(ROLES)
    assert sum(data["role_counts"].values()) == len(paper.sentences)
    method = data["sections"][1]
    assert method["heading"] == "Method" and method["roles"]["method"] == 2
    for row in data["sentences"]:
        assert abs(sum(row[f"p_{r}"] for r in ROLES) - 1.0) < 1e-3


def test_csv_export_round_trips_awkward_text(tmp_path: Path) -> None:
    paper = make_paper()
    out = export_csv(paper, make_analysis(paper), tmp_path / "a.csv")
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0].keys()) == CSV_COLUMNS
    assert len(rows) == len(paper.sentences)
    assert [r["text"] for r in rows] == [s.text for s in paper.sentences]  # quotes, commas, pipes survive
    assert [r["role"] for r in rows] == LABELS
    assert rows[3]["section_heading"] == "Method" and rows[3]["section_kind"] == "method"


def test_markdown_export(tmp_path: Path) -> None:
    paper = make_paper()
    text = export_markdown(paper, make_analysis(paper), tmp_path / "a.md").read_text(encoding="utf-8")
    assert text.startswith("# A \\| Test \\*Paper\\*")
    assert "| Section | Sentences |" in text
    assert "| 2 Method | 2 | 0% | 0% | 100% | 0% | 0% | 0% |" in text
    assert "## 5 Conclusion" in text
    assert "- **objective 90%**: We propose SPECTER, a document encoder." in text  # the GUI's words
    assert text.count("\n- **") == len(paper.sentences)


def test_mismatched_analysis_is_refused(tmp_path: Path) -> None:
    paper = make_paper()
    analysis = make_analysis(paper)
    analysis.roles = analysis.roles[:2]
    with pytest.raises(ValueError):
        export_json(paper, analysis, tmp_path / "x.json")


def test_exports_carry_functions_when_the_model_has_them(tmp_path: Path) -> None:
    from dataclasses import replace

    from core.taxonomy.labels import FunctionPrediction

    paper = make_paper()
    aim = FunctionPrediction("aim", (("aim", 0.7), ("proposal", 0.2), ("scope", 0.05)))
    weak = FunctionPrediction("none", (("definition", 0.3), ("aim", 0.1), ("scope", 0.1)))
    functions = [aim if i % 2 == 0 else weak for i in range(len(paper.sentences))]
    analysis = replace(make_analysis(paper), functions=functions)
    data = json.loads(export_json(paper, analysis, tmp_path / "a.json").read_text(encoding="utf-8"))
    assert [s["function"] for s in data["sentences"]] == [f.label for f in functions]
    first = data["sentences"][0]
    assert first["function_2"] == "proposal" and first["function_confidence"] == 0.7
    assert data["function_counts"] == {"aim": sum(f.label == "aim" for f in functions),
                                       "none": sum(f.label == "none" for f in functions)}
    with open(export_csv(paper, analysis, tmp_path / "a.csv"), newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["function"] for r in rows] == [f.label for f in functions]
    markdown = export_markdown(paper, analysis, tmp_path / "a.md").read_text(encoding="utf-8")
    assert markdown.count("· *Stating the aim 70%*") == sum(f.label == "aim" for f in functions)
    assert "*none*" not in markdown
    unclear = "· *no clear function (uncertain: Defining a term or quantity 30% or Stating the aim 10%)*"
    assert markdown.count(unclear) == sum(f.label == "none" for f in functions)
    # Without a function head the columns stay, empty.
    plain_path = export_json(paper, make_analysis(paper), tmp_path / "b.json")
    plain = json.loads(plain_path.read_text(encoding="utf-8"))
    assert plain["function_counts"] is None and plain["sentences"][0]["function"] == ""
