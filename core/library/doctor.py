"""The library doctor (``rhetorica library doctor``, the GUI's "Repair library…"): check a library
folder and put right what can be put right.

:func:`diagnose` reads, changes nothing: the database (``PRAGMA integrity_check``, then the tables,
columns and row values the readers rely on, :mod:`core.library.row_check`, then each paper's sentence
count against its sentences), or that it is missing or empty where a library existed; and
each index file against its integrity record (:func:`core.library.index.check_index_file`), under
today's name (``content.ann``, ``function.ann``) or, where only that is there, the earlier one
(``content.hnsw``, ``function.hnsw``), which the report names (opening the library moves it).

:func:`repair` acts on the diagnosis:

* a healthy database: the index files that fail their check are rebuilt from it (and any still under
  an earlier name are moved to today's, :mod:`core.library.index_names`);
* a damaged database (damaged pages, or rows and schema the readers cannot use): every paper whose
  rows SQLite can still read is copied into a NEW database
  (:func:`salvage`), the damaged file is kept beside it as ``library.sqlite3.damaged-<time>`` (never
  deleted), and the indexes are rebuilt from the new one;
* a missing or empty database: restored by the same salvage from the newest damaged copy an
  earlier repair kept, when there is one; otherwise the library is started again, empty, and the
  report says that its papers are gone.

Salvage rule: SQLite is asked for the rows themselves, by rowid ranges (a range that fails is read
again row by row, so one damaged page costs only its rows): first the papers, then the sentences in
id order. Every sentence that is readable and usable (its text, its position once, a content vector
and any function vector of the library's widths, the sizes most vectors have, with sound values) is
kept with its paper; a damaged label or number is put right
(:func:`core.library.row_check.clean_sentence`: an unknown role becomes "other" with confidence 0, an
unknown section kind its heading's). A paper keeps the sentences that could be kept: its sentence
count is then theirs, and the report names it as kept short (removing it and adding it again makes it
whole). A paper none of whose sentences can be kept is lost, and so are sentences whose paper row is
gone; the report names or counts them. Columns a damaged schema lacks are read as their defaults (a
missing title is ''). A paper whose own row cannot be read is still recovered when the database's
indexes name it (its id and sha256 from the two unique indexes, its sentence count from the
sentences index); its title, source and date are lost then (kind "recovered"; the model id is the one
every readable paper has, else empty), and the report says how many. Recovered papers keep their
ids, sentence ids (so ids are never reused), dates and labels; corrections whose rows are readable
are kept too; the meta keys are copied except the index records (the indexes are rebuilt). A file
whose header SQLite no longer accepts is read through a copy with a rebuilt header. This reads the
database through its b-trees, like SQLite's ``.recover`` without its page scan: rows under a damaged
interior page are lost with it.

No Qt, no torch, no model: nothing is re-labelled or re-embedded.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.jobs import JobContext, ensure_context
from core.library.index import IndexRecord, check_index_file
from core.library.index_names import index_file, index_file_in_use
from core.library.row_check import (
    Widths,
    bad_vector_values,
    blob_size,
    check_library,
    clean_sentence,
    is_number,
    widths_of,
)
from core.library.store import (
    DAMAGED_SUFFIX,
    DATABASE_NAME,
    EARLIER_INDEX_FILES,
    INDEX_FILES,
    SCHEMA_VERSION,
    VIEWS,
    LibraryError,
    damaged_copies,
    database_missing,
    library_traces,
    open_store,
    read_only_uri,
)

CHUNK = 256  # rowids read per query
GIVE_UP = 64  # chunks in a row without a readable row, past the highest id known, end a scan
PAPER_COLUMNS = ("id", "paper_id", "sha256", "title", "source", "note", "kind", "model_id", "added",
                 "sentence_count")
SENTENCE_COLUMNS = ("id", "paper", "position", "text", "section", "section_kind", "role", "role_confidence",
                    "function", "function_confidence", "content", "function_vector")
# Schema 2's bibliographic columns (a reference manager's metadata), copied where the source has them.
METADATA_COLUMNS = ("id", "authors", "year", "doi", "source_key")
CORRECTION_COLUMNS = ("id", "created", "doc_id", "title", "position", "text", "context_before",
                      "context_after", "section_kind", "field", "predicted", "corrected", "model_id")
Row = tuple[Any, ...]


# -- what the doctor finds --------------------------------------------------------------------------
@dataclass(frozen=True)
class DatabaseHealth:
    """The database file: ``state`` is "ok", "damaged", "missing", "empty" or "absent" (no library
    here at all); ``problems``: what SQLite reported (damaged) or what shows a library was there
    (missing, empty)."""

    state: str
    problems: tuple[str, ...] = ()
    papers: int | None = None
    sentences: int | None = None


@dataclass(frozen=True)
class IndexHealth:
    """One index file: ``problem`` None when it passes its integrity check (or the view is empty);
    ``earlier_name``: the file still has the name it had before session 13."""

    view: str
    name: str
    problem: str | None
    earlier_name: bool = False

    def line(self) -> str:
        state = "ok" if self.problem is None else self.problem
        if self.earlier_name:
            state += (f" (its earlier name: renamed to {INDEX_FILES[self.view]} when the library is "
                      "next opened)")
        return f"index {self.name}: {state}"


@dataclass(frozen=True)
class Diagnosis:
    folder: Path
    database: DatabaseHealth
    indexes: tuple[IndexHealth, ...] = ()

    @property
    def healthy(self) -> bool:
        return self.database.state == "ok" and all(i.problem is None for i in self.indexes)

    def lines(self) -> list[str]:
        """What was found, one line each."""
        db, where = self.database, self.folder / DATABASE_NAME
        if db.state == "absent":
            return [f"no library in {self.folder}"]
        if db.state == "ok":
            out = [f"database {where}: ok ({db.papers} papers, {db.sentences} sentences)"]
        elif db.state == "damaged":
            more = f"; … {len(db.problems) - 3} more" if len(db.problems) > 3 else ""
            shown = "; ".join(db.problems[:3]) + more
            out = [f"database {where}: DAMAGED ({shown})"]
        else:
            out = [f"database {where}: {db.state.upper()}, but a library was here ({', '.join(db.problems)})"]
        out.extend(index.line() for index in self.indexes)
        return out


@dataclass
class Salvage:
    """What a salvage read from a damaged database and wrote into a new one."""

    source: Path
    papers_recovered: int = 0
    sentences_recovered: int = 0
    papers_total: int | None = None  # as counted by SQLite (None: the count itself failed)
    sentences_total: int | None = None
    lost: list[tuple[str, str, int]] = field(default_factory=list)  # (id, title, sentences): none kept
    lost_unread: list[str] = field(default_factory=list)  # ids of papers whose row could not be read
    untitled: int = 0  # papers recovered from their sentences and the indexes: title, source, date lost
    short: list[tuple[str, str, int, int]] = field(default_factory=list)  # (id, title, kept, had): kept short
    orphans: int = 0  # usable sentences left out: their paper row is gone (and no index names it)
    fixed: Counter[str] = field(default_factory=Counter)  # damaged values put right in the sentences kept
    lost_columns: list[str] = field(default_factory=list)  # "papers.title": a column the schema lost
    partial_papers: int = 0  # papers kept whose rows were read value by value (some values left blank)
    partial_sentences: int = 0  # the same for the sentences kept
    corrections_recovered: int = 0
    corrections_total: int | None = None
    notes: list[str] = field(default_factory=list)  # how it was read, when that was unusual

    @property
    def papers_lost(self) -> int:
        known = len(self.lost) + len(self.lost_unread)
        if self.papers_total is None:
            return known
        return max(known, self.papers_total - self.papers_recovered)

    @property
    def sentences_lost(self) -> int | None:
        if self.sentences_total is None:
            return None
        return max(0, self.sentences_total - self.sentences_recovered)

    @property
    def complete(self) -> bool:
        """Nothing lost, as far as SQLite can tell (an uncountable table is not complete)."""
        if self.papers_total is None or self.sentences_total is None:
            return False
        corrections = self.corrections_total is None or self.corrections_recovered >= self.corrections_total
        blanks = self.lost_columns or self.partial_papers or self.partial_sentences
        return self.papers_lost == 0 and not self.sentences_lost and corrections and not blanks

    def lines(self) -> list[str]:
        papers, sentences = f"{self.papers_recovered}", f"{self.sentences_recovered:,}"
        if self.papers_total is not None:
            papers += f" of {self.papers_total}"
        papers += " paper" if (self.papers_total or self.papers_recovered) == 1 else " papers"
        if self.sentences_total is not None:
            sentences += f" of {self.sentences_total:,}"
        unknown = "" if self.papers_total is not None else "; how many papers it held cannot be read any more"
        out = [*self.notes,
               f"recovered {papers} ({sentences} sentences) from {self.source.name}{unknown}"]
        if self.untitled:
            out.append(f"{self.untitled} of them from their sentences and the database's indexes alone "
                       "(their own rows are unreadable): their titles, sources and dates are lost")
        out.extend(self._short_lines())
        if self.papers_lost:
            named = [f"{pid[:16]} “{title[:50]}” ({n} sentences)" for pid, title, n in self.lost]
            named += [f"{pid[:16]} (its row is unreadable)" for pid in self.lost_unread]
            unnamed = self.papers_lost - len(named)
            more = f"; {unnamed} more not named" if unnamed > 0 else ""
            out.append(f"lost {_count_of(self.papers_lost, 'paper')} (none of their sentences could be read "
                       f"or used): {_first_ten(named)}{more}")
        if self.corrections_total or self.corrections_recovered:
            total = "?" if self.corrections_total is None else str(self.corrections_total)
            out.append(f"recovered {self.corrections_recovered} of {total} label corrections")
        return out

    def _short_lines(self) -> list[str]:
        """The papers kept without some of their sentences, the sentences left out because their
        paper is gone, and the damaged values put right."""
        out = []
        if self.short:
            missing = sum(had - kept for _, _, kept, had in self.short)
            named = [f"{pid[:16]} “{title[:50]}” ({kept} of {had} sentences)"
                     for pid, title, kept, had in self.short]
            out.append(f"kept {_count_of(len(self.short), 'paper')} without {_count_of(missing, 'sentence')} "
                       f"that could not be read or used: {_first_ten(named)}; to make one whole again, "
                       "remove it ('rhetorica library remove ID') and add it again")
        if self.orphans:
            out.append(f"left out {_count_of(self.orphans, 'sentence')} whose paper is gone from the "
                       "database (its row is missing and no index names it)")
        partial = [_count_of(n, word) for n, word in ((self.partial_papers, "paper"),
                                                      (self.partial_sentences, "sentence")) if n]
        if partial:
            out.append(f"read {' and '.join(partial)} value by value (their rows are partly unreadable): the "
                       "values that could not be read (a title, a source, a label) are left blank (a paper "
                       "whose digest could not be read is not recognised when its file is added again)")
        if self.fixed:
            fixed = "; ".join(f"{what}: {n}" for what, n in sorted(self.fixed.items()))
            out.append(f"put right damaged values: {fixed}")
        return out


@dataclass
class RepairReport:
    """What :func:`repair` found and did."""

    diagnosis: Diagnosis
    done: list[str] = field(default_factory=list)  # one line per action
    salvage: Salvage | None = None
    kept: Path | None = None  # where the damaged (or empty) database was moved
    lost_everything: bool = False  # the library was started again empty

    @property
    def complete(self) -> bool:
        """True when nothing was lost (the library is as it was, or only its indexes were rebuilt)."""
        if self.lost_everything:
            return False
        return self.salvage is None or self.salvage.complete

    def lines(self) -> list[str]:
        out = list(self.done)
        if self.kept is not None:
            out.append(f"kept the old database as {self.kept} (delete it when you no longer need it)")
        return out


def _count_of(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _first_ten(named: list[str]) -> str:
    return "; ".join(named[:10]) + (f"; … {len(named) - 10} more" if len(named) > 10 else "")


# -- diagnosis --------------------------------------------------------------------------------------
def _read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to ``path`` (nothing is written to a damaged file). ``writable_schema``
    lets SQLite read a file shorter than its header says (a truncated file) instead of refusing it.
    A library in a folder that cannot be written is read as immutable (:func:`read_only_uri`)."""
    connection = sqlite3.connect(read_only_uri(path), uri=True, isolation_level=None)
    connection.execute("PRAGMA query_only = ON")
    connection.execute("PRAGMA writable_schema = ON")
    return connection


