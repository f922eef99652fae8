"""Zotero in (issue 27.3): reading a Zotero data folder from a copy of its database (made with Zotero's real
schema, tests/zotero_fixture.py), the incremental sync into a library (new, changed, removed, trashed
items; papers the user removed; PDFs already there), and the database problems that are one line
(absent, locked by a running Zotero, damaged, not Zotero's)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("hnswlib")

from core.library.library import Library
from core.library.store import PaperMetadata
from core.library.zotero import ZoteroError, ZoteroSnapshot, read_zotero, resolve_attachment, year_of
from core.library.zotero_sync import apply_sync, plan_sync, sync_zotero
from tests.tiny_bundle import make_tiny_bundle
from tests.zotero_fixture import LINKED_FILE, Fixture, ZoteroFolder, paper_pdf


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from models import load_model

    bundle = make_tiny_bundle(tmp_path_factory.mktemp("zotero-model") / "bundle")
    return load_model(bundle, device="cpu", threads=1)


@pytest.fixture
def fixture(tmp_path: Path) -> Fixture:
    return Fixture(tmp_path)


def _problems(snapshot: ZoteroSnapshot) -> dict[str, str]:
    return {e.item.key: e.problem for e in snapshot.without_pdf}


def test_the_snapshot_has_every_item_with_its_metadata_and_every_problem_in_words(fixture: Fixture) -> None:
    snapshot = read_zotero(fixture.zotero.folder)
    assert {e.item.key for e in snapshot.with_pdf} == Fixture.READABLE
    problems = _problems(snapshot)
    assert set(problems) == Fixture.UNREADABLE
    assert problems["BOOK2222"] == "no PDF attachment"
    assert problems["MISS2222"].startswith("PDF not found: storage/PDF44444/paper.pdf")
    assert "another system" in problems["WIND2222"] and "C:\\Users\\ada" in problems["WIND2222"]
    assert "leads outside its folder" in problems["ESCP2222"]
    assert "leads outside its folder" in problems["SYML2222"]  # a link in storage pointing out of it
    assert problems["WEBB2222"] == "no PDF attachment (only 1 other attachment(s))"
    assert snapshot.items == len(Fixture.READABLE | Fixture.UNREADABLE)  # not the trashed nor the feed item
    assert (1, "TRSH2222") in snapshot.trashed
    article = next(e for e in snapshot.entries if e.item.key == "ART22222")
    assert article.item.authors == ("Lovelace, Ada", "Babbage, Charles")  # authors only, not the editor
    assert (article.item.year, article.item.doi, article.item.title) == (2019, "10.1000/xyz.123",
                                                                         "Parsing Scientific Text")
    assert article.path is not None and article.path.name == "Lovelace - 2019.pdf"
    conference = next(e for e in snapshot.entries if e.item.key == "CNF22222")
    assert conference.item.authors == ("The Team",) and conference.item.doi == "10.5555/abc.9"  # from Extra
    group = next(e for e in snapshot.entries if e.item.key == "GRUP2222")
    assert group.item.label == "2/GRUP2222 “A Group Paper”"
    alone = next(e for e in snapshot.entries if e.item.key == "ALONE222")
    assert alone.standalone and alone.attachment_key == "ALONE222"


def test_dates_and_paths_as_zotero_writes_them(tmp_path: Path) -> None:
    assert [year_of(d) for d in ("2019-03-00 March 2019", "2021", "March 1999", "n.d.", "")] == [
        2019, 2021, 1999, None, None]
    (tmp_path / "storage" / "ABCD2345").mkdir(parents=True)
    paper_pdf(tmp_path / "storage" / "ABCD2345" / "x.pdf", 1)
    assert resolve_attachment(tmp_path, "ABCD2345", 0, "")[0] is not None  # no name recorded: the one PDF
    key = "ABCD2345"
    assert "leads outside" in resolve_attachment(tmp_path, key, 0, "storage:../ABCD2345/../../x.pdf")[1]
    base = tmp_path / "papers"
    paper_pdf(base / "sub" / "y.pdf", 2)
    assert resolve_attachment(tmp_path, key, LINKED_FILE, "attachments:sub/y.pdf", base)[0] is not None
    assert "--zotero-base" in resolve_attachment(tmp_path, key, LINKED_FILE, "attachments:sub/y.pdf")[1]
    assert "leads outside" in resolve_attachment(tmp_path, key, LINKED_FILE, "attachments:../../etc/x.pdf",
                                                 base)[1]
    moved = tmp_path / "moved"  # Zotero's storage folder moved to a bigger disk and linked back: followed
    (moved / "storage" / "EFGH2345").mkdir(parents=True)
    paper_pdf(moved / "storage" / "EFGH2345" / "z.pdf", 3)
    (moved / "data").mkdir()
    (moved / "data" / "storage").symlink_to(moved / "storage")
    assert resolve_attachment(moved / "data", "EFGH2345", 0, "storage:z.pdf")[0] is not None


def test_first_sync_adds_every_readable_pdf_and_a_second_adds_nothing(fixture: Fixture, model,  # type: ignore[no-untyped-def]
                                                                      tmp_path: Path) -> None:
    with Library(tmp_path / "lib") as library:
        report = sync_zotero(library, read_zotero(fixture.zotero.folder), model, workers=0)
        assert {label.split(" ")[0] for label in report.added} == {
            "ART22222", "CNF22222", "LINK2222", "ALONE222", "2/GRUP2222"}
        assert {label.split(" ")[0] for label, _ in report.failed} == Fixture.UNREADABLE
        assert len(report.lines()) == len(Fixture.UNREADABLE) and report.sentences > 0
        papers = {p.title: p for p in library.store.papers()}
        assert "Parsing Scientific Text" in papers  # Zotero's title, not the PDF's
        assert "Generated Paper Number 5" in papers  # a PDF without a parent item keeps its own title
        metadata = library.store.metadata()
        article = metadata[papers["Parsing Scientific Text"].paper_id]
        assert article == PaperMetadata(("Lovelace, Ada", "Babbage, Charles"), 2019, "10.1000/xyz.123",
                                        "zotero:1/ART22222")
        count = library.stats().sentences

        plan = plan_sync(library.store, read_zotero(fixture.zotero.folder))
        assert plan.add == [] and plan.link == [] and plan.refresh == [] and plan.unchanged == 5
        again = apply_sync(library, plan, None)  # nothing to label: no model needed
        assert again.added == [] and again.unchanged == 5 and library.stats().sentences == count
        assert {label.split(" ")[0] for label, _ in again.failed} == Fixture.UNREADABLE  # each run says so


def test_changed_new_removed_and_trashed_items(fixture: Fixture, model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    z = fixture.zotero
    with Library(tmp_path / "lib") as library:
        sync_zotero(library, read_zotero(z.folder), model, workers=0)
        papers_before = {p.paper_id for p in library.store.papers()}
        sentences = library.stats().sentences
        # metadata edited in Zotero: only the metadata is refreshed, nothing is labelled again
        z.set_field(fixture.article, "title", "Parsing Scientific Text, Revised",
                    modified="2024-02-01 09:00:00")
        # a new item, a changed file, an item erased and one moved to the trash
        new = z.add_item("NEWW2222", "Brand New", date="2024")
        z.attach(new, "PDFCCCCC", pdf=paper_pdf(fixture.pdfs / "9.pdf", 9))
        (z.storage / "PDF33333" / "paper.pdf").write_bytes(paper_pdf(fixture.pdfs / "2b.pdf", 2, "Revised.")
                                                           .read_bytes())
        z.delete(fixture.linked_item)
        z.trash(fixture.standalone)
        plan = plan_sync(library.store, read_zotero(z.folder))
        assert [p.entry.item.key for p in plan.refresh] == ["ART22222"]
        assert sorted(p.entry.item.key for p in plan.add) == ["CNF22222", "NEWW2222"]
        report = apply_sync(library, plan, model, workers=0)
        assert [label.split(" ")[0] for label in report.updated] == ["ART22222"]
        assert sorted(label.split(" ")[0] for label in report.added) == ["CNF22222", "NEWW2222"]
        assert len(report.replaced) == 1
        assert report.replaced[0].startswith("CNF22222 “Fast and Simple”: its PDF changed")
        gone = sorted(report.gone)
        assert len(gone) == 2
        assert gone[0].startswith("ALONE222") and "moved to Zotero's trash" in gone[0]
        assert gone[1].startswith("LINK2222 “Linked From Elsewhere”: removed from Zotero")
        papers_after = {p.paper_id: p for p in library.store.papers()}
        assert papers_before <= set(papers_after)  # nothing was removed from the library
        assert len(papers_after) == len(papers_before) + 2
        titles = {p.title for p in papers_after.values()}
        assert "Parsing Scientific Text, Revised" in titles and "Parsing Scientific Text" not in titles
        assert library.stats().sentences > sentences
        # the user removes the article's paper: a later sync does not bring it back
        article = next(p for p in papers_after.values() if p.title == "Parsing Scientific Text, Revised")
        library.remove(article.paper_id)
        third = sync_zotero(library, read_zotero(z.folder), None, workers=0)
        assert third.added == [] and third.left_out == 1 and len(third.gone) == 2
        assert article.paper_id not in {p.paper_id for p in library.store.papers()}


def test_a_pdf_already_in_the_library_is_linked_not_labelled_again(fixture: Fixture, model,  # type: ignore[no-untyped-def]
                                                                   tmp_path: Path) -> None:
    with Library(tmp_path / "lib") as library:
        library.add_pdfs([fixture.pdfs / "1.pdf"], model, workers=0)  # added from a folder before
        (before,) = library.store.papers()
        sentences = library.stats().sentences
        report = sync_zotero(library, read_zotero(fixture.zotero.folder), model, workers=0)
        assert [label.split(" ")[0] for label in report.linked] == ["ART22222"]
        assert library.store.paper(before.paper_id).title == "Parsing Scientific Text"  # type: ignore[union-attr]
        assert library.store.metadata()[before.paper_id].source_key == "zotero:1/ART22222"
        assert library.stats().sentences == sentences + report.sentences


def test_a_cancel_keeps_what_was_added_and_the_next_sync_goes_on(fixture: Fixture, model,  # type: ignore[no-untyped-def]
                                                                 tmp_path: Path) -> None:
    from core.errors import Cancelled
    from core.jobs import JobContext

    seen: list[str] = []

    def stop_after_first_add(progress) -> None:  # type: ignore[no-untyped-def]
        seen.append(progress.message)
        if sum(m.startswith("adding ") for m in seen) == 2:  # the second PDF is being added
            ctx.cancel()

    ctx = JobContext(stop_after_first_add)
    with Library(tmp_path / "lib") as library:
        with pytest.raises(Cancelled):
            sync_zotero(library, read_zotero(fixture.zotero.folder), model, ctx, workers=0)
        kept = library.stats().papers
        assert 1 <= kept < 5
        report = sync_zotero(library, read_zotero(fixture.zotero.folder), model, workers=0)
        assert len(report.added) == 5 - kept and report.unchanged == kept
        assert library.stats().papers == 5


def test_a_running_zotero_holding_its_lock_does_not_stop_the_import(fixture: Fixture) -> None:
    held = sqlite3.connect(fixture.zotero.database)
    held.execute("PRAGMA locking_mode = EXCLUSIVE")
    held.execute("BEGIN EXCLUSIVE")
    held.execute("UPDATE items SET synced = 1")
    held.commit()  # in exclusive locking mode the lock outlives the transaction, as Zotero's does
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):  # the lock is real
            other = sqlite3.connect(fixture.zotero.database, timeout=0.1)
            other.execute("SELECT COUNT(*) FROM items").fetchone()
        snapshot = read_zotero(fixture.zotero.folder)
        assert {e.item.key for e in snapshot.with_pdf} == Fixture.READABLE
    finally:
        held.close()


def test_items_still_in_the_write_ahead_log_are_read(tmp_path: Path) -> None:
    zotero = ZoteroFolder(tmp_path / "Zotero")
    writer = sqlite3.connect(zotero.database)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.close()
    keep = sqlite3.connect(zotero.database)  # Zotero's open connection: the log is not checkpointed away
    assert keep.execute("SELECT COUNT(*) FROM items").fetchone() == (0,)
    zotero.add_item("WALL2222", "Only In The Log")
    try:
        assert Path(f"{zotero.database}-wal").stat().st_size > 0
        snapshot = read_zotero(zotero.folder)
        assert [e.item.key for e in snapshot.entries] == ["WALL2222"]
        assert Path(f"{zotero.database}-wal").is_file()  # the original files are untouched
    finally:
        keep.close()


def test_a_copy_taken_in_the_middle_of_a_write_reads_the_last_commit(fixture: Fixture) -> None:
    writer = sqlite3.connect(fixture.zotero.database, isolation_level=None)
    writer.execute("PRAGMA cache_size = 1")  # changed pages reach the file before the commit
    writer.execute("BEGIN")
    writer.execute("DELETE FROM itemAttachments")
    writer.execute("UPDATE itemDataValues SET value = value || ' (being edited)'")
    try:
        assert Path(f"{fixture.zotero.database}-journal").stat().st_size > 0  # a hot journal, as mid-write
        snapshot = read_zotero(fixture.zotero.folder)
        assert {e.item.key for e in snapshot.with_pdf} == Fixture.READABLE
        assert "being edited" not in next(e for e in snapshot.entries if e.item.key == "ART22222").item.title
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_absent_damaged_and_foreign_databases_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(ZoteroError, match=r"no Zotero data folder at .*nowhere: give Zotero's data folder"):
        read_zotero(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ZoteroError, match=r"no Zotero database in .*empty \(no zotero.sqlite there\)"):
        read_zotero(tmp_path / "empty")
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "zotero.sqlite").write_bytes(b"this is not SQLite at all" * 100)
    with pytest.raises(ZoteroError, match="is damaged or not a database"):
        read_zotero(tmp_path / "junk")
    (tmp_path / "other").mkdir()
    with sqlite3.connect(tmp_path / "other" / "zotero.sqlite") as other:
        other.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    with pytest.raises(ZoteroError, match="an SQLite database but not Zotero's"):
        read_zotero(tmp_path / "other" / "zotero.sqlite")  # the database file itself works too
    zotero = ZoteroFolder(tmp_path / "torn")
    for n in range(40):
        zotero.add_item(f"TR{n:06d}", f"Item {n} " + "x" * 500)
    data = bytearray(zotero.database.read_bytes())
    page = 4096
    for start in range(2 * page, len(data), page):  # every page after the schema: garbage
        data[start:start + page] = b"\xff" * page
    zotero.database.write_bytes(bytes(data))
    with pytest.raises(ZoteroError) as caught:
        read_zotero(zotero.folder)
    assert "damaged" in str(caught.value) and "\n" not in str(caught.value)


def test_a_view_that_never_ends_is_stopped_with_one_line(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The database is the user's file, but a view in it is a query: a recursive one hung the import."""
    import time

    import core.library.zotero as zotero_module

    zotero = ZoteroFolder(tmp_path / "view")
    with zotero.connect() as db:
        db.executescript("DROP TABLE items; CREATE VIEW items AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL "
                         "SELECT x + 1 FROM r) SELECT x AS itemID, 1 AS itemTypeID, 1 AS libraryID, "
                         "'AAAAAAAA' AS key, '' AS dateModified FROM r WHERE x < 0")
    monkeypatch.setattr(zotero_module, "QUERY_SECONDS", 1.0)
    started = time.monotonic()
    with pytest.raises(ZoteroError, match=r"took longer than 1 s: damaged, or not Zotero's own database\?"):
        read_zotero(zotero.folder)
    assert time.monotonic() - started < 30


