"""``rhetorica eval figures`` on the graphical-abstract dev set (issue 25): the per-field table of every
method, ``--gold`` choosing the sets, and ``--save-ranker`` writing the fitted weights into the bundle
without changing its model id. The dev set itself is replaced by synthetic papers (no PDFs, no parsing)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.figures.figure_fit import LabelledPaper
from core.figures.figure_rank import FEATURES
from models.datasets.figure_gold import FigureGold
from models.figure_eval import GoldCase


def _cases() -> list[GoldCase]:
    rng = np.random.default_rng(5)
    fields = ["biomedical/life", "computer science", "physical/engineering", "social/other"]
    out = []
    for k in range(8):
        values = rng.normal(size=(4, len(FEATURES)))
        values[:, FEATURES.index("diagram")] = 0.0
        pick = k % 4
        values[pick, FEATURES.index("diagram")] = 1.0
        numbers = ["1", "2", "3", "4"]
        top = (numbers[pick], *[n for n in numbers if n != numbers[pick]][:2])
        gold = FigureGold(f"paper{k}.pdf", "0" * 64, tuple(numbers), top, ("",) * 3, fields[k % 4], "v2")
        out.append(GoldCase(gold, None, numbers, values))  # type: ignore[arg-type]
    return out


@pytest.fixture()
def bundle(tmp_path: Path) -> Path:
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_path / "bundle")


def test_eval_figures_reports_per_field_and_saves_the_ranker(bundle: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    import models.datasets.figure_gold
    import models.figure_eval
    from app.cli import main
    from models.encoder import load_model

    asked: list[tuple[str, ...]] = []

    def gold_papers(pdf_dir: Any = None, path: Any = None,
                    sets: Sequence[str] = ("v1", "v2")) -> Iterable[Any]:
        asked.append(tuple(sets))
        return []

    monkeypatch.setattr(models.datasets.figure_gold, "gold_papers", gold_papers)
    monkeypatch.setattr(models.figure_eval, "gold_cases", lambda _pairs, _scorer: _cases())
    before = load_model(bundle, device="cpu").model_id
    out_json = tmp_path / "eval.json"
    code = main(["eval", "figures", "--skip-mentions", "--gold", "v2", "--save-ranker",
                 "--model", str(bundle), "--json", str(out_json)])
    printed = capsys.readouterr().out
    assert code == 0 and asked == [("v2",)]
    assert "Graphical-abstract dev set v2" in printed and "biomedical 2" in printed
    for method in ("first figure", "previous ranker (issue 14 weights)", models.figure_eval.NESTED,
                   models.figure_eval.BAGGED, models.figure_eval.AVERAGED):
        assert method in printed
    result = json.loads(out_json.read_text())
    methods = result["dev_set"]["methods"]
    assert set(methods["first figure"]) == {"all", "biomedical", "CS", "physical", "social"}
    saved = result["dev_set"]["saved_ranker"]
    assert saved["weights"]["diagram"] > 0
    assert saved["procedure"]["bootstrap_rounds"] == models.figure_eval.BAG_ROUNDS
    assert len(saved["procedure"]["configurations"]) == len(models.figure_eval.CONFIGS)
    assert "Saved the ranker (every configuration averaged over 20 resamples)" in printed
    model = load_model(bundle, device="cpu")
    assert model.model_id == before  # only the manifest's context changed
    from models.figure_scorer import ranker_weights

    assert ranker_weights(model) == saved["weights"]
    papers = [LabelledPaper(c.name, c.numbers, c.values, list(c.gold.top3)) for c in _cases()]
    assert all(p.numbers[int(np.argmax(p.scores(saved["weights"])))] == p.top[0] for p in papers)


def test_eval_figures_writes_each_papers_rank_and_compares_with_an_earlier_run(
        bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import models.datasets.figure_gold
    import models.figure_eval
    from app.cli import main

    monkeypatch.setattr(models.datasets.figure_gold, "gold_papers", lambda *a, **k: [])
    monkeypatch.setattr(models.figure_eval, "gold_cases", lambda _pairs, _scorer: _cases())
    first = tmp_path / "first.json"
    assert main(["eval", "figures", "--skip-mentions", "--model", str(bundle), "--json", str(first)]) == 0
    papers = json.loads(first.read_text())["dev_set"]["papers"]
    assert set(papers) == {f"paper{k}.pdf" for k in range(8)}
    row = papers["paper0.pdf"]
    assert row["field"] == "biomedical" and row["reader_top3"][0] == "1" and len(row["ranked"]) == 4
    assert row["ranked"][0] == "1" or row["reciprocal_rank"] < 1  # the shipped fit's held-out ranking
    capsys.readouterr()
    earlier = json.loads(first.read_text())  # a run before some change: one paper ranked differently then
    earlier["dev_set"]["papers"]["paper3.pdf"]["reciprocal_rank"] = 0.25
    (tmp_path / "earlier.json").write_text(json.dumps(earlier))
    assert main(["eval", "figures", "--skip-mentions", "--model", str(bundle),
                 "--compare-to", str(tmp_path / "earlier.json")]) == 0
    printed = capsys.readouterr().out
    assert "1 of 8 papers move" in printed and "paper3.pdf" in printed and "0.250 →" in printed
    (tmp_path / "junk.json").write_text('{"dev_set": {}}')
    assert main(["eval", "figures", "--skip-mentions", "--model", str(bundle),
                 "--compare-to", str(tmp_path / "junk.json")]) == 2
    error = capsys.readouterr().err.strip()
    assert "not the --json of an earlier 'rhetorica eval figures' run" in error and "\n" not in error


def test_mention_matching_reads_the_chosen_sources_and_reports_each(
        bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import models.datasets.figure_sources
    from app.cli import main
    from models.datasets.figure_pairs import FigurePaper, FigureRecord, MentionRecord, paper_split

    def test_ids(source: str, count: int) -> list[str]:
        ids = (f"p{k}" for k in range(10_000))
        return [i for i in ids if paper_split(source, i) == "test"][:count]

    def paper(source: str, pid: str) -> FigurePaper:
        figures = (FigureRecord("fig1", "figure", "1", "Western blot of kinase levels."),
                   FigureRecord("fig2", "figure", "2", "Survival curves of the cohort."))
        mentions = (MentionRecord(("fig1",), "The kinase levels rose in the western blot.", ()),
                    MentionRecord(("fig2",), "Survival of the cohort fell.", ()))
        return FigurePaper(source, pid, "", "", figures, mentions)

    papers = {"pmc-jats": [paper("pmc-jats", i) for i in test_ids("pmc-jats", 2)],
              "pdfs2": [paper("pdfs2", i) for i in test_ids("pdfs2", 3)]}
    papers["pmc-jats"].append(paper("pmc-jats", next(f"q{k}" for k in range(1000)
                                                     if paper_split("pmc-jats", f"q{k}") == "train")))
    read: list[str] = []

    def read_source_papers(source: str, **_kwargs: Any) -> list[FigurePaper]:
        read.append(source)
        return papers.get(source, [])

    fields = dict(zip([p.paper_id for p in papers["pdfs2"]], ["CS", "CS", "biomedical"], strict=True))
    monkeypatch.setattr(models.datasets.figure_sources, "read_source_papers", read_source_papers)
    monkeypatch.setattr(models.datasets.figure_sources, "pdfs2_fields", lambda: fields)
    out_json = tmp_path / "mentions.json"
    code = main(["eval", "figures", "--skip-dev-set", "--sources", "pmc-jats,pdfs2", "--model", str(bundle),
                 "--json", str(out_json)])
    printed = capsys.readouterr().out
    assert code == 0 and read == ["pmc-jats", "pdfs2"]
    block = json.loads(out_json.read_text())["mention_matching"]
    assert block["sources"] == ["pmc-jats", "pdfs2"] and block["papers"] == 5  # the train paper left out
    assert block["bundle scorer"]["mentions"] == 10
    by_source = block["by_source"]
    assert {k: v["papers"] for k, v in by_source.items()} == {
        "pdfs2": 3, "pdfs2 CS": 2, "pdfs2 biomedical": 1, "pmc-jats": 2}
    assert by_source["pdfs2 CS"]["mentions"] == 4
    assert "bundle scorer, pdfs2 biomedical" in printed and "split of pmc-jats,pdfs2" in printed
