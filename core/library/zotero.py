"""Reading a Zotero library: its items, their metadata and their PDF attachments (issue 27.3).

Zotero keeps its library in ``zotero.sqlite`` inside its data folder (``~/Zotero`` by default) and
the files it stores in ``storage/<attachment key>/``. While Zotero runs it holds a lock on the
database, so :func:`read_zotero` never opens the file itself: it copies ``zotero.sqlite`` (and its
``-wal``/``-journal`` when present; again if the files change while they are copied) into a
temporary folder and opens the copy read-only (SQLite URI ``mode=ro``; a copy taken in the middle of
a write is first rolled back to Zotero's last commit, on the copy). Nothing in the database is run
or trusted: keys must look like Zotero's (eight capitals or digits), and a stored file must stay
inside its ``storage/<KEY>/`` folder (a path that leaves it, by ``..`` or a link, is refused with a
reason).

What comes back is a :class:`ZoteroSnapshot`: one :class:`ZoteroEntry` per PDF attachment of each
top-level item (a regular item, or a PDF with no parent), with the item's key, title, authors, year
and DOI, the file on this machine or the one-line reason there is none (missing, a linked file on
another machine, a link to a web page, a path leaving the storage folder), plus one entry (no
attachment) for each item without a PDF. Items in Zotero's trash and feed items are left out (the
trashed keys are listed, so a sync can say why a paper's item is gone).

A missing, damaged or non-Zotero database is one :class:`ZoteroError` line. No Qt, no model:
:mod:`core.library.zotero_sync` brings a snapshot into a library.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sqlite3
import tempfile
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath
from typing import Any

from core.errors import Cancelled, RhetoricaError
from core.jobs import JobContext, ensure_context

DATABASE_NAME = "zotero.sqlite"
STORAGE = "storage"
KEY_PATTERN = re.compile(r"[A-Z0-9]{8}")  # Zotero's object keys (a path part of storage/)
REQUIRED_TABLES = ("items", "itemData", "itemDataValues", "itemAttachments", "creators", "itemCreators")
NOT_TOP_LEVEL = ("note", "attachment", "annotation")  # item types that are never a paper themselves
TITLE_FIELDS = ("title", "caseName", "nameOfAct", "subject")  # the title and the fields mapped onto it
# linkMode values (Zotero.Attachments.LINK_MODE_*)
IMPORTED_FILE, IMPORTED_URL, LINKED_FILE, LINKED_URL = 0, 1, 2, 3
COPY_TRIES = 3
QUERY_SECONDS = 120.0  # reading a real Zotero database of 50,000 items takes seconds; past this it is not one
STALE_COPY_SECONDS = 3600.0  # a copy left by a killed run is removed by the next run after this
WHERE_DATA = ("give Zotero's data folder (Zotero › Settings › Advanced › Files and Folders › Data Directory "
              "Location)")
REPAIR = ("Zotero itself can check and repair it (Settings › Advanced › Files and Folders › Database "
          "Maintenance)")
DOI_PATTERN = re.compile(r"10\.\d{4,9}/\S+")


class ZoteroError(RhetoricaError):
    """A Zotero data folder that cannot be read (one line a user can act on)."""


def default_zotero_dir() -> Path:
    """Where Zotero keeps its data unless told otherwise: ``~/Zotero`` (Zotero 5 on, every system)."""
    return Path.home() / "Zotero"


@dataclass(frozen=True)
class ZoteroItem:
    """A top-level Zotero item: what the library keeps of it."""

    library_id: int
    key: str
    item_type: str
    title: str
    authors: tuple[str, ...]  # "Last, First" (or the one name), authors first, in Zotero's order
    year: int | None
    doi: str
    date_modified: str

    @property
    def label(self) -> str:
        """How a report names the item: its key (with the group library it is in), and its title."""
        where = self.key if self.library_id == 1 else f"{self.library_id}/{self.key}"
        title = " ".join(self.title.split())
        if len(title) > 80:
            title = title[:79] + "…"
        return f"{where} “{title}”" if title else where

    @property
    def source_key(self) -> str:
        return f"zotero:{self.library_id}/{self.key}"


@dataclass(frozen=True)
class ZoteroEntry:
    """One PDF attachment of an item (``attachment_key`` empty: the item has no PDF attachment).
    ``path`` is the readable file on this machine, or None and ``problem`` says why not."""

    item: ZoteroItem
    attachment_key: str
    standalone: bool  # the PDF is a top-level item itself (its "item" is the attachment)
    modified: str  # the item's and the attachment's dateModified: changes when either changes
    path: Path | None
    problem: str

    @property
    def key(self) -> tuple[int, str, str]:
        return (self.item.library_id, self.item.key, self.attachment_key)


@dataclass
class ZoteroSnapshot:
    """What a Zotero data folder holds, read from a copy of its database."""

    data_dir: Path
    items: int = 0  # top-level items read (outside the trash and feeds)
    entries: list[ZoteroEntry] = field(default_factory=list)
    trashed: set[tuple[int, str]] = field(default_factory=set)  # (library id, key) in Zotero's trash

    @property
    def with_pdf(self) -> list[ZoteroEntry]:
        return [e for e in self.entries if e.path is not None]

    @property
    def without_pdf(self) -> list[ZoteroEntry]:
        return [e for e in self.entries if e.path is None]


# -- finding and copying the database ------------------------------------------------------------
def zotero_database(folder: Path) -> tuple[Path, Path]:
    """(data folder, its ``zotero.sqlite``) for a data folder or the database file itself."""
    folder = folder.expanduser()
    if folder.is_file():
        return folder.parent, folder
    if not folder.exists():
        raise ZoteroError(f"no Zotero data folder at {folder}: {WHERE_DATA}")
    database = folder / DATABASE_NAME
    if database.exists() and not database.is_file():
        raise ZoteroError(f"{database} is not a regular file (a folder, a pipe or a device): {WHERE_DATA}")
    if not database.is_file():
        raise ZoteroError(f"no Zotero database in {folder} (no {DATABASE_NAME} there): {WHERE_DATA}")
    return folder, database


def _state(paths: list[Path]) -> tuple[tuple[int, int] | None, ...]:
    out: list[tuple[int, int] | None] = []
    for path in paths:
        try:
            info = path.stat()
            out.append((info.st_size, info.st_mtime_ns))
        except OSError:
            out.append(None)
    return tuple(out)


@contextmanager
def database_copy(database: Path) -> Iterator[Path]:
    """A private copy of ``database`` (with its ``-wal``/``-journal``), removed afterwards; copied
    again (up to three times) when Zotero changes the files during the copy."""
    companions = [Path(f"{database}{suffix}") for suffix in ("-wal", "-journal")]
    _remove_stale_copies()
    with tempfile.TemporaryDirectory(prefix=COPY_PREFIX) as work:
        copy = Path(work) / DATABASE_NAME
        for _ in range(COPY_TRIES):
            before = _state([database, *companions])
            try:
                shutil.copyfile(database, copy)
                for companion in companions:
                    target = Path(f"{copy}{companion.name.removeprefix(database.name)}")
                    target.unlink(missing_ok=True)
                    if companion.is_file():
                        shutil.copyfile(companion, target)
            except OSError as error:
                raise ZoteroError(f"cannot copy the Zotero database {database}: "
                                  f"{error.strerror or error}") from None
            if _state([database, *companions]) == before:
                break
        _settle(copy)
        yield copy


COPY_PREFIX = "rhetorica-zotero-"


def _remove_stale_copies() -> None:
    """Copies that a killed run (SIGKILL: no clean-up) left in the temporary folder, once they are old."""
    now = time.time()
    for old in Path(tempfile.gettempdir()).glob(f"{COPY_PREFIX}*"):
        with contextlib.suppress(OSError):
            if old.is_dir() and not old.is_symlink() and now - old.stat().st_mtime > STALE_COPY_SECONDS \
                    and old.stat().st_uid == os.getuid():
                shutil.rmtree(old)


def _settle(copy: Path) -> None:
    """Roll a private copy back to Zotero's last commit when it was copied mid-write (a hot
    ``-journal`` beside it, which a read-only connection cannot roll back). Only the copy is written."""
    journal = Path(f"{copy}-journal")
    if not journal.is_file() or journal.stat().st_size == 0:
        return
    try:
        connection = sqlite3.connect(copy)
        try:
            connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        finally:
            connection.close()
    except sqlite3.DatabaseError:
        pass  # opening the copy read-only says what is wrong


def _connect(copy: Path, database: Path) -> sqlite3.Connection:
    try:
        connection = sqlite3.connect(f"{copy.as_uri()}?mode=ro", uri=True)
        tables = {str(row[0]) for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    except sqlite3.DatabaseError as error:
        raise ZoteroError(f"{database} is damaged or not a database ({error}): {REPAIR}") from None
    missing = [t for t in REQUIRED_TABLES if t not in tables]
    if missing or not tables & {"fields", "fieldsCombined"} or not tables & {"itemTypes",
                                                                           "itemTypesCombined"}:
        connection.close()
        what = ", ".join(missing) or "fields or item types"
        raise ZoteroError(f"{database} is an SQLite database but not Zotero's (no table {what})")
    connection.row_factory = None
    connection.text_factory = lambda data: data.decode("utf-8", "replace")
    return connection


class _Deadline:
    """SQLite's progress handler: stops a query past ``QUERY_SECONDS``, on Ctrl-C or when the job is
    cancelled (the database is the user's file, but a view in it is a query of its own, which could run
    for ever: a recursive view hung the import, deaf to Ctrl-C)."""

    def __init__(self, ctx: JobContext) -> None:
        self.ctx = ctx
        self.ends = time.monotonic() + QUERY_SECONDS
        self.why = ""

    def __call__(self) -> int:
        try:
            if self.ctx.cancelled:
                self.why = "cancelled"
            elif time.monotonic() > self.ends:
                self.why = f"took longer than {QUERY_SECONDS:.0f} s"
        except KeyboardInterrupt:
            self.why = "interrupted"
        return 1 if self.why else 0


# -- reading the items ---------------------------------------------------------------------------
def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str:
    if isinstance(value, bytes):  # a value stored as a blob
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else "" if value is None else str(value)


def year_of(date: str) -> int | None:
    """The year of a Zotero date ("2019-03-00 2019-03", "March 2019", "2019")."""
    found = re.match(r"\s*(\d{4})\b", date) or re.search(r"\b(1[5-9]\d\d|2\d\d\d)\b", date)
    year = int(found.group(1)) if found else None
    return year if year is not None and 1000 <= year <= 2999 else None


def clean_doi(value: str) -> str:
    """The DOI in ``value`` ("https://doi.org/10.1/x", "doi:10.1/x", "10.1/x"), or ""."""
    found = DOI_PATTERN.search(value.strip())
    return found.group(0).rstrip(".,;") if found else ""


def doi_in_extra(extra: str) -> str:
    """A ``DOI: …`` line of Zotero's Extra field (where item types without a DOI field keep it)."""
    for line in extra.splitlines():
        name, _, value = line.partition(":")
        if name.strip().lower() == "doi":
            return clean_doi(value)
    return ""


