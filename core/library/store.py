"""The library's database: papers, their sentences and both embedding views, in one SQLite file.

A library is a folder (``library.sqlite3`` plus the approximate-nearest-neighbour indexes beside it,
``content.ann`` and ``function.ann``, which can always be rebuilt from here). The database is the
source of truth:

* WAL mode, foreign keys on, a schema version in ``meta`` and ordered migrations;
* a paper and all its sentences and vectors are written in ONE transaction, so a crash (even
  ``kill -9``) during an add leaves either the whole paper or none of it;
* papers are keyed by the sha256 of their source (a PDF's bytes, or the JSONL row's text), so adding
  the same paper twice is skipped;
* vectors are stored as float32 blobs, with the model id that made them (a library built with one
  model is re-embedded, not mixed, when the model changes);
* damage is one line: every statement runs on a :class:`GuardedConnection`, whose SQLite errors that
  mean a damaged file become :class:`DamagedLibraryError` (still a ``sqlite3.DatabaseError``) naming
  the file and ``rhetorica library doctor`` (``core.library.doctor``);
* ``library.json`` (a marker) is written when a library is created (or first opened by this
  version): a library whose database is missing or empty is refused (:class:`MissingDatabaseError`)
  instead of silently starting again empty;
* a library in a folder that cannot be written (read-only media, a shared folder) is opened for
  reading only (:func:`read_only_uri`); writing to it is a one-line read-only error.

No Qt, no torch, no model code: callers hand in texts, labels and vectors.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import RhetoricaError
from core.library.row_check import LibraryCheck, Widths, check_library

DATABASE_NAME = "library.sqlite3"
MARKER_NAME = "library.json"  # written when a library is created: its database must not vanish silently
MARKER_FORMAT = "rhetorica-library"
INDEX_FILES = {"content": "content.ann", "function": "function.ann"}  # beside the database
# The names the index files had until session 13 (hnswlib's, kept for its faiss successor at first):
# a library that still has them is moved to INDEX_FILES when it is opened (core.library.index_names).
EARLIER_INDEX_FILES = {"content": "content.hnsw", "function": "function.hnsw"}
DAMAGED_SUFFIX = ".damaged-"  # library.sqlite3.damaged-<time>: a damaged database kept by the doctor
SCHEMA_VERSION = 2
VIEWS = ("content", "function")

# Migrations, in order: MIGRATIONS[v] takes a database at version v to version v + 1 (statements
# are split on ";", so comments must not contain one).
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE papers (
        id INTEGER PRIMARY KEY,
        paper_id TEXT NOT NULL UNIQUE,      -- the id given at import (JSONL id) or the sha256
        sha256 TEXT NOT NULL UNIQUE,        -- of the source: duplicates are skipped
        title TEXT NOT NULL DEFAULT '',
        source TEXT NOT NULL DEFAULT '',    -- path or dataset the paper came from
        note TEXT NOT NULL DEFAULT '',      -- licence / attribution
        kind TEXT NOT NULL,                 -- 'pdf', 'jsonl' or 'corpus'
        model_id TEXT NOT NULL,             -- the model that labelled and embedded it
        added REAL NOT NULL,                -- unix time
        sentence_count INTEGER NOT NULL
    );
    CREATE TABLE sentences (
        id INTEGER PRIMARY KEY AUTOINCREMENT,  -- index label, never reused after a removal
        paper INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,          -- reading order within the paper
        text TEXT NOT NULL,
        section TEXT NOT NULL DEFAULT '',   -- heading as printed
        section_kind TEXT NOT NULL DEFAULT '',
        role TEXT NOT NULL DEFAULT '',
        role_confidence REAL NOT NULL DEFAULT 0,
        function TEXT NOT NULL DEFAULT '',
        function_confidence REAL NOT NULL DEFAULT 0,
        content BLOB,                       -- float32 content-view vector
        function_vector BLOB                -- float32 function-view vector
    );
    CREATE INDEX sentences_by_paper ON sentences(paper, position);
    """,
    # 1 -> 2: a paper's bibliographic metadata (from a reference manager): authors (a JSON list of
    # "Last, First", '' when none), year (NULL: unknown), DOI and the item's key there ('zotero:1/KEY').
    # Columns, not a table: old rows read as "no metadata" and no page of the file moves.
    """
    ALTER TABLE papers ADD COLUMN authors TEXT NOT NULL DEFAULT '';
    ALTER TABLE papers ADD COLUMN year INTEGER;
    ALTER TABLE papers ADD COLUMN doi TEXT NOT NULL DEFAULT '';
    ALTER TABLE papers ADD COLUMN source_key TEXT NOT NULL DEFAULT ''
    """,
)


