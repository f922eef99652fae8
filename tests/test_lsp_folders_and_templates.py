"""The language server's folder settings and template actions (tester L, problems 1 and 9; tester J,
problem 8): a bad ``corpus``/``library`` (setting or start-up option) is one line naming the key and the
value kept, never a silent loss of suggestions; "Insert template" is offered only for a template with a
[CONTENT] slot, and a cut title ends in "…"; a preposition's object is content, not formula."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import pytest

from app.lsp.settings import LspSettings
from core.phrasing.suggest import Suggestion, SuggestionResult
from core.phrasing.templates import has_slot, template_of


def _corpus(folder: Path) -> Path:
    """A folder that holds a library database (what ``has_sentences`` looks for)."""
    from core.library.store import DATABASE_NAME

    folder.mkdir(parents=True, exist_ok=True)
    (folder / DATABASE_NAME).write_bytes(b"")
    return folder


# -- folder settings -----------------------------------------------------------------------------
def test_a_bad_corpus_setting_keeps_the_previous_folder_and_says_so(tmp_path: Path) -> None:
    good = str(_corpus(tmp_path / "good"))
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    before = LspSettings(corpus=good)
    for bad, why in (("/nonexistent/pack", "does not exist"), (str(a_file), "is a file"),
                     (str(tmp_path / "empty"), "holds no phrase corpus or library")):
        after, errors = before.apply({"rhetorica": {"corpus": bad}})
        assert after.corpus == good, bad
        (line,) = errors
        assert line.startswith("rhetorica setting 'corpus': ") and why in line and bad in line
        assert line.endswith(f"keeping {good}") and "\n" not in line
    # with no previous folder the default is named; the good keys of the same message still apply
    after, errors = LspSettings().apply({"library": "/nonexistent/lib", "labels": "both"})
    assert after.library is None and after.labels == "both"
    assert errors == ["rhetorica setting 'library': /nonexistent/lib does not exist; keeping your library"]
    assert LspSettings().apply({"corpus": good}) == (LspSettings(corpus=good), [])


def test_a_bad_corpus_option_at_start_is_one_line_and_the_default(tmp_path: Path) -> None:
    from app.commands.lsp import start_settings

    args = argparse.Namespace(labels="inlay", suggestions=3, sources="all", checklist_kind=None,
                              corpus=Path("/nonexistent/pack"), library=_corpus(tmp_path / "lib"))
    settings, notes = start_settings(args)
    assert settings.corpus is None and settings.library == str(tmp_path / "lib")
    assert notes == ["rhetorica lsp --corpus: /nonexistent/pack does not exist; using the bundled or built "
                     "phrase corpus"]


def test_the_server_says_so_in_the_editor_and_keeps_serving(tmp_path: Path) -> None:
    pytest.importorskip("pygls", reason="the lsp extra (pygls) is not installed")
    from lsprotocol import types

    from app.lsp.client import start_client

    uri = (tmp_path / "d.md").as_uri()

    async def scenario() -> None:
        command = [sys.executable, "-m", "app", "lsp", "--corpus", "/nonexistent/pack",
                   "--log", str(tmp_path / "server.log")]
        client = await start_client(command, {}, env={"RHETORICA_HOME": str(tmp_path / "home")})
        first = await client.message(1)
        assert first.startswith("rhetorica lsp --corpus: /nonexistent/pack does not exist")
        client.open(uri, "# Introduction\n\nLittle prior work has studied drafts.\n", "markdown")
        await client.diagnostics_for(uri, 1)  # still serving
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"rhetorica": {"library": "/nonexistent/lib"}}))
        second = await client.message(2)
        assert second == "rhetorica setting 'library': /nonexistent/lib does not exist; keeping your library"
        await client.stop_server()

    asyncio.run(scenario())
    log = (tmp_path / "server.log").read_text(encoding="utf-8")
    assert "--corpus: /nonexistent/pack does not exist" in log


# -- templates -------------------------------------------------------------------------------------
def test_a_prepositions_object_is_content_not_formula() -> None:
    text = ("To the best of our knowledge, no previous study has examined the effect of sleep on memory in "
            "zebrafish.")
    _, template = template_of(text)
    assert template.startswith("To the best of our knowledge, no previous study has examined the effect of")
    assert "sleep" not in template and "memory" not in template and has_slot(template)
    _, template = template_of("The remainder of this paper is organized as follows: Section 2 provides "
                              "background on coherent clusters.")
    assert template.startswith("The remainder of this paper is organized as follows")
    assert "clusters" not in template
    assert template_of("In this paper, we introduce a parser for noisy text.")[1] == (
        "In this paper, we introduce a [CONTENT].")  # a frame after "in" ("this paper") stays


def _suggestion(template: str, title: str) -> Suggestion:
    return Suggestion(text="x", source={"kind": "corpus", "title": title}, similarity=0.8, role="background",
                      function="", template=template)


def test_insert_template_is_offered_only_with_a_slot_and_cut_titles_end_in_an_ellipsis() -> None:
    from app.lsp.presenting import template_actions

    long_title = "Colloidal construction of porous polysaccharide-supported nanoparticles for catalysis"
    long_template = f"Little attention has been paid to [CONTENT], although it is {'very ' * 12}important."
    result = SuggestionResult({"text": "q"}, [
        _suggestion("The paper is organised as follows.", "No slot"),  # another paper's sentence verbatim
        _suggestion("[CITATION] reported [NUMBER] cases.", "No content slot"),
        _suggestion(long_template, long_title)])
    (action,) = template_actions(result)
    assert action.text == " " + long_template
    assert action.title.startswith("Insert template: Little attention has been paid to [CONTENT]")
    shown, source = action.title.split(" (from: ")
    assert shown.endswith("…") and len(shown) <= len("Insert template: ") + 70
    assert source.endswith("…)") and long_title.startswith(source[:-2])
    assert not has_slot("The paper is organised as follows.")