def _readable(path: Path) -> sqlite3.Connection | None:
    """A read-only connection to ``path`` that can read its schema, or None."""
    try:
        connection = _read_only(path)
    except sqlite3.Error:
        return None
    if _one(connection, "SELECT COUNT(*) FROM sqlite_master") is None:
        connection.close()
        return None
    return connection


PAGE_SIZES = (4096, 1024, 2048, 8192, 16384, 32768, 65536, 512)


def sqlite_header(page_size: int, pages: int) -> bytes:
    """A plain SQLite file header (rollback journal, UTF-8, no free list) for a file of ``pages``
    pages of ``page_size`` bytes: what a library database's header holds, give or take counters."""
    import struct

    versions_and_fractions = (1, 1, 0, 64, 32, 32)
    counters = (1, pages, 0, 0, 1, 4, 0, 0, 1, SCHEMA_VERSION, 0, 0)  # change, size, free list, schema...
    return struct.pack(">16sH6B12I20s2I", b"SQLite format 3\x00", page_size % 65536, *versions_and_fractions,
                       *counters, bytes(20), 1, 3040001)


def _with_new_header(source: Path, work: Path) -> tuple[sqlite3.Connection, Path] | None:
    """When the file header is damaged beyond SQLite's reading, a copy of ``source`` in ``work``
    with a rebuilt header (the page size that makes the schema readable): (connection, copy)."""
    size = source.stat().st_size
    copy = work / "header-rebuilt.sqlite3"
    for page_size in PAGE_SIZES:
        if size < 2 * page_size:
            continue
        with open(source, "rb") as original, open(copy, "wb") as out:
            original.seek(100)
            out.write(sqlite_header(page_size, size // page_size))
            shutil.copyfileobj(original, out)
        connection = _readable(copy)
        if connection is not None:
            return connection, copy
    with contextlib.suppress(FileNotFoundError):
        copy.unlink()
    return None


def _one(connection: sqlite3.Connection, sql: str, args: Sequence[Any] = ()) -> Any:
    """The first value of a query, or None when it fails or has no row."""
    try:
        row = connection.execute(sql, args).fetchone()
    except (sqlite3.Error, OverflowError, MemoryError):
        return None
    return None if row is None else row[0]


def check_database(path: Path, *, quick: bool = False) -> DatabaseHealth:
    """``PRAGMA integrity_check`` (``quick``: ``quick_check``, which skips comparing the indexes
    with the tables), then the schema and rows the readers rely on (:func:`check_library`; not
    ``quick``: every vector's values too), then each paper's sentence count against its sentences."""
    try:
        connection = _read_only(path)
    except sqlite3.Error as error:
        return DatabaseHealth("damaged", (str(error),))
    try:
        try:
            problems = _page_problems(connection, quick) or _content_problems(connection, path, quick)
            if problems:
                return DatabaseHealth("damaged", problems)
            papers = int(connection.execute("SELECT COUNT(*) FROM papers").fetchone()[0])
            sentences = int(connection.execute("SELECT COUNT(*) FROM sentences").fetchone()[0])
        except sqlite3.DatabaseError as error:
            return DatabaseHealth("damaged", (str(error),))
        return DatabaseHealth("ok", (), papers, sentences)
    finally:
        connection.close()


def _page_problems(connection: sqlite3.Connection, quick: bool) -> tuple[str, ...]:
    """What SQLite's own check reports (nothing: the file's pages are sound)."""
    pragma = "quick_check" if quick else "integrity_check"
    rows = [str(r[0]) for r in connection.execute(f"PRAGMA {pragma}(50)").fetchall()]
    if rows == ["ok"]:
        return ()
    lines = [line.strip() for row in rows for line in row.splitlines()]
    return tuple(x for x in lines if x and not x.startswith("***"))


def _content_problems(connection: sqlite3.Connection, path: Path, quick: bool) -> tuple[str, ...]:
    """What the library's readers could not use: a missing table or column, rows with wrong values,
    vectors with damaged values (not ``quick``), papers whose sentence count is not their sentences'."""
    version = _one(connection, "PRAGMA user_version")
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise LibraryError(f"{path} was written by a newer Rhetorica (library schema {version}): use it "
                           "to check this library")
    rows = check_library(connection)
    if not rows.ok:
        return tuple(rows.problems())
    values = 0 if quick else bad_vector_values(connection, rows.widths)
    if values:
        return (f"{_count_of(values, 'sentence')} with a vector holding a damaged value (not finite, or far "
                "too large)",)
    short = connection.execute(
        "SELECT p.paper_id, p.sentence_count, COUNT(s.id) FROM papers p LEFT JOIN sentences s "
        "ON s.paper = p.id GROUP BY p.id HAVING COUNT(s.id) != p.sentence_count LIMIT 20").fetchall()
    return tuple(f"paper {pid[:16]} should have {n} sentences, has {m}" for pid, n, m in short)


def check_indexes(path: Path) -> tuple[IndexHealth, ...]:
    """Each index file of a healthy database against its integrity record."""
    connection = _read_only(path)
    try:
        out = []
        for view in VIEWS:
            column = "content" if view == "content" else "function_vector"
            count = int(_one(connection, f"SELECT COUNT(*) FROM sentences WHERE {column} IS NOT NULL") or 0)
            record = IndexRecord.from_json(str(_one(connection, "SELECT value FROM meta WHERE key = ?",
                                                    (f"index.{view}.file",)) or ""))
            file = index_file_in_use(path.parent, view)
            problem = None if count == 0 else check_index_file(file, record, count)
            out.append(IndexHealth(view, file.name, problem, file != index_file(path.parent, view)))
        return tuple(out)
    finally:
        connection.close()


def diagnose(folder: str | Path, *, quick: bool = False) -> Diagnosis:
    """What state the library in ``folder`` is in (reads only; ``quick``: the database only, with
    ``PRAGMA quick_check``: what the GUI runs in the background when it lists the library)."""
    folder = Path(folder)
    missing = database_missing(folder)
    if missing:
        traces = tuple(library_traces(folder))
        return Diagnosis(folder, DatabaseHealth(missing if traces else "absent", traces))
    path = folder / DATABASE_NAME
    health = check_database(path, quick=quick)
    if health.state != "ok" or quick:
        return Diagnosis(folder, health)
    return Diagnosis(folder, health, check_indexes(path))


# -- salvage ----------------------------------------------------------------------------------------
def _rows(connection: sqlite3.Connection, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]] | None:
    try:
        return connection.execute(sql, args).fetchall()
    except (sqlite3.Error, OverflowError, MemoryError):
        return None


class _Needed:
    """The stand-in of a column a row cannot do without (:class:`PartialRead`)."""


NEEDED = _Needed()


@dataclass(frozen=True)
class PerRow:
    """The stand-in of a unique column (a paper's sha256): made from the row's rowid, so that two rows
    read so never collide, and never a real digest (re-adding that source is not mistaken for it)."""

    prefix: str

    def for_row(self, rowid: int) -> str:
        return f"{self.prefix}{rowid}"


@dataclass
class PartialRead:
    """How :func:`scan_rows` reads a row that cannot be read whole (a value SQLite cannot decode, an
    overflow page that is damaged): value by value, each value that fails read as its column's
    stand-in (NEEDED: the row is lost without it). ``rowids``: the rows read so."""

    stand_ins: tuple[Any, ...]
    rowids: set[int] = field(default_factory=set)


def _row_by_values(connection: sqlite3.Connection, table: str, columns: Sequence[str], rowid: int,
                   partial: PartialRead) -> Row | None:
    where = f"FROM {table} WHERE {columns[0]} = ?"
    if _rows(connection, f"SELECT {columns[0]} {where}", (rowid,)) != [(rowid,)]:
        return None
    values = []
    for column, stand_in in zip(columns, partial.stand_ins, strict=True):
        read = _rows(connection, f"SELECT {column} {where}", (rowid,))
        if read:
            values.append(read[0][0])
        elif stand_in is NEEDED:
            return None
        else:
            values.append(stand_in.for_row(rowid) if isinstance(stand_in, PerRow) else stand_in)
    partial.rowids.add(rowid)
    return tuple(values)


def _one_by_one(connection: sqlite3.Connection, table: str, columns: Sequence[str], rowids: range,
                partial: PartialRead | None) -> list[Row]:
    """The rows of these rowids, each read alone (a row that cannot be read whole: value by value,
    with ``partial``)."""
    select = f"SELECT {', '.join(columns)} FROM {table} WHERE {columns[0]} = ?"
    found: list[Row] = []
    for rowid in rowids:
        rows = _rows(connection, select, (rowid,))
        if rows is None and partial is not None:
            row = _row_by_values(connection, table, columns, rowid, partial)
            rows = [] if row is None else [row]
        found.extend(rows or ())
    return found


def _with_missing(connection: sqlite3.Connection, table: str, columns: Sequence[str], rows: list[Row],
                  rowids: range, partial: PartialRead | None) -> list[Row]:
    """``rows`` (a range scan's) with the rows of ``rowids`` it did not give, looked up one by one: a
    damaged page can stop a range scan silently while each row is still found by its rowid."""
    have = {row[0] for row in rows}
    missing = [rowid for rowid in rowids if rowid not in have]
    found = list(rows)
    for rowid in missing:
        found += _one_by_one(connection, table, columns, range(rowid, rowid + 1), partial)
    return sorted(found, key=lambda row: row[0])


def scan_rows(connection: sqlite3.Connection, table: str, columns: Sequence[str], highest: int,
              ctx: JobContext | None = None, partial: PartialRead | None = None) -> Iterator[tuple[Any, ...]]:
    """Every row of ``table`` that can be read, by rowid (``columns[0]`` is the rowid), in order:
    ``CHUNK`` rowids per query; a chunk that fails is read again one rowid at a time (and a row that
    fails, value by value with ``partial``). The scan goes at least to ``highest``, then on until
    ``GIVE_UP`` chunks in a row give nothing."""
    ctx = ensure_context(ctx)
    select = f"SELECT {', '.join(columns)} FROM {table} WHERE {columns[0]} "
    start, empty, last = 1, 0, 0
    while start <= highest or empty < GIVE_UP:
        ctx.check()
        stop = start + CHUNK - 1
        rows = _rows(connection, select + "BETWEEN ? AND ?", (start, stop))
        if rows is None:
            rows = _one_by_one(connection, table, columns, range(start, stop + 1), partial)
        elif len(rows) < min(stop, highest) - start + 1:  # a damaged tree can end a range scan early
            expected = range(start, min(stop, highest) + 1)
            rows = _with_missing(connection, table, columns, rows, expected, partial)
        if rows:
            empty, last = 0, int(rows[-1][0])
            highest = max(highest, last)
        else:
            empty += 1 if start > highest else 0
        yield from rows
        start = stop + 1


def _count(connection: sqlite3.Connection, table: str, indexes: Sequence[str] = ()) -> int | None:
    """``COUNT(*)`` of a table, through the table or, when it is damaged, one of its indexes."""
    for source in (table, f"{table} NOT INDEXED", *(f"{table} INDEXED BY {index}" for index in indexes)):
        value = _one(connection, f"SELECT COUNT(*) FROM {source}")
        if isinstance(value, int):
            return value
    return None


def _highest(connection: sqlite3.Connection, table: str) -> int:
    """The highest rowid ``table`` has had, as far as can be read (0: unknown)."""
    values = [_one(connection, f"SELECT MAX(rowid) FROM {table}"),
              _one(connection, "SELECT seq FROM sqlite_sequence WHERE name = ?", (table,))]
    return max([v for v in values if isinstance(v, int)], default=0)


def _texts(row: Sequence[Any], positions: Sequence[int]) -> bool:
    return all(isinstance(row[i], str) for i in positions)


# What a column a damaged schema lacks is read as (a column missing from here cannot be done without).
PAPER_DEFAULTS = {"title": "''", "source": "''", "note": "''", "kind": "'recovered'", "model_id": "''",
                  "added": "0", "sentence_count": "0"}
SENTENCE_DEFAULTS = {"position": "id", "section": "''", "section_kind": "''", "role": "''",
                     "role_confidence": "0", "function": "''", "function_confidence": "0",
                     "function_vector": "NULL"}
BATCH = 2000  # sentences written per transaction
# What a value that cannot be read is taken as, in a row read value by value (PartialRead).
# A paper keeps its id and paper id; its digest (the sha256 of its source, used to skip duplicates)
# becomes "unreadable-<rowid>".
PAPER_STAND_INS = (NEEDED, NEEDED, PerRow("unreadable-"), "", "", "", "recovered", "", 0.0, 0)
SENTENCE_STAND_INS = (NEEDED, NEEDED, NEEDED, NEEDED, "", "", "", 0.0, "", 0.0, NEEDED, NEEDED)


def _selected(src: sqlite3.Connection, table: str, columns: Sequence[str], defaults: dict[str, str],
              report: Salvage) -> list[str] | None:
    """The expressions that read ``columns`` of ``table``: the column where the table has it, else its
    default (the report says so); None when a column without a default is missing (or the schema
    cannot be read)."""
    have = {row[1] for row in _rows(src, f"PRAGMA table_info({table})", ()) or ()}
    if not have or any(column not in have and column not in defaults for column in columns):
        return None
    lacking = [column for column in columns if column not in have]
    if lacking:
        report.lost_columns += [f"{table}.{column}" for column in lacking]
        report.notes.append(f"the {table} table has lost its column(s) {', '.join(lacking)}: read as "
                            f"{', '.join(defaults[column] for column in lacking)}")
    return [column if column in have else f"{defaults[column]} AS {column}" for column in columns]


class _Target:
    """The new database the salvage writes into (a fresh library store)."""

    def __init__(self, folder: Path) -> None:
        self.store = open_store(folder, allow_new=True)
        self.db = self.store.connection
        self.db.execute("PRAGMA synchronous = OFF")  # the file is flushed once, before it is moved in

    def add_papers(self, papers: Sequence[Row]) -> None:
        with self.store.transaction() as db:
            db.executemany(_insert("papers", PAPER_COLUMNS), papers)

    def add_sentences(self, sentences: Sequence[Row]) -> None:
        with self.store.transaction() as db:
            db.executemany(_insert("sentences", SENTENCE_COLUMNS), sentences)

    def settle(self, papers: dict[int, Row]) -> dict[int, int]:
        """Each paper's sentence count made the number of its sentences kept; the papers that had
        sentences and kept none removed. Returns the sentences kept per paper."""
        kept = {int(pid): int(n) for pid, n in
                self.db.execute("SELECT paper, COUNT(*) FROM sentences GROUP BY paper").fetchall()}
        with self.store.transaction() as db:
            db.executemany("UPDATE papers SET sentence_count = ? WHERE id = ?",
                           [(kept.get(pid, 0), pid) for pid, row in papers.items()
                            if kept.get(pid, 0) != row[9]])
            db.executemany("DELETE FROM papers WHERE id = ?",
                           [(pid,) for pid, row in papers.items() if row[9] and not kept.get(pid)])
        return kept

    def finish(self, highest_sentence: int, meta: dict[str, str]) -> None:
        """Keep sentence ids from being reused, copy the meta, write everything to disk, close."""
        with self.store.transaction() as db:
            if db.execute("SELECT 1 FROM sqlite_sequence WHERE name = 'sentences'").fetchone():
                db.execute("UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = 'sentences'",
                           (highest_sentence,))
            elif highest_sentence:
                db.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('sentences', ?)",
                           (highest_sentence,))
            db.executemany("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
                           "SET value = excluded.value", list(meta.items()))
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.execute("PRAGMA journal_mode = DELETE")  # one self-contained file to move into place
        self.store.close()


