"""Saving an edited draft back to its own format only where nothing is lost (issue 27.1)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.draft_formats import parse_draft_text, read_draft
from core.draft_formats.writeback import NotLossless, escape_latex, save_edits, written_back
from core.drafts import RecentDrafts

FIXTURE = Path(__file__).parent / "fixtures" / "drafts" / "latex_paper"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "paper")
    return tmp_path / "paper"


def test_latex_text_edits_are_written_into_the_right_files(project: Path) -> None:
    main, methods = project / "main.tex", project / "sections" / "methods.tex"
    before_main, before_methods = main.read_text(encoding="utf-8"), methods.read_text(encoding="utf-8")
    draft = read_draft(main)
    edited = (draft.plain.replace("The aim of this paper is to remove", "Our aim is to remove")
              .replace("We installed 48 probes", "We installed 50% more probes & loggers"))
    assert sorted(p.name for p in save_edits(draft, edited)) == ["main.tex", "methods.tex"]
    assert main.read_text(encoding="utf-8") == before_main.replace(
        "The aim of this paper is to remove", "Our aim is to remove")  # nothing else moved
    assert methods.read_text(encoding="utf-8") == before_methods.replace(
        "We installed 48 probes", "We installed 50\\% more probes \\& loggers")
    again = read_draft(main)
    assert again.plain.split() == edited.split()
    assert "\\cite{allen1998,smith2015}" in main.read_text(encoding="utf-8")


def test_edits_of_markup_are_refused_and_nothing_written(project: Path) -> None:
    main = project / "main.tex"
    before = main.read_text(encoding="utf-8")
    draft = read_draft(main)
    for edited in (draft.plain.replace("holds [2, 3].", "holds [2]."),  # a citation placeholder
                   draft.plain.replace("# Results", "# Findings"),
                   draft.plain.replace("temperature T:\n[equation].", "temperature T.")):
        if "# Findings" in edited:
            save_edits(draft, edited)  # a heading's own words are the source's: written back
            assert "\\section{Findings}\\label{sec:results}" in main.read_text(encoding="utf-8")
            main.write_text(before, encoding="utf-8")
            continue
        with pytest.raises(NotLossless, match="touches text made from LaTeX markup") as caught:
            save_edits(draft, edited)
        assert "\n" not in str(caught.value)
        assert main.read_text(encoding="utf-8") == before
    with pytest.raises(NotLossless, match="does not read back the same"):
        written_back(draft, draft.plain.replace("closely (Table 1)", "closely -- (Table 1)"))


def test_markdown_and_text_save_as_they_are_and_word_never(tmp_path: Path) -> None:
    md = tmp_path / "d.md"
    md.write_text("# Intro\n\nWe count **birds** [@a].\n", encoding="utf-8")
    draft = read_draft(md)
    save_edits(draft, draft.plain + "\nThen we stop.\n")
    assert md.read_text(encoding="utf-8") == "# Intro\n\nWe count **birds** [@a].\n\nThen we stop.\n"
    assert written_back(parse_draft_text("Same.", "txt"), "Same.") == {}
    docx = pytest.importorskip("docx")
    document = docx.Document()
    document.add_paragraph("A Word draft.")
    document.save(str(tmp_path / "w.docx"))
    word = read_draft(tmp_path / "w.docx")
    with pytest.raises(NotLossless, match=r"a \.docx draft cannot be rewritten"):
        save_edits(word, word.plain + "More.")


def test_escape_latex_round_trips_through_the_parser() -> None:
    typed = "50% of A&B cost $3 (#1) in dir_a/{x} ~ y^2 \\ z"
    parsed = parse_draft_text(f"\\section{{Results}}\n{escape_latex(typed)}.\n", "tex")
    assert parsed.sentences[0].text == typed + "."


def test_recent_drafts_are_newest_first_and_survive_damage(tmp_path: Path) -> None:
    recent = RecentDrafts(tmp_path)
    for name in ("a.tex", "b.md", "a.tex"):
        recent.add(tmp_path / name)
    assert recent.load() == [str(tmp_path / "a.tex"), str(tmp_path / "b.md")]
    assert recent.remove(tmp_path / "a.tex") == [str(tmp_path / "b.md")]
    (tmp_path / "recent.json").write_text("{not json", encoding="utf-8")
    assert recent.load() == []
    for number in range(15):
        recent.add(tmp_path / f"{number}.md")
    assert len(recent.load()) == 10 and recent.load()[0].endswith("14.md")
