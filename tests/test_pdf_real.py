"""core.pdf on the real papers in ../shared/pdfs (skipped when the folder is absent) and on the
bundled sample paper (SPECTER, ACL 2020, CC BY)."""

from __future__ import annotations

from functools import cache

import pytest

from core.document import Paper, SectionKind
from core.paths import sample_paper_path, shared_dir
from core.pdf import parse_pdf

PDF_DIR = shared_dir() / "pdfs"
REAL_PDFS = sorted(p.name for p in PDF_DIR.glob("*.pdf")) if PDF_DIR.is_dir() else []


@cache
def parsed(name: str) -> Paper:
    path = sample_paper_path() if name == "sample" else PDF_DIR / name
    return parse_pdf(path)


def check_geometry(paper: Paper) -> None:
    body = paper.body_text()
    for k, s in enumerate(paper.sentences):
        assert s.id == f"s{k}" and s.index == k
        assert body[s.char_start:s.char_end] == s.text
        assert s.text == s.text.strip() and "\n" not in s.text
        assert s.rects, s.text
        assert sorted(s.pages) == sorted({r.page for r in s.rects})
        for r in s.rects:
            width, height = paper.page_sizes[r.page]
            assert -1 <= r.x0 < r.x1 <= width + 1 and -1 <= r.y0 < r.y1 <= height + 1, (s.text, r)
            assert r.y1 - r.y0 < 40, "one rectangle per line, not per paragraph"
    for k, section in enumerate(paper.sections):
        for s in paper.sentences_in(section):
            assert s.section_index == k
    assert sum(sec.sentence_count for sec in paper.sections) == len(paper.sentences)
    for fig in paper.figures:
        width, height = paper.page_sizes[fig.page]
        x0, y0, x1, y1 = fig.bbox
        assert 0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height
        for sid in fig.mentioned_by:
            assert paper.sentence_by_id(sid)


def test_sample_paper_parses_well():
    paper = parsed("sample")
    assert paper.title == ("SPECTER: Document-level Representation Learning using Citation-informed "
                           "Transformers")
    assert paper.authors == ["Arman Cohan", "Sergey Feldman", "Iz Beltagy", "Doug Downey", "Daniel S. Weld"]
    headings = [(s.number, s.heading, s.kind) for s in paper.sections]
    assert headings[0] == ("", "Abstract", SectionKind.ABSTRACT)
    assert ("1", "Introduction", SectionKind.INTRODUCTION) in headings
    assert ("7", "Related Work", SectionKind.RELATED_WORK) in headings
    assert ("8", "Conclusions and Future Work", SectionKind.CONCLUSION) in headings
    assert ("5", "Results", SectionKind.RESULT) in headings
    assert [s.level for s in paper.sections if s.number == "2.3"] == [2]
    abstract = paper.abstract_sentences
    assert len(abstract) == 7
    assert abstract[0].text == ("Representation learning is a critical ingredient for natural language "
                                "processing systems.")
    assert all(s.pages == [0] for s in abstract)
    body = paper.body_text()
    assert "Proceedings of the 58th" not in body  # venue footer
    assert "allenai.org" not in body  # front matter
    assert "Figure 1: Overview" not in body  # captions stay out of the body
    assert "Arman Cohan" not in body
    assert "scientific" in body and "ﬁ" not in body  # ligatures expanded
    # the references are left out; the appendix after them stays, as "other"
    assert "Ammar" not in body.split("Appendix")[0][-2000:]
    assert paper.sections[-1].kind is SectionKind.OTHER and "Appendix" in paper.sections[-1].heading
    assert [f.id for f in paper.figures] == ["fig1", "tab1", "tab2", "fig2", "tab3"]
    assert all(f.region_found for f in paper.figures)
    fig1 = paper.figures[0]
    assert fig1.page == 1 and [paper.sentence_by_id(i).text for i in fig1.mentioned_by] == [
        "The high-level overview of the model is shown in Figure 1."]
    check_geometry(paper)


def test_sentence_spanning_a_page_break_has_rects_on_both_pages():
    paper = parsed("sample")
    spanning = [s for s in paper.sentences if len(s.pages) == 2]
    assert spanning
    s = spanning[0]
    assert s.rects[0].page == s.pages[0] and s.rects[-1].page == s.pages[1]


@pytest.mark.shared
@pytest.mark.parametrize("name", REAL_PDFS or ["(none)"])
def test_real_pdf_parses_with_consistent_geometry(name):
    if not REAL_PDFS:
        pytest.skip(f"no PDFs in {PDF_DIR}")
    paper = parsed(name)
    assert paper.title
    assert len(paper.sentences) >= 40
    assert paper.sections[0].kind is SectionKind.ABSTRACT and paper.sections[0].sentence_count >= 3
    check_geometry(paper)
    body = paper.body_text()
    assert "arXiv:" not in body[:3000] or "arXiv:" in paper.sentences[0].text  # no side stamp
    assert Paper.from_json(paper.to_json()).to_dict() == paper.to_dict()


