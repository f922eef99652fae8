"""The library against damage that SQLite does not see and against a damaged file whose rows still
read one by one (the hostile test report of the library, sections 1, 2 and 11):

* rows with wrong values (a two-byte content vector, a function vector of another size, NULL vectors,
  unknown role or section-kind labels, a confidence "abc", sentences whose paper row is gone) and a
  damaged schema (a dropped table or column) are one line pointing to the doctor, never a traceback,
  and the doctor finds each and repairs it, so that every command works afterwards;
* the doctor keeps the sentences of a damaged file that can still be read, paper by paper, instead of
  losing each paper with one unreadable sentence, and says which papers it kept short;
* an index that cannot be saved after a paper was committed (a full disk) is a notice, not an error
  that says the add failed;
* ``library list|stats|rebuild|remove`` on a folder without a library say so instead of creating one;
* the doctor's count after rebuilding an out-of-step index is the one it reported.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path
from typing import ClassVar

import pytest

pytest.importorskip("hnswlib")

from app.cli import main
from core.fileio import DiskFullError
from core.library import row_check
from core.library.doctor import diagnose, repair
from core.library.library import Library
from core.library.row_check import check_library
from core.library.store import DATABASE_NAME, DamagedLibraryError, LibraryError
from tests.library_damage import build_library, rows, snapshot, write_rows
from tests.tiny_bundle import make_tiny_bundle

PAPERS = 30


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bundle(tmp_path_factory.mktemp("rows") / "bundle", functions=True)


@pytest.fixture(scope="module")
def model(bundle: Path) -> object:
    from models import load_model

    return load_model(bundle, device="cpu", threads=1)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory, model: object) -> Path:
    """30 papers of 5 sentences (150 sentences)."""
    return build_library(tmp_path_factory.mktemp("pristine") / "lib", model, papers=PAPERS)


@pytest.fixture
def library(pristine: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(pristine, tmp_path / "lib"))


def _sql(folder: Path, statement: str) -> None:
    connection = sqlite3.connect(str(folder / DATABASE_NAME))
    try:
        connection.execute(statement)
        connection.commit()
    finally:
        connection.close()


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# (name, SQL) of each damage the hostile tester applied to the rows or the schema.
DAMAGES = {
    "two-byte content": "UPDATE sentences SET content = x'0000' WHERE id = 5",
    "short function vector": "UPDATE sentences SET function_vector = x'00000000' WHERE id = 5",
    "null vectors": "UPDATE sentences SET content = NULL, function_vector = NULL WHERE id < 20",
    "unknown labels": "UPDATE sentences SET role = 'evil', function = 'nope', section_kind = 'zzz' "
                      "WHERE id < 20",
    "text confidence": "UPDATE sentences SET role_confidence = 'abc' WHERE id < 20",
    "blob text": "UPDATE sentences SET text = x'00ff' WHERE id = 7",
    "text sentence count": "UPDATE papers SET sentence_count = 'x' WHERE id = 1",
    "dropped sentences": "DROP TABLE sentences",
    "dropped title": "ALTER TABLE papers DROP COLUMN title",
    "orphan sentences": "DELETE FROM papers WHERE id = 2",
}


def _commands(bundle: Path, library: Path) -> list[list[str]]:
    lib = ["--library", str(library)]
    model = ["--model", str(bundle), "--threads", "1"]
    return [["search", "--like", "paper-0003", *lib], ["align", "paper-0003", "paper-0004", *lib],
            ["suggest", "We propose a new method.", "--source", "library", "--corpus",
             str(library / "no-corpus"), *lib, *model], ["library", "stats", *lib]]


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_damaged_rows_are_one_line_and_the_doctor_repairs_them(
        library: Path, bundle: Path, damage: str, capsys: pytest.CaptureFixture[str]) -> None:
    _sql(library, DAMAGES[damage])
    for command in _commands(bundle, library):
        assert main(command) == 2, command
        line = _one_line(capsys)
        assert "is damaged (" in line and f"rhetorica library doctor --library {library}" in line, line
    assert main(["library", "doctor", "--check", "--library", str(library)]) == 1
    assert f"database {library / DATABASE_NAME}: DAMAGED (" in capsys.readouterr().out
    repair(library)
    assert diagnose(library).healthy
    with Library(library) as lib:
        papers = {p.paper_id for p in lib.store.papers()}
    for command in _commands(bundle, library):
        if command[0] == "library" or {"paper-0003", "paper-0004"} <= papers:
            assert main(command) == 0, (command, capsys.readouterr().err)
    assert papers or damage == "dropped sentences"  # (its sentences are gone: so are its papers)
    capsys.readouterr()


def test_a_library_whose_rows_are_damaged_still_lists_its_papers(library: Path) -> None:
    _sql(library, DAMAGES["two-byte content"])
    with Library(library) as lib:
        assert len(lib.store.papers()) == PAPERS  # the papers are sound
        with pytest.raises(DamagedLibraryError, match="1 sentence with no content vector, or one of the"):
            lib.store.sentence_count()


def test_a_vector_of_another_size_is_refused_when_read(library: Path) -> None:
    with Library(library) as lib:
        lib.store.connection.execute("UPDATE sentences SET content = x'00000000' WHERE id = 3")
        with pytest.raises(DamagedLibraryError, match="content vector of sentence 3 is 4 bytes"):
            lib.vectors_of([1, 2, 3], "content")


def test_the_repair_puts_labels_right_and_keeps_every_sentence(library: Path, pristine: Path) -> None:
    _sql(library, DAMAGES["unknown labels"])
    report = repair(library)
    assert report.salvage is not None and report.complete
    assert report.salvage.sentences_recovered == 5 * PAPERS
    assert ("put right damaged values: unknown roles or role confidences (now 'other' or not confident): "
            "19; unknown section kinds (now their heading's): 19") in report.lines()
    connection = sqlite3.connect(str(library / DATABASE_NAME))
    role, confidence, kind, function = connection.execute(
        "SELECT role, role_confidence, section_kind, function FROM sentences WHERE id = 1").fetchone()
    connection.close()
    assert (role, confidence, function) == ("other", 0.0, "nope") and kind in ("", "abstract", "other")
    assert {pid: [s[:2] for s in rows] for pid, rows in snapshot(library).items()} == {
        pid: [s[:2] for s in rows] for pid, rows in snapshot(pristine).items()}


def test_a_paper_with_a_damaged_count_keeps_its_title_and_sentences(library: Path) -> None:
    _sql(library, "UPDATE papers SET sentence_count = 'x', title = x'00ff' WHERE id = 1")
    report = repair(library)
    assert report.salvage is not None and report.salvage.papers_recovered == PAPERS
    with Library(library) as lib:
        first = lib.store.paper("paper-0000")
        assert first is not None and (first.title, first.sentence_count) == ("", 5)
        second = lib.store.paper("paper-0001")
        assert second is not None and second.title == "Paper 1"
    assert any(line.startswith("put right damaged values: paper titles") for line in report.lines())


def test_the_widths_are_those_of_most_vectors_even_when_the_first_and_last_rows_differ(
        library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(row_check, "SAMPLE", 4)  # the rows whose sizes suggest the widths: all damaged
    _sql(library, "UPDATE sentences SET content = zeroblob(8) WHERE id <= 4 OR id > 5 * 30 - 4")
    connection = sqlite3.connect(str(library / DATABASE_NAME))
    try:
        check = check_library(connection)
    finally:
        connection.close()
    assert check.widths.content is not None and check.widths.content > 2
    assert [fault.line() for fault in check.faults] == ["8 sentences with no content vector, or one of the "
                                                        "wrong size"]


def _flip_bytes(path: Path, count: int, seed: int) -> None:
    """Overwrite ``count`` random bytes after the first page (what the hostile tester did)."""
    data = bytearray(path.read_bytes())
    rng = random.Random(seed)
    for _ in range(count):
        data[rng.randrange(4096, len(data))] = rng.randrange(256)
    path.write_bytes(bytes(data))


def _readable_papers(folder: Path) -> set[str]:
    """The paper ids whose rows SQLite can still read one by one."""
    connection = sqlite3.connect(str(folder / DATABASE_NAME))
    found = set()
    try:
        for rowid in range(1, PAPERS + 1):
            try:
                row = connection.execute("SELECT paper_id FROM papers WHERE id = ?", (rowid,)).fetchone()
            except sqlite3.DatabaseError:
                continue
            if row is not None and isinstance(row[0], str):
                found.add(row[0])
    finally:
        connection.close()
    return found


def test_the_doctor_keeps_the_readable_sentences_of_each_paper(
        library: Path, pristine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    database = library / DATABASE_NAME
    _flip_bytes(database, 60, seed=3)
    readable = _readable_papers(library)
    assert main(["library", "doctor", "--library", str(library)]) == 1  # sentences were lost: it says so
    out = capsys.readouterr().out.splitlines()
    after, before = snapshot(library), snapshot(pristine)
    assert readable <= set(after)  # no paper whose row (its id at least) reads is dropped
    lost = PAPERS - len(after)  # (a flipped byte can change an id: count, not names)
    assert not lost or any(line.startswith(f"lost {lost} paper") for line in out), out
    kept = sum(len(sentences) for sentences in after.values())
    assert 0.8 * 5 * PAPERS <= kept < 5 * PAPERS
    # as they were (a flipped byte in a readable row can change a value: most, not all)
    same = sum(len({s[:2] for s in after[pid]} & {s[:2] for s in before.get(pid, [])}) for pid in after)
    assert same >= 0.9 * kept
    short = sorted(pid for pid, sentences in after.items() if len(sentences) < 5)
    assert short and any(line.startswith(f"kept {len(short)} paper") and all(pid in line for pid in short)
                         for line in out), out
    recovered = f"recovered {len(after)} of {PAPERS} papers ({kept} of {5 * PAPERS} sentences)"
    assert any(line.startswith(recovered) for line in out), out
    with Library(library) as lib:
        assert {p.paper_id: p.sentence_count for p in lib.store.papers()} == {
            pid: len(sentences) for pid, sentences in after.items()}
    assert diagnose(library).healthy


def test_a_full_disk_while_saving_the_index_says_the_paper_was_added(
        library: Path, bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    source = write_rows(tmp_path / "one.jsonl", [{**rows(1, seed=99)[0], "id": "late"}])
    saving = Library._save

    def full(self: Library, view: str, index: object) -> None:
        if view == "content":
            raise DiskFullError(f"disk full while saving the library index content.ann ({self.folder}): free "
                                "some space and try again; what was saved before is intact")
        saving(self, view, index)  # type: ignore[arg-type]

    monkeypatch.setattr(Library, "_save", full)
    code = main(["library", "import-jsonl", str(source), "--library", str(library), "--model", str(bundle),
                 "--threads", "1"])
    captured = capsys.readouterr()
    assert code == 0 and "added 1 paper(s), 5 sentences" in captured.out
    assert "error" not in captured.err
    assert ("added late to the library, but its content index could not be saved (disk full"
            in captured.err)
    assert "rebuilt from the database the next time the library is used" in captured.err
    monkeypatch.undo()
    with Library(library) as lib:
        assert len(lib.store.papers()) == PAPERS + 1
        assert len(lib.index("content")) == 5 * (PAPERS + 1)  # rebuilt from the database


@pytest.mark.parametrize("command", [["list"], ["stats"], ["rebuild"], ["remove", "paper-0001"]])
def test_a_mistyped_library_path_is_not_made_a_library(
        tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    typo = tmp_path / "libary"
    assert main(["library", *command, "--library", str(typo)]) == 2
    assert _one_line(capsys) == (f"rhetorica: error: no library at {typo}: add papers with 'rhetorica "
                                 "library add PDF…' or 'rhetorica library import-jsonl FILE', or give "
                                 "--library DIR")
    assert not typo.exists()
    folder = tmp_path / "folder"
    folder.mkdir()
    assert main(["library", *command, "--library", str(folder)]) == 2
    assert "no library at" in _one_line(capsys) and list(folder.iterdir()) == []


def test_the_users_own_library_may_be_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """No --library: the library in the user data folder, made on first use; a new user is told it is
    empty, not that it does not exist."""
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    assert main(["library", "list"]) == 0
    assert "empty" in capsys.readouterr().out


def test_a_library_whose_database_went_missing_still_says_so(library: Path) -> None:
    (library / DATABASE_NAME).unlink()
    with pytest.raises(LibraryError, match="is missing, so the papers of the library"):
        from core.library.store import require_library

        require_library(library)
        Library(library)


def test_the_rebuilt_count_is_that_of_the_index_rebuilt(library: Path) -> None:
    _sql(library, "UPDATE sentences SET function_vector = NULL WHERE paper = 1")
    report = repair(library)
    index = next(i for i in report.diagnosis.indexes if i.view == "function")
    assert index.problem == f"is out of step with the database ({5 * PAPERS} vectors, the database has " \
                            f"{5 * PAPERS - 5})"
    assert report.done == [f"rebuilt function.ann from the database ({5 * PAPERS - 5} sentences)"]


def test_an_unchanged_library_is_not_scanned_again_and_a_changed_one_is(
        library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The app opens the library for each correction and search: the check of its rows (half a second per
    250,000 sentences) runs again only when the database's files changed."""
    from core.library import store as store_module

    scans: list[int] = []

    def counted(connection: sqlite3.Connection) -> row_check.LibraryCheck:
        scans.append(1)
        return check_library(connection)

    monkeypatch.setattr(store_module, "check_library", counted)
    for _ in range(3):
        with Library(library):
            pass
    assert len(scans) == 1
    with sqlite3.connect(library / DATABASE_NAME) as db:
        db.execute("UPDATE sentences SET role = 'evil' WHERE id = 1")
    with pytest.raises(DamagedLibraryError, match="unknown role"), Library(library) as opened:
        opened.store.connection.execute("SELECT role FROM sentences").fetchall()
    assert len(scans) == 2