def _insert(table: str, columns: Sequence[str], verb: str = "") -> str:
    return f"INSERT {verb} INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


FIXED_PAPER = "paper titles, sources, notes, kinds, models, dates or counts that were damaged (now blank)"


def _clean_paper(row: Row, report: Salvage) -> Row | None:
    """A paper row fit to keep (None: without its id, paper id or sha256 it cannot be); a damaged
    title, source, note, kind, model, date or sentence count becomes its stand-in (PAPER_STAND_INS)."""
    if not (isinstance(row[0], int) and isinstance(row[1], str) and row[1] and isinstance(row[2], str)):
        return None
    values = list(row)
    count = row[9]
    whole_count = isinstance(count, int) and not isinstance(count, bool) and count >= 0
    sound = [*(isinstance(value, str) for value in row[3:8]), is_number(row[8]), whole_count]
    for column, ok in enumerate(sound, 3):
        if not ok:
            values[column] = PAPER_STAND_INS[column]
    if not all(sound):
        report.fixed[FIXED_PAPER] += 1
    return tuple(values)


def _read_papers(src: sqlite3.Connection, report: Salvage,
                 ctx: JobContext) -> tuple[dict[int, Row], dict[int, Row]]:
    """The papers whose rows can be read and are well-formed, and those rebuilt from the indexes."""
    columns = _selected(src, "papers", PAPER_COLUMNS, PAPER_DEFAULTS, report)
    partial = PartialRead(PAPER_STAND_INS)
    rows = scan_rows(src, "papers", columns, _highest(src, "papers"), ctx, partial) if columns else ()
    cleaned = (_clean_paper(row, report) for row in rows)
    papers = {row[0]: row for row in cleaned if row is not None}
    report.partial_papers = sum(1 for rowid in partial.rowids if rowid in papers)
    return papers, _papers_from_indexes(src, papers)