@pytest.mark.shared
def test_arxiv_side_stamp_and_page_numbers_are_not_body_text():
    if "arxiv-1504.06236v2.pdf" not in REAL_PDFS:
        pytest.skip("arxiv-1504.06236v2.pdf not in the shared folder")
    paper = parsed("arxiv-1504.06236v2.pdf")
    assert not any("arXiv:1504.06236" in s.text for s in paper.sentences)
    assert not any(s.text.isdigit() for s in paper.sentences)


@pytest.mark.parametrize("stem, number, column", [
    ("natneurosci-2011-ephaptic", "1", "right"),  # Nature: the caption left, its figure right, at the top
    ("consbiol-PMC12124168-urbanization", "3", "left"),  # Wiley: the caption right, beside the figure
    ("behavecolsociobiol2015-PMC4521097", "1", "right"),  # Springer: a narrow caption left of its figure
])
def test_a_side_captions_figure_is_the_graphic_beside_it(stem: str, number: str, column: str) -> None:
    """Parser pdf-11: nothing above or below the caption but a running-head band, so the figure is the one
    level with it in the other column (before: the journal's header band, or a crop of empty text)."""
    from tests.conftest import shared_path

    paper = parse_pdf(shared_path("pdfs2", f"{stem}.pdf"))
    figure = next(f for f in paper.figures if f.number == number)
    x0, y0, x1, y1 = figure.bbox
    cx0, cy0, cx1, _ = figure.caption_bbox
    assert figure.region_found
    assert (x0 >= cx1 - 5) if column == "right" else (x1 <= cx0 + 5)  # beside the caption, not over it
    assert y1 - y0 > 100 and y1 > cy0  # a real figure, level with its caption


def test_a_parenthetical_figure_reference_at_a_line_start_is_not_a_caption() -> None:
    """Parser pdf-12: "(see Supplementary Fig. 3). Experiments were …" and "(… Fig. 15) of neurons" began
    lines in a caption's font and were read as captions; one took Figure 2's region, Figure 3 was lost."""
    from tests.conftest import shared_path

    paper = parse_pdf(shared_path("pdfs2", "natneurosci-2011-ephaptic.pdf"))
    figures = [f for f in paper.figures if f.kind == "figure"]
    assert [f.number for f in figures] == ["1", "2", "3", "4"]
    assert all(f.caption.startswith(f"Figure {f.number} ") for f in figures)
    assert any("Experiments were" in s.text for s in paper.sentences)  # the sentence is body text again


def test_two_captions_side_by_side_in_one_block_are_two_captions() -> None:
    """Parser pdf-12: Springer set Figures 2 and 3 side by side, their captions joined line by line across a
    gap; Figure 3 was lost inside Figure 2's caption. Each now has its caption and its half of the page."""
    from tests.conftest import shared_path

    paper = parse_pdf(shared_path("pdfs2", "behavecolsociobiol2015-PMC4521097.pdf"))
    two, three = (next(f for f in paper.figures if f.kind == "figure" and f.number == n) for n in ("2", "3"))
    assert two.caption.startswith("Fig. 2 The frequency of checks") and "Fig. 3" not in two.caption
    assert three.caption.startswith("Fig. 3 The frequency of aggressive behaviours")
    assert two.bbox[2] < 300 < three.bbox[0]  # each figure its own image


@pytest.mark.parametrize("stem, number, ending", [
    # Nature's side captions: the figure's panel labels, read first across the page, no longer end them
    ("natneurosci-2011-ephaptic", "3", "in Supplementary Figures 5, 7 and 9."),
    ("natneurosci-2011-ephaptic", "4", "are shown in Supplementary Figures 11–13."),
    # a justified line's wide space is no figure label; the caption's last lines are not body text
    ("acl2007-P07-1088", "2", "being concatenated into a single token."),
    # a hanging indent (JMLR): the caption's lines start where its words start after the label
    ("jmlr-2014-dropout", "13", "and very few units have high activation."),
    # two captions side by side in blocks of their own, read across the page line by line
    ("spaa2004-bicriteria-scheduling", "4", "200 processors, highly parallel tasks"),
    ("spaa2004-bicriteria-scheduling", "5", "200 processors, mixed model parallel tasks"),
])
def test_a_figure_caption_is_read_to_its_end(stem: str, number: str, ending: str) -> None:
    from tests.conftest import shared_path

    folder = "pdfs" if stem.startswith(("acl", "papermage")) else "pdfs2"
    paper = parse_pdf(shared_path(folder, f"{stem}.pdf"))
    figure = next(f for f in paper.figures if f.kind == "figure" and f.number == number)
    assert figure.caption.endswith(ending)
    assert not any(ending in s.text for s in paper.sentences)


def test_a_caption_printed_inside_a_figure_is_not_a_caption() -> None:
    """Parser pdf-12: papermage's Figure 3 is a screenshot of a paper whose own "Figure 1." caption (4.5 pt
    print) was read as a caption and cut Figure 3's region in half."""
    from tests.conftest import shared_path

    paper = parse_pdf(shared_path("pdfs", "papermage_emnlp2023demo.pdf"))
    figure = next(f for f in paper.figures if f.kind == "figure" and f.number == "3")
    assert figure.bbox[1] < 100 and figure.bbox[3] > 300  # the whole screenshot, above its caption
