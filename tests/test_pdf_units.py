"""Unit tests for the pieces of core.pdf: text clean-up with its position map, mentions,
caption labels, heading kinds and numbering."""

from __future__ import annotations

from array import array

import pytest

from core.document import SectionKind
from core.pdf.captions import caption_label
from core.pdf.headings import is_references, plausible_next, section_kind, split_number
from core.pdf.lines import Line
from core.pdf.mentions import mentioned_ids
from core.pdf.textmap import MappedText, clean_text


def make_line(text: str, *, index: int = 0, x0: float = 100.0, y0: float = 50.0, char_w: float = 5.0,
              size: float = 10.0, bold: float = 0.0, first_in_block: bool = True,
              first_bold_chars: int = 0) -> Line:
    xs0 = array("f", [x0 + k * char_w for k in range(len(text))])
    xs1 = array("f", [x + char_w for x in xs0])
    return Line(page=0, x0=x0, y0=y0, x1=x0 + char_w * len(text), y1=y0 + size, text=text, cx0=xs0,
                cx1=xs1, size=size, bold=bold, font="Body", block=0, first_in_block=first_in_block,
                first_bold_chars=first_bold_chars, index=index)


def mapped(*texts: str) -> MappedText:
    m = MappedText()
    for k, text in enumerate(texts):
        m.add_line(make_line(text, index=k, y0=50.0 + 12 * k))
    return m


@pytest.mark.parametrize(("lines", "expected"), [
    (("We study the repre-", "sentation of words."), "We study the representation of words."),
    (("the state-of-the-", "art model"), "the state-of-the-art model"),
    (("a BERT-", "based model"), "a BERT-based model"),
    (("task-", "specific tuning"), "task-specific tuning"),
    (("the COVID-", "19 pandemic"), "the COVID-19 pandemic"),
    (("soft\u00adhy-", "phen and inter\u00adnal"), "softhyphen and internal"),
    (("no hyphen", "here"), "no hyphen here"),
    # the next line starts with a ligature glyph: "bene-" + "ﬁts" (parser pdf-14)
    (("has two bene-", "\ufb01ts. First"), "has two benefits. First"),
    (("it is not suf-", "\ufb01cient"), "it is not sufficient"),
    (("the e-", "\ufb03cient one"), "the efficient one"),
    # a number before the line-end hyphen (parser pdf-14)
    (("over a 25-", "minute period"), "over a 25-minute period"),
    (("a 2-", "layer LSTM"), "a 2-layer LSTM"),
    (("pages 25-", "30 of it"), "pages 25-30 of it"),
    (("x = 5 -", "y here"), "x = 5 - y here"),
    # a soft hyphen (U+00AD) at the line end: the word goes on (parser pdf-14)
    (("in the extracellu\u00ad", "lar space"), "in the extracellular space"),
    (("a broad-\u00ad", "scale survey"), "a broad-scale survey"),
    (("ends here.\u00ad", "Next one"), "ends here. Next one"),
])
def test_line_joining_and_hyphenation(lines, expected):
    assert mapped(*lines).text == expected


def test_ligatures_spaces_and_accents_keep_the_map():
    m = mapped("e\ufb03cient \ufb01elds\u00a0and\u2009caf\u00b4e nai\u0308ve As\u00b4\u0131n")
    assert m.text == "efficient fields and café naïve Asín"
    assert len(m.chars) == len(m.line_ids) == len(m.xs0) == len(m.xs1)
    # the three letters of the ffi ligature share the glyph's box, in order
    assert m.xs0[1] < m.xs0[2] < m.xs0[3] and m.xs1[3] == pytest.approx(110.0)


def test_slice_lines_gives_one_box_per_line():
    m = mapped("First line of text", "second line here.")
    start = m.text.index("of")
    end = m.text.index("second") + len("second")
    boxes = m.slice_lines(start, end)
    assert [lid for lid, _x0, _x1 in boxes] == [0, 1]
    assert boxes[0][1] == pytest.approx(100 + 5 * 11)  # "of" starts at character 11 of line 0
    assert boxes[1][2] == pytest.approx(100 + 5 * 6)  # "second" ends at character 6 of line 1


def test_clean_text():
    assert clean_text("  Con\ufb01dence\u00a0 intervals \u200b ") == "Confidence intervals"
    assert clean_text("x\ud835\udc65y") == "x\U0001d465y"  # a surrogate pair becomes one character
    assert clean_text("x\ud835y") == "xy"


