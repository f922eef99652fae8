"""Evaluation hygiene: model selection never sees a test split; bad training input is one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from core.errors import DatasetError
from models.datasets import is_test_split, refuse_test_split


@pytest.mark.parametrize("spec", ["csabstruct:test", "csabstruct:test-dedup", "sciarg:test-cl",
                                  "pmc-sents-full:test"])
def test_test_splits_are_refused_for_selection(spec: str) -> None:
    assert is_test_split(spec)
    with pytest.raises(DatasetError, match="test split cannot be used for early stopping"):
        refuse_test_split(spec, "early stopping")


@pytest.mark.parametrize("spec", ["csabstruct:dev", "pmc-sents-full:dev-holdout", "sciarg:train-cl",
                                  "jsonl:/data/test.jsonl", "csv:test.csv", "pubmedqa:train"])
def test_other_splits_pass(spec: str) -> None:
    assert not is_test_split(spec)
    refuse_test_split(spec, "early stopping")


@pytest.mark.parametrize("argv", [
    ["export", "missing.pt", "--out", "OUT", "--parity-data", "csabstruct:test"],
    ["export", "missing.pt", "--out", "OUT", "--calibrate", "csabstruct:dev", "--calibrate", "pubmedqa:test"],
])
def test_export_refuses_test_splits_before_touching_the_checkpoint(
        argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    argv = [a.replace("OUT", str(tmp_path / "bundle")).replace("missing.pt", str(tmp_path / "no.pt"))
            for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("rhetorica: error: ") and ":test: a test split cannot be used" in err
    assert "Traceback" not in err and err.count("\n") == 1
    assert not (tmp_path / "bundle").exists()


def test_train_refuses_a_test_dev_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    assert main(["train", "roles", "--data", "csabstruct:train", "--dev", "csabstruct:test-dedup",
                 "--out", str(tmp_path / "bundle"), "--work", str(tmp_path / "work")]) == 2
    err = capsys.readouterr().err
    assert "csabstruct:test-dedup: a test split cannot be used for early stopping" in err
    assert "Traceback" not in err and not (tmp_path / "work").exists()


def test_bad_training_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"doc_id": "a", "text": "We study X.", "label": "methodology"}\n', encoding="utf-8")
    assert main(["train", "roles", "--data", f"jsonl:{bad}", "--dev", f"jsonl:{bad}",
                 "--out", str(tmp_path / "bundle"), "--work", str(tmp_path / "work")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rhetorica: error: ") and "'methodology' is not one of" in err
    assert "Traceback" not in err


def test_the_paragraph_splitter_is_the_projects_splitter() -> None:
    from core.text.sentences import split_sentence_texts
    from models.datasets.readers import _split_paragraph

    text = "Cells were counted (Fig. 2). Results are in Sec. 4.1 of the appendix. See e.g. Smith et al. 2019."
    assert _split_paragraph(text) == split_sentence_texts(text)
    assert len(_split_paragraph(text)) == 3