def _vector_widths(src: sqlite3.Connection, columns: Sequence[str], highest: int, ctx: JobContext) -> Widths:
    """The library's vector widths: the sizes most readable sentences' vectors have."""
    function = blob_size("function_vector") if columns[11] == "function_vector" else "-1"
    sizes = scan_rows(src, "sentences", ("id", blob_size("content"), function), highest, ctx)
    return widths_of([(row[1], row[2]) for row in sizes])


def _copy_sentences(src: sqlite3.Connection, target: _Target, papers: dict[int, Row], report: Salvage,
                    ctx: JobContext) -> int:
    """Copy every readable, usable sentence of a known paper (each position once), put right where a
    label or number is damaged; returns the highest sentence id seen or recorded."""
    highest = _highest(src, "sentences")
    columns = _selected(src, "sentences", SENTENCE_COLUMNS, SENTENCE_DEFAULTS, report)
    if columns is None:
        report.notes.append("the sentences table cannot be read: no sentence could be recovered")
        return highest
    widths = _vector_widths(src, columns, highest, ctx)
    seen: set[tuple[int, int]] = set()
    batch: list[Row] = []
    highest_seen = 0
    partial = PartialRead(SENTENCE_STAND_INS)
    for number, row in enumerate(scan_rows(src, "sentences", columns, highest, ctx, partial)):
        highest_seen = max(highest_seen, int(row[0]))
        if number % CHUNK == 0:
            ctx.progress(min(highest_seen, highest), max(highest, highest_seen, 1), "reading the sentences")
        clean = clean_sentence(row, widths)
        if clean.row is None or (clean.row[1], clean.row[2]) in seen:
            continue  # unusable (no text or content vector), or a position seen already
        if clean.row[1] not in papers:
            report.orphans += 1
            continue
        seen.add((clean.row[1], clean.row[2]))
        report.fixed.update(clean.fixed)
        report.partial_sentences += clean.row[0] in partial.rowids
        batch.append(clean.row)
        if len(batch) >= BATCH:
            target.add_sentences(batch)
            batch = []
    target.add_sentences(batch)
    return max(highest_seen, highest)


