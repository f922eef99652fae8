"""What the library's readers rely on, checked: the tables and columns they read, and the values of
the rows (vector blobs of the library's width, known role and section-kind labels, numbers where
numbers are kept, sentences whose paper is there).

SQLite's own checks (``PRAGMA integrity_check``) see a file whose pages are damaged; they do not see
rows whose values are wrong but well-formed on disk: a content blob of two bytes, a role "evil", a
confidence "abc", a dropped column, sentences whose paper row is gone. Search, alignment and
suggestions would crash on those, so every library is checked when it is opened
(:func:`check_library`: one pass over the sentences, about half a second for 250,000 of them) and a
statement that reads a table with such damage is one line (``core.library.store.DamagedLibraryError``,
raised by the library's connection); the doctor (``core.library.doctor``) finds the same faults and
salvages the rows with :func:`clean_sentence`.

Function labels are checked only for being text: their ids come from the taxonomy of the model that
labelled the paper, which changes between versions, and an id this version does not know is shown,
never looked up.

The width of each view's vectors is the size most of its blobs have (a library is embedded by one
model); the blobs of another size are the damaged ones.
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.document import SectionKind
from core.taxonomy.labels import ROLES

KNOWN_ROLES = frozenset((*ROLES, ""))  # "": stored without a role
KNOWN_SECTION_KINDS = frozenset((*(kind.value for kind in SectionKind), ""))  # "": no section heading
# Embedding values are small (the library's vectors are unit length): a value beyond this is a damaged
# one (a flipped exponent byte), which would overflow the similarity sums.
VECTOR_LIMIT = 1e4
NEUTRAL_ROLE = "other"  # what an unknown role becomes in a repair (with confidence 0: not confident)

# The columns each table must have for the library to be read (schema 1; schema 2 adds METADATA).
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "meta": ("key", "value"),
    "papers": ("id", "paper_id", "sha256", "title", "source", "note", "kind", "model_id", "added",
               "sentence_count"),
    "sentences": ("id", "paper", "position", "text", "section", "section_kind", "role", "role_confidence",
                  "function", "function_confidence", "content", "function_vector"),
}
METADATA_COLUMNS = ("authors", "year", "doi", "source_key")


def _sql_list(values: frozenset[str]) -> str:
    return ", ".join("'" + value.replace("'", "''") + "'" for value in sorted(values))


_NUMBER = "('integer', 'real')"
# (what is wrong, the SQL test of a sentence row); the vector sizes are tested against the widths.
SENTENCE_TESTS: tuple[tuple[str, str], ...] = (
    ("a text, heading or function label that is not text",
     "typeof(text) != 'text' OR typeof(section) != 'text' OR typeof(function) != 'text'"),
    ("an unknown role", f"typeof(role) != 'text' OR role NOT IN ({_sql_list(KNOWN_ROLES)})"),
    ("an unknown section kind",
     f"typeof(section_kind) != 'text' OR section_kind NOT IN ({_sql_list(KNOWN_SECTION_KINDS)})"),
    ("a confidence or position that is not a number",
     f"typeof(role_confidence) NOT IN {_NUMBER} OR typeof(function_confidence) NOT IN {_NUMBER} "
     "OR typeof(position) != 'integer'"),
    ("no paper (its paper row is gone)",
     "typeof(paper) != 'integer' OR paper NOT IN (SELECT id FROM papers)"),
)
PAPER_TESTS: tuple[tuple[str, str], ...] = (
    ("no id", "typeof(paper_id) != 'text' OR paper_id = '' OR typeof(sha256) != 'text'"),
    ("a title, source, note, kind or model that is not text",
     "typeof(title) != 'text' OR typeof(source) != 'text' OR typeof(note) != 'text' "
     "OR typeof(kind) != 'text' OR typeof(model_id) != 'text'"),
    ("a date or sentence count that is not a number",
     f"typeof(added) NOT IN {_NUMBER} OR typeof(sentence_count) != 'integer'"),
)


@dataclass(frozen=True)
class Widths:
    """The number of float32 values of each view's vectors (None: the library has none)."""

    content: int | None = None
    function: int | None = None


