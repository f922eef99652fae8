"""`rhetorica analyze` and `rhetorica align` read drafts in the formats authors use (issue 27.1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from tests.gui_helpers import model_bundle

FIXTURE = Path(__file__).parent / "fixtures" / "drafts" / "latex_paper"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return model_bundle(tmp_path_factory)


def test_analyze_reads_a_multi_file_latex_draft(bundle: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "analysis.json"
    assert main(["analyze", str(FIXTURE / "main.tex"), "--model", str(bundle), "--threads", "1", "--quiet",
                 "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Soil Moisture Sensing with Low-Cost Capacitive Probes\na draft, 10 sections "
                              "(2 empty), 20 sentences")  # the empty ones have no row in the table
    assert "Field sites [method]" in printed and "Conclusion [conclusion]" in printed  # the whole kind
    data = json.loads(out.read_text(encoding="utf-8"))
    texts = [s["text"] for s in data["paper"]["sentences"]]
    assert "However, their output depends on soil temperature, as shown in Figure 1." in texts
    assert len(data["analysis"]["roles"]) == 20


def test_analyze_reads_word_and_markdown_and_refuses_bad_drafts(bundle: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    docx = pytest.importorskip("docx")
    document = docx.Document()
    document.add_heading("Methods", 1)
    document.add_paragraph("We sampled twelve lakes. Each was visited twice.")
    document.save(str(tmp_path / "lakes.docx"))
    assert main(["analyze", str(tmp_path / "lakes.docx"), "--model", str(bundle), "--quiet"]) == 0
    assert "Methods [method]" in capsys.readouterr().out
    (tmp_path / "notes.md").write_text("Intro text [@a]. More text.\n\n# Results\n\nIt worked.\n",
                                       encoding="utf-8")
    assert main(["analyze", str(tmp_path / "notes.md"), "--model", str(bundle), "--quiet"]) == 0
    assert "(before any heading)" in capsys.readouterr().out
    (tmp_path / "bad.tex").write_text("\\section{A}\nOpen {group.\n", encoding="utf-8")
    (tmp_path / "bad.docx").write_bytes(b"not a zip at all")
    (tmp_path / "empty.md").write_text("# Only a heading\n", encoding="utf-8")
    for name, message in (("bad.tex", "line 2: unbalanced group"), ("bad.docx", "not a Word .docx file"),
                          ("empty.md", "the draft has no sentences")):
        assert main(["analyze", str(tmp_path / name), "--model", str(bundle)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"rhetorica: error: {tmp_path / name}") and message in err, err
        assert err.count("\n") == 1 and "Traceback" not in err


def test_align_takes_latex_drafts_with_headings_and_clean_text(bundle: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "alignment.json"
    other = tmp_path / "other.md"
    other.write_text("# Introduction\n\nProbes are cheap [@x]. We aim to fix their drift.\n\n# Methods\n\n"
                     "We calibrated 20 probes.\n", encoding="utf-8")
    assert main(["align", str(FIXTURE / "main.tex"), str(other), "--model", str(bundle), "--quiet",
                 "--json", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "\\cite" not in text and "\\emph" not in text and "[@x]" not in text
    data = json.loads(text)
    assert "aligned pairs" in capsys.readouterr().out
    assert json.dumps(data).count("Irrigation scheduling depends on knowing how much water the root zone "
                                  "holds [2, 3].") >= 1
    assert {"method", "result", "introduction"} <= set(json.dumps(data).replace('"', " ").split())