def _salvage_papers(src: sqlite3.Connection, target: _Target, report: Salvage,
                    ctx: JobContext) -> int:
    """Copy the papers with the sentences that can be kept; returns the highest sentence id seen or
    recorded."""
    papers, from_indexes = _read_papers(src, report, ctx)
    papers.update(from_indexes)
    target.add_papers(list(papers.values()))
    highest = _copy_sentences(src, target, papers, report, ctx)
    kept = target.settle(papers)
    recovered = {pid for pid, row in papers.items() if kept.get(pid) or not row[9]}
    report.papers_recovered = len(recovered)
    report.sentences_recovered = sum(kept.values())
    report.untitled = len(recovered & set(from_indexes))
    report.short = [(row[1], row[3], kept[pid], row[9]) for pid, row in papers.items()
                    if pid in recovered and kept.get(pid, 0) < row[9]]
    report.lost = [(row[1], row[3], row[9]) for pid, row in papers.items()
                   if pid not in recovered and pid not in from_indexes]
    report.lost_unread = [row[1] for pid, row in from_indexes.items() if pid not in recovered]
    known = {row[1] for row in papers.values()}
    report.lost_unread += [str(pid) for rowid, pid in _indexed(src, "sqlite_autoindex_papers_1", "paper_id")
                           if rowid not in papers and pid not in known]
    return highest


