"""``rhetorica lsp`` and ``rhetorica bench lsp`` on the command line: bad input is one line and exit 2;
the bench runs on a small draft and reports what it measured (no timing is asserted)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from app.cli import main


def _exit_code(args: list[str]) -> int:
    try:
        return main(args)
    except SystemExit as stop:  # argparse's own refusals
        return int(stop.code or 0)


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rhetorica: error: "), err
    return err[0]


@pytest.mark.parametrize(("args", "says"), [
    (["--suggestions", "99"], "out of range"),
    (["--labels", "loud"], "invalid choice"),
    (["--model", "/nonexistent/bundle"], "/nonexistent/bundle"),
    (["--log", "/nonexistent-folder/x.log"], "does not exist"),
])
def test_bad_arguments_are_one_line(args: list[str], says: str, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path))
    a_file = tmp_path / "corpus.txt"
    a_file.write_text("not a folder", encoding="utf-8")
    args = [str(a_file) if arg == "FILE" else arg for arg in args]
    assert _exit_code(["lsp", *args]) == 2
    assert says in _one_error_line(capsys)


def test_without_pygls_the_command_says_what_to_install(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "app.lsp.server", raising=False)
    monkeypatch.setitem(sys.modules, "pygls", None)  # import pygls -> ImportError
    monkeypatch.setitem(sys.modules, "pygls.lsp", None)
    monkeypatch.setitem(sys.modules, "pygls.lsp.server", None)
    assert main(["lsp"]) == 2
    assert "pip install 'rhetorica[lsp]'" in _one_error_line(capsys)


def test_bench_edit_plan_changes_one_word_at_a_time() -> None:
    from app.commands.lab.bench_lsp import edit_plan

    text = (Path(__file__).parent / "fixtures" / "lsp" / "draft.tex").read_text(encoding="utf-8")
    plan = edit_plan(text, "tex", 20, seed=3)
    assert len(plan) == 20
    for start, end, word in plan:
        assert len(word) == end - start and text[start:end] != word
        text = text[:start] + word + text[end:]


@pytest.mark.slow
def test_bench_lsp_runs_on_a_small_draft(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pygls", reason="the lsp extra (pygls) is not installed")
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    draft = tmp_path / "draft.md"
    draft.write_text("# Introduction\n\nDrafts change. We study how they change over a year.\n\n"
                     "# Methods\n\nWe followed forty authors. Each kept every version of a draft.\n",
                     encoding="utf-8")
    out = tmp_path / "bench.json"
    assert main(["bench", "lsp", "--input", str(draft), "--edits", "4", "--hovers", "2", "--threads", "1",
                 "--json", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["format"] == "md" and report["sentences"] == 4 and report["edits"] == 4
    assert report["protocol"]["edit_latency_ms"]["n"] == 4
    assert report["in_process"]["edits_spliced"] == 4
    assert report["protocol"]["server_edits_spliced"] == 4 and report["protocol"]["server_edit_ms"]["n"] == 4
    assert report["protocol"]["server_cpu_seconds"] > 0
    assert report["in_process"]["paragraphs_through_model_per_edit"]["max"] == 1
    assert report["protocol"]["hovers_with_suggestions"] == 2
    assert isinstance(report["target_met"], bool) and report["command"].startswith("rhetorica bench lsp")
    assert json.loads(capsys.readouterr().out) == report