class LibraryError(RhetoricaError):
    """A library that cannot be opened or changed (one-line message)."""


def doctor_advice(folder: Path) -> str:
    return f"run 'rhetorica library doctor --library {folder}' to salvage it"


class DamagedLibraryError(LibraryError, sqlite3.DatabaseError):
    """SQLite found the library database damaged (corrupt pages, not a database at all). Also a
    ``sqlite3.DatabaseError``, so code that catches those still does."""

    def __init__(self, path: Path, detail: str) -> None:
        self.path, self.detail = path, detail
        super().__init__(f"the library database {path} is damaged ({detail}); {doctor_advice(path.parent)}")


class MissingDatabaseError(LibraryError):
    """The database of a library that existed is missing or empty (its papers are gone from it)."""

    def __init__(self, folder: Path, what: str) -> None:
        self.folder = folder
        super().__init__(f"the library database {folder / DATABASE_NAME} is {what}, so the papers of the "
                         f"library in {folder} are gone from it; run 'rhetorica library doctor --library "
                         f"{folder}' to restore what can be restored or to start the library again empty")


_DAMAGE_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB (low byte of the extended code)
_DAMAGE_WORDS = ("malformed", "not a database", "could not decode to utf-8", "corrupt")


def is_damage(error: BaseException) -> bool:
    """True when a SQLite error means the file is damaged (not a busy, full or read-only disk)."""
    if isinstance(error, DamagedLibraryError):
        return True
    if not isinstance(error, sqlite3.DatabaseError):
        return False
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in _DAMAGE_CODES:
        return True
    return any(word in str(error).lower() for word in _DAMAGE_WORDS)


def _guarded(error: sqlite3.DatabaseError, connection: sqlite3.Connection) -> sqlite3.DatabaseError:
    """``error`` as a :class:`DamagedLibraryError` when it means damage, else as it was."""
    path = getattr(connection, "path", None)
    if path is None or isinstance(error, DamagedLibraryError) or not is_damage(error):
        return error
    return DamagedLibraryError(path, str(error))


def _refuse_damaged(connection: sqlite3.Connection, sql: str) -> None:
    if isinstance(connection, GuardedConnection) and connection.refused:
        connection.refuse_damaged(sql)


class _GuardedCursor(sqlite3.Cursor):
    """A cursor whose damage errors (also those met while stepping through rows) become one-line
    :class:`DamagedLibraryError` errors that name the file and the way out."""

    def execute(self, sql: str, parameters: Any = (), /) -> _GuardedCursor:
        _refuse_damaged(self.connection, sql)
        try:
            return super().execute(sql, parameters)
        except sqlite3.DatabaseError as error:
            raise _guarded(error, self.connection) from None

    def executemany(self, sql: str, parameters: Any, /) -> _GuardedCursor:
        _refuse_damaged(self.connection, sql)
        try:
            return super().executemany(sql, parameters)
        except sqlite3.DatabaseError as error:
            raise _guarded(error, self.connection) from None

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.DatabaseError as error:
            raise _guarded(error, self.connection) from None

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        try:
            return super().fetchmany(size if size is not None else self.arraysize)
        except sqlite3.DatabaseError as error:
            raise _guarded(error, self.connection) from None

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.DatabaseError as error:
            raise _guarded(error, self.connection) from None

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.DatabaseError as error:
            raise _guarded(error, self.connection) from None