@dataclass(frozen=True)
class RowFault:
    """Rows of one table that have one kind of damage."""

    table: str
    what: str
    count: int

    def line(self) -> str:
        noun = "sentence" if self.table == "sentences" else "paper"
        return f"{self.count} {noun}{'' if self.count == 1 else 's'} with {self.what}"


@dataclass(frozen=True)
class MissingPart:
    """A table, or a column of one (``column`` set), that the readers need and the database lacks."""

    table: str
    column: str = ""

    def line(self) -> str:
        return f"the column {self.table}.{self.column} is missing" if self.column else \
            f"the table {self.table} is missing"


@dataclass(frozen=True)
class LibraryCheck:
    """What :func:`check_library` found: tables or columns missing, rows with wrong values."""

    missing: tuple[MissingPart, ...] = ()
    faults: tuple[RowFault, ...] = ()
    widths: Widths = Widths()

    @property
    def ok(self) -> bool:
        return not self.missing and not self.faults

    def problems(self) -> list[str]:
        """One line per problem (what the doctor prints)."""
        return [part.line() for part in self.missing] + [fault.line() for fault in self.faults]

    def damaged_tables(self) -> dict[str, str]:
        """Each table with a problem, and what is wrong with it (its first problem, and how many more)."""
        lines: dict[str, list[str]] = {}
        parts: list[MissingPart | RowFault] = [*self.missing, *self.faults]
        for part in parts:
            lines.setdefault(part.table, []).append(part.line())
        return {table: found[0] + (f"; {len(found) - 1} more problem(s)" if len(found) > 1 else "")
                for table, found in lines.items()}


def missing_schema(connection: sqlite3.Connection) -> list[MissingPart]:
    """The tables and columns the library's readers need that the database lacks."""
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    missing: list[MissingPart] = []
    for table, wanted in TABLE_COLUMNS.items():
        have = {str(row[1]) for row in connection.execute(f"PRAGMA table_info({table})").fetchall()}
        if not have:
            missing.append(MissingPart(table))
            continue
        if table == "papers" and isinstance(version, int) and version >= 2:
            wanted = (*wanted, *METADATA_COLUMNS)
        missing.extend(MissingPart(table, column) for column in wanted if column not in have)
    return missing


def blob_size(column: str) -> str:
    """The size of ``column`` when it is a blob; -1 for any other value (NULL included)."""
    return f"CASE WHEN typeof({column}) = 'blob' THEN length({column}) ELSE -1 END"


def _widest_share(sizes: Counter[int]) -> int | None:
    """The blob size most rows have (in float32 values), or None when no row has a usable blob."""
    usable = Counter({size: n for size, n in sizes.items() if size > 0 and size % 4 == 0})
    return usable.most_common(1)[0][0] // 4 if usable else None


SAMPLE = 64  # sentences at each end of the table whose vector sizes suggest the library's widths


def _likely_widths(connection: sqlite3.Connection) -> Widths:
    """The widths most of the first and last sentences' vectors have (a guess the full pass confirms:
    grouping every row by its sizes would cost several times the pass)."""
    sizes = f"SELECT {blob_size('content')}, {blob_size('function_vector')} FROM sentences ORDER BY id"
    rows = [*connection.execute(f"{sizes} LIMIT {SAMPLE}").fetchall(),
            *connection.execute(f"{sizes} DESC LIMIT {SAMPLE}").fetchall()]
    return widths_of(rows)


