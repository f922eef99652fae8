"""models.datasets.figure_sources (issue 25): unarXive's figure markers as mention pairs, the pdfs2 field
table, the combined reader, and the guard that keeps test papers out of training."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from models.datasets.figure_pairs import FigurePaper, pair_counts, paper_split
from models.datasets.figure_sources import (
    ALL_SOURCES,
    EXTRA_SOURCES,
    mask_unarxive,
    parse_unarxive,
    pdfs2_fields,
    read_source_papers,
)

LEAK = re.compile(r"(?i)\b(?:fig(?:ure)?s?|tab(?:le)?s?)\.?\s*(?:\(?\s*S?\d|REF)|\{\{")


def _row() -> dict:
    """A unarXive-shaped paper: four figure floats (one without a caption) and a table."""
    return {
        "paper_id": "2212.00001",
        "metadata": {"title": "Hopping  between molecules"},
        "abstract": {"text": "We compute hopping."},
        "ref_entries": {
            "f-a": {"type": "figure", "caption": "Orbitals of the thiophene pair."},
            "f-b": {"type": "figure", "caption": "Energy versus separation, as in Fig. ."},
            "f-c": {"type": "figure", "caption": "NO_CAPTION"},
            "f-d": {"type": "figure", "caption": "Tilt scan results."},
            "t-a": {"type": "table", "caption": "Timings per method."},
            "eq": {"type": "formula", "latex": "x"},
        },
        "body_text": [
            {"text": "Fig. REF shows the orbitals {{formula:eq}} of a pair. {{figure:f-a}}"},
            {"text": "The energies fall with distance, see Figures REF and REF (c)."},
            {"text": "{{figure:f-b}}{{figure:f-c}}"},
            {"text": "As Fig. REF shows, the tilt matters."},
            {"text": "Table REF lists timings {{cite:x}}."},
            {"text": "{{figure:f-d}} A float placed far away; nothing cites here. {{table:t-a}}"},
            {"text": "A paragraph that cites nothing. {{figure:f-d}}"},
        ],
    }


def test_mask_unarxive_leaves_no_reference_or_marker() -> None:
    masked = mask_unarxive("Fig. REF shows x. As in Figs. REF and REF (c), see Eqn. REF . "
                           "We {{cite:abc}} see {{formula:x}} in Fig. . Figure 3b too.")
    assert masked == ("The figure shows x. As in the figures, see Eqn.. We see in the figure. "
                      "The figure too.")
    assert not LEAK.search(masked)


def test_unarxive_pairs_a_citing_paragraph_with_the_floats_it_holds_or_that_follow_it() -> None:
    paper = parse_unarxive(_row())
    assert paper.source == "unarxive" and paper.paper_id == "2212.00001"
    assert paper.title == "Hopping between molecules"
    # floats numbered where they sit; the caption-less one is dropped
    assert [(f.figure_id, f.caption) for f in paper.figures] == [
        ("fig1", "Orbitals of the thiophene pair."), ("fig2", "Energy versus separation, as in the figure."),
        ("fig3", "Tilt scan results."), ("tab1", "Timings per method.")]
    by_text = {m.paragraph: m.figure_ids for m in paper.mentions}
    assert by_text == {
        "The figure shows the orbitals of a pair.": ("fig1",),  # its own float
        "The energies fall with distance, see the figures.": ("fig2",),  # the next paragraph's float
        # "As Fig. REF shows" is followed by a citing paragraph: no pair; "Table REF" is followed by a
        # paragraph that cites nothing and holds the table's float
        "The table lists timings.": ("tab1",),
    }
    for mention in paper.mentions:
        assert not LEAK.search(mention.paragraph) and all(not LEAK.search(s) for s in mention.sentences)


def test_read_source_papers_reads_unarxive_skips_bad_lines_refuses_unknown_sources(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "unarxive_sample"
    folder.mkdir(parents=True)
    with gzip.open(folder / "papers.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write(json.dumps(_row()) + "\n[1, 2]\n{not json\n")
    skipped: list[tuple[str, str, str]] = []
    with pytest.warns(RuntimeWarning):
        papers = list(read_source_papers("unarxive", root=tmp_path / "data",
                                         on_skip=lambda *item: skipped.append(item)))
    assert [p.paper_id for p in papers] == ["2212.00001"]
    assert [s[1] for s in skipped] == ["papers.jsonl.gz:2", "papers.jsonl.gz:3"]
    assert pair_counts(papers)["pairs"] == 3
    with pytest.raises(ValueError, match="unknown figure-pair source"):
        list(read_source_papers("nope", root=tmp_path))


def test_pdfs2_fields_reads_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "pdfs2").mkdir()
    (tmp_path / "pdfs2" / "manifest.csv").write_text(
        "file,tier,field\na.pdf,open,biomedical/life\nb.pdf,other,computer science\n", encoding="utf-8")
    assert pdfs2_fields(tmp_path / "data") == {"a": "biomedical", "b": "CS"}
    assert pdfs2_fields(tmp_path / "missing" / "data") == {}


def test_held_out_guard_drops_train_papers_that_are_test_papers_elsewhere() -> None:
    from models.training.figure_pipeline import held_out_guard

    def paper(source: str, pid: str, title: str) -> FigurePaper:
        return FigurePaper(source, pid, title, "", (), ())

    test = paper("pmc-jats", "PMC1", "Wolves of the northern forest and their prey")
    same_title = paper("pdfs2", "ecolevol-wolf", "Wolves of the Northern Forest, and their prey!")
    same_id = paper("s2orc", "PMC1", "")
    short_title = paper("pdfs", "x", "Introduction")
    other = paper("oa-stm", "S0001", "Something else entirely, at length")
    split = {"train": [same_title, short_title, other], "dev": [same_id],
             "test": [test, paper("pdfs", "y", "Introduction")]}
    dropped = held_out_guard(split)
    assert split["train"] == [short_title, other] and split["dev"] == []
    assert dropped == {"train": [same_title], "dev": [same_id]}


def test_the_commands_list_the_same_sources_and_options_as_the_code() -> None:
    from app.commands.lab.eval_figures import ALL_SOURCES as EVAL_ALL
    from app.commands.lab.eval_figures import EVAL_SOURCES
    from app.commands.lab.train_figures import ALL_SOURCES as TRAIN_ALL
    from app.commands.lab.train_figures import NEGATIVES as COMMAND_NEGATIVES
    from models.datasets.figure_pairs import SOURCES

    assert EVAL_SOURCES == SOURCES and EVAL_ALL == ALL_SOURCES == TRAIN_ALL
    assert (*SOURCES, *EXTRA_SOURCES) == ALL_SOURCES
    torch = pytest.importorskip("torch")
    assert torch is not None
    from models.training.figure_head import NEGATIVES

    assert COMMAND_NEGATIVES == NEGATIVES


def test_bad_sources_are_one_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    for argv in (["train", "figures", "--out", "x", "--sources", "oa-stm,nope"],
                 ["eval", "figures", "--sources", ","]):
        with pytest.raises(SystemExit) as raised:
            main(argv)
        assert raised.value.code == 2
        err = capsys.readouterr().err
        assert "unknown source(s)" in err and "Traceback" not in err


# --- the real shared data -------------------------------------------------------------------


def test_real_unarxive_has_pairs_and_splits_by_paper() -> None:
    from core.errors import DatasetError
    from models.datasets.figure_pairs import default_root

    try:
        root = default_root()
    except DatasetError as error:
        pytest.skip(f"shared data folder not available: {error}")
    if not (root / "unarxive_sample" / "papers.jsonl.gz").is_file():
        pytest.skip("no unarxive_sample")
    papers = list(read_source_papers("unarxive", root=root))
    counts = pair_counts(papers)
    assert counts["papers"] == 46 and counts["pairs"] > 100, counts
    assert all(p.split == paper_split("unarxive", p.paper_id) for p in papers)
    for paper in papers:
        for mention in paper.mentions:
            assert not LEAK.search(mention.paragraph), mention.paragraph