class GuardedConnection(sqlite3.Connection):
    """The library's connection: every statement runs on a :class:`_GuardedCursor` (``path`` names
    the database file in the errors). A statement naming a table in ``refused`` (a table whose rows or
    columns the readers cannot use, found when the library was opened: :func:`_checked`) raises
    :class:`DamagedLibraryError` with what is wrong instead of running."""

    path: Path | None = None
    refused: dict[str, str] | None = None  # table -> what is wrong with it

    def refuse_damaged(self, sql: str) -> None:
        for table, problem in (self.refused or {}).items():
            if self.path is not None and re.search(rf"\b{table}\b", sql, re.IGNORECASE):
                raise DamagedLibraryError(self.path, problem)

    def cursor(self, factory: Any = _GuardedCursor) -> Any:
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        return self.cursor().executemany(sql, parameters)


@dataclass(frozen=True)
class NewSentence:
    """A sentence to add: its text, where it sits, and the model's labels."""

    text: str
    section: str = ""
    section_kind: str = ""
    role: str = ""
    role_confidence: float = 0.0
    function: str = ""
    function_confidence: float = 0.0


@dataclass(frozen=True)
class PaperRecord:
    """A paper in the library."""

    paper_id: str
    sha256: str
    title: str
    source: str
    note: str
    kind: str
    model_id: str
    added: float
    sentence_count: int


@dataclass(frozen=True)
class SentenceRecord:
    """A stored sentence with its paper's id (the vectors are read separately)."""

    id: int
    paper_id: str
    position: int
    text: str
    section: str
    section_kind: str
    role: str
    function: str
    role_confidence: float = 1.0  # read by sentences_of (the alignment's gap report); 1.0 where not read
    # The model's confidence in ``function`` (read by ``sentences``: suggestions rank confident examples of
    # the query's function first); 1.0 where unknown (a row stored without it, or a pack without the column).
    function_confidence: float = 1.0


def known_confidence(value: object) -> float:
    """A stored confidence, or 1.0 where none was stored (rows written before it was kept hold 0)."""
    try:
        confidence = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1.0
    return confidence if 0.0 < confidence <= 1.0 else 1.0


@dataclass(frozen=True)
class PaperMetadata:
    """A paper's bibliographic metadata, as its reference manager keeps it (schema 2 on)."""

    authors: tuple[str, ...] = ()  # "Last, First" (or one name), in the source's order
    year: int | None = None
    doi: str = ""
    source_key: str = ""  # the item in its reference manager, e.g. "zotero:1/ABCD2345"


@dataclass(frozen=True)
class LibraryStats:
    papers: int
    sentences: int
    models: dict[str, int]  # model id -> papers
    database_bytes: int


def _blob(vector: np.ndarray | None) -> bytes | None:
    return None if vector is None else np.ascontiguousarray(vector, dtype=np.float32).tobytes()