@pytest.mark.parametrize(("text", "ids"), [
    ("as shown in Figure 3.", ["fig3"]),
    ("see Fig. 2 and Fig 4", ["fig2", "fig4"]),
    ("Figs. 2 and 3 show", ["fig2", "fig3"]),
    ("Figs. 2–4 show", ["fig2", "fig3", "fig4"]),
    ("in Tables 1-3", ["tab1", "tab2", "tab3"]),
    ("Table 2, Figure S1 and FIGURE 5(a)", ["tab2", "figS1", "fig5"]),
    ("(Figures 1, 2, and 5)", ["fig1", "fig2", "fig5"]),
    ("no figure here, only a configuration", []),
    ("as listed in TABLE IV and Table II", ["tabIV", "tabII"]),
])
def test_mentions(text, ids):
    assert mentioned_ids(text) == ids


@pytest.mark.parametrize(("text", "starts_block", "bold_chars", "size", "expected"), [
    ("Figure 3: Overview of the model.", True, 0, 9.0, ("figure", "3")),
    ("Fig. 3. Overview of the model.", True, 0, 9.0, ("figure", "3")),
    ("FIGURE 3 Overview", True, 0, 9.0, ("figure", "3")),
    ("Fig 1. PLOS style caption", True, 0, 10.0, ("figure", "1")),
    ("Table 2 Characteristics of the patients", True, 7, 10.0, ("table", "2")),
    ("Figure S1: Supplementary plot", True, 0, 9.0, ("figure", "S1")),
    ("Table 2 shows the results of the experiments", True, 0, 10.0, None),
    ("Figure 3: inside a paragraph", False, 0, 10.0, None),
    ("The results in Figure 3 are good", True, 0, 10.0, None),
    ("Figure 1.b shows an Adya-style graph of the history.", True, 0, 10.0, None),  # a panel in a sentence
    ("Figure 1. a) Overview of the model.", True, 0, 9.0, ("figure", "1")),
])
def test_caption_labels(text, starts_block, bold_chars, size, expected):
    line = make_line(text, size=size, first_bold_chars=bold_chars)
    assert caption_label(line, 10.0, starts_block) == expected


@pytest.mark.parametrize(("title", "kind"), [
    ("Introduction", SectionKind.INTRODUCTION),
    ("Background", SectionKind.INTRODUCTION),
    ("Related Work", SectionKind.RELATED_WORK),
    ("Previous Work", SectionKind.RELATED_WORK),
    ("Literature Review", SectionKind.RELATED_WORK),
    ("Materials and Methods", SectionKind.METHOD),
    ("Our Approach", SectionKind.METHOD),
    ("Experimental Setup", SectionKind.METHOD),
    ("Data", SectionKind.METHOD),
    ("Experiments", SectionKind.RESULT),
    ("Results", SectionKind.RESULT),
    ("Evaluation", SectionKind.RESULT),
    ("Discussion", SectionKind.DISCUSSION),
    ("Error Analysis", SectionKind.DISCUSSION),
    ("Conclusions and Future Work", SectionKind.CONCLUSION),
    ("Summary", SectionKind.CONCLUSION),
    ("Acknowledgements", SectionKind.OTHER),
    ("Abstract", SectionKind.ABSTRACT),
    ("Results and Discussion", SectionKind.RESULT),
])
def test_section_kinds(title, kind):
    assert section_kind(title) is kind


def test_numbering():
    assert split_number("3.1 Data") == ("3.1", "Data")
    assert split_number("2. Methods") == ("2", "Methods")
    assert split_number("IV. RESULTS") == ("IV", "RESULTS")
    assert split_number("A Appendix", allow_letters=True) == ("A", "Appendix")
    assert split_number("A Study of Things") == ("", "A Study of Things")
    assert plausible_next("2.1", "2") and plausible_next("3", "2.4") and plausible_next("2.5", "2.4")
    assert plausible_next("3.1", "2.4")  # the section heading "3" was missed
    assert not plausible_next("1", "8") and not plausible_next("1", "A")
    assert is_references("REFERENCES") and is_references("Bibliography") and not is_references("Refer")


