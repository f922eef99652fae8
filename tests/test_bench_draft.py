"""``rhetorica bench draft`` times the draft pane's resting-cursor lookup in a long draft."""

from __future__ import annotations

import json
from pathlib import Path

from app.cli import main


def test_bench_draft_reports_the_cursor_lookup_and_the_whole_split(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from app.commands.lab.bench_draft import long_draft
    from core.drafts import draft_sections

    text = long_draft(120)
    assert text.startswith("# ") and 110 <= len(draft_sections(text)) <= 130
    out = tmp_path / "draft.json"
    assert main(["bench", "draft", "--sentences", "120", "--positions", "5", "--word-paragraphs", "20",
                 "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["positions"] == 5 and result["sentences"] == len(draft_sections(text))
    assert 0 < result["cursor_context_ms"]["p50"] <= result["cursor_context_ms"]["max"]
    assert result["word_draft"]["paragraphs"] == 20 and result["word_draft"]["read_s"] > 0
    assert "sentence at a resting cursor" in capsys.readouterr().out