class LibraryStore:
    """One library's SQLite database (open with :func:`open_store`; close when done)."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.connection = connection
        self.path = path
        self.read_only = False  # opened for reading only: its folder cannot be written
        self.widths = Widths()  # each view's vector width, as checked when opened (None: any)

    # -- lifecycle ----------------------------------------------------------------------------
    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> LibraryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return int(self.connection.execute("PRAGMA user_version").fetchone()[0])

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (taken at once: ``BEGIN IMMEDIATE``); rolled back on any error. A
        full disk or read-only library raises a one-line :class:`core.fileio.StorageError`."""
        try:
            self.connection.execute("BEGIN IMMEDIATE")
            try:
                yield self.connection
            except BaseException:
                if self.connection.in_transaction:  # SQLite may have rolled back already (disk full)
                    self.connection.execute("ROLLBACK")
                raise
            self.connection.execute("COMMIT")
        except (sqlite3.OperationalError, OSError) as error:
            raise _clear(error, self.path) from None

    # -- writing ------------------------------------------------------------------------------
    def add_paper(self, *, paper_id: str, sha256: str, title: str, source: str, note: str, kind: str,
                  model_id: str, sentences: Sequence[NewSentence], content: np.ndarray,
                  function: np.ndarray | None = None) -> list[int] | None:
        """Add a paper with its sentences and vectors in one transaction; returns the sentence ids
        (the indexes' labels), or None when a paper with this sha256 or id is already there."""
        n = len(sentences)
        if content.shape[0] != n or (function is not None and function.shape[0] != n):
            raise ValueError(f"{n} sentences but {content.shape[0]} content vectors"
                             + ("" if function is None else f" and {function.shape[0]} function vectors"))
        with self.transaction() as db:
            if db.execute("SELECT 1 FROM papers WHERE sha256 = ? OR paper_id = ?",
                          (sha256, paper_id)).fetchone():
                return None
            cursor = db.execute(
                "INSERT INTO papers (paper_id, sha256, title, source, note, kind, model_id, added, "
                "sentence_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (paper_id, sha256, title, source, note, kind, model_id, time.time(), n))
            paper = cursor.lastrowid
            ids: list[int] = []
            for position, sentence in enumerate(sentences):
                row = db.execute(
                    "INSERT INTO sentences (paper, position, text, section, section_kind, role, "
                    "role_confidence, function, function_confidence, content, function_vector) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (paper, position, sentence.text, sentence.section, sentence.section_kind,
                     sentence.role, float(sentence.role_confidence), sentence.function,
                     float(sentence.function_confidence), _blob(content[position]),
                     _blob(None if function is None else function[position])))
                ids.append(int(row.lastrowid or 0))
        return ids

    def resolve_paper_id(self, prefix: str) -> str:
        """The paper id that is ``prefix`` or uniquely starts with it (listings shorten sha256 ids)."""
        if self.paper(prefix) is not None:
            return prefix
        rows = self.connection.execute("SELECT paper_id FROM papers WHERE substr(paper_id, 1, ?) = ? LIMIT 2",
                                       (len(prefix), prefix)).fetchall()
        if len(rows) == 1 and prefix:
            return str(rows[0][0])
        where = f"the library {self.path.parent}"
        if not rows or not prefix:
            raise LibraryError(f"no paper {prefix!r} in {where}")
        raise LibraryError(f"{prefix!r} names several papers in {where}: give more of the id")

    def remove_paper(self, paper_id: str) -> list[int]:
        """Remove a paper (its id, or a unique start of it) and its sentences; returns the removed
        sentence ids (for the indexes)."""
        paper_id = self.resolve_paper_id(paper_id)
        with self.transaction() as db:
            row = db.execute("SELECT id FROM papers WHERE paper_id = ?", (paper_id,)).fetchone()
            if row is None:
                raise LibraryError(f"no paper {paper_id!r} in the library {self.path.parent}")
            ids = [int(r[0]) for r in db.execute("SELECT id FROM sentences WHERE paper = ?", (row[0],))]
            db.execute("DELETE FROM papers WHERE id = ?", (row[0],))
        return ids

    # -- reading ------------------------------------------------------------------------------
    def has_sha256(self, sha256: str) -> bool:
        row = self.connection.execute("SELECT 1 FROM papers WHERE sha256 = ?", (sha256,)).fetchone()
        return row is not None

    def papers(self) -> list[PaperRecord]:
        rows = self.connection.execute(
            "SELECT paper_id, sha256, title, source, note, kind, model_id, added, sentence_count "
            "FROM papers ORDER BY id")
        return [PaperRecord(*row) for row in rows]

    def paper(self, paper_id: str) -> PaperRecord | None:
        row = self.connection.execute(
            "SELECT paper_id, sha256, title, source, note, kind, model_id, added, sentence_count "
            "FROM papers WHERE paper_id = ?", (paper_id,)).fetchone()
        return None if row is None else PaperRecord(*row)

    def sentences(self, ids: Sequence[int]) -> list[SentenceRecord]:
        """The sentences with these ids, in the order given (unknown ids are skipped)."""
        found: dict[int, SentenceRecord] = {}
        for start in range(0, len(ids), 500):
            chunk = [int(i) for i in ids[start: start + 500]]
            marks = ",".join("?" * len(chunk))
            for row in self.connection.execute(
                    "SELECT s.id, p.paper_id, s.position, s.text, s.section, s.section_kind, s.role, "
                    "s.function, s.function_confidence FROM sentences s JOIN papers p ON p.id = s.paper "
                    f"WHERE s.id IN ({marks})", chunk):
                sid, paper_id, position, text, section, kind, role, function, confidence = row
                found[int(sid)] = SentenceRecord(sid, paper_id, position, text, section, kind, role, function,
                                                 function_confidence=known_confidence(confidence))
        return [found[int(i)] for i in ids if int(i) in found]

    def sentences_of(self, paper_id: str) -> list[SentenceRecord]:
        rows = self.connection.execute(
            "SELECT s.id, p.paper_id, s.position, s.text, s.section, s.section_kind, s.role, s.function, "
            "s.role_confidence FROM sentences s JOIN papers p ON p.id = s.paper WHERE p.paper_id = ? "
            "ORDER BY s.position",
            (paper_id,))
        return [SentenceRecord(*row) for row in rows]

    def vectors(self, view: str, batch: int = 10_000) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(sentence ids [b], vectors [b, d]) of every stored sentence, in id order, ``batch`` at a
        time (what an index rebuild reads); sentences without a vector of this view are skipped."""
        if view not in VIEWS:
            raise ValueError(f"unknown view {view!r}: use one of {', '.join(VIEWS)}")
        column = "content" if view == "content" else "function_vector"
        last = 0
        while True:
            rows = self.connection.execute(
                f"SELECT id, {column} FROM sentences WHERE id > ? AND {column} IS NOT NULL "
                "ORDER BY id LIMIT ?", (last, batch)).fetchall()
            if not rows:
                return
            ids = np.array([r[0] for r in rows], dtype=np.int64)
            yield ids, self._stacked([self._vector(r[0], r[1], view) for r in rows])
            last = int(ids[-1])

    def vectors_of(self, ids: Sequence[int], view: str) -> np.ndarray:
        """The ``view`` vectors of these sentence ids, in the order given (KeyError for a missing one)."""
        if view not in VIEWS:
            raise ValueError(f"unknown view {view!r}: use one of {', '.join(VIEWS)}")
        column = "content" if view == "content" else "function_vector"
        found: dict[int, np.ndarray] = {}
        for start in range(0, len(ids), 500):
            chunk = [int(i) for i in ids[start: start + 500]]
            marks = ",".join("?" * len(chunk))
            for sentence_id, blob in self.connection.execute(
                    f"SELECT id, {column} FROM sentences WHERE id IN ({marks}) AND {column} IS NOT NULL",
                    chunk):
                found[int(sentence_id)] = self._vector(sentence_id, blob, view)
        return self._stacked([found[int(i)] for i in ids]) if len(ids) else np.zeros((0, 0), np.float32)

    def _vector(self, sentence_id: object, blob: object, view: str) -> np.ndarray:
        """A stored vector blob as float32 values; :class:`DamagedLibraryError` when it is not one of
        the library's width (a damaged row must not crash the reader)."""
        width = self.widths.content if view == "content" else self.widths.function
        if not isinstance(blob, bytes) or not blob or len(blob) % 4 or (width and len(blob) != 4 * width):
            size = f"{len(blob)} bytes" if isinstance(blob, bytes) else f"a {type(blob).__name__}"
            raise DamagedLibraryError(self.path, f"the {view} vector of sentence {sentence_id} is {size}, "
                                                 f"not {width or 'a whole number of'} float32 values")
        return np.frombuffer(blob, dtype=np.float32)

    def _stacked(self, vectors: list[np.ndarray]) -> np.ndarray:
        """One array of same-size vectors; :class:`DamagedLibraryError` when their sizes differ."""
        sizes = sorted({len(v) for v in vectors})
        if len(sizes) > 1:
            raise DamagedLibraryError(self.path, f"its vectors have different sizes ({sizes[0]} and "
                                                 f"{sizes[-1]} values)")
        return np.stack(vectors)

    def sentence_count(self) -> int:
        return int(self.connection.execute("SELECT COUNT(*) FROM sentences").fetchone()[0])

    def stats(self) -> LibraryStats:
        db = self.connection
        models = dict(db.execute("SELECT model_id, COUNT(*) FROM papers GROUP BY model_id").fetchall())
        size = sum(p.stat().st_size for p in self.path.parent.glob(f"{self.path.name}*")
                   if p.is_file() and DAMAGED_SUFFIX not in p.name)  # not the damaged copies the doctor kept
        return LibraryStats(int(db.execute("SELECT COUNT(*) FROM papers").fetchone()[0]),
                            self.sentence_count(), {str(k): int(v) for k, v in models.items()}, size)

    def set_metadata(self, paper_id: str, metadata: PaperMetadata, title: str = "") -> None:
        """Keep a paper's bibliographic metadata (replacing what it had), and its title when one is
        given, in one transaction."""
        import json

        authors = json.dumps(list(metadata.authors), ensure_ascii=False) if metadata.authors else ""
        with self.transaction() as db:
            cursor = db.execute(
                "UPDATE papers SET authors = ?, year = ?, doi = ?, source_key = ?, title = "
                "CASE WHEN ? != '' THEN ? ELSE title END WHERE paper_id = ?",
                (authors, metadata.year, metadata.doi, metadata.source_key, title, title, paper_id))
            if cursor.rowcount == 0:
                raise LibraryError(f"no paper {paper_id!r} in the library {self.path.parent}")

    def metadata(self) -> dict[str, PaperMetadata]:
        """The bibliographic metadata of every paper that has some, by paper id."""
        import json

        found: dict[str, PaperMetadata] = {}
        for paper_id, authors, year, doi, key in self.connection.execute(
                "SELECT paper_id, authors, year, doi, source_key FROM papers WHERE authors != '' OR "
                "year IS NOT NULL OR doi != '' OR source_key != ''"):
            try:
                names = json.loads(authors) if authors else []
            except (TypeError, ValueError):
                names = []
            found[str(paper_id)] = PaperMetadata(
                tuple(str(n) for n in names) if isinstance(names, list) else (),
                year if isinstance(year, int) else None, str(doi or ""), str(key or ""))
        return found

    def get_meta(self, key: str, default: str = "") -> str:
        row = self.connection.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.set_metas({key: value})

    def set_metas(self, values: dict[str, str]) -> None:
        """Set several ``meta`` keys in one transaction."""
        with self.transaction() as db:
            db.executemany("INSERT INTO meta (key, value) VALUES (?, ?) "
                           "ON CONFLICT(key) DO UPDATE SET value = excluded.value", list(values.items()))


