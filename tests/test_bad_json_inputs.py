"""``rhetorica analyze`` on JSON read from disk that is well-formed but of the wrong shape: a paper JSON
is refused in one line naming the field, before anything is printed; a damaged cache entry is said in one
note line and computed again, and the run prints what an undamaged one would."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from core.cache import AnalysisCache
from core.paths import resources_dir
from tests.paper_factory import make_paper
from tests.tiny_bundle import make_tiny_bundle

SAMPLE_PDF = resources_dir() / "sample" / "sample-paper.pdf"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bundle(tmp_path_factory.mktemp("tiny") / "bundle", functions=True)


def _paper_json(tmp_path: Path, edit: Callable[[dict[str, Any]], Any]) -> Path:
    data = make_paper().to_dict()
    edited = edit(data)
    path = tmp_path / "paper.json"
    path.write_text(edited if isinstance(edited, str) else json.dumps(data if edited is None else edited),
                    encoding="utf-8")
    return path


PAPER_JSONS: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "text a number": (lambda d: d["sentences"][0].update(text=12345),
                      "sentence 0: 'text' must be a string, not a number"),
    "section index out of range": (lambda d: d["sentences"][0].update(section_index=999),
                                   "sentence 0: 'section_index' is 999, outside the 3 sections of the paper"),
    "deep nesting": (lambda d: "[" * 100_000 + "]" * 100_000, "not a paper JSON: JSON nested too deeply"),
    "deep nesting inside": (lambda d: '{"paper": ' + "[" * 100_000 + "]" * 100_000 + "}",
                            "JSON nested too deeply"),
    "schema version text": (lambda d: d.update(schema_version="1"),
                            "the paper's 'schema_version' must be a whole number, not a string"),
    "a number": (lambda d: "7", "not a paper JSON: the paper must be an object, not a number"),
    "null sentences": (lambda d: d.update(sentences=None),
                       "the paper's 'sentences' must be a list, not null"),
    "paper null": (lambda d: {"paper": None}, "the paper must be an object, not null"),
    "figure mentions": (lambda d: d["figures"][0].update(mentioned_by=["s40"]),
                        "figure 0: 'mentioned_by' names sentence 's40'"),
    "bad syntax": (lambda d: '{"title": ', "not valid JSON (Expecting value at line 1, column 11)"),
}


@pytest.mark.parametrize("case", list(PAPER_JSONS))
def test_a_wrong_paper_json_is_one_line_and_nothing_on_stdout(
        bundle: Path, tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    edit, message = PAPER_JSONS[case]
    path = _paper_json(tmp_path, edit)
    assert main(["analyze", str(path), "--model", str(bundle), "--quiet", "--no-cache"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"rhetorica: error: {path}: ") and captured.err.count("\n") == 1
    assert message in captured.err
    assert "Error" not in captured.err  # words, not Python's exception names


# The hostile report's damage to the cache (section 3), each as (entry kind, line, edit).
def _functions_null(line: dict[str, Any]) -> None:
    line["analysis"]["functions"][0] = None


def _function_no_id(line: dict[str, Any]) -> None:
    line["analysis"]["functions"][0]["label"] = "<script>x</script>"


def _section_index_out_of_range(line: dict[str, Any]) -> None:
    line["sentences"][1]["section_index"] = 999


CACHE_DAMAGE: dict[str, tuple[str, int, Callable[[dict[str, Any]], None] | str]] = {
    "null function": ("analyses", 0, _functions_null),
    "function label that is no id": ("analyses", 0, _function_no_id),
    "deep nesting in the paper": ("papers", 1, "[" * 100_000),
    "section index out of range": ("papers", 1, _section_index_out_of_range),
}


def _damage_entry(folder: Path, line_number: int, edit: Callable[[dict[str, Any]], None] | str) -> None:
    (path,) = folder.glob("*.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    if isinstance(edit, str):
        lines[line_number] = edit
    else:
        data = json.loads(lines[line_number])
        edit(data)
        lines[line_number] = json.dumps(data)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _analyze(bundle: Path, capsys: pytest.CaptureFixture[str]) -> tuple[list[str], str]:
    assert main(["analyze", str(SAMPLE_PDF), "--model", str(bundle), "--quiet", "--threads", "1"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    return lines[:1] + lines[2:], captured.err  # line 2 holds the timings


@pytest.mark.parametrize("case", list(CACHE_DAMAGE))
def test_a_wrong_shaped_cache_entry_is_computed_again(
        bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    first, _ = _analyze(bundle, capsys)
    folder, line_number, edit = CACHE_DAMAGE[case]
    _damage_entry(AnalysisCache().root / folder, line_number, edit)
    again, note = _analyze(bundle, capsys)
    assert again == first
    assert note.startswith("rhetorica: note: The cached ") and note.count("\n") == 1
    assert "was damaged" in note and note.endswith("it is computed again.\n")
    _, quiet = _analyze(bundle, capsys)  # the entry was written again, whole
    assert quiet == ""


def test_align_says_a_damaged_paper_entry_is_computed_again(
        bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    _analyze(bundle, capsys)
    _damage_entry(AnalysisCache().root / "papers", 1, _section_index_out_of_range)
    draft = tmp_path / "draft.txt"
    draft.write_text("We propose a method. It works well.\n", encoding="utf-8")
    argv = ["align", str(SAMPLE_PDF), str(draft), "--model", str(bundle), "--quiet", "--threads", "1"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "rhetorica: note: The cached " in err and "it is computed again." in err

