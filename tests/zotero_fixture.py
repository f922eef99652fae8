"""A Zotero data folder for tests: ``zotero.sqlite`` made with Zotero's own schema, and small PDFs.

The DDL below is the subset of Zotero's real schema that a library import reads, written from the public
schema files of the Zotero client (github.com/zotero/zotero, ``resource/schema/userdata.sql``, schema
version 107 and on, and ``resource/schema/system.sql``): the same tables, columns, keys and constraints,
not a look-alike. The type and field ids are Zotero's own (``system-107.sql``: itemTypes 1 note, 2 book, 4
journalArticle, 14 attachment, 33 conferencePaper; fields 110 title, 14 date, 26 DOI, 22 extra;
creatorTypes 1 author, 3 editor). Stored files live in ``storage/<KEY>/`` and are recorded as
``storage:NAME`` with linkMode 0; linked files have linkMode 2 and an absolute (or ``attachments:``)
path, as Zotero writes them.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pymupdf

SYSTEM_DDL = """
CREATE TABLE itemTypes (
    itemTypeID INTEGER PRIMARY KEY,
    typeName TEXT,
    templateItemTypeID INT,
    display INT DEFAULT 1
);
CREATE TABLE itemTypesCombined (
    itemTypeID INT NOT NULL,
    typeName TEXT NOT NULL,
    display INT DEFAULT 1 NOT NULL,
    custom INT NOT NULL,
    PRIMARY KEY (itemTypeID)
);
CREATE TABLE fieldFormats (
    fieldFormatID INTEGER PRIMARY KEY,
    regex TEXT,
    isInteger INT
);
CREATE TABLE fields (
    fieldID INTEGER PRIMARY KEY,
    fieldName TEXT,
    fieldFormatID INT,
    FOREIGN KEY (fieldFormatID) REFERENCES fieldFormats(fieldFormatID)
);
CREATE TABLE fieldsCombined (
    fieldID INT NOT NULL,
    fieldName TEXT NOT NULL,
    label TEXT,
    fieldFormatID INT,
    custom INT NOT NULL,
    PRIMARY KEY (fieldID)
);
CREATE TABLE creatorTypes (
    creatorTypeID INTEGER PRIMARY KEY,
    creatorType TEXT
);
"""

USERDATA_DDL = """
CREATE TABLE version (
    schema TEXT PRIMARY KEY,
    version INT NOT NULL
);
CREATE INDEX schema ON version(schema);
CREATE TABLE libraries (
    libraryID INTEGER PRIMARY KEY,
    type TEXT NOT NULL,
    editable INT NOT NULL,
    filesEditable INT NOT NULL,
    version INT NOT NULL DEFAULT 0,
    storageVersion INT NOT NULL DEFAULT 0,
    lastSync INT NOT NULL DEFAULT 0,
    archived INT NOT NULL DEFAULT 0
);
CREATE TABLE items (
    itemID INTEGER PRIMARY KEY,
    itemTypeID INT NOT NULL,
    dateAdded TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    dateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    libraryID INT NOT NULL,
    key TEXT NOT NULL,
    version INT NOT NULL DEFAULT 0,
    synced INT NOT NULL DEFAULT 0,
    UNIQUE (libraryID, key),
    FOREIGN KEY (libraryID) REFERENCES libraries(libraryID) ON DELETE CASCADE
);
CREATE INDEX items_synced ON items(synced);
CREATE TABLE itemDataValues (
    valueID INTEGER PRIMARY KEY,
    value UNIQUE
);
CREATE TABLE itemData (
    itemID INT,
    fieldID INT,
    valueID,
    PRIMARY KEY (itemID, fieldID),
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (fieldID) REFERENCES fieldsCombined(fieldID),
    FOREIGN KEY (valueID) REFERENCES itemDataValues(valueID)
);
CREATE INDEX itemData_fieldID ON itemData(fieldID);
CREATE TABLE itemNotes (
    itemID INTEGER PRIMARY KEY,
    parentItemID INT,
    note TEXT,
    title TEXT,
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (parentItemID) REFERENCES items(itemID) ON DELETE CASCADE
);
CREATE INDEX itemNotes_parentItemID ON itemNotes(parentItemID);
CREATE TABLE itemAttachments (
    itemID INTEGER PRIMARY KEY,
    parentItemID INT,
    linkMode INT,
    contentType TEXT,
    charsetID INT,
    path TEXT,
    syncState INT DEFAULT 0,
    storageModTime INT,
    storageHash TEXT,
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (parentItemID) REFERENCES items(itemID) ON DELETE CASCADE
);
CREATE INDEX itemAttachments_parentItemID ON itemAttachments(parentItemID);
CREATE INDEX itemAttachments_contentType ON itemAttachments(contentType);
CREATE INDEX itemAttachments_syncState ON itemAttachments(syncState);
CREATE TABLE creators (
    creatorID INTEGER PRIMARY KEY,
    firstName TEXT,
    lastName TEXT,
    fieldMode INT,
    UNIQUE (lastName, firstName, fieldMode)
);
CREATE TABLE itemCreators (
    itemID INT NOT NULL,
    creatorID INT NOT NULL,
    creatorTypeID INT NOT NULL DEFAULT 1,
    orderIndex INT NOT NULL DEFAULT 0,
    PRIMARY KEY (itemID, creatorID, creatorTypeID, orderIndex),
    UNIQUE (itemID, orderIndex),
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (creatorID) REFERENCES creators(creatorID) ON DELETE CASCADE,
    FOREIGN KEY (creatorTypeID) REFERENCES creatorTypes(creatorTypeID)
);
CREATE INDEX itemCreators_creatorTypeID ON itemCreators(creatorTypeID);
CREATE TABLE collections (
    collectionID INTEGER PRIMARY KEY,
    collectionName TEXT NOT NULL,
    parentCollectionID INT DEFAULT NULL,
    clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    libraryID INT NOT NULL,
    key TEXT NOT NULL,
    version INT NOT NULL DEFAULT 0,
    synced INT NOT NULL DEFAULT 0,
    UNIQUE (libraryID, key),
    FOREIGN KEY (libraryID) REFERENCES libraries(libraryID) ON DELETE CASCADE,
    FOREIGN KEY (parentCollectionID) REFERENCES collections(collectionID) ON DELETE CASCADE
);
CREATE TABLE collectionItems (
    collectionID INT NOT NULL,
    itemID INT NOT NULL,
    orderIndex INT NOT NULL DEFAULT 0,
    PRIMARY KEY (collectionID, itemID),
    FOREIGN KEY (collectionID) REFERENCES collections(collectionID) ON DELETE CASCADE,
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE
);
CREATE INDEX collectionItems_itemID ON collectionItems(itemID);
CREATE TABLE deletedItems (
    itemID INTEGER PRIMARY KEY,
    dateDeleted DEFAULT CURRENT_TIMESTAMP NOT NULL,
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE
);
CREATE INDEX deletedItems_dateDeleted ON deletedItems(dateDeleted);
"""

ITEM_TYPES = {"note": 1, "book": 2, "journalArticle": 4, "attachment": 14, "conferencePaper": 33}
FIELDS = {"url": 1, "publicationTitle": 12, "date": 14, "extra": 22, "DOI": 26, "abstractNote": 90,
          "title": 110}
CREATOR_TYPES = {"author": 1, "contributor": 2, "editor": 3}
IMPORTED_FILE, LINKED_FILE, LINKED_URL = 0, 2, 3  # itemAttachments.linkMode


def paper_pdf(path: Path, number: int, words: str = "") -> Path:
    """A one-page paper the parser reads (title, abstract, introduction), different for each number."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((72, 80), f"Generated Paper Number {number}", fontsize=18, fontname="hebo")
    page.insert_text((72, 120), "Abstract", fontsize=12, fontname="hebo")
    abstract = (f"We propose a new method number {number} for parsing scientific text. Results show that it "
                f"works well. Previous work has studied this problem. {words}")
    page.insert_textbox(pymupdf.Rect(72, 128, 540, 220), abstract, fontsize=10, fontname="helv")
    page.insert_text((72, 250), "1 Introduction", fontsize=12, fontname="hebo")
    body = ("Our goal is to improve accuracy. Experiments on two datasets demonstrate large gains. In "
            "conclusion the approach is simple and fast.")
    page.insert_textbox(pymupdf.Rect(72, 258, 540, 340), body, fontsize=10, fontname="helv")
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path)
    doc.close()
    return path