class _CutTree:
    """A database whose range scans stop early without an error (a damaged b-tree page), while each row
    is still found by its rowid, and whose ``sha256`` of row 3 cannot be decoded."""

    ROWS: ClassVar[dict[int, tuple[int, str, str]]] = {
        rowid: (rowid, f"paper-{rowid}", f"{rowid:064x}") for rowid in range(1, 8)}

    def execute(self, sql: str, args: tuple[int, ...]) -> object:
        rows: list[tuple[object, ...]]
        if "BETWEEN" in sql:
            rows = [self.ROWS[1]] if args[0] <= 1 <= args[1] else []  # the scan ends after the first row
        elif "sha256 " in sql and args == (3,):  # the row whole, or its digest alone
            raise sqlite3.OperationalError("Could not decode to UTF-8 column 'sha256'")
        else:  # one row, whole or one column
            row, selected = self.ROWS.get(args[0]), sql.split(" FROM ")[0].removeprefix("SELECT ").split(", ")
            names = ("id", "paper_id", "sha256")
            rows = [] if row is None else [tuple(row[names.index(name)] for name in selected)]
        return type("Cursor", (), {"fetchall": lambda _self: rows})()


def test_a_scan_cut_short_by_a_damaged_page_finds_each_row_by_its_rowid() -> None:
    """A range scan that a damaged page ends early without an error is completed row by row, and a row
    whose digest cannot be decoded keeps its ids with a stand-in digest that no real source has."""
    from core.library.doctor import PartialRead, PerRow, scan_rows

    partial = PartialRead((None, None, PerRow("unreadable-")))
    rows = list(scan_rows(_CutTree(), "papers", ("id", "paper_id", "sha256"), 7,  # type: ignore[arg-type]
                          partial=partial))
    assert [row[0] for row in rows] == list(range(1, 8))
    assert rows[2] == (3, "paper-3", "unreadable-3") and partial.rowids == {3}
    assert rows[4] == _CutTree.ROWS[5]
