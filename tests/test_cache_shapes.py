"""core.cache: a well-formed entry of the wrong shape is damage like a cut file: removed, said in one
line ("was damaged … computed again"), and a miss, so the caller computes it again."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.cache import AnalysisCache
from core.document import Paper
from core.labelling.analysis import PaperAnalysis
from core.taxonomy.labels import FunctionPrediction
from tests.paper_factory import make_analysis, make_paper

Edit = Callable[[list[Any]], None]  # changes the entry's lines (JSON values) in place


def _damage(path: Path, edit: Edit) -> None:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    edit(lines)
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
                    encoding="utf-8")


def _with_functions(paper: Paper) -> PaperAnalysis:
    analysis = make_analysis(paper)
    analysis.functions = [FunctionPrediction("aim", (("aim", 0.9), ("proposal", 0.1)))
                          for _ in paper.sentences]
    return analysis


def _set(index: int, *keys: object, value: object) -> Edit:
    """Set ``lines[index][keys[0]][keys[1]]…`` to ``value``."""
    def edit(lines: list[Any]) -> None:
        target = lines[index]
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return edit


def _nest_deeply(index: int) -> Edit:
    def edit(lines: list[Any]) -> None:
        lines[index] = "[" * 100_000  # a string: written as it is
    return edit


ANALYSIS_DAMAGE: dict[str, tuple[Edit, str]] = {
    "a null function": (_set(0, "analysis", "functions", 0, value=None), "function 0 must be an object"),
    "a function that is no id": (_set(0, "analysis", "functions", 1, "label", value="<b>Main finding</b>"),
                                 "'<b>Main finding</b>' is not a function id"),
    "a runner-up that is no id": (_set(0, "analysis", "functions", 1, "top", 1, 0, value=""),
                                  "'' is not a function id"),
    "functions of other sentences": (_set(0, "analysis", "functions", value=[]),
                                     "functions do not match its sentences"),
    "a null role": (_set(1, "roles", 0, value=None), "role 0 must be an object"),
    "an unknown role": (_set(1, "roles", 2, "probabilities", "telepathy", value=0.5),
                        "unknown role 'telepathy'"),
    "a label without a probability": (_set(1, "roles", 2, "label", value="zzz"),
                                      "its label 'zzz' has no probability"),
    "a probability that is text": (_set(1, "roles", 0, "probabilities", "method", value="high"),
                                   "must be a number, not a string"),
    "roles that are not a list": (_set(1, "roles", value={"a": 1}), "'roles' must be a list"),
    "a header analysis that is a list": (_set(0, "analysis", value=[]), "analysis must be an object"),
    "deep nesting": (_nest_deeply(1), "JSON nested too deeply"),
}


@pytest.mark.parametrize("case", list(ANALYSIS_DAMAGE))
def test_a_wrong_shaped_analysis_is_damaged_and_removed(tmp_path: Path, case: str) -> None:
    cache = AnalysisCache(tmp_path)
    paper = make_paper()
    path = cache.save_analysis(paper, _with_functions(paper))
    assert cache.load_analysis(paper, "tiny@1#abc") is not None
    edit, reason = ANALYSIS_DAMAGE[case]
    _damage(path, edit)
    found = cache.read_analysis(paper, "tiny@1#abc")
    assert found.analysis is None
    assert reason in found.note and "was damaged" in found.note and found.note.endswith("computed again.")
    assert "\n" not in found.note and "Error" not in found.note
    assert not path.exists()  # dropped: the next save writes a good entry


PAPER_DAMAGE: dict[str, tuple[Edit, str]] = {
    "a section index past the sections": (_set(1, "sentences", 1, "section_index", value=999),
                                          "sentence 1: 'section_index' is 999"),
    "a text that is a number": (_set(1, "sentences", 0, "text", value=12345),
                                "sentence 0: 'text' must be a string, not a number"),
    "a null sentence": (_set(1, "sentences", 2, value=None), "sentence 2 must be an object"),
    "a rect on a page the paper lacks": (_set(1, "sentences", 0, "rects", 0, 0, value=40),
                                         "sentence 0: page is 40"),
    "a figure mentioned by no sentence": (_set(0, "paper", "figures", 0, "mentioned_by", value=["s99"]),
                                          "figure 0: 'mentioned_by' names sentence 's99'"),
    "a null paper": (_set(0, "paper", value=None), "paper must be an object"),
    "deep nesting": (_nest_deeply(1), "JSON nested too deeply"),
}


@pytest.mark.parametrize("case", list(PAPER_DAMAGE))
def test_a_wrong_shaped_paper_is_damaged_and_removed(tmp_path: Path, case: str) -> None:
    cache = AnalysisCache(tmp_path)
    paper = make_paper()
    path = cache.save_paper(paper)
    edit, reason = PAPER_DAMAGE[case]
    _damage(path, edit)
    found = cache.read_paper(paper.sha256, paper.parser_version, "test.pdf")
    assert found.paper is None
    assert found.note.startswith("The cached parse of test.pdf was damaged (")
    assert reason in found.note and found.note.endswith("computed again.")
    assert not path.exists()
    assert cache.load_paper(paper.sha256, paper.parser_version) is None  # a plain miss now, no note
    assert cache.read_paper(paper.sha256, paper.parser_version).note == ""


def test_a_good_entry_with_functions_still_loads(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path)
    paper = make_paper()
    cache.save_paper(paper)
    cache.save_analysis(paper, _with_functions(paper))
    found = cache.read_analysis(paper, "tiny@1#abc")
    assert found.note == "" and found.analysis is not None and found.analysis.functions is not None
    assert found.analysis.functions[0].top == (("aim", 0.9), ("proposal", 0.1))
    loaded = cache.read_paper(paper.sha256, paper.parser_version)
    assert loaded.note == "" and loaded.paper is not None and loaded.paper.to_dict() == paper.to_dict()
