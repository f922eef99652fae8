"""Issue 23: ``rhetorica library doctor`` checks a library and salvages a damaged one: the papers whose
rows can still be read go into a new database, each with the sentences that can be read (as they
were), the damaged file is kept beside it untouched, the indexes are rebuilt, and the report says what
was recovered, kept short and lost."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("hnswlib")

from app.cli import main
from core.library.corrections import Correction, Corrections
from core.library.doctor import diagnose, repair
from core.library.library import Library
from core.library.store import DATABASE_NAME, INDEX_FILES, damaged_copies
from tests.library_damage import PAGE, build_library, root_page, scramble, snapshot, truncate, zero_pages
from tests.tiny_bundle import make_tiny_bundle

PAPERS = 150


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from models import load_model

    return load_model(make_tiny_bundle(tmp_path_factory.mktemp("doctor") / "bundle", functions=True),
                      device="cpu", threads=1)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory, model) -> Path:  # type: ignore[no-untyped-def]
    """150 papers of 5 sentences, and two label corrections."""
    folder = build_library(tmp_path_factory.mktemp("pristine") / "lib", model, papers=PAPERS)
    with Library(folder) as library:
        corrections = Corrections(library.store)
        for text in ("We propose a new method.", "Results show that it works well."):
            corrections.add(Correction(doc_id="paper-0001", text=text, field="role", corrected="method"))
    return folder


@pytest.fixture
def library(pristine: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(pristine, tmp_path / "lib"))


def _pages(folder: Path) -> int:
    return (folder / DATABASE_NAME).stat().st_size // PAGE


def _check_salvage(library: Path, pristine: Path, recovered: int, whole: bool = True) -> int:
    """The new database is sound; every paper in it has sentences, each as it was (``whole``: all of
    them); the indexes match it. Returns the sentences kept."""
    connection = sqlite3.connect(str(library / DATABASE_NAME))
    assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    connection.close()
    before, after = snapshot(pristine), snapshot(library)
    assert len(after) == recovered
    assert all(after[pid] and {s[:2] for s in after[pid]} <= {s[:2] for s in before[pid]} for pid in after)
    kept = sum(len(sentences) for sentences in after.values())
    if whole:
        assert all(after[pid] == before[pid] for pid in after) and kept == 5 * recovered
    with Library(library) as lib:
        assert lib.store.sentence_count() == kept
        assert {p.paper_id: p.sentence_count for p in lib.store.papers()} == {
            pid: len(sentences) for pid, sentences in after.items()}
        for view in ("content", "function"):
            assert len(lib.index(view)) == kept
        assert lib.notices == []  # the rebuilt indexes were saved with their records
    assert diagnose(library).healthy
    return kept


def test_a_healthy_library_needs_nothing_and_a_bad_index_is_rebuilt(
        library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["library", "doctor", "--library", str(library)]) == 0
    out = capsys.readouterr().out
    assert f"database {library / DATABASE_NAME}: ok ({PAPERS} papers, {5 * PAPERS} sentences)" in out
    assert "index function.ann: ok" in out and "nothing to repair" in out
    scramble(library / INDEX_FILES["function"], 1000, 500)
    assert main(["library", "doctor", "--check", "--library", str(library)]) == 1
    assert "index function.ann: is damaged (its checksum does not match" in capsys.readouterr().out
    report = repair(library)
    assert report.complete
    assert report.done == [f"rebuilt function.ann from the database ({5 * PAPERS:,} sentences)"]
    assert diagnose(library).healthy and not damaged_copies(library)


@pytest.mark.parametrize("damage", ["random pages", "zeroed pages", "truncated to 60 %"])
def test_a_damaged_database_is_salvaged_into_a_new_one(library: Path, pristine: Path, damage: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    database = library / DATABASE_NAME
    pages = _pages(library)
    if damage == "random pages":
        scramble(database, pages // 3 * PAGE, 6 * PAGE)
    elif damage == "zeroed pages":
        zero_pages(database, pages // 2, 4)
    else:
        truncate(database, 0.6)
    damaged = database.read_bytes()
    assert main(["library", "rebuild", "--library", str(library)]) == 2
    assert "is damaged" in capsys.readouterr().err
    assert main(["library", "doctor", "--check", "--library", str(library)]) == 1
    assert f"database {database}: DAMAGED (" in capsys.readouterr().out
    code = main(["library", "doctor", "--library", str(library)])
    out = capsys.readouterr().out.splitlines()
    report = next(line for line in out if line.startswith("recovered "))
    recovered = int(report.split()[1])
    assert 0 < recovered <= PAPERS and code == 1  # sentences were lost: the exit status says so
    (copy,) = damaged_copies(library)
    assert copy.read_bytes() == damaged  # kept as it was, never written to
    assert f"kept the old database as {copy} (delete it when you no longer need it)" in out
    kept = _check_salvage(library, pristine, recovered, whole=False)
    assert kept < 5 * PAPERS
    if damage != "truncated to 60 %":  # (the cut can take the pages that say how many papers there were)
        assert report.startswith(f"recovered {recovered} of {PAPERS} papers ({kept:,} of {5 * PAPERS:,} ")
        lost = PAPERS - recovered
        assert not lost or any(line.startswith(f"lost {lost} paper") for line in out)
    short = sum(1 for n in snapshot(library).values() if len(n) < 5)
    assert not short or any(line.startswith(f"kept {short} paper") for line in out)


def test_ids_dates_and_corrections_survive_and_ids_are_never_reused(
        library: Path, pristine: Path, model) -> None:  # type: ignore[no-untyped-def]
    zero_pages(library / DATABASE_NAME, root_page(library, "sqlite_autoindex_papers_2"), 1)  # an index only
    report = repair(library)
    assert report.salvage is not None and report.salvage.papers_recovered == PAPERS and report.complete
    assert report.salvage.corrections_recovered == 2 == report.salvage.corrections_total

    def rows(folder: Path) -> list[tuple[object, ...]]:
        connection = sqlite3.connect(str(folder / DATABASE_NAME))
        try:
            return connection.execute("SELECT p.paper_id, p.added, s.id FROM papers p JOIN sentences s "
                                      "ON s.paper = p.id ORDER BY s.id").fetchall()
        finally:
            connection.close()

    assert rows(library) == rows(pristine)
    with Library(library) as lib:
        assert len(Corrections(lib.store).all()) == 2
        highest = max(r[2] for r in rows(library))
        lib.remove("paper-0149")  # the last paper: its ids must not come back
        source = library.parent / "more.jsonl"
        source.write_text('{"id": "late", "title": "Late", "abstract": "We propose a new method."}\n',
                          encoding="utf-8")
        lib.import_jsonl(source, model)
        (late,) = lib.store.sentences_of("late")
        assert late.id > highest


def test_papers_whose_own_rows_are_unreadable_are_rebuilt_from_the_indexes(
        library: Path, pristine: Path) -> None:
    connection = sqlite3.connect(str(library / DATABASE_NAME))
    leaves = [page for (page,) in connection.execute(
        "SELECT pageno FROM dbstat WHERE name = 'papers' AND pagetype = 'leaf'")]
    connection.close()
    for page in leaves:
        zero_pages(library / DATABASE_NAME, page, 1)
    report = repair(library)
    assert report.salvage is not None and report.salvage.papers_recovered == PAPERS == report.salvage.untitled
    assert any(line.startswith(f"{PAPERS} of them from their sentences and the database's indexes alone")
               for line in report.lines())
    _check_salvage(library, pristine, PAPERS)  # every sentence as it was
    with Library(library) as lib:
        paper = lib.store.papers()[0]
        assert (paper.title, paper.kind, paper.model_id) == ("", "recovered", "")


def test_a_damaged_file_header_is_read_through_a_rebuilt_one(library: Path, pristine: Path) -> None:
    scramble(library / DATABASE_NAME, 0, 100)  # the file header: SQLite no longer sees a database
    report = repair(library)
    assert report.salvage is not None and report.complete
    assert report.done[0] == "the file header of library.sqlite3 is damaged: read it with a rebuilt one"
    _check_salvage(library, pristine, PAPERS)


def test_a_schema_beyond_reading_loses_everything_but_keeps_the_file(library: Path) -> None:
    scramble(library / DATABASE_NAME, 0, PAGE)  # the header and the schema page
    report = repair(library)
    assert report.salvage is not None and report.salvage.papers_recovered == 0 and not report.complete
    assert len(damaged_copies(library)) == 1
    with Library(library) as lib:
        assert lib.store.papers() == []


def test_an_empty_database_is_restored_from_a_kept_copy_or_started_again(
        library: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = Path(shutil.copytree(library, tmp_path / "other"))
    (library / DATABASE_NAME).write_bytes(b"")
    assert main(["library", "doctor", "--library", str(library)]) == 1
    out = capsys.readouterr().out
    assert "EMPTY, but a library was here (library.json, content.ann, function.ann)" in out
    assert "started the library again, empty" in out and "add them again" in out
    assert [p.stat().st_size for p in library.glob(f"{DATABASE_NAME}.damaged-*")] == [0]  # kept, not deleted
    assert not (library / INDEX_FILES["content"]).exists()  # the stale indexes went with the papers
    with Library(library) as lib:
        assert lib.store.papers() == []
    # a missing database where an earlier repair kept a damaged copy: restored from that copy
    zero_pages(other / DATABASE_NAME, _pages(other) // 2, 3)
    first = repair(other)
    assert first.salvage is not None
    (other / DATABASE_NAME).unlink()
    second = repair(other)
    assert second.salvage is not None and second.salvage.papers_recovered == first.salvage.papers_recovered
    assert second.done[0].startswith("restoring from library.sqlite3.damaged-")
    with Library(other) as lib:
        assert len(lib.store.papers()) == first.salvage.papers_recovered


def test_nothing_to_repair_where_there_is_no_library(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["library", "doctor", "--library", str(tmp_path / "none")]) == 2
    assert "no library in" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()


def test_reference_manager_metadata_survives_a_salvage(library: Path) -> None:
    from core.library.store import PaperMetadata

    kept = PaperMetadata(("Curie, Marie", "Perrin, Jean"), 1903, "10.1000/xyz", "zotero:1/ABCD2345")
    with Library(library) as lib:
        lib.store.set_metadata("paper-0003", kept, title="Radioactive substances")
    zero_pages(library / DATABASE_NAME, root_page(library, "sqlite_autoindex_papers_2"), 1)  # an index only
    report = repair(library)
    assert report.salvage is not None and report.salvage.papers_recovered == PAPERS
    with Library(library) as lib:
        assert lib.store.metadata() == {"paper-0003": kept}