def _migrate(connection: sqlite3.Connection, path: Path, *, read_only: bool = False) -> None:
    version = int(connection.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise LibraryError(f"{path} was written by a newer Rhetorica (library schema {version}, "
                           f"this version reads up to {SCHEMA_VERSION})")
    if read_only and version < SCHEMA_VERSION:
        raise LibraryError(f"{path} was written by an earlier Rhetorica (library schema {version}) and must "
                           f"be upgraded to schema {SCHEMA_VERSION}, but {path.parent} cannot be written: "
                           "open the library once in a folder that can be written")
    for target in range(version, SCHEMA_VERSION):
        connection.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATIONS[target].split(";"):
                if statement.strip():
                    connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {target + 1}")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")


def open_store(folder: str | Path, *, allow_new: bool = False) -> LibraryStore:
    """Open (creating when needed) the library database in ``folder``, migrated to this version.

    A library that existed (its marker, index files or a kept damaged database are there) whose
    database is missing or empty raises :class:`MissingDatabaseError` instead of silently starting
    again empty; ``allow_new`` (the doctor, after saying so) starts it again. A damaged database
    raises :class:`DamagedLibraryError`. A library whose folder cannot be written is opened for
    reading only (``LibraryStore.read_only``): it must be at this version's schema then."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise LibraryError(f"{folder} is a file, not a library folder: a library is a folder (choose "
                           "a folder, or a new name for one)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise LibraryError(f"cannot create the library folder {folder}: {error.strerror}") from None
    path = folder / DATABASE_NAME
    missing = database_missing(folder)
    if missing and not allow_new and library_traces(folder):
        raise MissingDatabaseError(folder, missing)
    read_only = not missing and not _writable(folder)
    try:
        if read_only:
            connection = sqlite3.connect(read_only_uri(path), uri=True, isolation_level=None, timeout=30.0,
                                         factory=GuardedConnection)
        else:
            connection = sqlite3.connect(str(path), isolation_level=None, timeout=30.0,
                                         factory=GuardedConnection)
    except sqlite3.Error as error:
        raise _clear(error, path) from None
    connection.path = path
    try:
        if not read_only:
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute("PRAGMA foreign_keys = ON")
        _migrate(connection, path, read_only=read_only)
    except BaseException as error:
        connection.close()
        if isinstance(error, DamagedLibraryError):
            raise DamagedLibraryError(path, f"not a readable library database: {error.detail}") from None
        if isinstance(error, sqlite3.OperationalError):
            raise _clear(error, path) from None
        if isinstance(error, sqlite3.DatabaseError):
            raise DamagedLibraryError(path, f"not a readable library database: {error}") from None
        raise
    try:
        widths = _checked(connection)
    except BaseException as error:
        connection.close()
        if isinstance(error, sqlite3.OperationalError):  # busy, locked: one line
            raise _clear(error, path) from None
        raise
    if not read_only:
        write_marker(folder)
    store = LibraryStore(connection, path)
    store.read_only = read_only
    store.widths = widths
    return store


def _checked(connection: GuardedConnection) -> Widths:
    """Check the schema and rows the readers rely on (:mod:`core.library.row_check`): the tables with
    a problem are refused from then on (``GuardedConnection.refused``); returns the vector widths. A
    file too damaged for the check is left to the reads, which say so when they meet the damage (the
    papers of a file whose sentence pages are damaged can still be listed). A database whose files have
    not changed since it was last checked in this process is not scanned again (the app opens the
    library for each correction and search: half a second per 250,000 sentences each time)."""
    state = _file_state(connection.path) if connection.path is not None else None
    earlier = _CHECKED.get(connection.path) if connection.path is not None else None
    if state is not None and earlier is not None and earlier[0] == state:
        check = earlier[1]
    else:
        try:
            check = check_library(connection)
        except DamagedLibraryError:
            return Widths()
        if connection.path is not None and state is not None:
            _CHECKED[connection.path] = (state, check)
    connection.refused = check.damaged_tables()
    return check.widths


_CHECKED: dict[Path, tuple[tuple[int, int], LibraryCheck]] = {}  # database -> (its size and time, the check)


def _file_state(path: Path) -> tuple[int, int] | None:
    """(size, modification time) of the database when every write has reached it (its write-ahead log is
    empty or gone); None otherwise (a log holding writes: checked afresh)."""
    try:
        wal = Path(f"{path}-wal")
        if wal.exists() and wal.stat().st_size > 0:
            return None
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def read_only_uri(path: Path) -> str:
    """The SQLite URI that opens the database ``path`` for reading only. Where its folder cannot be
    written SQLite cannot make the shared-memory file (``-shm``) a WAL database is read through, so
    the file is opened as immutable as well (read without locks: nothing can change it there);
    :class:`LibraryError` when a write-ahead log beside it still holds changes (an immutable open
    would not see them: the library must be opened once where it can be written)."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    if _writable(path.parent):
        return uri
    log = Path(f"{path}-wal")
    try:
        pending = log.stat().st_size > 0
    except OSError:
        pending = False
    if pending:
        raise LibraryError(f"the library database {path} cannot be read where it is: its last changes are "
                           f"still in {log.name} and {path.parent} cannot be written; open the library "
                           "once in a folder that can be written")
    return f"{uri}&immutable=1"


