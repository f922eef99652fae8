"""The PDF parser against hand-written gold (tests/fixtures/gold, see its README.md).

Per paper: title exact (normalised), abstract first/last words, section-heading recall >= 0.9
and precision >= 0.75, figure and table numbers equal per kind, >= 90% of caption starts right.
``python -m tests.gold_compare`` prints every miss.
"""

from __future__ import annotations

import functools
import re
import unicodedata

import pytest

from tests.conftest import shared_path
from tests.gold_compare import (
    _QUOTES,
    GOLD_DIR,
    PaperReport,
    compare,
    gold_files,
    load_gold,
    normalize,
    strip_caption_label,
    words,
)

GOLD = {path.stem: load_gold(path) for path in gold_files()}
STEMS = sorted(GOLD)


def _parser():
    """``core.pdf.parse_pdf``.  A parser that does not import FAILS the gold tests: it is broken,
    not absent (only missing shared data skips them)."""
    try:
        from core.pdf import parse_pdf
    except ImportError as error:
        problem = f"core.pdf does not import: {type(error).__name__}: {error}"
    else:
        return parse_pdf
    pytest.fail(problem, pytrace=False)


@functools.cache
def _parse(stem: str):
    return _parser()(shared_path("pdfs", GOLD[stem]["file"]))


@functools.cache
def _report(stem: str) -> PaperReport:
    return compare(GOLD[stem], _parse(stem))


def _parsed_report(stem: str) -> PaperReport:
    _parser()
    shared_path("pdfs")  # skips when the shared PDFs are absent
    return _report(stem)


# --- the gold files themselves ------------------------------------------------------------------

def test_there_are_at_least_eight_gold_papers():
    assert len(STEMS) >= 8
    assert (GOLD_DIR / "README.md").is_file()


@pytest.mark.parametrize("stem", STEMS)
def test_gold_file_schema(stem):
    gold = GOLD[stem]
    assert gold["file"] == f"{stem}.pdf"
    assert gold["written_by"].startswith("hand")
    assert gold["title"].strip() and gold["layout"].strip()
    for key in ("abstract_first_words", "abstract_last_words"):
        assert 3 <= len(words(gold[key])) <= 12, key
    assert gold["sections"], "every gold paper lists its headings"
    for section in gold["sections"]:
        assert set(section) == {"number", "heading", "level"}
        assert section["heading"].strip() and section["level"] in (1, 2, 3)
        if re.fullmatch(r"\d+(\.\d+)*", section["number"]):
            assert section["level"] == section["number"].count(".") + 1, section
    seen = set()
    for figure in gold["figures"]:
        assert figure["kind"] in ("figure", "table")
        assert (figure["kind"], figure["number"]) not in seen, figure
        seen.add((figure["kind"], figure["number"]))
        assert len(words(figure["caption_start"])) >= 2 and figure["page"] >= 0


def _squash(text: str) -> str:
    """Letters and digits only: survives line breaks, hyphenation and ligatures in the text layer."""
    return re.sub(r"[^0-9a-z]", "", unicodedata.normalize("NFKC", text).translate(_QUOTES).lower())


@pytest.mark.shared
@pytest.mark.parametrize("stem", STEMS)
def test_gold_strings_exist_in_the_pdf_text_layer(stem):
    """Catches typos in the gold: every string was copied from the page it names."""
    import pymupdf

    gold = GOLD[stem]
    with pymupdf.open(shared_path("pdfs", gold["file"])) as doc:
        pages = [_squash(page.get_text()) for page in doc]
    whole = "".join(pages)
    strings = [gold["title"], gold["abstract_first_words"], gold["abstract_last_words"]]
    strings += [s["heading"] for s in gold["sections"]]
    assert [s for s in strings if _squash(s) not in whole] == []
    wrong_page = [f for f in gold["figures"] if _squash(f["caption_start"]) not in pages[f["page"]]]
    assert wrong_page == []


# --- the comparison logic (no parser needed) ---------------------------------------------------

