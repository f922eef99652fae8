"""``rhetorica lsp`` over the protocol: a real server process (stdio, the shipped model and phrase
corpus) driven by a pygls client (``app.lsp.client``): initialize, didOpen, publishDiagnostics,
inlay hints, hover with suggestions, the "Insert template" code action, incremental didChange (one
paragraph re-read and re-labelled, per the server's log), settings, bad input, shutdown."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="the lsp extra (pygls) is not installed")

from lsprotocol import types

from app.lsp.client import RecordingClient, start_client
from app.lsp.positions import PositionMap
from core.taxonomy.labels import ROLES

DRAFT = Path(__file__).parent / "fixtures" / "lsp" / "draft.tex"
AIM = "In this paper, we aim to give authors feedback on each sentence while they write. "


async def _start(tmp_path: Path, options: dict[str, object]) -> RecordingClient:
    command = [sys.executable, "-m", "app", "lsp", "--log", str(tmp_path / "server.log")]
    return await start_client(command, options, env={"RHETORICA_HOME": str(tmp_path / "home")})


def _log_lines(tmp_path: Path) -> list[str]:
    return [line for line in (tmp_path / "server.log").read_text(encoding="utf-8").splitlines()
            if "rhetorica.lsp" in line and "labelled" in line]


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n")


def _hints(published: types.PublishDiagnosticsParams) -> list[types.Diagnostic]:
    return [d for d in published.diagnostics if d.severity == types.DiagnosticSeverity.Hint]


def _checklists(published: types.PublishDiagnosticsParams) -> list[types.Diagnostic]:
    return [d for d in published.diagnostics if d.code == "checklist"]


def _text_in(text: str, at: types.Range) -> str:
    positions = PositionMap(text)
    start = positions.offset(at.start.line, at.start.character)
    return text[start:positions.offset(at.end.line, at.end.character)]


def test_a_latex_draft_end_to_end(tmp_path: Path) -> None:
    text = DRAFT.read_text(encoding="utf-8")
    uri = (tmp_path / "draft.tex").as_uri()

    async def scenario() -> None:
        client = await _start(tmp_path, {"labels": "both", "suggestions": 3})
        client.open(uri, text, "latex", version=1)
        opened = await client.diagnostics_for(uri, 1)

        # One hint per sentence, each on its sentence's exact source range.
        hints = _hints(opened)
        assert len(hints) == 13
        assert _text_in(text, hints[0].range).startswith("Scientific writing tools rarely explain")
        cited = next(h for h in hints if _text_in(text, h.range).startswith("Writing a research article"))
        assert _text_in(text, cited.range).endswith("\\cite{swales1990,hyland2004}.")
        assert all(h.message.split(" ")[0].rstrip("?:") in (*ROLES, "uncertain") for h in hints)
        # The section summary sits on the introduction's heading and names the missing aim.
        intro = _line_of(text, "\\section{Introduction}")
        (on_intro,) = [d for d in _checklists(opened) if d.range.start.line == intro]
        assert on_intro.severity == types.DiagnosticSeverity.Information
        assert on_intro.message.startswith("No sentence of your introduction clearly makes")
        assert "an aim statement" in on_intro.message
        assert "judged on" in on_intro.message

        # Inlay hints: one at the end of each sentence, "role · function".
        whole = types.Range(types.Position(0, 0), types.Position(len(text.splitlines()) + 1, 0))
        inlay = await client.text_document_inlay_hint_async(
            types.InlayHintParams(types.TextDocumentIdentifier(uri), whole))
        assert inlay is not None and len(inlay) == 13
        assert [(h.position.line, h.position.character) for h in inlay] == [
            (d.range.end.line, d.range.end.character) for d in hints]
        assert all(str(h.label).split(" ")[0].rstrip("?") in ROLES for h in inlay)
        assert client.inlay_refreshes >= 1  # the client said it can refresh: it was asked to

        # Hover on the gap sentence: role, function and confidence, and suggestions with sources.
        gap = _line_of(text, "However, little is known")
        hover = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(gap, 10)))
        assert hover is not None and hover.range is not None
        assert _text_in(text, hover.range).startswith("However, little is known")
        value = hover.contents.value
        assert re.match(r"\*\*(background|objective|method|result|conclusion|other)\*\* \(\d+%\)", value)
        assert "**Suggestions**" in value and " · corpus · similarity " in value

        # Code actions: "Insert template" for suggestions, inserting after the sentence.
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(uri), types.Range(types.Position(gap, 10), types.Position(gap, 10)),
            types.CodeActionContext(diagnostics=[])))
        assert actions, "no Insert template action"
        action = actions[0]
        assert isinstance(action, types.CodeAction) and action.title.startswith("Insert template: ")
        assert action.edit is not None and action.edit.changes is not None
        (edit,) = action.edit.changes[uri]
        assert edit.range.start == edit.range.end == hover.range.end
        assert edit.new_text.startswith(" ") and len(edit.new_text) > 5
        refused = await client.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(uri), types.Range(types.Position(gap, 10), types.Position(gap, 10)),
            types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix])))
        assert not refused

        # An incremental edit: an aim statement typed into the introduction.
        feedback = _line_of(text, "Feedback arrives too late")
        client.replace(uri, 2, (feedback, 0), (feedback, 0), AIM)
        edited = await client.diagnostics_for(uri, 2)
        edited_text = text.replace("Feedback arrives", AIM + "Feedback arrives", 1)
        assert len(_hints(edited)) == 14
        (aim_hint,) = [h for h in _hints(edited)
                       if h.range.start.line == feedback and h.range.start.character == 0]
        assert _text_in(edited_text, aim_hint.range) == AIM.strip()
        (on_intro,) = [d for d in _checklists(edited) if d.range.start.line == intro]
        assert "an aim statement" not in on_intro.message.splitlines()[0]
        # The method section's sentences did not move: same ranges, same messages.
        method = _line_of(text, "\\section{Method}")
        assert [(h.range, h.message) for h in _hints(opened) if h.range.start.line > method] == [
            (h.range, h.message) for h in _hints(edited) if h.range.start.line > method]

        # A heading edit: the whole text is read again.
        method_line = edited_text.splitlines()[method]
        client.replace(uri, 3, (method, 0), (method, len(method_line)), "\\section{Discussion}")
        renamed = await client.diagnostics_for(uri, 3)
        assert any(d.message.startswith("No sentence of your discussion clearly makes")
                   for d in _checklists(renamed))

        # Settings: labels as inlay hints only (the hints leave the diagnostics), then a bad value.
        count = len(client.published[uri])
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"rhetorica": {"labels": "inlay"}}))
        republished = await client.publication(uri, count + 1)
        assert not _hints(republished) and _checklists(republished)
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"labels": "loud"}))
        message = await client.message(1)
        assert "labels" in message and "loud" in message and "\n" not in message

        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
        closed = await client.publication(uri, len(client.published[uri]) + 1)
        assert not closed.diagnostics
        await client.stop_server()
        assert client._server is not None and client._server.returncode == 0

    asyncio.run(scenario())
    lines = _log_lines(tmp_path)
    assert "(whole)" in lines[0] and "5 paragraphs, 5 through the model" in lines[0]
    assert "v2 (spliced)" in lines[1] and "1 through the model" in lines[1]  # one paragraph re-labelled
    assert "v3 (whole)" in lines[2] and "1 through the model" in lines[2]  # a heading edit: its section only


def test_unreadable_text_other_files_and_utf16_positions(tmp_path: Path) -> None:
    tex_uri = (tmp_path / "broken.tex").as_uri()
    py_uri = (tmp_path / "script.py").as_uri()
    md_uri = (tmp_path / "notes.md").as_uri()
    broken = ("\\documentclass{article}\n\\begin{document}\n\\section{Results}\n"
              "We found \\emph{a clear effect.\n\\end{document}\n")
    markdown = "# Results\n\n🙂 We found a clear effect. The effect grew with the dose.\n"

    async def scenario() -> None:
        client = await _start(tmp_path, {"labels": "diagnostics"})
        client.open(py_uri, "print('hello world. This is code.')\n", "python")
        client.open(tex_uri, broken, "latex")
        (warning,) = (await client.diagnostics_for(tex_uri, 1)).diagnostics
        assert warning.severity == types.DiagnosticSeverity.Warning
        assert warning.message.startswith("cannot read this document:")
        assert "not valid LaTeX" in warning.message
        named = re.search(r"line (\d+)", warning.message)
        assert named is not None and warning.range.start.line == int(named.group(1)) - 1  # where it says
        fixed_line = "We found \\emph{a clear effect}.\n"
        client.replace(tex_uri, 2, (3, 0), (4, 0), fixed_line)
        fixed = await client.diagnostics_for(tex_uri, 2)
        assert [d.severity for d in fixed.diagnostics] == [types.DiagnosticSeverity.Hint]

        client.open(md_uri, markdown, "markdown")
        hints = _hints(await client.diagnostics_for(md_uri, 1))
        assert [(h.range.start.line, h.range.start.character, h.range.end.character) for h in hints] == [
            (2, 0, 27), (2, 28, 58)]  # 🙂 is two UTF-16 code units (one Python character)
        assert py_uri not in client.published  # not a draft: left alone
        hover = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(py_uri), types.Position(0, 3)))
        assert hover is None
        await client.stop_server()

    asyncio.run(scenario())


def test_bad_initialization_options_are_one_message(tmp_path: Path) -> None:
    uri = (tmp_path / "d.txt").as_uri()

    async def scenario() -> None:
        client = await _start(tmp_path, {"suggestions": 500})
        message = await client.message(1)
        assert message.startswith("rhetorica setting 'suggestions'") and "500" in message
        client.open(uri, "Introduction\n\nWe study drafts. We label them.\n", "plaintext")
        published = await client.diagnostics_for(uri, 1)  # still serving, with the defaults
        assert not _hints(published)  # default labels: inlay hints
        await client.stop_server()

    asyncio.run(scenario())