def database_missing(folder: Path) -> str:
    """"missing" or "empty" when ``folder`` has no usable database file, else ""."""
    path = folder / DATABASE_NAME
    try:
        return "" if path.stat().st_size > 0 else "empty"
    except FileNotFoundError:
        return "missing"
    except OSError:
        return ""  # unreadable: opening it says why


def require_library(folder: Path) -> None:
    """:class:`LibraryError` (one line) when ``folder`` holds no library and never did: what the
    commands that only read or change a library check first, so a mistyped path is an error instead of
    a new empty library there (a library whose database went missing is left to :func:`open_store`,
    which says so)."""
    if database_missing(folder) and not library_traces(folder):
        raise LibraryError(f"no library at {folder}: add papers with 'rhetorica library add PDF…' or "
                           "'rhetorica library import-jsonl FILE', or give --library DIR")


def library_traces(folder: Path) -> list[str]:
    """What shows that a library existed in ``folder`` (the marker, index files under their names of
    now or of earlier versions, a kept damaged database, a write-ahead log): the names present."""
    names = [MARKER_NAME, *INDEX_FILES.values(), *EARLIER_INDEX_FILES.values(), f"{DATABASE_NAME}-wal"]
    found = [name for name in names if (folder / name).is_file()]
    return found + sorted(p.name for p in damaged_copies(folder))


