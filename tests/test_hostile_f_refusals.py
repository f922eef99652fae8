"""Hostile test F: devices, pipes, bad rows and non-UTF-8 names as inputs; outputs over inputs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.cli import main
from core.errors import RhetoricaError
from core.library.library import NOT_REGULAR, Library, find_pdfs, refuse_bad_paths
from core.pdf.opening import open_pdf
from tests.pdf_factory import two_column_pdf


def _odd_name(folder: Path) -> Path:
    return Path(os.fsdecode(os.fsencode(folder) + b"/abc\xff.pdf"))  # b"\xff": kept as a surrogate


def test_pdf_with_a_name_that_is_not_utf8_opens(tmp_path: Path) -> None:
    path = _odd_name(tmp_path)
    two_column_pdf(tmp_path / "plain.pdf").rename(path)
    doc = open_pdf(path)  # was "is damaged and cannot be opened"
    try:
        assert doc.page_count >= 1
    finally:
        doc.close()


def test_library_add_names_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    path = _odd_name(tmp_path)
    two_column_pdf(tmp_path / "plain.pdf").rename(path)
    with Library(tmp_path / "lib") as library:
        report = library.add_pdfs([path], model=None, workers=0)  # type: ignore[arg-type]  # never reached
    assert not report.added and "not valid UTF-8" in report.skipped[0][1]


def test_a_device_or_pipe_given_as_pdf_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "f.pdf"
    os.mkfifo(fifo)
    _, skipped = find_pdfs([fifo, Path("/dev/null")])
    assert [reason for _, reason in skipped] == [NOT_REGULAR, NOT_REGULAR]
    with pytest.raises(RhetoricaError, match="is not a regular file"):
        refuse_bad_paths(skipped)


def test_corpus_build_refuses_a_pipe_as_pdf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "f.pdf"
    os.mkfifo(fifo)
    assert main(["corpus", "build", "--pdf", str(fifo), "--out", str(tmp_path / "out")]) != 0
    assert "is not a regular file" in capsys.readouterr().err


def test_open_set_refuses_to_overwrite_its_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels = tmp_path / "seen-2.jsonl"
    text = "".join(json.dumps({"text": f"Sentence {i} of {f}.", "function": f}) + "\n"
                   for f in ("a", "b", "c", "d") for i in range(12))
    labels.write_text(text, encoding="utf-8")
    assert main(["data", "open-set", str(labels), "--seen", "2", "--out", str(tmp_path)]) != 0
    assert "is also an input" in capsys.readouterr().err
    assert labels.read_text(encoding="utf-8") == text  # untouched


def _agreement(tmp_path: Path, key: Path, capsys: pytest.CaptureFixture[str]) -> str:
    labels = tmp_path / "l.jsonl"
    labels.write_text('{"uid": "1", "role": "r", "function": "f"}\n', encoding="utf-8")
    assert main(["data", "annotation-agreement", str(key), str(labels), str(labels)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rhetorica: error:"), err
    return err[0]


def test_annotation_agreement_refuses_a_pipe_a_device_bad_rows_and_utf16(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "k.jsonl"
    os.mkfifo(fifo)
    assert "is not a regular file" in _agreement(tmp_path, fifo, capsys)  # was: hung
    assert "is not a regular file" in _agreement(tmp_path, Path("/dev/zero"), capsys)  # was: out of memory
    shape = tmp_path / "shape.jsonl"
    shape.write_text('{"uid": "1", "function": "x"}\n', encoding="utf-8")
    assert "shape.jsonl:1: not a key row" in _agreement(tmp_path, shape, capsys)  # was: TypeError
    utf16 = tmp_path / "u16.jsonl"
    utf16.write_bytes('{"uid": "1"}\n'.encode("utf-16"))
    assert "UTF-16" in _agreement(tmp_path, utf16, capsys)  # was: UnicodeDecodeError


def test_annotation_labels_of_the_wrong_shape_are_one_line(tmp_path: Path) -> None:
    from models.datasets.annotated_corpus import read_labels

    path = tmp_path / "l.jsonl"
    path.write_text('{"uid": "1", "role": "r", "function": "f"}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(RhetoricaError, match=r"l.jsonl:2: not a JSON object"):
        read_labels(path)
    path.write_text('{"uid": "1", "role": ["r"], "function": "f"}\n', encoding="utf-8")
    with pytest.raises(RhetoricaError, match=r"l.jsonl:1: not a label row \(no text for role\)"):
        read_labels(path)


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs Linux /proc")
def test_an_output_in_a_folder_that_takes_no_files_is_refused_up_front() -> None:
    from app.commands._options import check_output_file

    with pytest.raises(RhetoricaError, match=r"^/proc/version: cannot write in /proc"):
        check_output_file("/proc/version", "--json")  # was: the work done, then the temporary file named
