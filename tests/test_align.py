"""core.alignment.align: the monotone alignment, merges, skips, the function weight, reordered sections, the
gap report, the exports (JSON round trip, a standalone HTML page) and ``rhetorica align``."""

from __future__ import annotations

import html
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from core.alignment.align import (
    Alignment,
    AlignSentence,
    AlignSettings,
    AlignSide,
    align,
    paper_from_text,
    side_from_paper,
)
from core.alignment.align_export import (
    alignment_from_json,
    alignment_to_html,
    alignment_to_json,
    alignment_to_markdown,
)
from core.alignment.align_gaps import VERBS
from core.taxonomy.functions import default_taxonomy
from tests.tiny_bundle import make_tiny_bundle

DIM = 8


def e(k: int) -> np.ndarray:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[k] = 1.0
    return vector


def side(rows: list[tuple[str, str, str, int, int]], title: str = "T") -> AlignSide:
    """A side from (section kind, role, function, function-view axis, content-view axis) rows."""
    sentences = [AlignSentence(f"{title} sentence {i} ({kind}, {function or role})", kind.title(), kind, role,
                               function) for i, (kind, role, function, _, _) in enumerate(rows)]
    content = np.stack([e(c) for *_, c in rows])
    return AlignSide(title, sentences, content, np.stack([e(f) for *_, f, _ in rows]))


def pairs_of(alignment: Alignment) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    return [(p.a_indices, p.b_indices) for p in alignment.pairs]


def test_order_kept_and_an_unrelated_sentence_skipped() -> None:
    a = side([("method", "", "", k, k) for k in range(4)], "A")
    b = side([("method", "", "", 0, 0), ("method", "", "", 1, 1), ("method", "", "", 7, 7),
              ("method", "", "", 2, 2), ("method", "", "", 3, 3)], "B")
    result = align(a, b)
    assert pairs_of(result) == [((0,), (0,)), ((1,), (1,)), ((2,), (3,)), ((3,), (4,))]
    assert result.unaligned_b == [2] and result.unaligned_a == []
    assert all(p.method == "section" for p in result.pairs)


def test_order_beats_a_crossing_match_within_a_section() -> None:
    # B's two sentences are A's in the opposite order: a monotone alignment keeps only one of them
    a = side([("result", "", "", 0, 0), ("result", "", "", 1, 1)], "A")
    b = side([("result", "", "", 1, 1), ("result", "", "", 0, 0)], "B")
    result = align(a, b, settings=AlignSettings(fallback_min_score=2.0))  # no fallback pass
    assert len(result.pairs) == 1


def test_one_to_many_merge_when_both_neighbours_match() -> None:
    a = side([("method", "method", "", 0, 0), ("method", "method", "", 1, 1)], "A")
    b = side([("method", "method", "", 0, 0), ("method", "method", "", 0, 0), ("method", "method", "", 1, 1)],
             "B")
    result = align(a, b)
    assert pairs_of(result) == [((0,), (0, 1)), ((1,), (2,))]
    assert result.pairs[0].role == "method"
    # with merges switched off the second B sentence stays alone
    single = align(a, b, settings=AlignSettings(max_merge=1, fallback_min_score=2.0))
    assert len(single.pairs) == 2 and len(single.unaligned_b) == 1


def test_function_weight_decides_between_what_a_sentence_does_and_what_it_is_about() -> None:
    a = side([("result", "", "", 0, 1)], "A")  # does 0, is about 1
    b = side([("result", "", "", 0, 2), ("result", "", "", 3, 1)], "B")  # same job / same topic
    assert pairs_of(align(a, b, function_weight=1.0)) == [((0,), (0,))]
    assert pairs_of(align(a, b, function_weight=0.0)) == [((0,), (1,))]


def test_reordered_sections_and_the_global_fallback() -> None:
    a = side([("introduction", "", "", 0, 0), ("introduction", "", "", 1, 1), ("method", "", "", 2, 2),
              ("method", "", "", 3, 3), ("related-work", "", "", 4, 4), ("discussion", "", "", 5, 5)], "A")
    b = side([("introduction", "", "", 0, 0), ("introduction", "", "", 1, 1), ("related-work", "", "", 4, 4),
              ("method", "", "", 2, 2), ("method", "", "", 3, 3), ("conclusion", "", "", 5, 5)], "B")
    result = align(a, b)
    methods = {p.a_indices: (p.b_indices, p.method) for p in result.pairs}
    assert methods[(2,)] == ((3,), "section") and methods[(3,)] == ((4,), "section")
    assert methods[(4,)] == ((2,), "reordered")  # same kind, out of order
    assert methods[(5,)] == ((5,), "fallback")  # discussion vs conclusion: only the global pass pairs them
    assert not result.unaligned_a and not result.unaligned_b


def test_a_side_without_sections_is_aligned_against_the_whole_other_side() -> None:
    draft = side([("", "", "", 0, 0), ("", "", "", 3, 3)], "Draft")
    paper = side([("introduction", "", "", 0, 0), ("method", "", "", 2, 2), ("method", "", "", 3, 3)], "P")
    result = align(draft, paper)
    assert pairs_of(result) == [((0,), (0,)), ((1,), (2,))]
    assert result.unaligned_b == [1]


