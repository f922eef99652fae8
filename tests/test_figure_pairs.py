"""models.datasets.figure_pairs: per-format parsing, masking, labels, split; real shared data when present."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from models.datasets.figure_pairs import (
    SOURCES,
    FigurePaper,
    iter_pairs,
    label_number,
    make_mention,
    mask_figure_refs,
    pair_counts,
    paper_split,
    parse_elsevier,
    parse_jats,
    parse_medicat,
    parse_s2orc,
    read_figure_papers,
    strip_caption_label,
)

LEAK = re.compile(r"(?i)\b(?:fig(?:ure)?s?|tab(?:le)?s?)\.?\s*\(?\s*S?\d")

JATS = """<?xml version="1.0"?>
<!DOCTYPE article PUBLIC "-//NLM//DTD JATS//EN" "JATS-archivearticle1.dtd">
<article xmlns:xlink="http://www.w3.org/1999/xlink"><front><article-meta>
<title-group><article-title>A study of things</article-title></title-group>
<abstract><p>We study things &amp; stuff.</p></abstract></article-meta></front>
<body><sec><title>Results</title>
<p>Cells grew fast (Figure <xref ref-type="fig" rid="F1">1A</xref>). The rate is in
<xref ref-type="table" rid="T1">Table 1</xref>.</p>
<p>No figure here.</p>
<p>A radiograph showed luxation (<xref ref-type="fig" rid="F2">Figure</xref>).
<fig id="F2"><label>Figure 2</label><caption><p>Radiograph of the joint.</p></caption></fig></p>
<fig id="F1"><label>Figure 1</label><caption><title>Growth curves.</title><p>Cells in medium.</p>
</caption></fig>
<table-wrap id="T1"><label>Table 1</label><caption><p>Rates per day.</p></caption></table-wrap>
</sec></body></article>"""

ELSEVIER = """<?xml version="1.0" encoding="UTF-8"?><doc xmlns="http://www.elsevier.com/xml/ja/dtd"
 xmlns:ce="http://www.elsevier.com/xml/common/dtd"><head><ce:title>Nitride fluorides</ce:title>
<ce:abstract class="author"><ce:section-title>Abstract</ce:section-title><ce:abstract-sec>
<ce:simple-para>We report Mg3NF3.</ce:simple-para></ce:abstract-sec></ce:abstract>
<ce:abstract class="graphical"><ce:simple-para>Graphical.</ce:simple-para></ce:abstract></head>
<body><ce:sections><ce:section><ce:para>Details are in <ce:float-anchor refid="t0005"/><ce:cross-ref
 refid="t0005">Table 1</ce:cross-ref>. The structure is shown in <ce:cross-refs refid="f0005 f0010">Figs. 1
 and 2</ce:cross-refs>.<ce:display><ce:figure id="f0005"><ce:label>Fig. 1</ce:label><ce:caption>