def _indexed(src: sqlite3.Connection, index: str, column: str) -> list[tuple[int, Any]]:
    """(rowid, value) of the papers as a unique index of ``column`` holds them (read from the index
    alone, so a paper whose own row is damaged is still named); [] when the index is unreadable."""
    return _rows(src, f"SELECT id, {column} FROM papers INDEXED BY {index}", ()) or []



def _papers_from_indexes(src: sqlite3.Connection, read: dict[int, Row]) -> dict[int, Row]:
    """Paper rows rebuilt from the indexes for the papers whose own rows cannot be read: the id
    (paper-id index), the sha256 (sha256 index) and the sentence count (sentences index) must all
    be there; the title, source, note and date are lost, the model id is the one every readable
    paper has (else empty)."""
    ids = {rowid: pid for rowid, pid in _indexed(src, "sqlite_autoindex_papers_1", "paper_id")
           if rowid not in read and isinstance(pid, str) and pid}
    hashes = dict(_indexed(src, "sqlite_autoindex_papers_2", "sha256"))
    count = "SELECT COUNT(*) FROM sentences INDEXED BY sentences_by_paper WHERE paper = ?"
    counts = {rowid: _one(src, count, (rowid,)) for rowid in ids}  # one by one: damage costs only its papers
    models = {row[7] for row in read.values()}
    model = models.pop() if len(models) == 1 else ""
    return {rowid: (rowid, pid, hashes[rowid], "", "", "recovered by 'rhetorica library doctor'", "recovered",
                    model, time.time(), counts[rowid])
            for rowid, pid in ids.items()
            if isinstance(hashes.get(rowid), str) and isinstance(counts[rowid], int) and counts[rowid] > 0}


