"""``rhetorica --help`` lists the author's verbs first and the lab's verbs apart (issue 26.3); the lab's
verbs parse exactly as before their modules moved to ``app/commands/lab/``."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import LAB_COMMAND_MODULES, LAB_TITLE, USER_COMMAND_MODULES, build_parser, main

USER_VERBS = ("gui", "parse", "analyze", "library", "suggest", "align", "search", "figures", "corrections",
              "template", "lsp")
LAB_VERBS = ("train", "export", "corpus", "data", "eval", "bench")


def _verb_rows(section: str) -> list[str]:
    """The verbs listed in one section of the help (rows indented by four spaces)."""
    return [line.split()[0] for line in section.splitlines()
            if line.startswith("    ") and not line.startswith("     ")]


def test_help_lists_user_verbs_then_lab_verbs_under_their_own_heading(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    user_part, heading, lab_part = text.partition(f"\n{LAB_TITLE}:\n")
    assert heading, text
    assert _verb_rows(user_part.partition("\ncommands:\n")[2]) == list(USER_VERBS)
    assert _verb_rows(lab_part) == list(LAB_VERBS)
    assert len(USER_COMMAND_MODULES) == len(USER_VERBS) and len(LAB_COMMAND_MODULES) == len(LAB_VERBS)


@pytest.mark.parametrize("verb", LAB_VERBS + USER_VERBS)
def test_every_verb_still_parses_and_has_its_own_help(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main([verb, "--help"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: rhetorica {verb} ")


def test_lab_subcommands_and_options_are_unchanged(tmp_path: Path) -> None:
    parser = build_parser()
    args = parser.parse_args(["eval", "split", "--data", "csabstruct", "--split", "dev"])
    assert (args.command, args.eval_command, args.data, args.split) == ("eval", "split", "csabstruct", "dev")
    args = parser.parse_args(["bench", "index", "--library", str(tmp_path)])
    assert (args.command, args.bench_command) == ("bench", "index")
    assert parser.parse_args(["parse", "paper.pdf"]).command == "parse"
    assert parser.parse_args([]).command is None  # the lab listing is help text, not an argument


def test_an_unknown_verb_is_one_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["no-such-verb"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("rhetorica: error: ") and err.count("\n") == 1
    assert "'eval'" in err and "'gui'" in err


def test_only_the_packaged_app_may_lack_a_lab_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """The PyInstaller build leaves train and export out (no torch): its CLI starts without them;
    from a source tree a missing command module is an error at start-up, not a silently lost verb."""
    import sys

    import app.cli

    left_out = "app.commands.lab.left_out_by_the_build"
    monkeypatch.setattr(app.cli, "LAB_COMMAND_MODULES", (left_out, *LAB_COMMAND_MODULES))
    with pytest.raises(ModuleNotFoundError):
        build_parser()
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    parser = build_parser()
    assert parser.parse_args(["eval", "split"]).eval_command == "split"
    assert _verb_rows(parser.format_help().partition(f"\n{LAB_TITLE}:\n")[2]) == list(LAB_VERBS)
