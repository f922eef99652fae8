"""core.document: a paper read back from JSON is checked field by field; a wrong one is refused with a
ValueError (ShapeError) that names the field in words, never a TypeError or IndexError later on."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from core.document import Paper
from core.json_shapes import ShapeError
from tests.paper_factory import make_paper


def _paper_dict() -> dict[str, Any]:
    return make_paper().to_dict()


def _edited(edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    data = _paper_dict()
    edit(data)
    return data


BAD_PAPERS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "text a number": (lambda d: d["sentences"][0].update(text=12345),
                      "sentence 0: 'text' must be a string, not a number"),
    "section index too high": (lambda d: d["sentences"][1].update(section_index=999),
                               "sentence 1: 'section_index' is 999, outside the 3 sections of the paper"),
    "section index too low": (lambda d: d["sentences"][1].update(section_index=-2),
                              "sentence 1: 'section_index' is -2"),
    "section index text": (lambda d: d["sentences"][1].update(section_index="1"),
                           "'section_index' must be a whole number, not a string"),
    "index out of place": (lambda d: d["sentences"][2].update(index=7),
                           "sentence 2: its 'index' and 'id' must be 2 and 's2'"),
    "null sentence": (lambda d: d["sentences"].__setitem__(3, None),
                      "sentence 3 must be an object, not null"),
    "sentences null": (lambda d: d.update(sentences=None),
                       "the paper's 'sentences' must be a list, not null"),
    "missing title": (lambda d: d.pop("title"), "the paper: 'title' is missing"),
    "pages not numbers": (lambda d: d["sentences"][0].update(pages=["one"]),
                          "sentence 0: page must be a whole number, not a string"),
    "short rect": (lambda d: d["sentences"][0]["rects"].__setitem__(0, [0, 1, 2]),
                   "sentence 0: rect 0 must hold 5 numbers"),
    "unknown section kind": (lambda d: d["sections"][0].update(kind="bogus"),
                             "section 0: 'kind' must be one of abstract,"),
    "figure on a missing page": (lambda d: d["figures"][0].update(page=99),
                                 "figure 0: 'page' is 99, outside the 3 pages of the paper"),
    "figure bbox short": (lambda d: d["figures"][0].update(bbox=[1, 2]),
                          "figure 0: 'bbox' must hold 4 numbers, not 2"),
    "page size not finite": (lambda d: d["page_sizes"].__setitem__(0, [float("inf"), 1]),
                             "page 0's size item 0 must be a finite number"),
    "schema version text": (lambda d: d.update(schema_version="1"),
                            "'schema_version' must be a whole number, not a string"),
    "schema version newer": (lambda d: d.update(schema_version=2), "unsupported paper schema version 2"),
}


@pytest.mark.parametrize("case", list(BAD_PAPERS))
def test_a_wrong_paper_is_refused_naming_the_field(case: str) -> None:
    edit, message = BAD_PAPERS[case]
    with pytest.raises(ShapeError) as error:
        Paper.from_json(json.dumps(_edited(edit)))
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_the_schema_version_message_does_not_contradict_itself() -> None:
    with pytest.raises(ValueError) as error:
        Paper.from_dict(_edited(lambda d: d.update(schema_version="1")))
    assert "expected 1" not in str(error.value) and "not a string" in str(error.value)


@pytest.mark.parametrize("root", ["[1, 2]", "5", "null", '"a paper"'])
def test_a_paper_that_is_not_an_object_is_refused(root: str) -> None:
    with pytest.raises(ShapeError, match="the paper must be an object"):
        Paper.from_json(root)


def test_deep_nesting_is_refused_without_recursion_error() -> None:
    with pytest.raises(ShapeError, match="nested too deeply"):
        Paper.from_json("[" * 100_000 + "]" * 100_000)


def test_links_are_checked_once_the_sentences_are_there() -> None:
    data = _edited(lambda d: d["figures"][0].update(mentioned_by=["s99"]))
    Paper.from_dict(data)  # the fields are fine; where they point among the sentences is check_links'
    with pytest.raises(ShapeError, match="figure 0: 'mentioned_by' names sentence 's99'"):
        Paper.from_json(json.dumps(data))
    data = _edited(lambda d: d["sections"][2].update(sentence_count=9))
    with pytest.raises(ShapeError, match=r"section 2: its sentences 5\.\.13 are not all among"):
        Paper.from_json(json.dumps(data))


def test_a_good_paper_round_trips_and_text_before_any_heading_is_kept() -> None:
    paper = make_paper()
    assert Paper.from_json(paper.to_json()).to_dict() == paper.to_dict()
    data = _edited(lambda d: d["sentences"][0].update(section_index=-1))  # a draft's text before a heading
    assert Paper.from_json(json.dumps(data)).sentences[0].section_index == -1
    # the header alone (the GUI and the cache add the sentences after): no sentence, nothing to check
    header = _edited(lambda d: d.update(sentences=[]))
    assert Paper.from_dict(header).sentences == []
