"""core.pdf.annotate (issue 27.4): the paper with its role colours as real highlight annotations, one
per labelled sentence and page, each note carrying role, function and confidence; only annotations
are added (the page content and the source PDF stay as they were) and they can be removed again."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

pymupdf = pytest.importorskip("pymupdf")

from core.document import Paper  # noqa: E402
from core.errors import NotAPdfError, RhetoricaError  # noqa: E402
from core.labelling.analysis import PaperAnalysis  # noqa: E402
from core.pdf import parse_pdf  # noqa: E402
from core.pdf.annotate import (  # noqa: E402
    ANNOTATION_AUTHOR,
    AnnotateError,
    annotate_pdf,
    remove_role_highlights,
)
from core.taxonomy.functions import default_taxonomy  # noqa: E402
from core.taxonomy.labels import ROLES, FunctionPrediction, RolePrediction  # noqa: E402
from core.taxonomy.role_colors import DEFAULT_ROLE_COLORS, hex_to_rgb  # noqa: E402
from tests.pdf_factory import two_column_pdf  # noqa: E402

FUNCTIONS = ("aim", "main-finding", "lab-procedure")


def _analysis(paper: Paper, with_functions: bool = True) -> PaperAnalysis:
    roles, functions = [], []
    for sentence in paper.sentences:
        label = ROLES[sentence.index % len(ROLES)]
        probabilities = dict.fromkeys(ROLES, 0.05)
        probabilities[label] = 0.75 - 0.001 * sentence.index
        roles.append(RolePrediction(label, probabilities))
        function = FUNCTIONS[sentence.index % len(FUNCTIONS)]
        functions.append(FunctionPrediction(function, ((function, 0.61), ("none", 0.2))))
    return PaperAnalysis(paper.sha256, "test-model", roles, functions=functions if with_functions else None)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _highlights(path: Path) -> list[tuple[int, dict[str, str], tuple[float, ...], list[float]]]:
    found = []
    with pymupdf.open(path) as doc:
        for page in doc:
            for annot in page.annots():
                assert annot.type[0] == pymupdf.PDF_ANNOT_HIGHLIGHT
                found.append((page.number, dict(annot.info), tuple(annot.colors["stroke"]),
                              list(annot.vertices or [])))
    return found


@pytest.fixture()
def pdf(tmp_path: Path) -> Path:
    return two_column_pdf(tmp_path / "paper.pdf")


def test_one_highlight_per_sentence_and_page_with_role_colour_and_note(pdf: Path, tmp_path: Path) -> None:
    paper = parse_pdf(pdf)
    analysis = _analysis(paper)
    assert len(paper.sentences) > 20
    before = _sha(pdf)
    out = tmp_path / "out" / "annotated.pdf"
    written = annotate_pdf(pdf, paper, analysis, out)
    assert _sha(pdf) == before  # the source PDF is never written
    expected = sum(len({r.page for r in s.rects}) for s in paper.sentences)
    assert written.highlights == expected and written.sentences == len(paper.sentences)
    assert written.skipped == 0
    highlights = _highlights(out)
    assert len(highlights) == expected
    by_note = [info for _, info, _, _ in highlights]
    for sentence, (page, info, colour, vertices) in zip(paper.sentences, highlights):
        role = analysis.roles[sentence.index]
        function = FUNCTIONS[sentence.index % len(FUNCTIONS)]
        assert page == sentence.rects[0].page
        assert info["title"] == ANNOTATION_AUTHOR and info["subject"] == role.label
        assert f"Role: {role.label} {role.confidence:.0%}\n" in info["content"]  # percent, as the GUI
        assert f"Function: {default_taxonomy().name_of(function)} 61%" in info["content"]  # its plain name
        assert colour == pytest.approx(hex_to_rgb(DEFAULT_ROLE_COLORS[role.label]), abs=0.01)
        assert len(vertices) == 4 * len(sentence.rects)  # one quad per rectangle of the sentence
    assert {info["subject"] for info in by_note} == set(ROLES)


def test_only_annotations_are_added_and_they_come_out_again(pdf: Path, tmp_path: Path) -> None:
    paper = parse_pdf(pdf)
    out = annotate_pdf(pdf, paper, _analysis(paper), tmp_path / "a.pdf").path
    with pymupdf.open(pdf) as original, pymupdf.open(out) as annotated:
        assert annotated.page_count == original.page_count
        for a, b in zip(original, annotated):
            assert b.read_contents() == a.read_contents()  # the page's drawing is unchanged
            assert b.get_text() == a.get_text()
    cleaned = tmp_path / "clean.pdf"
    assert remove_role_highlights(out, cleaned) == len(_highlights(out))
    assert _highlights(cleaned) == []


def test_user_colours_and_no_function_head(pdf: Path, tmp_path: Path) -> None:
    paper = parse_pdf(pdf)
    analysis = _analysis(paper, with_functions=False)
    colors = {"background": "#000080", "method": "not a colour"}
    out = annotate_pdf(pdf, paper, analysis, tmp_path / "a.pdf", colors=colors).path
    for _page, info, colour, _ in _highlights(out):
        assert "Function:" not in info["content"]
        if info["subject"] == "background":
            assert colour == pytest.approx((0.0, 0.0, 128 / 255), abs=0.01)
        if info["subject"] == "method":  # an unreadable colour falls back to the default
            assert colour == pytest.approx(hex_to_rgb(DEFAULT_ROLE_COLORS["method"]), abs=0.01)


def test_rotated_page_highlights_sit_on_the_sentence(pdf: Path, tmp_path: Path) -> None:
    rotated = tmp_path / "rotated.pdf"
    with pymupdf.open(pdf) as doc:
        doc[0].set_rotation(90)
        doc.save(rotated)
    paper = parse_pdf(rotated)
    out = annotate_pdf(rotated, paper, _analysis(paper), tmp_path / "a.pdf").path
    with pymupdf.open(out) as doc:
        page = doc[0]
        annots = list(page.annots())
        for sentence, annot in zip(paper.sentences, annots):
            shown = annot.rect * page.rotation_matrix  # as displayed, like the sentence's rectangles
            first = sentence.rects[0]
            assert shown.intersects(pymupdf.Rect(first.x0, first.y0, first.x1, first.y1))


def test_refusals_are_one_line(pdf: Path, tmp_path: Path) -> None:
    paper = parse_pdf(pdf)
    analysis = _analysis(paper)
    with pytest.raises(AnnotateError, match="is the PDF itself"):
        annotate_pdf(pdf, paper, analysis, pdf)
    other = two_column_pdf(tmp_path / "other.pdf")
    with pymupdf.open(other) as doc:
        doc.set_metadata({"title": "changed"})
        doc.save(tmp_path / "changed.pdf")
    with pytest.raises(AnnotateError, match="not the PDF this analysis was made from"):
        annotate_pdf(tmp_path / "changed.pdf", paper, analysis, tmp_path / "a.pdf")
    with pytest.raises(AnnotateError, match="labels for"):
        annotate_pdf(pdf, paper, PaperAnalysis(paper.sha256, "m", analysis.roles[:3]), tmp_path / "a.pdf")
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder", encoding="utf-8")
    with pytest.raises(RhetoricaError) as error:
        annotate_pdf(pdf, paper, analysis, blocker / "a.pdf")
    assert "\n" not in str(error.value) and "a.pdf" in str(error.value)
    with pytest.raises(NotAPdfError):
        annotate_pdf(tmp_path / "missing.pdf", paper, analysis, tmp_path / "a.pdf")
    assert not (tmp_path / "a.pdf").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_path_factory.mktemp("tiny") / "bundle")


def test_analyze_writes_the_annotated_pdf(bundle: Path, pdf: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    out = tmp_path / "annotated.pdf"
    before = _sha(pdf)
    assert main(["analyze", str(pdf), "--model", str(bundle), "--threads", "1", "--quiet",
                 "--annotated-pdf", str(out)]) == 0
    printed = capsys.readouterr().out
    highlights = _highlights(out)
    assert f"wrote {out}: {len(highlights)} highlight(s) for " in printed
    assert _sha(pdf) == before
    assert highlights and all(info["content"].startswith("Role: ") for _, info, _, _ in highlights)
    assert {info["subject"] for _, info, _, _ in highlights} <= set(ROLES)


def test_analyze_annotated_pdf_refusals_are_one_line(bundle: Path, pdf: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    draft = tmp_path / "draft.md"
    draft.write_text("# Introduction\n\nWe study cats. Cats are great.\n", encoding="utf-8")
    model = ["--model", str(bundle), "--threads", "1", "--quiet"]
    cases = [([str(pdf), "--annotated-pdf", str(tmp_path / "missing" / "a.pdf")], "does not exist"),
             ([str(pdf), "--annotated-pdf", str(tmp_path)], "is a folder"),
             ([str(pdf), "--annotated-pdf", str(pdf)], "is also an input"),
             ([str(draft), "--annotated-pdf", str(tmp_path / "a.pdf")], "needs a PDF input"),
             ([str(pdf), "--json", str(tmp_path / "x"), "--annotated-pdf", str(tmp_path / "x")], "both")]
    for args, reason in cases:
        assert main(["analyze", *args, *model]) == 2
        err = capsys.readouterr().err
        assert err.startswith("rhetorica: error: ") and err.count("\n") == 1 and reason in err, err
    assert not (tmp_path / "a.pdf").exists() and not (tmp_path / "x").exists()


def test_a_function_below_the_threshold_says_so() -> None:
    from core.pdf.annotate import highlight_note

    method = RolePrediction("method", {"method": 0.81, "result": 0.19})
    clear = highlight_note(method, FunctionPrediction("lab-procedure", (("lab-procedure", 0.7),)))
    assert clear.splitlines() == ["Role: method 81%", "Function: Describing a laboratory procedure 70%",
                                  "Labelled by Rhetorica"]
    result = RolePrediction("result", {"result": 0.4, "method": 0.35, "other": 0.25})
    unclear = highlight_note(result, FunctionPrediction("none", (("main-finding", 0.13),)))
    assert unclear.splitlines() == ["Role: uncertain: result 40% or method 35%",
                                    "Function: no clear function (uncertain: Reporting a finding 13%)",
                                    "Labelled by Rhetorica"]
    assert len(highlight_note(RolePrediction("other", {"other": 0.5})).splitlines()) == 2