def test_gap_report_names_functions_with_the_taxonomy() -> None:
    a = side([("discussion", "conclusion", "limitation", 0, 0),
              ("discussion", "result", "interpretation", 1, 1),
              ("introduction", "background", "earlier-findings", 2, 2)], "A")
    b = side([("discussion", "result", "interpretation", 1, 1), ("introduction", "background", "none", 4, 4),
              ("conclusion", "conclusion", "future-work", 5, 5)], "B")
    gaps = align(a, b).gaps
    texts = [g.text for g in gaps.items]
    limitation = next(g for g in gaps.items if g.function == "limitation")
    assert limitation.present_in == "a" and limitation.name == default_taxonomy().name_of("limitation")
    assert any("No sentence of B clearly admits a limitation" in t for t in texts)
    assert any("No sentence of B clearly compares with earlier findings" in t for t in texts)
    assert any("No sentence of A clearly proposes future work" in t for t in texts)
    assert any("A has no conclusion" in t for t in texts)
    assert not any(g.function == "interpretation" for g in gaps.items)  # both do it in the discussion
    shares = {s.section_kind: s for s in gaps.role_shares}
    assert shares["discussion"].a["conclusion"] == pytest.approx(0.5)
    assert shares["discussion"].b["result"] == pytest.approx(1.0)


def test_every_taxonomy_name_reads_as_a_verb() -> None:
    for function in default_taxonomy().functions:
        assert function.name.split()[0].lower() in VERBS, function.name


def _sample() -> Alignment:
    a = side([("abstract", "background", "topic-importance", 0, 0), ("abstract", "method", "proposal", 1, 1),
              ("abstract", "result", "main-finding", 2, 2), ("discussion", "conclusion", "limitation", 3, 3)],
             "Paper <A> & co")
    b = side([("abstract", "background", "topic-importance", 0, 0), ("abstract", "method", "proposal", 1, 1),
              ("abstract", "method", "proposal", 1, 1), ("abstract", "other", "none", 6, 6),
              ("abstract", "result", "main-finding", 2, 2)], "Paper B")
    return align(a, b)


def test_json_round_trip() -> None:
    alignment = _sample()
    again = alignment_from_json(alignment_to_json(alignment))
    assert pairs_of(again) == pairs_of(alignment)
    assert [p.score for p in again.pairs] == pytest.approx([p.score for p in alignment.pairs], abs=1e-4)
    assert again.a.sentences == alignment.a.sentences and again.b.title == alignment.b.title
    assert again.gaps.items == alignment.gaps.items
    assert again.unaligned_b == alignment.unaligned_b and again.settings == alignment.settings
    assert alignment_to_json(again) == alignment_to_json(alignment)


def test_html_is_standalone_and_shows_every_sentence_and_link() -> None:
    alignment = _sample()
    page = alignment_to_html(alignment)
    assert page.startswith("<!DOCTYPE html>")
    for forbidden in ("http:", "https:", "src=", "<link", "@import", "url("):
        assert forbidden not in page
    for sentence in alignment.a.sentences + alignment.b.sentences:
        assert html.escape(sentence.text) in page
    assert "Paper &lt;A&gt; &amp; co" in page
    assert 'id="a2" style' in page and 'data-p="b2 b3"' in page  # the one-to-many pair's partners
    assert "clearly admits a limitation" in page
    if shutil.which("node"):  # the script at least parses
        script = page.split("<script>")[1].split("</script>")[0]
        subprocess.run(["node", "-e", "new Function(require('fs').readFileSync(0, 'utf8'))"], input=script,
                       text=True, check=True)


def test_markdown_lists_pairs_and_gaps() -> None:
    text = alignment_to_markdown(_sample())
    assert "## Gaps" in text and "clearly admits a limitation" in text
    assert "**A2**" in text and "**B3**" in text


def test_paper_from_text_finds_headings() -> None:
    text = ("# My draft title\n\nAbstract\nWe study alignment. It works.\n\n"
            "## 2 Methods\nWe align sentences.\n\nResults\nIt is accurate.\n")
    paper = paper_from_text(text, title="")
    assert paper.title == "My draft title"
    assert [(s.heading, s.kind.value, s.number) for s in paper.sections] == [
        ("Abstract", "abstract", ""), ("Methods", "method", "2"), ("Results", "result", "")]
    assert [s.text for s in paper.sentences][:2] == ["We study alignment.", "It works."]
    plain = paper_from_text("We study alignment. It works.\nWe align sentences.")
    assert not plain.sections and all(s.section_index == -1 for s in plain.sentences)


# -- with a real (tiny) model ----------------------------------------------------------------------
DRAFT_A = ("Abstract\nPrevious work has studied this problem. Our goal is to improve accuracy. "
           "We propose a new method for parsing scientific text.\n\n"
           "Conclusion\nIn conclusion the approach is simple and fast.\n")
