"""Issue 23, bad input to the library commands: an abstracts file's bad lines are refused one by one
(``file:line: reason`` on stderr, exit 1) while its good lines are imported; a file with no good line,
or not UTF-8, or a folder, is one error line (exit 2); ``library add`` puts what it skipped on stderr
and exits 1 when it added nothing because of errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("hnswlib")

from app.cli import main
from core.library.library import Library, read_jsonl, read_jsonl_papers
from core.library.store import LibraryError
from tests.tiny_bundle import make_tiny_bundle

GOOD = {"id": "good", "title": "Good",
        "abstract": "We propose a new method. Results show that it works well."}
HOSTILE = [  # (line, the reason it is refused)
    (json.dumps({"id": "nulls", "title": None, "abstract": None}), 'no "abstract" or "sentences"'),
    (json.dumps({"id": "chars", "sentences": "a string"}), '"sentences" must be a list of strings or'),
    (json.dumps({"id": "blank", "abstract": "   "}), '"abstract" is empty'),
    (json.dumps({"id": "", "abstract": "We propose a new method."}), '"id" is empty'),
    (json.dumps({"id": None, "abstract": "We propose a new method."}), 'no "id"'),
    (json.dumps({"id": ["x"], "abstract": "We propose a new method."}), '"id" must be a string, not a list'),
    (json.dumps({"id": "t", "title": 5, "abstract": "We propose a new method."}), '"title" must be a string'),
    (json.dumps({"id": "n", "sentences": [None, "We propose."]}), '"sentences"[0] must be a string'),
    (json.dumps({"id": "s", "sentences": [{"text": "x", "section": 3}]}), '"sentences"[0].section must be'),
    (json.dumps({"id": "e", "sentences": ["", "  "]}), '"sentences" holds no text'),
    (json.dumps(["not", "an", "object"]), "a list, not an object"),
    ('{"id": "cut", "abstract": "We prop', "not JSON (Unterminated string"),
    ('{"id": "surrogate", "abstract": "\\ud800 broken"}', '"abstract" is not valid Unicode text'),
    ("[" * 100_000, "not a paper row: "),
]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bundle(tmp_path_factory.mktemp("input") / "bundle")


def _model(bundle: Path) -> list[str]:
    return ["--model", str(bundle), "--threads", "1", "--quiet"]


def test_each_bad_line_is_refused_with_its_reason_and_the_good_ones_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    lines = [json.dumps(GOOD), *(line for line, _ in HOSTILE), "", json.dumps({**GOOD, "id": 7})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    read = read_jsonl(path)
    assert [p.paper_id for p in read.papers] == ["good", "7"]  # an integer id is its decimal string
    assert [r.line for r in read.refused] == list(range(2, 2 + len(HOSTILE)))
    for refused, (_, reason) in zip(read.refused, HOSTILE):
        assert str(refused).startswith(f"{path}:{refused.line}: not a paper row: ")
        assert reason in refused.reason, (refused, reason)
        assert "\n" not in str(refused)
    with pytest.raises(LibraryError, match=r"rows\.jsonl:2: not a paper row: no \"abstract\""):
        read_jsonl_papers(path)  # the all-or-nothing reader stops at the first bad line


def test_import_stores_only_the_good_rows_and_exits_1(tmp_path: Path, bundle: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "rows.jsonl"
    lines = [line for line, _ in HOSTILE[:4]] + [json.dumps(GOOD)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    lib = tmp_path / "lib"
    assert main(["library", "import-jsonl", str(path), "--library", str(lib), *_model(bundle)]) == 1
    captured = capsys.readouterr()
    refused = [line.removeprefix("rhetorica: note: ") for line in captured.err.strip().splitlines()]
    assert [line.split(": ", 1)[0] for line in refused] == [f"{path}:{n}" for n in (1, 2, 3, 4)]
    assert "added 1 paper(s), 2 sentences" in captured.out
    with Library(lib) as library:
        papers = library.store.papers()
        assert [(p.paper_id, p.title, p.sentence_count) for p in papers] == [("good", "Good", 2)]
        texts = [s.text for s in library.store.sentences_of("good")]
    assert texts == ["We propose a new method.", "Results show that it works well."]  # never "None", never a
    # character per sentence, never a paper of no sentence, never an empty id


@pytest.mark.parametrize("content, message", [
    ("\n".join(line for line, _ in HOSTILE[:3]) + "\n",
     r"no paper rows to import \(3 line\(s\) refused; line 1: "),
    ("\n\n", "holds no paper rows"),
])
def test_a_file_without_one_good_line_is_an_error(tmp_path: Path, bundle: Path, content: str, message: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import re

    path = tmp_path / "rows.jsonl"
    path.write_text(content, encoding="utf-8")
    lib = ["--library", str(tmp_path / "lib"), *_model(bundle)]
    assert main(["library", "import-jsonl", str(path), *lib]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rhetorica: error: ") and re.search(message, err[0])


def test_a_file_that_is_not_utf8_or_is_a_folder_is_named(tmp_path: Path, bundle: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b"\n" + '{"id": "é"}'.encode("latin-1") + b"\n")
    lib = ["--library", str(tmp_path / "lib"), *_model(bundle)]
    assert main(["library", "import-jsonl", str(path), *lib]) == 2
    offset = len(json.dumps(GOOD)) + 1 + len('{"id": "')
    assert capsys.readouterr().err.strip() == (
        f"rhetorica: error: {path} is not UTF-8 text: byte 0xe9 at offset {offset} (line 2) cannot be "
        "decoded; save the file as UTF-8")
    assert main(["library", "import-jsonl", str(tmp_path), *lib]) == 2
    assert f"{tmp_path} is a folder, not a JSONL file" in capsys.readouterr().err
    bom = tmp_path / "bom.jsonl"  # a byte-order mark is fine
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\n")
    assert [p.paper_id for p in read_jsonl(bom).papers] == ["good"]


def test_library_add_reports_skips_on_stderr_and_fails_when_nothing_was_added(
        tmp_path: Path, bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "pdfs" / "broken.pdf"
    broken.parent.mkdir()
    broken.write_bytes(b"%PDF-1.7\n" + b"\x00garbage\xff" * 300)
    notes = tmp_path / "abstracts.jsonl"
    notes.write_text(json.dumps(GOOD) + "\n", encoding="utf-8")
    empty = tmp_path / "no-pdfs"
    empty.mkdir()
    lib = ["--library", str(tmp_path / "lib"), "--workers", "0", *_model(bundle)]
    assert main(["library", "add", str(broken.parent), str(notes), str(empty), *lib]) == 1
    captured = capsys.readouterr()
    assert "skipped" not in captured.out and "added 0 paper(s)" in captured.out
    lines = captured.err.strip().splitlines()
    assert lines[-1].startswith("rhetorica: error: nothing was added: 3 file(s) could not be added")
    err = [line.removeprefix("rhetorica: note: ") for line in lines[:-1]]
    assert all(line.startswith("rhetorica: note: ") for line in lines[:-1])
    assert err[0] == f"skipped {empty}: no PDF files in this folder"
    assert any(line.startswith(f"skipped {broken}: ") for line in err)
    hint = [line for line in err if line.startswith(f"skipped {notes}: is not a PDF")]
    assert len(hint) == 1 and "rhetorica library import-jsonl FILE" in hint[0]
    # a PDF already in the library is no failure: exit 0
    from core.fileio import file_sha256

    known = tmp_path / "known.pdf"
    shutil.copy(broken, known)
    known.write_bytes(known.read_bytes() + b"known")
    with Library(tmp_path / "lib") as library:
        import numpy as np

        from core.library.store import NewSentence

        library.store.add_paper(paper_id="k", sha256=file_sha256(known), title="Known", source=str(known),
                                note="", kind="pdf", model_id="m", sentences=[NewSentence("A sentence.")],
                                content=np.ones((1, 8), np.float32))
    assert main(["library", "add", str(known), *lib]) == 0
    captured = capsys.readouterr()
    assert f"skipped {known}: already in the library" in captured.out and captured.err == ""
