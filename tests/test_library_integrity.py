"""Issue 23, the library against a hostile tester: index files carry an integrity record and a
damaged one is rebuilt (with a note) before hnswlib ever reads it; a damaged database is one line
that points to the doctor; a database that vanished (or was emptied) is never silently replaced by a
new empty library."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("hnswlib")

from app.cli import main
from core.library.index import IndexRecord, check_index_file
from core.library.library import Library
from core.library.store import (
    DATABASE_NAME,
    INDEX_FILES,
    MARKER_NAME,
    DamagedLibraryError,
    LibraryError,
    MissingDatabaseError,
)
from tests.library_damage import build_library, root_page, run_cli, scramble, zero_pages
from tests.tiny_bundle import make_tiny_bundle

QUERY = "We propose a new method."


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bundle(tmp_path_factory.mktemp("integrity") / "bundle", functions=True)


@pytest.fixture(scope="module")
def model(bundle: Path):  # type: ignore[no-untyped-def]
    from models import load_model

    return load_model(bundle, device="cpu", threads=1)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory, model) -> Path:  # type: ignore[no-untyped-def]
    """A library of 120 papers (600 sentences): index files of a few dozen kB."""
    return build_library(tmp_path_factory.mktemp("pristine") / "lib", model, papers=120)


@pytest.fixture
def library(pristine: Path, tmp_path: Path) -> Path:
    """A copy of the pristine library this test may damage."""
    return Path(shutil.copytree(pristine, tmp_path / "lib"))


def _suggest(bundle: Path, folder: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    return run_cli("suggest", QUERY, "--library", str(folder), "--source", "library", "--corpus",
                   str(tmp_path / "no-corpus"), "--json", "--model", str(bundle), "--threads", "1")


def test_each_saved_index_has_a_record_that_matches_its_file(library: Path) -> None:
    with Library(library) as lib:
        for view in ("content", "function"):
            record = lib.index_record(view)
            path = library / INDEX_FILES[view]
            assert record is not None and record == IndexRecord.of_file(path, 600)
            assert check_index_file(path, record, 600) is None
            assert check_index_file(path, record, 601) is not None  # out of step with the database
            assert check_index_file(path, None, 600) == "has no integrity record"
            assert check_index_file(library / "nothing.ann", record, 600) == "is missing"
        assert lib.notices == []
    path = library / INDEX_FILES["content"]
    forged = {"sha256": "0" * 64, "size": path.stat().st_size, "count": 600}
    problem = check_index_file(path, IndexRecord.from_json(json.dumps(forged)), 600)
    assert problem is not None and "checksum" in problem
    assert IndexRecord.from_json("") is None and IndexRecord.from_json("[1]") is None
    assert IndexRecord.from_json('{"sha256": 1, "size": 2, "count": 3}') is None


def test_an_index_without_its_record_is_rebuilt_with_one_notice(library: Path) -> None:
    with Library(library) as lib:
        lib.store.set_meta("index.function.file", "")  # as a library saved by an older version
    heard: list[str] = []
    with Library(library, on_notice=heard.append) as lib:
        assert len(lib.index("function")) == 600 and len(lib.index("content")) == 600
        assert heard == lib.notices and len(heard) == 1
        assert heard[0].startswith("the library index function.ann has no integrity record: rebuilt it")
        assert lib.index_record("function") is not None
    with Library(library) as lib:  # put right once: quiet from then on
        lib.index("function")
        assert lib.notices == []


def test_a_damaged_function_index_is_rebuilt_before_it_is_read_and_answers_as_before(
        bundle: Path, pristine: Path, library: Path, tmp_path: Path) -> None:
    """The reported crash: bytes flipped in the middle of function.hnsw (function.ann now; same size)
    made hnswlib segfault in every `suggest` until `library rebuild`. Run in a child process: a crash
    is a return code there."""
    path = library / INDEX_FILES["function"]
    size = path.stat().st_size
    scramble(path, size // 2 - 2048, 4096)
    assert path.stat().st_size == size
    reference = _suggest(bundle, pristine, tmp_path)
    assert reference.returncode == 0, reference.stderr
    first = _suggest(bundle, library, tmp_path)
    assert first.returncode == 0, first.stderr  # was -11 (SIGSEGV)
    notes = [line for line in first.stderr.splitlines() if line.startswith("rhetorica: note:")]
    assert len(notes) == 1 and "function.ann is damaged" in notes[0] and "rebuilt it" in notes[0]
    assert json.loads(first.stdout) == json.loads(reference.stdout)
    again = _suggest(bundle, library, tmp_path)  # the rebuilt file was saved with a new record
    assert again.returncode == 0 and "note" not in again.stderr
    assert json.loads(again.stdout) == json.loads(reference.stdout)


def test_a_damaged_content_index_is_rebuilt_by_the_command_that_opens_it(
        pristine: Path, library: Path, model) -> None:  # type: ignore[no-untyped-def]
    path = library / INDEX_FILES["content"]
    scramble(path, path.stat().st_size // 3, 4096)
    removed = run_cli("library", "remove", "paper-0007", "--library", str(library))
    assert removed.returncode == 0, removed.stderr
    assert "rhetorica: note: the library index content.ann is damaged" in removed.stderr
    query = model.embed([QUERY])
    with Library(library) as lib, Library(pristine) as reference:  # the rebuilt file is safe to read
        assert lib.index_record("content") == IndexRecord.of_file(path, 595)
        found, _ = lib.search("content", query, 20)
        expected, _ = reference.search("content", query, 21)
        gone = {s.id for s in reference.store.sentences_of("paper-0007")}
        assert found[0].tolist() == [i for i in expected[0].tolist() if i not in gone][:20]
        assert lib.notices == []


def test_a_damaged_database_is_one_line_naming_the_doctor(library: Path, bundle: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("sentences", "sentences_by_paper"):
        zero_pages(library / DATABASE_NAME, root_page(library, name), 1)
    with Library(library) as lib:  # the header and the papers are fine: it opens, lists...
        assert len(lib.store.papers()) == 120
        with pytest.raises(DamagedLibraryError) as caught:
            lib.store.sentence_count()
    assert isinstance(caught.value, sqlite3.DatabaseError) and isinstance(caught.value, LibraryError)
    model = ["--model", str(bundle), "--threads", "1"]
    for command in (["library", "rebuild"], ["search", "--like", "paper-0001"],
                    ["suggest", QUERY, "--source", "library", "--corpus", str(library / "none"), *model],
                    ["library", "remove", "paper-0002"]):
        assert main([*command, "--library", str(library)]) == 2, command
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
        assert lines[0].startswith(f"rhetorica: error: the library database {library / DATABASE_NAME} is "
                                   "damaged (database disk image is malformed)")
        assert lines[0].endswith(f"run 'rhetorica library doctor --library {library}' to salvage it")


def test_a_file_that_is_not_a_database_is_damaged_too(tmp_path: Path) -> None:
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / DATABASE_NAME).write_bytes(b"not sqlite at all " * 300)
    with pytest.raises(DamagedLibraryError, match=r"not a readable library database.*library doctor"):
        Library(folder)


@pytest.mark.parametrize("how", ["empty", "missing", "missing, no marker"])
def test_a_vanished_database_is_never_silently_replaced(library: Path, how: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    database = library / DATABASE_NAME
    if how == "empty":
        database.write_bytes(b"")
    else:
        database.unlink()
    if how.endswith("no marker"):  # a library from before the marker: its index files tell
        (library / MARKER_NAME).unlink()
    word = "empty" if how == "empty" else "missing"
    with pytest.raises(MissingDatabaseError, match=f"is {word}, so the papers of the library"):
        Library(library)
    assert main(["library", "list", "--library", str(library)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"library database {database} is {word}" in err[0]
    assert f"rhetorica library doctor --library {library}" in err[0]
    assert not database.exists() or database.stat().st_size == 0  # nothing was created meanwhile


def test_a_new_library_gets_a_marker_and_an_old_one_gets_it_when_opened(
        library: Path, tmp_path: Path) -> None:
    with Library(tmp_path / "new") as lib:
        assert lib.store.papers() == []
    marker = json.loads((tmp_path / "new" / MARKER_NAME).read_text(encoding="utf-8"))
    assert marker["format"] == "rhetorica-library" and marker["created"]
    (library / MARKER_NAME).unlink()
    Library(library).close()
    assert (library / MARKER_NAME).is_file()
    lone = tmp_path / "lone"  # an empty database without any trace of a library: just a new library
    lone.mkdir()
    (lone / DATABASE_NAME).write_bytes(b"")
    Library(lone).close()


def test_a_file_given_as_the_library_folder_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "paper.pdf"
    afile.write_bytes(b"%PDF-1.4")
    assert main(["library", "list", "--library", str(afile)]) == 2
    assert f"{afile} is a file, not a library folder" in capsys.readouterr().err