def test_line_end_hyphen_kept_for_compounds_written_elsewhere_in_the_paper():
    from core.pdf.textmap import inner_compounds

    lexicon = inner_compounds(["we use predicate-argument structures and SciBERT", "a cross-", "word"])
    assert "predicate-argument" in lexicon and "scibert" in lexicon and "cross-" not in lexicon
    m = MappedText(compounds=lexicon)
    lines = ("the predicate-", "argument model and the repre-", "sentation of SciB-", "ERT and COVID-", "19")
    for k, text in enumerate(lines):
        m.add_line(make_line(text, index=k, y0=50.0 + 12 * k))
    assert m.text == "the predicate-argument model and the representation of SciBERT and COVID-19"


def test_a_small_capitals_heading_is_a_heading_and_small_plain_text_is_not() -> None:
    from dataclasses import replace

    from core.pdf.headings import looks_like_heading

    body = make_line("One of the most challenging issues in performing science today", y0=80.0)
    # IEEE small capitals: the letters are 8 pt, the initials 10 pt, so the line stands as tall as the body
    heading = replace(make_line("I. INTRODUCTION", size=8.0), y1=50.0 + 10.0)
    match = looks_like_heading(heading, 10.0, next_line=body)
    assert match is not None and match.number == "I" and match.title == "INTRODUCTION"
    footnote = make_line("SOME FOOTNOTE IN CAPITALS", size=8.0)  # 8 pt all through: as tall as 8 pt
    assert looks_like_heading(footnote, 10.0, next_line=body) is None


def test_a_line_of_a_bold_paragraph_is_not_a_heading() -> None:
    from core.pdf.headings import looks_like_heading

    above = make_line("state-of-the-art compressors: GZIP, FPZIP, ZFP, SZ-1.1, and", y0=50.0, size=9.0,
                      bold=1.0)
    line = make_line("BLOSC-2. Experiments show that our compressor wins in each", y0=59.5, size=9.0,
                     bold=1.0)
    after = make_line("in class, especially with regard to compression factors", y0=69.0, size=9.0, bold=1.0)
    assert looks_like_heading(line, 10.0, next_line=after, prev_line=above) is None
    # the same bold line with space above it, after a short line, is a heading
    title = make_line("Results", y0=20.0, size=9.0, bold=1.0)
    alone = make_line("Experiments with the new compressor", y0=50.0, size=9.0, bold=1.0)
    assert looks_like_heading(alone, 10.0, next_line=after, prev_line=title) is not None


def test_wiley_front_and_back_matter_lines() -> None:
    """Parser pdf-10, from a Wiley paper of 2025 (ecolevol-PMC12061466-wolf) and a Hindawi one
    (hindawi-801626-wheat-phosphite): STIX Two *Text* is a text font, not a math font (every line of the
    paper read as math, so short headings were dropped as equations); "1 | Introduction" is numbered;
    a back-matter heading set small and bold is a heading; a numbered affiliation is not."""
    from core.pdf.headings import looks_like_heading
    from core.pdf.lines import MATH_FONT

    assert not MATH_FONT.search("ABCDEF+STIXTwoText-Bold") and not MATH_FONT.search("STIXTwoText")
    assert MATH_FONT.search("STIXTwoMath-Regular") and MATH_FONT.search("STIX-Regular")
    assert MATH_FONT.search("STIXGeneral-Italic")
    assert split_number("1\u202f\u202f\u202f|\u202f\u202f\u202fIntroduction") == ("1", "Introduction")
    assert split_number("2.1 | Study Area") == ("2.1", "Study Area")
    body = make_line("The abundance and distribution of most species of large carnivores", y0=80.0, size=9.0)
    small_bold = make_line("Author Contributions", size=8.0, bold=1.0)
    assert looks_like_heading(small_bold, 9.0, next_line=body) is not None
    other_small_bold = make_line("Some Small Bold Words", size=8.0, bold=1.0)
    assert looks_like_heading(other_small_bold, 9.0, next_line=body) is None
    affiliation = make_line("2 Department of Soil Sciences, Oklahoma State University, OK", size=9.0)
    assert looks_like_heading(affiliation, 9.0, next_line=body) is None
    numbered = make_line("2 Materials and Methods", size=9.0, bold=1.0)
    assert looks_like_heading(numbered, 9.0, next_line=body) is not None


@pytest.mark.parametrize(("font", "style"), [
    ("LinLibertineT", (False, False)), ("LinLibertineTB", (True, False)), ("LinLibertineTI", (False, True)),
    ("ABCDEF+LinLibertineTBI", (True, True)), ("LinLibertineTZ", (True, False)),
    ("LinBiolinumTB", (True, False)),
    ("LinBiolinumT", (False, False)), ("Times-Italic", (False, True)), ("NimbusRomNo9L-Medi", (True, False)),
])
def test_font_styles_from_names_including_acms_libertine_letters(font: str, style: tuple[bool, bool]) -> None:
    from core.pdf.lines import _font_style

    assert _font_style(font) == style