def _metadata_ok(row: tuple[Any, ...]) -> bool:
    year = row[2]
    return (isinstance(row[0], int) and _texts(row, (1, 3, 4))
            and (year is None or (isinstance(year, int) and not isinstance(year, bool))))


def _salvage_metadata(src: sqlite3.Connection, target: _Target, ctx: JobContext) -> None:
    """Authors, year, DOI and reference-manager key of the recovered papers, where the source's schema
    has them and their row can be read (a paper whose metadata row is damaged keeps "no metadata")."""
    columns = {row[1] for row in _rows(src, "PRAGMA table_info(papers)", ()) or ()}
    if not set(METADATA_COLUMNS) <= columns:
        return
    rows = [row for row in scan_rows(src, "papers", METADATA_COLUMNS, _highest(src, "papers"), ctx)
            if _metadata_ok(row)]
    with target.store.transaction() as db:
        db.executemany("UPDATE papers SET authors = ?, year = ?, doi = ?, source_key = ? WHERE id = ?",
                       [(*row[1:], row[0]) for row in rows])


def _salvage_corrections(src: sqlite3.Connection, target: _Target, report: Salvage, ctx: JobContext) -> None:
    if _one(src, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'corrections'") != 1:
        return
    from core.library.corrections import TABLE

    report.corrections_total = _count(src, "corrections")
    target.db.execute(TABLE)
    rows = scan_rows(src, "corrections", CORRECTION_COLUMNS, _highest(src, "corrections"), ctx)
    good = [row for row in rows
            if isinstance(row[0], int) and is_number(row[1]) and isinstance(row[4], int)
            and _texts(row, (2, 3, 5, 6, 7, 8, 9, 10, 11, 12))]
    with target.store.transaction() as db:
        for row in good:
            cursor = db.execute(_insert("corrections", CORRECTION_COLUMNS, "OR IGNORE"), row)
            report.corrections_recovered += cursor.rowcount


def salvage(source: Path, target_folder: Path, ctx: JobContext | None = None) -> Salvage:
    """Copy what can be read of the library database ``source`` into a new library database in
    ``target_folder`` (see the module docstring for the rule); ``source`` is only read."""
    ctx = ensure_context(ctx)
    report = Salvage(source)
    target = _Target(target_folder)
    meta: dict[str, str] = {}
    highest = 0
    src = _readable(source)
    if src is None:
        rebuilt = _with_new_header(source, target_folder)
        if rebuilt is not None:
            src = rebuilt[0]
            report.notes.append(f"the file header of {source.name} is damaged: read it with a rebuilt one")
    if src is not None:
        try:
            report.papers_total = _count(src, "papers", ("sqlite_autoindex_papers_1",
                                                         "sqlite_autoindex_papers_2"))
            report.sentences_total = _count(src, "sentences", ("sentences_by_paper",))
            highest = _salvage_papers(src, target, report, ctx)
            _salvage_metadata(src, target, ctx)
            _salvage_corrections(src, target, report, ctx)
            rows = _rows(src, "SELECT key, value FROM meta", ()) or []
            meta = {k: v for k, v in rows
                    if isinstance(k, str) and isinstance(v, str) and not k.startswith("index.")}
        finally:
            src.close()
    meta["salvaged"] = json.dumps({"from": source.name, "at": _now(), "papers": report.papers_recovered})
    target.finish(highest, meta)
    return report


# -- repair -----------------------------------------------------------------------------------------
def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _keep_name(folder: Path) -> Path:
    """A free ``library.sqlite3.damaged-<time>`` name."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = folder / f"{DATABASE_NAME}{DAMAGED_SUFFIX}{stamp}"
    number = 1
    while any(Path(f"{path}{suffix}").exists() for suffix in ("", "-wal", "-shm")):
        number += 1
        path = folder / f"{DATABASE_NAME}{DAMAGED_SUFFIX}{stamp}-{number}"
    return path


def _set_aside(folder: Path) -> Path | None:
    """Move the database (and its write-ahead log and shared-memory files, first) to a
    ``damaged-<time>`` name; returns it (None: there was no database file)."""
    from core.fileio import fsync_dir

    database = folder / DATABASE_NAME
    if not database.exists():
        return None
    kept = _keep_name(folder)
    for suffix in ("-wal", "-shm", ""):
        part = Path(f"{database}{suffix}")
        if part.exists():
            os.replace(part, f"{kept}{suffix}")
    fsync_dir(folder)
    return kept


def _drop_indexes(folder: Path) -> None:
    """Remove the index files (caches of the database, rebuilt from it), under today's and earlier names."""
    for name in (*INDEX_FILES.values(), *EARLIER_INDEX_FILES.values()):
        for path in (folder / name, folder / f".{name}.tmp"):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


def _replace_database(folder: Path, source: Path, ctx: JobContext) -> tuple[Salvage, Path | None]:
    """Salvage ``source`` into a new database, then move the current one aside and the new one in."""
    from core.fileio import fsync_dir

    for stale in folder.glob(".doctor-*"):  # left by a repair that was killed: only ever ours
        shutil.rmtree(stale, ignore_errors=True)
    work = folder / f".doctor-{os.getpid()}"
    work.mkdir()
    try:
        report = salvage(source, work, ctx)
        new = work / DATABASE_NAME
        with open(new, "rb+") as handle:
            os.fsync(handle.fileno())
        kept = _set_aside(folder)
        os.replace(new, folder / DATABASE_NAME)
        fsync_dir(folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return report, kept


def _rebuild(folder: Path, views: Sequence[str], ctx: JobContext) -> tuple[dict[str, int], list[str]]:
    """Rebuild these views' indexes from the database (opening the library moves index files that
    have their earlier names); returns the sentences each rebuilt index holds (the database's
    sentences with a vector of its view) and a line per file moved."""
    from core.library.library import Library

    with Library(folder) as library:
        counts = {}
        for view in views:
            index = library.rebuild_index(view, ctx)
            counts[view] = 0 if index is None else len(index)
        moved = [f"renamed {move.earlier.name} to {move.path.name}" for move in library.renamed
                 if move.moved and move.view not in views]
        return counts, moved


def _rebuilt_line(counts: dict[str, int]) -> str:
    """"rebuilt content.ann from the database (651 sentences)", each index with its own count when
    they differ."""
    if len(set(counts.values())) == 1:
        names = ", ".join(INDEX_FILES[view] for view in counts)
        return f"rebuilt {names} from the database ({next(iter(counts.values())):,} sentences)"
    each = ", ".join(f"{INDEX_FILES[view]} ({n:,} sentences)" for view, n in counts.items())
    return f"rebuilt {each} from the database"


def repair(folder: str | Path, ctx: JobContext | None = None) -> RepairReport:
    """Diagnose the library in ``folder`` and repair it (see the module docstring)."""
    folder = Path(folder)
    ctx = ensure_context(ctx)
    ctx.progress(0, 1, "checking the library")
    diagnosis = diagnose(folder)
    report = RepairReport(diagnosis)
    state = diagnosis.database.state
    if state == "absent":
        raise LibraryError(f"no library in {folder}: nothing to repair (check the folder)")
    if state == "ok":
        stale = [index.view for index in diagnosis.indexes if index.problem is not None]
        counts, moved = _rebuild(folder, stale, ctx)  # opening it also writes a missing library marker
        report.done.extend(moved)
        report.done.append(_rebuilt_line(counts) if stale
                           else "nothing to repair" if not moved else "nothing else to repair")
        return report
    if state == "damaged":
        source: Path | None = folder / DATABASE_NAME
    else:
        source = next((p for p in damaged_copies(folder) if p.stat().st_size > 0), None)
    if source is None:  # missing or empty, and no copy to restore from
        report.kept = _set_aside(folder) if state == "empty" else None
        open_store(folder, allow_new=True).close()
        _drop_indexes(folder)
        report.lost_everything = True
        report.done.append(f"started the library again, empty: its papers were in the {state} database and "
                           "there is no copy to restore them from; add them again")
        return report
    if state != "damaged":
        report.done.append(f"restoring from {source.name}, the damaged copy an earlier repair kept "
                           f"(papers added after that repair are not in it)")
    report.salvage, report.kept = _replace_database(folder, source, ctx)  # an empty file is kept too
    report.done.extend(report.salvage.lines())
    _drop_indexes(folder)
    counts, _ = _rebuild(folder, VIEWS, ctx)
    report.done.append(f"wrote a new {DATABASE_NAME} and {_rebuilt_line(counts)}")
    return report
