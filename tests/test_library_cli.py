"""``rhetorica library …`` end to end on the tiny bundle: import, list, stats, remove, rebuild, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("hnswlib")

from app.cli import main
from tests.tiny_bundle import make_tiny_bundle


def test_library_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = make_tiny_bundle(tmp_path / "bundle")
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": "a1", "title": "One", "abstract": "We propose a new method. "
                                "Results show that it works well."}) + "\n", encoding="utf-8")
    lib = ["--library", str(tmp_path / "lib")]
    model = ["--model", str(bundle), "--threads", "1"]
    assert main(["library", "import-jsonl", str(rows), *lib, *model]) == 0
    assert "added 1 paper(s), 2 sentences" in capsys.readouterr().out
    assert main(["library", "import-jsonl", str(rows), *lib, *model]) == 0
    assert "skipped a1: already in the library" in capsys.readouterr().out
    assert main(["library", "list", "--json", *lib]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(p["paper_id"], p["sentences"]) for p in listed] == [("a1", 2)]
    assert main(["library", "stats", *lib]) == 0
    assert json.loads(capsys.readouterr().out)["sentences"] == 2
    assert main(["library", "rebuild", *lib]) == 0
    assert "rebuilt the indexes of 2 sentences" in capsys.readouterr().out
    assert main(["library", "remove", "a1", *lib]) == 0
    assert main(["library", "remove", "a1", *lib]) == 2
    assert "rhetorica: error: no paper 'a1'" in capsys.readouterr().err
    assert main(["library", "add", str(tmp_path / "missing.pdf"), *lib, *model]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    assert main(["library", "list", *lib]) == 0
    assert "the library is empty" in capsys.readouterr().out
