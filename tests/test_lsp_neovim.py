"""End to end with a real editor: Neovim (headless, its built-in LSP client) starts ``rhetorica lsp``
over stdio on a LaTeX draft and an author's session is played by ``fixtures/lsp/nvim_client.lua``:
labels as hint diagnostics and inlay hints, the section checklist on the introduction's heading, a
hover with suggestions, an "Insert template" code action applied to the buffer, and an aim
statement typed into the introduction (an incremental change) that the checklist then finds.
Skipped when ``nvim`` is not installed (``apt-get install neovim``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="the lsp extra (pygls) is not installed")

NVIM = shutil.which("nvim")
FIXTURES = Path(__file__).parent / "fixtures" / "lsp"


@pytest.mark.slow
@pytest.mark.skipif(NVIM is None, reason="nvim is not installed (apt-get install neovim)")
def test_neovim_drives_the_server_over_stdio(tmp_path: Path) -> None:
    assert NVIM is not None
    draft = tmp_path / "draft.tex"
    shutil.copyfile(FIXTURES / "draft.tex", draft)
    out = tmp_path / "seen.json"
    command = [sys.executable, "-m", "app", "lsp", "--log", str(tmp_path / "server.log")]
    env = {**os.environ, "RHETORICA_HOME": str(tmp_path / "home"), "RHETORICA_NVIM_OUT": str(out),
           "RHETORICA_DRAFT": str(draft), "RHETORICA_LSP_CMD": json.dumps(command)}
    done = subprocess.run([NVIM, "--headless", "--clean", "-c", f"luafile {FIXTURES / 'nvim_client.lua'}"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=400,
                          stdin=subprocess.DEVNULL)
    assert out.is_file(), f"Neovim wrote nothing (rc {done.returncode}): {done.stderr[-2000:]}"
    seen = json.loads(out.read_text(encoding="utf-8"))
    assert "failure" not in seen, seen.get("failure")
    assert seen["steps"] == ["opened", "diagnostics", "hover", "inlay hints", "code action", "edited"]

    # Labels: one hint diagnostic per sentence (13), on the sentence's line; the checklist on the heading.
    assert seen["labelled"] is True
    hints = [d for d in seen["diagnostics"] if d["severity"] == 4]
    assert len(hints) == 13 and all(d["source"] == "rhetorica" for d in hints)
    lines = draft.read_text(encoding="utf-8").splitlines()
    gap = next(d for d in hints if d["lnum"] == seen["gap_line"])
    assert lines[gap["lnum"]][gap["col"]:gap["end_col"]].startswith("However, little is known")
    intro = [d for d in seen["diagnostics"] if d["severity"] == 3 and d["lnum"] == seen["intro_line"]]
    assert len(intro) == 1 and "an aim statement" in intro[0]["message"].splitlines()[0]

    # Inlay hints at each sentence's end, and the hover with suggestions and their sources.
    assert len(seen["inlay_hints"]) == 13
    assert {(h["line"], h["character"]) for h in seen["inlay_hints"]} == {
        (d["end_lnum"], d["end_col"]) for d in hints}
    assert "**Suggestions**" in seen["hover"] and " · corpus · similarity " in seen["hover"]

    # The first "Insert template" action, applied by Neovim, put text after the gap sentence.
    assert seen["actions"] and seen["actions"][0].startswith("Insert template: ")
    assert seen["line_after_action"].startswith(lines[seen["gap_line"]]) and len(
        seen["line_after_action"]) > len(lines[seen["gap_line"]])

    # The typed aim statement: labelled as its own sentence, and the checklist no longer misses it.
    assert seen["relabelled"] is True
    after = seen["diagnostics_after_edit"]
    aim = [d for d in after if d["severity"] == 4 and d["lnum"] == seen["feedback_line"] and d["col"] == 0]
    assert len(aim) == 1 and aim[0]["message"].startswith("objective")
    intro_after = [d for d in after if d["severity"] == 3 and d["lnum"] == seen["intro_line"]]
    assert not intro_after or "an aim statement" not in intro_after[0]["message"].splitlines()[0]
    log = (tmp_path / "server.log").read_text(encoding="utf-8")
    assert "(spliced)" in log and "1 through the model" in log
