"""core.exporting.exports additions (issue 27.4): the HTML page and a draft's labels (its text before the
first heading included) as Markdown/HTML, also through ``rhetorica analyze DRAFT --export OUT``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.draft_formats import parse_draft_text
from core.draft_formats.paper import paper_from_draft
from core.exporting.exports import export_html, labelled_groups, to_html, to_markdown
from core.labelling.analysis import PaperAnalysis
from core.taxonomy.labels import ROLES, FunctionPrediction, RolePrediction
from core.taxonomy.role_colors import DEFAULT_ROLE_COLORS
from tests.paper_factory import LABELS, make_analysis, make_paper

DRAFT = """Opening words <b>before</b> any heading. They say what the draft is about.

# Introduction

Cats sit on <script>alert(1)</script> mats. We ask why & how [they](javascript:x) do it.

# Methods

We watched ten cats for a year.
"""


def _draft_paper_and_analysis():  # type: ignore[no-untyped-def]
    draft = parse_draft_text(DRAFT, "md")
    paper = paper_from_draft(draft, title="My <draft>", source="draft.md")
    # the Markdown reader drops raw HTML and link targets; text from elsewhere may carry them
    paper.sentences[2].text = "Cats sit on <script>alert(1)</script> mats, [see](javascript:x)."
    roles, functions = [], []
    for sentence in paper.sentences:
        label = ROLES[sentence.index % len(ROLES)]
        probabilities = dict.fromkeys(ROLES, 0.04)
        probabilities[label] = 0.8
        roles.append(RolePrediction(label, probabilities))
        functions.append(FunctionPrediction("aim", (("aim", 0.55),)))
    return paper, PaperAnalysis("", "m<1>", roles, functions=functions)


def test_html_page_colours_each_sentence_and_escapes_everything(tmp_path: Path) -> None:
    paper = make_paper()
    analysis = make_analysis(paper)
    page = export_html(paper, analysis, tmp_path / "a.html").read_text(encoding="utf-8")
    spans = re.findall(r'<span class="s r-(\w+)" id="(s\d+)" title="([^"]*)">', page)
    assert [role for role, _, _ in spans] == LABELS
    assert [sid for _, sid, _ in spans] == [s.id for s in paper.sentences]
    assert spans[1][2] == "sentence 2 · objective 90%"  # numbered from 1 and in percent, as the GUI
    for role in ROLES:
        assert f".r-{role} {{ background: {DEFAULT_ROLE_COLORS[role]}59; }}" in page
    assert "<h2>2 Method</h2>" in page and "&quot;quoted&quot;" in page
    assert "<script" not in page.lower()


def test_a_drafts_labels_as_markdown_and_html_keep_the_text_before_any_heading() -> None:
    paper, analysis = _draft_paper_and_analysis()
    groups = labelled_groups(paper)
    assert groups[0][0] == "(before any heading)" and len(groups[0][1]) == 2
    assert sum(len(sentences) for _, sentences in groups) == len(paper.sentences)
    markdown = to_markdown(paper, analysis)
    assert markdown.count("\n- **") == len(paper.sentences)
    assert "## (before any heading)" in markdown and "&lt;script&gt;" in markdown
    assert "javascript\\:" in markdown and "<script" not in markdown
    page = to_html(paper, analysis)
    assert page.count('<span class="s r-') == len(paper.sentences)
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<title>My &lt;draft&gt;</title>" in page and "<code>m&lt;1&gt;</code>" in page
    assert "· Stating the aim 55%" in page  # the function's plain name


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_path_factory.mktemp("tiny") / "bundle")


def test_analyze_draft_export(bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    draft = tmp_path / "draft.md"
    draft.write_text(DRAFT, encoding="utf-8")
    model = ["--model", str(bundle), "--threads", "1", "--quiet"]
    for name in ("labels.md", "labels.html"):
        assert main(["analyze", str(draft), *model, "--export", str(tmp_path / name)]) == 0
        assert f"wrote {tmp_path / name}" in capsys.readouterr().out
    assert (tmp_path / "labels.md").read_text(encoding="utf-8").count("\n- **") == 5
    assert (tmp_path / "labels.html").read_text(encoding="utf-8").count('<span class="s r-') == 5
    for bad, reason in ((tmp_path / "labels.docx", "give it a .md, .html"),
                        (tmp_path / "nope" / "x.md", "does not exist")):
        assert main(["analyze", str(draft), *model, "--export", str(bad)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("rhetorica: error: ") and err.count("\n") == 1 and reason in err