class ZoteroFolder:
    """A Zotero data folder under construction: ``zotero.sqlite`` and ``storage/``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.storage = folder / "storage"
        self.storage.mkdir(parents=True, exist_ok=True)
        self.database = folder / "zotero.sqlite"
        db = sqlite3.connect(self.database)
        db.executescript(SYSTEM_DDL + USERDATA_DDL)
        types = [(v, k) for k, v in ITEM_TYPES.items()]
        fields = [(v, k) for k, v in FIELDS.items()]
        db.executemany("INSERT INTO itemTypes VALUES (?, ?, NULL, 1)", types)
        db.executemany("INSERT INTO itemTypesCombined VALUES (?, ?, 1, 0)", types)
        db.executemany("INSERT INTO fields VALUES (?, ?, NULL)", fields)
        db.executemany("INSERT INTO fieldsCombined VALUES (?, ?, NULL, NULL, 0)", fields)
        db.executemany("INSERT INTO creatorTypes VALUES (?, ?)", [(v, k) for k, v in CREATOR_TYPES.items()])
        db.executemany("INSERT INTO libraries (libraryID, type, editable, filesEditable) VALUES (?, ?, 1, 1)",
                       [(1, "user"), (2, "group"), (3, "feed")])
        db.execute("INSERT INTO version VALUES ('userdata', 120)")
        db.commit()
        db.close()

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection that commits and closes when the block ends."""
        db = sqlite3.connect(self.database)
        try:
            with db:
                yield db
        finally:
            db.close()

    def _value(self, db: sqlite3.Connection, value: str) -> int:
        row = db.execute("SELECT valueID FROM itemDataValues WHERE value = ?", (value,)).fetchone()
        if row:
            return int(row[0])
        return int(db.execute("INSERT INTO itemDataValues (value) VALUES (?)", (value,)).lastrowid or 0)

    def set_field(self, item_id: int, name: str, value: str, modified: str | None = None) -> None:
        with self.connect() as db:
            db.execute("INSERT OR REPLACE INTO itemData VALUES (?, ?, ?)",
                       (item_id, FIELDS[name], self._value(db, value)))
            if modified:
                db.execute("UPDATE items SET dateModified = ?, clientDateModified = ? WHERE itemID = ?",
                           (modified, modified, item_id))

    def add_item(self, key: str, title: str, *, authors: tuple[tuple[str, str], ...] = (("Ada", "Lovelace"),),
                 date: str = "2019-03-00 2019-03", doi: str = "", extra: str = "",
                 item_type: str = "journalArticle", modified: str = "2024-01-01 10:00:00",
                 library_id: int = 1, editors: tuple[tuple[str, str], ...] = ()) -> int:
        with self.connect() as db:
            item_id = int(db.execute(
                "INSERT INTO items (itemTypeID, dateAdded, dateModified, clientDateModified, libraryID, key) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (ITEM_TYPES[item_type], modified, modified, modified, library_id, key)).lastrowid or 0)
            for name, value in (("title", title), ("date", date), ("DOI", doi), ("extra", extra)):
                if value:
                    db.execute("INSERT INTO itemData VALUES (?, ?, ?)",
                               (item_id, FIELDS[name], self._value(db, value)))
            people = [(first, last, "author") for first, last in authors] + [
                (first, last, "editor") for first, last in editors]
            for order, (first, last, kind) in enumerate(people):
                mode = 1 if not first else 0
                row = db.execute("SELECT creatorID FROM creators WHERE firstName IS ? AND lastName = ? AND "
                                 "fieldMode = ?", (first or None, last, mode)).fetchone()
                creator = row[0] if row else db.execute(
                    "INSERT INTO creators (firstName, lastName, fieldMode) VALUES (?, ?, ?)",
                    (first or None, last, mode)).lastrowid
                db.execute("INSERT INTO itemCreators VALUES (?, ?, ?, ?)",
                           (item_id, creator, CREATOR_TYPES[kind], order))
        return item_id

    def attach(self, parent: int | None, key: str, *, pdf: Path | None = None, name: str = "paper.pdf",
               link_mode: int = IMPORTED_FILE, path: str | None = None,
               content_type: str = "application/pdf", title: str = "Full Text PDF",
               modified: str = "2024-01-01 10:00:00", library_id: int = 1) -> int:
        """An attachment item: a stored file (``pdf`` copied to ``storage/KEY/name``) or whatever
        ``path``/``link_mode`` say."""
        if pdf is not None and link_mode == IMPORTED_FILE:
            target = self.storage / key / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(pdf.read_bytes())
        stored = path if path is not None else None if link_mode == LINKED_URL else f"storage:{name}"
        with self.connect() as db:
            item_id = int(db.execute(
                "INSERT INTO items (itemTypeID, dateAdded, dateModified, clientDateModified, libraryID, key) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (ITEM_TYPES["attachment"], modified, modified, modified, library_id, key)).lastrowid or 0)
            db.execute("INSERT INTO itemData VALUES (?, ?, ?)",
                       (item_id, FIELDS["title"], self._value(db, title)))
            db.execute("INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) "
                       "VALUES (?, ?, ?, ?, ?)", (item_id, parent, link_mode, content_type, stored))
        return item_id

    def add_note(self, parent: int | None, key: str, text: str) -> int:
        with self.connect() as db:
            item_id = int(db.execute("INSERT INTO items (itemTypeID, libraryID, key) VALUES (?, 1, ?)",
                                     (ITEM_TYPES["note"], key)).lastrowid or 0)
            db.execute("INSERT INTO itemNotes VALUES (?, ?, ?, '')", (item_id, parent, text))
        return item_id

    def add_collection(self, name: str, key: str, items: list[int]) -> None:
        with self.connect() as db:
            collection = db.execute(
                "INSERT INTO collections (collectionName, libraryID, key) VALUES (?, 1, ?)",
                (name, key)).lastrowid
            db.executemany("INSERT INTO collectionItems VALUES (?, ?, ?)",
                           [(collection, item, n) for n, item in enumerate(items)])

    def trash(self, item_id: int) -> None:
        with self.connect() as db:
            db.execute("INSERT INTO deletedItems (itemID) VALUES (?)", (item_id,))

    def delete(self, item_id: int) -> None:
        """Erase an item as emptying the trash does (its attachments and their files too)."""
        with self.connect() as db:
            db.execute("PRAGMA foreign_keys = ON")
            children = [r[0] for r in db.execute("SELECT itemID FROM itemAttachments WHERE parentItemID = ?",
                                                 (item_id,))]
            for child in children:
                key = db.execute("SELECT key FROM items WHERE itemID = ?", (child,)).fetchone()[0]
                for file in (self.storage / key).glob("*"):
                    file.unlink()
                db.execute("DELETE FROM items WHERE itemID = ?", (child,))
            db.execute("DELETE FROM items WHERE itemID = ?", (item_id,))


class Fixture:
    """A Zotero data folder with every kind of item the import meets: readable PDFs (stored, linked,
    standalone, in a group library) and the ones that are not (no PDF, not downloaded, on another
    system, a path or a link leaving storage, a web link), a note, a collection, a trashed and a feed item."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pdfs = root / "pdfs"
        self.zotero = ZoteroFolder(root / "Zotero")
        z = self.zotero
        self.article = z.add_item("ART22222", "Parsing Scientific Text", authors=(("Ada", "Lovelace"),
                                  ("Charles", "Babbage")), editors=(("Mary", "Somerville"),),
                                  doi="https://doi.org/10.1000/xyz.123", date="2019-03-00 March 2019")
        z.attach(self.article, "PDF22222", pdf=paper_pdf(self.pdfs / "1.pdf", 1), name="Lovelace - 2019.pdf")
        z.add_note(self.article, "NOTE2222", "<p>my notes</p>")
        self.conference = z.add_item("CNF22222", "Fast and Simple", authors=(("", "The Team"),),
                                     item_type="conferencePaper", date="2021", extra="DOI: 10.5555/abc.9")
        z.attach(self.conference, "PDF33333", pdf=paper_pdf(self.pdfs / "2.pdf", 2))
        z.add_item("BOOK2222", "A Book Without Files", item_type="book")
        missing = z.add_item("MISS2222", "Not Downloaded")
        z.attach(missing, "PDF44444")  # recorded, but no file in storage/PDF44444/
        self.linked_item = z.add_item("LINK2222", "Linked From Elsewhere")
        self.linked_pdf = paper_pdf(root / "elsewhere" / "linked.pdf", 3)
        z.attach(self.linked_item, "PDF55555", link_mode=LINKED_FILE, path=str(self.linked_pdf))
        windows = z.add_item("WIND2222", "On Another Machine")
        z.attach(windows, "PDF66666", link_mode=LINKED_FILE, path="C:\\Users\\ada\\papers\\x.pdf")
        escaping = z.add_item("ESCP2222", "Escaping Path")
        paper_pdf(z.folder / "secret.pdf", 4)
        z.attach(escaping, "PDF77777", path="storage:../../secret.pdf")
        linking = z.add_item("SYML2222", "Linking Out")
        (z.storage / "PDF88888").mkdir()
        os.symlink(z.folder / "secret.pdf", z.storage / "PDF88888" / "paper.pdf")
        z.attach(linking, "PDF88888", path="storage:paper.pdf")
        web = z.add_item("WEBB2222", "Only A Web Link")
        z.attach(web, "HTML2222", link_mode=LINKED_URL, path=None, content_type="text/html")
        self.standalone = z.attach(None, "ALONE222", pdf=paper_pdf(self.pdfs / "5.pdf", 5), name="alone.pdf",
                                   title="alone.pdf")
        self.trashed = z.add_item("TRSH2222", "In The Trash")
        z.attach(self.trashed, "PDF99999", pdf=paper_pdf(self.pdfs / "6.pdf", 6))
        z.trash(self.trashed)
        group = z.add_item("GRUP2222", "A Group Paper", library_id=2)
        z.attach(group, "PDFAAAAA", pdf=paper_pdf(self.pdfs / "7.pdf", 7), library_id=2)
        feed = z.add_item("FEED2222", "A Feed Item", library_id=3)
        z.attach(feed, "PDFBBBBB", pdf=paper_pdf(self.pdfs / "8.pdf", 8), library_id=3)
        z.add_collection("Thesis", "COLL2222", [self.article, self.conference])

    READABLE = frozenset({"ART22222", "CNF22222", "LINK2222", "ALONE222", "GRUP2222"})
    UNREADABLE = frozenset({"BOOK2222", "MISS2222", "WIND2222", "ESCP2222", "SYML2222", "WEBB2222"})