def test_normalize_and_caption_label():
    assert normalize("Background: Pretrained  Transformers") == "background pretrained transformers"
    assert normalize("Task-speciﬁc ﬁne-tuning") == "task specific fine tuning"
    assert normalize("Authors’ contributions") == normalize("Authors' contributions")
    assert strip_caption_label("Figure 3: Overview of X") == "Overview of X"
    assert strip_caption_label("FIGURE 2. The percentage") == "The percentage"
    assert strip_caption_label("Table 2 (continued) Model") == "Model"
    assert strip_caption_label("Fig. 4 ROC") == "ROC"


def test_compare_on_a_synthetic_paper():
    from core.document import Figure, Paper, Section, SectionKind, Sentence

    gold = {
        "file": "x.pdf", "title": "A Title: With Colon",
        "abstract_first_words": "We study things", "abstract_last_words": "and it works.",
        "sections": [{"number": "1", "heading": "Introduction", "level": 1},
                     {"number": "1.1", "heading": "Scope", "level": 2},
                     {"number": "2", "heading": "Method", "level": 1},
                     {"number": "", "heading": "References", "level": 1}],
        "figures": [{"kind": "figure", "number": "1", "caption_start": "Overview of the", "page": 0},
                    {"kind": "table", "number": "1", "caption_start": "Results on", "page": 1}],
    }
    sections = [Section("Abstract", SectionKind.ABSTRACT),
                Section("Introduction", SectionKind.INTRODUCTION, number="1"),
                Section("1.1 Scope", SectionKind.OTHER, level=1),
                Section("Methods", SectionKind.METHOD)]
    sentences = [Sentence("s0", "Abstract. We study things here.", 0, 0, [0]),
                 Sentence("s1", "And it works.2", 0, 1, [0])]
    figures = [Figure("fig1", "figure", "1", "Figure 1: Overview of the system.", 0, (0, 0, 1, 1)),
               Figure("fig2", "figure", "2", "Figure 2: Extra.", 1, (0, 0, 1, 1)),
               Figure("tab1", "table", "1", "Table 1. Scores on X", 2, (0, 0, 1, 1))]
    paper = Paper("a title with colon", "x.pdf", "0", [(1, 1)] * 3, sections=sections, sentences=sentences,
                  figures=figures)
    report = compare(gold, paper)
    assert report.title_ok and report.abstract_first_ok and report.abstract_last_ok
    assert report.missed_headings == ["2 Method"]  # References is not scored
    assert report.extra_headings == ["Methods"]
    assert report.matched_headings == 2 and report.heading_recall == pytest.approx(2 / 3)
    assert report.heading_precision == pytest.approx(2 / 3)
    assert report.level_mismatches == ["1.1 Scope: level 1, gold 2"]
    assert report.extra_figures == ["figure 2"] and report.missing_figures == []
    assert not report.figures_equal
    assert report.caption_mismatches == ["table 1: got 'Table 1. Scores on X'"]
    assert report.page_mismatches == ["table 1: page 2, gold 1"]
    assert len(report.misses()) == 6


# --- the parser against the gold -----------------------------------------------------------------

@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.parametrize("stem", STEMS)
def test_parser_title_and_abstract(stem):
    report = _parsed_report(stem)
    assert not report.error, report.error
    assert report.title_ok, f"title: got {report.title_got!r}"
    assert report.abstract_first_ok, f"abstract start: got {report.abstract_start_got!r}"
    assert report.abstract_last_ok, f"abstract end: got {report.abstract_end_got!r}"


@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.parametrize("stem", STEMS)
def test_parser_section_headings(stem):
    report = _parsed_report(stem)
    assert not report.error, report.error
    assert report.heading_recall >= 0.9, f"missed: {report.missed_headings}"
    assert report.heading_precision >= 0.75, f"extra: {report.extra_headings}"


@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.parametrize("stem", STEMS)
def test_parser_figures_and_tables(stem):
    report = _parsed_report(stem)
    assert not report.error, report.error
    assert report.figures_equal, f"missing {report.missing_figures}, extra {report.extra_figures}"
    assert report.caption_accuracy >= 0.9, report.caption_mismatches



@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.parametrize("stem", STEMS)
def test_parsed_paper_is_valid_utf8_json(stem):
    """The parsed paper must save (cache) and load: no lone surrogates or other unencodable text."""
    from core.document import Paper

    _parser()
    shared_path("pdfs")
    paper = _parse(stem)
    data = paper.to_json()
    data.encode("utf-8")
    assert Paper.from_json(data).to_dict() == paper.to_dict()