def _name(first: str, last: str, field_mode: int | None) -> str:
    first, last = " ".join(first.split()), " ".join(last.split())
    if field_mode == 1 or not first:
        return last or first
    return f"{last}, {first}" if last else first


def _table(tables: set[str], combined: str, base: str) -> str:
    return combined if combined in tables else base


def _read_rows(connection: sqlite3.Connection, database: Path, sql: str,
               deadline: _Deadline | None = None) -> list[tuple[Any, ...]]:
    try:
        return connection.execute(sql).fetchall()
    except sqlite3.DatabaseError as error:
        if deadline is not None and deadline.why == "interrupted":
            raise KeyboardInterrupt from None
        if deadline is not None and deadline.why == "cancelled":
            raise Cancelled() from None
        if deadline is not None and deadline.why:
            raise ZoteroError(f"reading {database} {deadline.why}: damaged, or not Zotero's own database? "
                              f"{REPAIR}") from None
        raise ZoteroError(f"{database} is damaged ({error}): {REPAIR}") from None


@dataclass
class _Raw:
    """What the queries return, before it becomes entries."""

    # item id -> (library id, key, item type, dateModified)
    items: dict[int, tuple[int, str, str, str]] = field(default_factory=dict)
    fields: dict[int, dict[str, str]] = field(default_factory=dict)
    creators: dict[int, list[tuple[str, str]]] = field(default_factory=dict)  # id -> [(name, creator type)]
    attachments: list[tuple[int, int | None, int | None, str, str]] = field(default_factory=list)
    trashed: set[int] = field(default_factory=set)