def _counted_widths(connection: sqlite3.Connection) -> Widths:
    """The widths most sentences' vectors have, counted over every row."""
    groups = connection.execute(f"SELECT {blob_size('content')}, {blob_size('function_vector')}, COUNT(*) "
                                "FROM sentences GROUP BY 1, 2").fetchall()
    content: Counter[int] = Counter()
    function: Counter[int] = Counter()
    for content_size, function_size, count in groups:
        content[int(content_size)] += int(count)
        function[int(function_size)] += int(count)
    return Widths(_widest_share(content), _widest_share(function))


def _wrong_size(column: str, width: int | None, optional: bool) -> str:
    """The SQL test of a vector blob that is not ``width`` float32 values (NULL allowed when ``optional``)."""
    test = f"typeof({column}) != 'blob' OR length({column}) != {4 * width if width else -1}"
    return f"{column} IS NOT NULL AND ({test})" if optional else test


def _sentence_counts(connection: sqlite3.Connection, widths: Widths) -> tuple[int, ...]:
    """(rows, content vectors of another size, function vectors of another size, then one count per
    SENTENCE_TESTS entry), in one pass over the sentences."""
    tests = [_wrong_size("content", widths.content, False),
             _wrong_size("function_vector", widths.function, True), *(test for _, test in SENTENCE_TESTS)]
    sums = ", ".join(f"SUM(CASE WHEN {test} THEN 1 ELSE 0 END)" for test in tests)
    row = connection.execute(f"SELECT COUNT(*), {sums} FROM sentences").fetchone()
    return tuple(int(value or 0) for value in row)


def _sentence_faults(connection: sqlite3.Connection) -> tuple[list[RowFault], Widths]:
    """The sentences' faults, in one pass when the widths the first and last rows suggest are those
    of most rows (else a second pass counts the widths)."""
    widths = _likely_widths(connection)
    counts = _sentence_counts(connection, widths)
    if 2 * max(counts[1], counts[2]) > counts[0]:  # most rows disagree: the guess was wrong
        widths = _counted_widths(connection)
        counts = _sentence_counts(connection, widths)
    faults = [RowFault("sentences", "no content vector, or one of the wrong size", counts[1]),
              RowFault("sentences", "a function vector of the wrong size", counts[2])]
    faults += [RowFault("sentences", what, count) for (what, _), count in zip(SENTENCE_TESTS, counts[3:])]
    return [fault for fault in faults if fault.count], widths


def _paper_faults(connection: sqlite3.Connection) -> list[RowFault]:
    tests = ", ".join(f"SUM(CASE WHEN {test} THEN 1 ELSE 0 END)" for _, test in PAPER_TESTS)
    counts = connection.execute(f"SELECT {tests} FROM papers").fetchone()
    faults = [RowFault("papers", what, int(count or 0)) for (what, _), count in zip(PAPER_TESTS, counts)]
    return [fault for fault in faults if fault.count]


def check_library(connection: sqlite3.Connection) -> LibraryCheck:
    """The library database's schema and rows, against what its readers rely on (reads only; one pass
    over each table whose columns are all there). SQLite errors (a damaged file) propagate."""
    missing = missing_schema(connection)
    incomplete = {part.table for part in missing}
    faults = [] if "papers" in incomplete else _paper_faults(connection)
    widths = Widths()
    if not incomplete & {"papers", "sentences"}:
        sentence_faults, widths = _sentence_faults(connection)
        faults.extend(sentence_faults)
    return LibraryCheck(tuple(missing), tuple(faults), widths)


# -- salvaging rows (the doctor) --------------------------------------------------------------------
def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_vector(blob: Any, width: int | None) -> bool:
    """A well-formed float32 vector blob of ``width`` values (any width when None), all finite and
    within VECTOR_LIMIT."""
    if not isinstance(blob, bytes) or not blob or len(blob) % 4:
        return False
    if width is not None and len(blob) != 4 * width:
        return False
    values = np.frombuffer(blob, dtype=np.float32)
    return bool(np.isfinite(values).all() and np.abs(values).max() <= VECTOR_LIMIT)