def test_a_pipe_named_like_the_database_and_a_title_kept_as_bytes(tmp_path: Path) -> None:
    import os

    (tmp_path / "pipe").mkdir()
    os.mkfifo(tmp_path / "pipe" / "zotero.sqlite")
    with pytest.raises(ZoteroError, match=r"zotero.sqlite is not a regular file \(a folder, a pipe or a "):
        read_zotero(tmp_path / "pipe")
    zotero = ZoteroFolder(tmp_path / "blob")
    item = zotero.add_item("BLOB0001", "placeholder")
    with zotero.connect() as db:
        db.execute("UPDATE itemDataValues SET value = ? WHERE value = 'placeholder'", (b"A title as bytes",))
    assert [e.item.title for e in read_zotero(zotero.folder).without_pdf] == ["A title as bytes"], item


def test_copies_left_by_a_killed_run_are_removed_when_old(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import tempfile

    import core.library.zotero as zotero_module

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    old, new = tmp_path / "rhetorica-zotero-old", tmp_path / "rhetorica-zotero-new"
    for folder in (old, new):
        folder.mkdir()
        (folder / "zotero.sqlite").write_bytes(b"copy")
    os.utime(old, (1, 1))
    zotero_module._remove_stale_copies()
    assert not old.exists() and new.exists()


def test_the_command_adds_reports_each_item_once_and_adds_nothing_the_second_time(
        fixture: Fixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    bundle = make_tiny_bundle(tmp_path / "bundle")
    lib = ["--library", str(tmp_path / "lib")]
    args = ["library", "add", "--zotero", str(fixture.zotero.folder), *lib, "--model", str(bundle),
            "--threads", "1", "--workers", "0"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert "Zotero (" in out
    assert "11 item(s); added 5 paper(s) (30 sentences), 6 without a readable PDF" in out
    notes = [line for line in err.splitlines() if line.startswith("rhetorica: note: ")]
    assert len(notes) == len(Fixture.UNREADABLE)  # one line for each item without a readable PDF
    assert any("BOOK2222 “A Book Without Files”: no PDF attachment" in n for n in notes)
    assert main(args) == 0
    out, _err = capsys.readouterr()
    assert "added 0 paper(s) (0 sentences), 5 unchanged" in out
    assert main(["library", "list", "--json", *lib]) == 0
    listed = {p["title"]: p for p in json.loads(capsys.readouterr().out)}
    article = listed["Parsing Scientific Text"]
    assert (article["authors"], article["year"], article["doi"], article["source_key"]) == (
        ["Lovelace, Ada", "Babbage, Charles"], 2019, "10.1000/xyz.123", "zotero:1/ART22222")


def test_the_command_says_what_is_wrong_in_one_line(fixture: Fixture, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    lib = ["--library", str(tmp_path / "lib")]
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "zotero.sqlite").write_bytes(b"\x00" * 5000)
    for args, expected in (
            (["--zotero", str(tmp_path / "bad")], "is damaged or not a database"),
            (["--zotero", str(tmp_path / "none")], "no Zotero data folder at"),
            (["--zotero", str(fixture.zotero.folder), str(fixture.pdfs / "1.pdf")], "not both"),
            ([], "nothing to add"),
            (["--zotero-base", str(tmp_path)], "--zotero-base goes with --zotero")):
        assert main(["library", "add", *args, *lib]) == 2
        err = capsys.readouterr().err
        assert err.startswith("rhetorica: error: ") and expected in err and err.count("\n") == 1


def test_a_first_sync_hashes_each_new_pdf_once(fixture: Fixture, model, tmp_path: Path,  # type: ignore[no-untyped-def]
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan hashes every new file; adding them reuses those hashes instead of reading each file
    again to see whether the library already has it."""
    import core.fileio

    hashed: list[str] = []
    real = core.fileio.file_sha256

    def counting(path: Path) -> str:  # type: ignore[no-untyped-def]
        if Path(path).suffix == ".pdf":  # not the index files' integrity checks
            hashed.append(f"{Path(path).parent.name}/{Path(path).name}")
        return real(path)

    monkeypatch.setattr(core.fileio, "file_sha256", counting)
    with Library(tmp_path / "lib") as library:
        report = sync_zotero(library, read_zotero(fixture.zotero.folder), model, workers=0)
    assert len(report.added) == 5
    assert len(hashed) == len(set(hashed)) == 5, sorted(hashed)