@pytest.mark.parametrize(("text", "title_chars", "italic", "cut"), [
    ("Completeness The more recoverable a history is, the", 12, True, "The more"),  # ACM italic run-in title
    ("Data partitioning. We split the data by year and", 18, True, "We split"),
    ("Objective: Brain atrophy in multiple sclerosis affects", 10, True, "Brain atrophy"),
    ("Document Representation Our goal is to embed papers", 23, False, "Our goal"),  # bold, as before
    ("E. coli K-12 was grown overnight in rich medium", 7, True, None),  # a species, not a title
    ("In vitro experiments showed that the compound", 8, True, None),  # the sentence runs on
    ("P H . In this case the prediction is better", 5, True, None),  # letters of a formula
    ("Theorem 1: The data will determine a surface", 10, True, None),  # says what the sentence is
])
def test_run_in_titles_bold_or_italic(text: str, title_chars: int, italic: bool, cut: str | None) -> None:
    from dataclasses import replace

    from core.pdf.headings import run_in_title_end

    runs = ((0, title_chars, not italic, italic), (title_chars, len(text), False, False))
    line = replace(make_line(text), runs=runs)
    end = run_in_title_end(line)
    assert (None if end is None else text[end:end + len(cut or "")]) == cut


@pytest.mark.parametrize(("line", "after", "heading"), [
    ("2 Related Work", "Earlier studies of parsing focused on news text.", True),
    ("1. It will lead to significantly greater improvements in", "Mobility at discharge and later.", False),
    ("3. Questions relating to publication bias", "more broadly, and to the journals chosen.", False),
])
def test_a_plain_numbered_line_that_wraps_on_is_a_list_item_not_a_heading(line: str, after: str,
                                                                           heading: bool) -> None:
    """Parser pdf-13: a BMC protocol's hypotheses and interview questions ("1. It will lead to …in" /
    "mobility …") were read as numbered sections, and then made the paper "numbered", so its real
    subheadings were dropped as paragraph titles."""
    from core.pdf.headings import looks_like_heading

    first = make_line(line, y0=50.0)
    second = make_line(after, y0=62.0, index=1, first_in_block=False)
    assert (looks_like_heading(first, 10.0, next_line=second) is not None) == heading



@pytest.mark.parametrize(("text", "italic_chars", "following", "expected"), [
    # ACM's italic run-in subsubsection (the number is italic too)
    ("3.1.2 Transactions. A transaction is a sequence of", 19, "operations.",
     ("3.1.2", "Transactions", 1, 19)),
    # Hindawi's, with a genus's initial inside the title
    ("3.1. Recovery Rate of C. neoformans from trees. We found", 47, "more.",
     ("3.1", "Recovery Rate of C. neoformans from trees", 1, 47)),
    # the italic title fills the line and is closed on the next one
    ("3.1. Recovery Rate of C. neoformans from Eucalyptus camaldu-", 61, "lensis. We collected",
     ("3.1", "Recovery Rate of C. neoformans from Eucalyptus camaldulensis", 2, 7)),
    ("2.1. Materials", 14, "2.1.1. Chemicals. All reagents were", None),  # the next line is numbered
    ("1. E. coli K-12 was grown overnight in rich medium", 10, "again.", None),  # one level: a list item
    ("2.3 Theorem 4. The data will determine a surface", 14, "here.", None),  # a statement label
])
def test_numbered_italic_run_in_headings(text: str, italic_chars: int, following: str,
                                         expected: tuple[str, str, int, int] | None) -> None:
    """Parser pdf-14: ACM's and Hindawi's italic numbered run-in subheadings were sentences ("3.1.2
    Transactions.", "Cell Lines.") and their sections were missing."""
    from dataclasses import replace

    from core.pdf.headings import run_in_heading

    runs = ((0, italic_chars, False, True), (italic_chars, len(text), False, False))
    line = replace(make_line(text), runs=tuple(r for r in runs if r[0] < r[1]))
    nxt = replace(make_line(following, index=1, y0=62.0),
                  runs=((0, 6, False, True), (6, len(following), False, False)))
    assert run_in_heading(line, nxt) == expected