def bad_vector_values(connection: sqlite3.Connection, widths: Widths, batch: int = 5000) -> int:
    """How many sentences have a vector of the library's width with a value that is not finite or
    beyond VECTOR_LIMIT (a flipped byte; SQL cannot see into blobs, so this decodes every vector: the
    doctor's check, not the one made on opening)."""
    bad, last = 0, 0
    while True:
        rows = connection.execute("SELECT id, content, function_vector FROM sentences WHERE id > ? "
                                  "ORDER BY id LIMIT ?", (last, batch)).fetchall()
        if not rows:
            return bad
        for _, content, function in rows:
            sized = [(blob, width) for blob, width in ((content, widths.content), (function, widths.function))
                     if isinstance(blob, bytes) and width and len(blob) == 4 * width]
            bad += any(not is_vector(blob, width) for blob, width in sized)
        last = int(rows[-1][0])


def section_kind_of(heading: str) -> str:
    """The section kind a heading names ("" for no heading)."""
    from core.pdf.headings import is_abstract_heading, section_kind

    if not heading:
        return ""
    return "abstract" if is_abstract_heading(heading) else str(section_kind(heading).value)


@dataclass(frozen=True)
class CleanSentence:
    """A sentence row as it can be kept (``row`` None: it cannot be) and the values put right in it."""

    row: tuple[Any, ...] | None
    fixed: tuple[str, ...] = ()


# What a repair put right, as the report counts it.
FIXED_HEADING = "section headings that were not text (now none)"
FIXED_KIND = "unknown section kinds (now their heading's)"
FIXED_ROLE = f"unknown roles or role confidences (now '{NEUTRAL_ROLE}' or not confident)"
FIXED_FUNCTION = "function labels or confidences that were not text or numbers (now unknown)"


def _fix_labels(values: list[Any]) -> list[str]:
    """Put right the labels and numbers of a sentence row (columns as TABLE_COLUMNS["sentences"]);
    returns what was put right."""
    fixed = []
    if not isinstance(values[4], str):
        values[4] = ""
        fixed.append(FIXED_HEADING)
    if values[5] not in KNOWN_SECTION_KINDS:
        values[5] = section_kind_of(values[4])
        fixed.append(FIXED_KIND)
    if values[6] not in KNOWN_ROLES or not is_number(values[7]):
        values[6], values[7] = (values[6] if values[6] in KNOWN_ROLES else NEUTRAL_ROLE), 0.0
        fixed.append(FIXED_ROLE)
    if not isinstance(values[8], str) or not is_number(values[9]):
        values[8], values[9] = (values[8] if isinstance(values[8], str) else ""), 0.0
        fixed.append(FIXED_FUNCTION)
    return fixed


def clean_sentence(row: Sequence[Any], widths: Widths) -> CleanSentence:
    """A sentence row (columns as TABLE_COLUMNS["sentences"]) fit to keep: without its id, paper,
    position, text or content vector, or with a damaged function vector, it cannot be (a paper whose
    sentences lack some function vectors is aligned on content alone); a damaged label becomes a
    neutral one (an unknown role "other" with confidence 0, an unknown section kind its heading's)."""
    sentence_id, paper, position, text = row[:4]
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (sentence_id, paper, position))
    if not whole or not isinstance(text, str) or not is_vector(row[10], widths.content):
        return CleanSentence(None)
    if row[11] is not None and not is_vector(row[11], widths.function):
        return CleanSentence(None)
    values = list(row)
    fixed = _fix_labels(values)
    return CleanSentence(tuple(values), tuple(fixed))


def widths_of(sizes: Sequence[tuple[Any, Any]]) -> Widths:
    """The library's widths from (content size, function size) pairs in bytes (-1: not a blob)."""
    content = Counter(int(c) for c, _ in sizes if isinstance(c, int))
    function = Counter(int(f) for _, f in sizes if isinstance(f, int))
    return Widths(_widest_share(content), _widest_share(function))