DRAFT_B = ("Abstract\nOur goal is to improve accuracy. Experiments on two datasets demonstrate large gains. "
           "Results show that it works well.\n\nConclusion\nThe approach is simple.\n")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bundle(tmp_path_factory.mktemp("align") / "bundle", functions=True)


def test_sides_from_a_model(bundle: Path) -> None:
    from core.labelling.analysis import analyze_paper
    from models import load_model

    model = load_model(bundle, device="cpu", threads=1)
    sides = []
    for text in (DRAFT_A, DRAFT_B):
        paper = paper_from_text(text)
        analysis = analyze_paper(paper, model, with_embeddings=True, with_function_vectors=True)
        sides.append(side_from_paper(paper, analysis, kind="draft"))
    a, b = sides
    assert a.function.shape == (4, 4) and a.content.shape[0] == 4
    assert np.allclose(np.linalg.norm(a.content, axis=1), 1.0, atol=1e-5)
    assert a.sentences[0].section_kind == "abstract" and a.sentences[-1].section_kind == "conclusion"
    result = align(a, b)
    assert result.pairs and all(p.score >= 0 for p in result.pairs)
    # the same text aligns with itself one to one, in order
    self_alignment = align(a, a)
    assert pairs_of(self_alignment) == [((i,), (i,)) for i in range(len(a))]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    import sys

    return subprocess.run([sys.executable, "-m", "app.cli", "align", *args, "--quiet"], capture_output=True,
                          text=True, cwd=Path(__file__).resolve().parents[1], timeout=300)


def test_cli_on_two_drafts(bundle: Path, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(DRAFT_A, encoding="utf-8")
    (tmp_path / "b.txt").write_text(DRAFT_B, encoding="utf-8")
    out = _cli(str(tmp_path / "a.md"), str(tmp_path / "b.txt"), "--model", str(bundle), "--threads", "1",
               "--json", str(tmp_path / "x.json"), "--html", str(tmp_path / "x.html"),
               "--md", str(tmp_path / "x.md"))
    assert out.returncode == 0, out.stderr
    assert "aligned pairs" in out.stdout
    data = json.loads((tmp_path / "x.json").read_text(encoding="utf-8"))
    assert data["a"]["title"] == "a" and len(data["b"]["sentences"]) == 4
    assert "Results show that it works well." in (tmp_path / "x.html").read_text(encoding="utf-8")
    assert (tmp_path / "x.md").read_text(encoding="utf-8").startswith("# Rhetorical alignment")
    summary = _cli(str(tmp_path / "a.md"), str(tmp_path / "b.txt"), "--model", str(bundle), "--threads", "1",
                   "--function-weight", "0.3")
    assert summary.returncode == 0, summary.stderr
    assert "what the sentences do 30%" in summary.stdout and "Gaps" in summary.stdout


def test_cli_errors_are_one_line(bundle: Path, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(DRAFT_A, encoding="utf-8")
    (tmp_path / "empty.txt").write_text("\n", encoding="utf-8")
    (tmp_path / "lib").mkdir()
    cases = [(str(tmp_path / "missing.pdf"), "no such file"),
             (str(tmp_path / "empty.txt"), "no sentences"),
             ("no-such-paper-id", "no such file")]
    for spec, message in cases:
        out = _cli(str(tmp_path / "a.txt"), spec, "--model", str(bundle), "--library", str(tmp_path / "lib"))
        assert out.returncode == 2, out.stderr
        assert out.stderr.startswith("rhetorica: error:") and message in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


@pytest.mark.shared
def test_cli_on_a_real_pdf(bundle: Path, tmp_path: Path) -> None:
    from tests.conftest import shared_path

    pdf = shared_path("pdfs", "bmc-datta2010.pdf")  # skipped when the shared folder is absent
    (tmp_path / "a.txt").write_text(DRAFT_A, encoding="utf-8")
    out = _cli(str(pdf), str(tmp_path / "a.txt"), "--model", str(bundle), "--threads", "1",
               "--html", str(tmp_path / "x.html"))
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "x.html").read_text(encoding="utf-8")
    assert page.count('class="s') > 20 and "src=" not in page


def test_the_alignment_evaluation_counts_pairs_coverage_and_the_position_baseline() -> None:
    from app.commands.lab.eval_align import Tally, position_pairs

    assert position_pairs(3, 5) == [(0, 0), (1, 2), (2, 4)]
    assert position_pairs(1, 4) == [(0, 0)] and position_pairs(0, 3) == []
    tally = Tally()
    # two scored pairs (one right), one pair with an unlabelled sentence (not scored)
    tally.add([(0, 0), (1, 1), (2, 1)], ["method", "result", ""], ["method", "background"],
              ["proposal", "none", ""], ["proposal", "main-finding"])
    figures = tally.to_dict()
    assert figures["precision"] == 0.5 and figures["scored_pairs"] == 2
    assert figures["coverage"] == 1.0  # 2 labelled sentences of A + 2 of B, all in a scored pair
    assert figures["function_precision"] == 1.0 and figures["function_pairs"] == 1  # "none" is not scored