def _query(connection: sqlite3.Connection, database: Path, ctx: JobContext) -> _Raw:
    deadline = _Deadline(ctx)
    connection.set_progress_handler(deadline, 20_000)

    def read(sql: str) -> list[tuple[Any, ...]]:
        return _read_rows(connection, database, sql, deadline)

    tables = {str(r[0]) for r in read("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    item_types = _table(tables, "itemTypesCombined", "itemTypes")
    fields = _table(tables, "fieldsCombined", "fields")
    raw = _Raw()
    feeds = ("AND i.libraryID NOT IN (SELECT libraryID FROM libraries WHERE type = 'feed')"
             if "libraries" in tables else "")
    ctx.progress(0, 4, "reading Zotero items")
    for item_id, library_id, key, type_name, modified in read(
            "SELECT i.itemID, i.libraryID, i.key, t.typeName, i.dateModified "
            f"FROM items i LEFT JOIN {item_types} t ON t.itemTypeID = i.itemTypeID WHERE 1 {feeds}"):
        if _int(item_id) is not None and isinstance(key, str) and KEY_PATTERN.fullmatch(key):
            raw.items[item_id] = (_int(library_id) or 1, key, _str(type_name), _str(modified))
    ctx.progress(1, 4, "reading Zotero metadata")
    wanted = ", ".join(f"'{name}'" for name in (*TITLE_FIELDS, "date", "DOI", "extra"))
    for item_id, name, value in read(
            "SELECT d.itemID, f.fieldName, v.value FROM itemData d "
            f"JOIN {fields} f ON f.fieldID = d.fieldID JOIN itemDataValues v ON v.valueID = d.valueID "
            f"WHERE f.fieldName IN ({wanted})"):
        raw.fields.setdefault(item_id, {})[_str(name)] = _str(value)
    ctx.progress(2, 4, "reading Zotero creators")
    creator_types = ("LEFT JOIN creatorTypes ct ON ct.creatorTypeID = ic.creatorTypeID"
                     if "creatorTypes" in tables else "LEFT JOIN (SELECT NULL AS creatorType) ct")
    for item_id, first, last, mode, kind in read(
            "SELECT ic.itemID, c.firstName, c.lastName, c.fieldMode, ct.creatorType "
            f"FROM itemCreators ic JOIN creators c ON c.creatorID = ic.creatorID {creator_types} "
            "ORDER BY ic.itemID, ic.orderIndex"):
        name = _name(_str(first), _str(last), _int(mode))
        if name:
            raw.creators.setdefault(item_id, []).append((name, _str(kind)))
    ctx.progress(3, 4, "reading Zotero attachments")
    for item_id, parent, link_mode, content_type, path in read(
            "SELECT itemID, parentItemID, linkMode, contentType, path FROM itemAttachments"):
        if _int(item_id) is not None:
            raw.attachments.append((item_id, _int(parent), _int(link_mode), _str(content_type), _str(path)))
    if "deletedItems" in tables:
        raw.trashed = {r[0] for r in read("SELECT itemID FROM deletedItems")}
    ctx.progress(4, 4, "read the Zotero database")
    return raw


def _item(raw: _Raw, item_id: int) -> ZoteroItem:
    library_id, key, item_type, modified = raw.items[item_id]
    values = raw.fields.get(item_id, {})
    title = next((values[name] for name in TITLE_FIELDS if values.get(name, "").strip()), "")
    creators = raw.creators.get(item_id, [])
    authors = [name for name, kind in creators if kind == "author"] or [name for name, _ in creators]
    doi = clean_doi(values.get("DOI", "")) or doi_in_extra(values.get("extra", ""))
    return ZoteroItem(library_id, key, item_type, " ".join(title.split()), tuple(authors),
                      year_of(values.get("date", "")), doi, modified)


def _is_pdf(content_type: str, path: str) -> bool:
    return content_type.lower() == "application/pdf" or path.lower().endswith(".pdf")


def _existing(path: str) -> str | None:
    """``path``, or the same name in the other Unicode normalisation (macOS writes NFD), if it is a file."""
    head, name = os.path.split(path)
    for form in ("NFC", "NFD"):
        candidate = os.path.join(head, unicodedata.normalize(form, name))
        if os.path.isfile(candidate):
            return candidate
    return None


def resolve_attachment(data_dir: Path, key: str, link_mode: int | None, stored: str,
                       base_dir: Path | None = None) -> tuple[Path | None, str]:
    """(the file on this machine, "") or (None, why not) for an attachment as Zotero stores it:
    ``storage:NAME`` under ``storage/<KEY>/`` (never outside it), a linked file (an absolute path, or
    ``attachments:REL`` under the linked-attachment base folder ``base_dir``), or a link."""
    if link_mode == LINKED_URL:
        return None, "a link to a web page, not a file"
    if link_mode in (IMPORTED_FILE, IMPORTED_URL):
        folder = data_dir / STORAGE / key
        name = stored.removeprefix("storage:") if stored.startswith("storage:") else ""
        if not name:
            pdfs = sorted(p for p in folder.glob("*.[pP][dD][fF]")) if folder.is_dir() else []
            if len(pdfs) != 1:
                return None, f"no file name recorded and no single PDF in {STORAGE}/{key}/"
            name = pdfs[0].name
        return _inside(folder, name, f"{STORAGE}/{key}/{name}", "not downloaded yet? open it once in Zotero")
    if link_mode == LINKED_FILE:
        if stored.startswith("attachments:"):
            relative = stored.removeprefix("attachments:")
            if base_dir is None:
                return None, (f"a linked file relative to Zotero's base folder ({relative}), which is not "
                              "known here: give it with --zotero-base DIR")
            return _inside(base_dir, relative, relative, "moved or deleted?")
        if PureWindowsPath(stored).drive and not Path(stored).drive:  # C:\… or \\server\… on a POSIX system
            return None, f"a linked file on another system ({stored}), not reachable on this machine"
        if not Path(stored).is_absolute():
            return None, f"a linked file with a path that is not absolute ({stored})"
        found = _existing(stored)
        if found is None:
            return None, f"linked file not found on this machine: {stored}"
        return Path(found), ""
    return None, f"an attachment of an unknown kind (link mode {link_mode})"


def _inside(root: Path, relative: str, shown: str, hint: str) -> tuple[Path | None, str]:
    """``root/relative`` when it is a file inside ``root``, else (None, why). The path is checked as
    written (``..``), and, where a link may lead elsewhere (the file or ``root`` is a link, or the name
    has folders), as resolved: links are followed only as far as ``root``'s real folder."""
    base = os.path.normpath(root)
    path = os.path.normpath(os.path.join(base, relative))
    outside = f"the attachment path {shown} leads outside its folder {root}: not read"
    if not path.startswith(base + os.sep):
        return None, outside
    found = _existing(path)
    if found is None:
        return None, f"PDF not found: {shown} ({hint})"
    if os.path.islink(found) or os.path.islink(base) or os.sep in relative or "/" in relative:
        try:
            real_root, real = os.path.realpath(base), os.path.realpath(found)
        except (OSError, ValueError):
            return None, f"the attachment path {shown} cannot be resolved"
        if not real.startswith(real_root.rstrip(os.sep) + os.sep):
            return None, outside
    return Path(found), ""


def _entries(raw: _Raw, data_dir: Path, base_dir: Path | None, snapshot: ZoteroSnapshot) -> None:
    children: dict[int, list[tuple[int, int | None, str, str]]] = {}
    standalone: list[tuple[int, int | None, str, str]] = []
    for item_id, parent, link_mode, content_type, path in raw.attachments:
        if item_id not in raw.items or item_id in raw.trashed:
            continue
        record = (item_id, link_mode, content_type, path)
        if parent is None:
            standalone.append(record)
        else:
            children.setdefault(parent, []).append(record)
    for item_id, (library_id, key, _type, _modified) in raw.items.items():
        if item_id in raw.trashed:
            snapshot.trashed.add((library_id, key))
    regular = [i for i, (_, _, kind, _) in raw.items.items()
               if kind not in NOT_TOP_LEVEL and i not in raw.trashed]
    for item_id in sorted(regular):
        item = _item(raw, item_id)
        snapshot.items += 1
        pdfs = [a for a in children.get(item_id, []) if _is_pdf(a[2], a[3])]
        if not pdfs:
            others = children.get(item_id, [])
            why = "no PDF attachment" + (f" (only {len(others)} other attachment(s))" if others else "")
            snapshot.entries.append(ZoteroEntry(item, "", False, item.date_modified, None, why))
        for attachment_id, link_mode, _type, stored in sorted(pdfs):
            key = raw.items[attachment_id][1]
            found, problem = resolve_attachment(data_dir, key, link_mode, stored, base_dir)
            modified = f"{item.date_modified}|{raw.items[attachment_id][3]}"
            snapshot.entries.append(ZoteroEntry(item, key, False, modified, found, problem))
    for attachment_id, link_mode, content_type, stored in sorted(standalone):
        if not _is_pdf(content_type, stored):
            continue
        item = _item(raw, attachment_id)
        snapshot.items += 1
        found, problem = resolve_attachment(data_dir, item.key, link_mode, stored, base_dir)
        snapshot.entries.append(ZoteroEntry(item, item.key, True, item.date_modified, found, problem))


def read_zotero(folder: Path | None = None, ctx: JobContext | None = None, *,
                base_dir: Path | None = None) -> ZoteroSnapshot:
    """Read the Zotero data folder ``folder`` (default: :func:`default_zotero_dir`) from a copy of its
    database; ``base_dir`` is Zotero's base folder for linked attachments, when known."""
    ctx = ensure_context(ctx)
    data_dir, database = zotero_database(folder if folder is not None else default_zotero_dir())
    data_dir = data_dir.resolve()
    ctx.progress(0, 1, "copying the Zotero database")
    with database_copy(database) as copy:
        connection = _connect(copy, database)
        try:
            raw = _query(connection, database, ctx)
        finally:
            connection.close()
    snapshot = ZoteroSnapshot(data_dir)
    _entries(raw, data_dir, base_dir.expanduser().resolve() if base_dir is not None else None, snapshot)
    return snapshot