<ce:simple-para>Profile plot for Mg3NF3.</ce:simple-para></ce:caption></ce:figure></ce:display></ce:para>
<ce:para>Nothing.</ce:para></ce:section></ce:sections>
<ce:figure id="f0010"><ce:label>Fig. 2</ce:label><ce:caption><ce:simple-para>Structure view.</ce:simple-para>
</ce:caption></ce:figure>
<ce:table id="t0005"><ce:label>Table 1</ce:label><ce:caption>
<ce:simple-para>Refined parameters.</ce:simple-para>
</ce:caption></ce:table></body></doc>"""

S2ORC = {
    "paper_id": "123",
    "metadata": {"title": "Niche partitioning"},
    "grobid_parse": {
        "abstract": [{"text": "Marine group I is common."}],
        "body_text": [
            {"text": "Stations are shown (Fig. 1). Depth profiles differ (Figure 2).",
             "ref_spans": [{"start": 19, "end": 27, "text": "(Fig. 1)", "ref_id": "FIGREF0"},
                           {"start": 50, "end": 60, "text": "(Figure 2)", "ref_id": None}]},
            {"text": "Plain paragraph.", "ref_spans": []},
        ],
        "ref_entries": {
            "FIGREF0": {"text": "Map of the sampling stations.", "type": "figure"},
            "FIGREF1": {"text": "FIG. 2. Depth profiles of genes.", "type": "figure"},
            "TABREF0": {"text": "Table 1: Conditions.", "type": "table"},
        },
    },
}

MEDICAT = [
    json.dumps({"pdf_hash": "abc", "fig_key": "Figure1", "s2orc_caption": "Figure 1. CT of the liver.",
                "s2orc_references": ["A tumor was seen (Figures 1 and 2)."]}),
    json.dumps({"pdf_hash": "abc", "fig_key": "Figure2", "s2_caption": "Figure 2. Histology.",
                "s2orc_references": ["A tumor was seen (Figures 1 and 2)."]}),
    json.dumps({"pdf_hash": "def", "fig_key": "Figure3", "s2orc_caption": "Figure 3. X-ray.",
                "s2orc_references": None}),
]


# --- masking and labels ----------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("as shown in Fig. 3b and Table 2", "as shown in the figure and the table"),
    ("see Figs. 2 and 3", "see the figures"),
    ("results (Fig 4).", "results (the figure)."),
    ("in Fig. 3(b), we", "in the figure, we"),
    ("Tables 1-3 list them", "The tables list them"),
    ("in Supplementary Figure S2", "in the supplementary figure"),
    ("Figure 1 shows x", "The figure shows x"),
    ("TABLE IV gives", "The table gives"),
    ("Table 2, I think", "The table, I think"),
])
def test_mask_figure_refs(text: str, expected: str) -> None:
    assert mask_figure_refs(text) == expected


@pytest.mark.parametrize("text", [
    "Fig. 3b and Table 2", "Figs. 2 and 3", "Fig. 3(b)", "Tables 1-3", "Supplementary Figure S2", "(Fig 4)",
    "Figure 2A-2B", "(Figs. 2a–c, 3)", "Fig.3a,b", "figure 10", "FIGURE 2.", "Tab. 5", "Figures 1, 2, and 4",
    "Extended Data Fig. 7", "(Figure 3; lower panel)", "Table S1 and Fig. S4",
])
def test_mask_leaves_no_number_next_to_a_label(text: str) -> None:
    masked = mask_figure_refs(f"We see this in {text} here.")
    assert not LEAK.search(masked), masked
    assert not re.search(r"\d", masked), masked


@pytest.mark.parametrize(("caption", "expected"), [
    ("Figure 3: Overview of the model.", "Overview of the model."),
    ("Fig. 3. The thing", "The thing"),
    ("Table 2 | Stuff", "Stuff"),
    ("FIGURE 1 | Chemical structures", "Chemical structures"),
    ("Figure S1 Supplementary data", "Supplementary data"),
    ("TABLE IV Results", "Results"),
    ("A caption without label", "A caption without label"),
    ("Figure 10 (a) left", "(a) left"),
])
def test_strip_caption_label(caption: str, expected: str) -> None:
    assert strip_caption_label(caption) == expected


def test_label_number() -> None:
    assert label_number("Fig. 3") == ("figure", "3")
    assert label_number("Table S2") == ("table", "S2")
    assert label_number("TABLE IV") == ("table", "IV")
    assert label_number("Scheme 1") is None


def test_make_mention_picks_mentioning_sentences() -> None:
    mention = make_mention("We grew cells. Growth is fast (Fig. 2). Tables 1-2 list rates. The end.")
    assert mention is not None
    assert mention.figure_ids == ("fig2", "tab1", "tab2")
    assert mention.sentences == ("Growth is fast (the figure).", "The tables list rates.")
    assert make_mention("Nothing to see.") is None


# --- per-format parsing ---------------------------------------------------------------------


def test_parse_jats() -> None:
    paper = parse_jats(JATS, "PMC1")
    assert paper.title == "A study of things"
    assert paper.abstract == "We study things & stuff."
    assert [(f.figure_id, f.kind, f.caption) for f in paper.figures] == [
        ("fig2", "figure", "Radiograph of the joint."), ("fig1", "figure", "Growth curves. Cells in medium."),
        ("tab1", "table", "Rates per day.")]
    assert [m.figure_ids for m in paper.mentions] == [("fig1", "tab1"), ("fig2",)]
    assert "Radiograph" not in paper.mentions[1].paragraph  # the float inside <p> is not paragraph text
    assert paper.mentions[0].paragraph == "Cells grew fast (the figure). The rate is in the table."
    assert len(list(iter_pairs([paper]))) == 3


def test_parse_jats_undefined_entity() -> None:
    paper = parse_jats(JATS.replace("things &amp; stuff", "things&nbsp;stuff"), "PMC1")
    assert paper.abstract == "We study things\xa0stuff." or paper.abstract == "We study things stuff."


def test_parse_elsevier() -> None:
    paper = parse_elsevier(ELSEVIER, "S0001")
    assert paper.title == "Nitride fluorides"
    assert paper.abstract == "We report Mg3NF3."
    assert {f.figure_id: f.caption for f in paper.figures} == {
        "fig1": "Profile plot for Mg3NF3.", "fig2": "Structure view.", "tab1": "Refined parameters."}
    assert len(paper.mentions) == 1
    mention = paper.mentions[0]
    assert mention.figure_ids == ("tab1", "fig1", "fig2")
    assert mention.paragraph == "Details are in the table. The structure is shown in the figures."
    assert pair_counts([paper]) == {"papers": 1, "figures": 2, "tables": 1, "mentions": 1, "pairs": 3,
                                    "papers_with_2plus_figures": 1}


def test_parse_s2orc() -> None:
    paper = parse_s2orc(S2ORC, "20190928_123")
    assert paper.title == "Niche partitioning"
    assert paper.abstract == "Marine group I is common."
    # FIGREF0 has no printed label: its number comes from the ref_span text.
    assert {f.figure_id: f.caption for f in paper.figures} == {
        "fig1": "Map of the sampling stations.", "fig2": "Depth profiles of genes.", "tab1": "Conditions."}
    assert [m.figure_ids for m in paper.mentions] == [("fig1", "fig2")]
    assert not LEAK.search(paper.mentions[0].paragraph)


def test_parse_medicat_groups_by_paper_and_merges_passages() -> None:
    papers = {p.paper_id: p for p in parse_medicat(MEDICAT)}
    assert set(papers) == {"abc", "def"}
    abc = papers["abc"]
    assert [f.caption for f in abc.figures] == ["CT of the liver.", "Histology."]
    assert len(abc.mentions) == 1 and abc.mentions[0].figure_ids == ("fig1", "fig2")
    assert abc.mentions[0].paragraph == "A tumor was seen (the figures)."
    assert papers["def"].mentions == ()


def test_split_is_stable_and_by_paper() -> None:
    assert paper_split("pmc-jats", "PMC1") == paper_split("pmc-jats", "PMC1")
    a = FigurePaper("s2orc", "p1", "", "", (), ())
    b = FigurePaper("s2orc", "p1", "other", "x", (), ())
    assert a.split == b.split  # only source and paper id decide
    splits = [paper_split("oa-stm", f"paper{i}") for i in range(2000)]
    assert set(splits) == {"train", "dev", "test"}
    assert 0.75 < splits.count("train") / 2000 < 0.85
    assert 0.07 < splits.count("test") / 2000 < 0.13


def test_unknown_source() -> None:
    with pytest.raises(ValueError):
        list(read_figure_papers("nope", root=Path("/nonexistent")))


# --- the real shared data -------------------------------------------------------------------


def _shared_data() -> Path:
    from core.errors import DatasetError
    from models.datasets.figure_pairs import default_root

    try:
        return default_root()
    except DatasetError as error:
        pytest.skip(f"shared data folder not available: {error}")


@pytest.mark.parametrize("source", [s for s in SOURCES if s != "pdfs"])
def test_real_source_has_pairs(source: str) -> None:
    root = _shared_data()
    papers = list(read_figure_papers(source, root=root))
    counts = pair_counts(papers)
    assert counts["papers"] > 0 and counts["figures"] > 0 and counts["pairs"] > 0, counts
    for _paper, mention, figure in iter_pairs(papers):
        assert figure.figure_id in mention.figure_ids
        assert not re.match(r"(?i)\s*(fig|table)\w*\.?\s*S?\d", figure.caption), figure.caption


def test_real_pdfs_two_files(tmp_path: Path) -> None:
    root = _shared_data()
    names = ["acl2012-dyer12.pdf", "acl2014-P14-1059.pdf"]
    sources = [root.parent / "pdfs" / name for name in names]
    if not all(p.is_file() for p in sources):
        pytest.skip("the two sample PDFs are not in the shared pdfs folder")
    (tmp_path / "data").mkdir()
    (tmp_path / "pdfs").mkdir()
    for path in sources:
        (tmp_path / "pdfs" / path.name).symlink_to(path)
    papers = list(read_figure_papers("pdfs", root=tmp_path / "data"))
    assert [p.paper_id for p in papers] == [Path(n).stem for n in names]
    assert pair_counts(papers)["pairs"] > 0
    assert all(p.abstract for p in papers)
    excluded = list(read_figure_papers("pdfs", root=tmp_path / "data", exclude_pdfs=[names[0]]))
    assert [p.paper_id for p in excluded] == [Path(names[1]).stem]


def test_the_command_lists_the_same_sources_as_the_readers() -> None:
    from app.commands.lab.data_figures import SOURCES as COMMAND_SOURCES
    from models.datasets.figure_sources import ALL_SOURCES

    assert COMMAND_SOURCES == ALL_SOURCES
