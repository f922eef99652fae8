"""Journal layouts the parser was not tuned on (MDPI, Elsevier, PLOS front pages; supplementary
sections and figures S1, S2 after the acknowledgements), built from real CC BY text with
hand-written gold in tests/fixtures/layouts/."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.document import Paper, SectionKind
from core.figures.figure_rank import candidate_figures
from core.pdf import parse_pdf
from tests.pdf_factory import layout_paper_pdf

FIXTURES = Path(__file__).parent / "fixtures" / "layouts"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.json"))


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def parse_layout(name: str, tmp_path: Path) -> tuple[dict, Paper]:
    spec = load(name)
    return spec["gold"], parse_pdf(layout_paper_pdf(tmp_path / f"{name}.pdf", spec))


def compare(gold: dict, paper: Paper) -> dict:
    """What the parse got right against the gold (also used to write the reliability report)."""
    sections = [s for s in paper.sections if s.kind is not SectionKind.ABSTRACT]
    got = [(_norm(s.heading), s.kind.value) for s in sections]
    want = [(_norm(s["heading"]), s["kind"]) for s in gold["sections"]]
    abstract = [s.text for s in paper.abstract_sentences]
    figures = [f for f in paper.figures if f.kind == "figure"]
    main = [f.number for f in candidate_figures(paper)]
    return {
        "title_ok": _norm(paper.title) == _norm(gold["title"]),
        "title": paper.title,
        "abstract_ok": bool(abstract) and _norm(abstract[0]) == _norm(gold["abstract_first_sentence"]),
        "sections_ok": got == want,
        "sections": got,
        "figures": [f.number for f in figures],
        "figures_ok": sorted(f.number for f in figures)
        == sorted(gold["main_figures"] + gold["supplementary_figures"]),
        "main": main,
        "main_ok": main == gold["main_figures"],
    }


@pytest.mark.parametrize("name", NAMES)
def test_layout_matches_gold(name: str, tmp_path: Path) -> None:
    gold, paper = parse_layout(name, tmp_path)
    result = compare(gold, paper)
    assert result["title_ok"], result["title"]
    assert result["abstract_ok"], [s.text for s in paper.abstract_sentences][:1]
    assert result["sections"] == [(_norm(s["heading"]), s["kind"]) for s in gold["sections"]]
    assert result["figures_ok"], result["figures"]
    assert result["main"] == gold["main_figures"]


@pytest.mark.parametrize("name", NAMES)
def test_supplementary_sections_are_not_body(name: str, tmp_path: Path) -> None:
    gold, paper = parse_layout(name, tmp_path)
    supplementary = {_norm(s["heading"]) for s in gold["sections"] if s["role"] == "supplementary"}
    for section in paper.sections:
        if _norm(section.heading) in supplementary:
            assert section.kind is SectionKind.OTHER


def test_at_least_five_layouts() -> None:
    assert len(NAMES) >= 5
    styles = {load(n)["layout"]["style"] for n in NAMES}
    assert {"mdpi", "elsevier", "plos"} <= styles


@pytest.mark.parametrize("name", [n for n in NAMES if load(n)["layout"]["style"] == "mdpi"])
def test_an_mdpi_logo_in_lower_case_is_not_the_title(name: str, tmp_path: Path) -> None:
    """Real MDPI front pages set the journal's logo as one lower-case word ("sensors", "entropy")
    above the title: it is furniture, the title below it is the title, and the run-in abstract is
    the abstract (parser pdf-10; before, the logo was the title and the real title opened a
    section of the abstract's sentences with a guessed kind)."""
    spec = load(name)
    spec["layout"]["journal"] = spec["layout"]["journal"].lower()
    gold = spec["gold"]
    paper = parse_pdf(layout_paper_pdf(tmp_path / f"{name}-logo.pdf", spec))
    assert _norm(paper.title) == _norm(gold["title"])
    assert paper.sections[0].kind is SectionKind.ABSTRACT
    assert _norm(paper.abstract_sentences[0].text) == _norm(gold["abstract_first_sentence"])
    assert all(_norm(s.heading) != _norm(gold["title"]) for s in paper.sections)