def damaged_copies(folder: Path) -> list[Path]:
    """The damaged databases the doctor kept (``library.sqlite3.damaged-<time>``), newest first."""
    try:
        found = [p for p in folder.glob(f"{DATABASE_NAME}{DAMAGED_SUFFIX}*")
                 if p.is_file() and not p.name.endswith(("-wal", "-shm", "-journal"))]
    except OSError:
        return []
    return sorted(found, key=lambda p: p.name, reverse=True)


def write_marker(folder: Path) -> None:
    """Write ``library.json`` (format, creation time) when it is not there: from then on a missing
    database is noticed. Best effort: a read-only library is still read."""
    import contextlib
    import json

    from core.fileio import atomic_write_bytes

    marker = folder / MARKER_NAME
    if marker.is_file():
        return
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    text = json.dumps({"format": MARKER_FORMAT, "schema": SCHEMA_VERSION, "created": created,
                       "database": DATABASE_NAME}, indent=1)
    with contextlib.suppress(OSError):
        atomic_write_bytes(marker, (text + "\n").encode("utf-8"), f"the library marker {MARKER_NAME}",
                           tmp_name=f".{MARKER_NAME}.tmp")


def _clear(error: Exception, path: Path) -> Exception:
    """The one-line error a failed database write means: disk full, read-only folder, or as it was."""
    import shutil

    from core.fileio import DiskFullError, ReadOnlyError, storage_error

    what = f"the library database {path.name}"
    clear = storage_error(error, what, path.parent)
    low = "disk i/o error" in str(error).lower() and shutil.disk_usage(path.parent).free < 1 << 20
    if clear is None and low:
        # WAL mode: a full disk can surface as SQLITE_IOERR (growing the -shm file fails)
        clear = DiskFullError(f"disk full while saving {what} ({path.parent}): free some space and try "
                              "again; what was saved before is intact")
    if clear is None and "unable to open database file" in str(error) and not _writable(path.parent):
        clear = ReadOnlyError(f"cannot save {what}: {path.parent} is read-only (check its permissions, "
                              "or choose a writable folder)")
    if clear is not None:
        return clear
    if is_damage(error):
        return DamagedLibraryError(path, str(error))
    if isinstance(error, sqlite3.DatabaseError):
        return LibraryError(f"{path}: library database error: {error}")
    return error


def _writable(folder: Path) -> bool:
    import os

    return os.access(folder, os.W_OK)
