"""The author's corrections of sentence labels, kept in the library's database (issue 15).

A correction says "this sentence's role (or function) is X, not what model M said". It keeps the
sentence, a little context (the sentences before and after it in its section), its section kind and
the paper it came from, so it can train a model later without the paper (``rhetorica train
corrections``). Correcting the same sentence again replaces the earlier correction.

The table lives in ``library.sqlite3`` beside the papers (created on first use, its own schema
version in ``meta``); corrections are exported and imported as JSONL in the generic training format
(``models/datasets/user.py``: one sentence per line, ``doc_id``, ``text``, ``label``,
``section_kind``) with the extra fields ``function``, ``context_before``, ``context_after``,
``predicted``, ``model_id``, ``field`` and ``created``.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from core.errors import RhetoricaError
from core.json_shapes import loads
from core.library.store import LibraryStore
from core.taxonomy.labels import ROLES

FIELDS = ("role", "function")
MIN_ROLE_CORRECTIONS = 20  # what a training run needs (models.training.corrections, the GUI's dialog)
TABLE = """
CREATE TABLE IF NOT EXISTS corrections (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created REAL NOT NULL,
    doc_id TEXT NOT NULL,                 -- the paper's sha256 (or a draft's id)
    title TEXT NOT NULL DEFAULT '',
    position INTEGER NOT NULL DEFAULT -1, -- sentence index in the paper (-1: unknown)
    text TEXT NOT NULL,
    context_before TEXT NOT NULL DEFAULT '',
    context_after TEXT NOT NULL DEFAULT '',
    section_kind TEXT NOT NULL DEFAULT '',
    field TEXT NOT NULL,                  -- 'role' or 'function'
    predicted TEXT NOT NULL DEFAULT '',   -- what the model said
    corrected TEXT NOT NULL,              -- what the author says
    model_id TEXT NOT NULL DEFAULT '',    -- the model that was corrected
    UNIQUE (doc_id, text, field)
)
"""


class CorrectionError(RhetoricaError):
    """A correction that cannot be stored or read (bad label, bad JSONL line)."""


@dataclass
class Correction:
    """One corrected label (see the module docstring)."""

    doc_id: str
    text: str
    field: str
    corrected: str
    predicted: str = ""
    section_kind: str = ""
    context_before: str = ""
    context_after: str = ""
    title: str = ""
    position: int = -1
    model_id: str = ""
    created: float = 0.0
    id: int = 0

    def to_training_row(self) -> dict[str, Any]:
        """One JSONL line of the generic training format (``label`` only for a role correction)."""
        row: dict[str, Any] = {"doc_id": self.doc_id, "text": self.text,
                               "section_kind": self.section_kind or None}
        if self.field == "role":
            row["label"] = self.corrected
        else:
            row["function"] = self.corrected
        extra = {k: v for k, v in asdict(self).items()
                 if k in ("field", "predicted", "context_before", "context_after", "title", "position",
                          "model_id", "created")}
        return {**row, **extra}


@dataclass
class CorrectionCounts:
    role: int = 0
    function: int = 0
    by_role: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.role + self.function


def _check(correction: Correction, known_functions: frozenset[str] | None = None) -> None:
    if correction.field not in FIELDS:
        raise CorrectionError(f"a correction is of a sentence's role or function, not {correction.field!r}")
    if not correction.text.strip():
        raise CorrectionError("a correction needs the sentence's text")
    if correction.field == "role" and correction.corrected not in ROLES:
        raise CorrectionError(f"{correction.corrected!r} is not a role (one of {', '.join(ROLES)})")
    unknown = known_functions is not None and correction.corrected not in known_functions
    if correction.field == "function" and unknown:
        raise CorrectionError(f"{correction.corrected!r} is not a function of the taxonomy")


def _correction_of(row: object, default_doc: str) -> Correction:
    """A correction from one JSON row (this module's export, or a training row with a ``label``)."""
    if not isinstance(row, dict):
        raise CorrectionError("a row must be a JSON object")
    if "label" in row:
        field_name, corrected = "role", str(row["label"])
    elif "function" in row:
        field_name, corrected = "function", str(row["function"])
    else:
        raise CorrectionError("it has neither 'label' nor 'function'")
    return Correction(
        doc_id=str(row.get("doc_id", default_doc)), text=str(row["text"]), field=field_name,
        corrected=corrected, predicted=str(row.get("predicted", "")),
        section_kind=str(row.get("section_kind") or ""), context_before=str(row.get("context_before", "")),
        context_after=str(row.get("context_after", "")), title=str(row.get("title", "")),
        position=_bounded_int(row.get("position", -1), "position"),
        model_id=str(row.get("model_id", "")), created=_time_stamp(row.get("created", 0.0)))


def _bounded_int(value: object, name: str) -> int:
    """A whole number SQLite can store (``int(1e300)`` overflows it; ``int(inf)`` raises OverflowError)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CorrectionError(f"'{name}' must be a whole number")
    number = int(value)
    if not -(2**63) <= number < 2**63:
        raise CorrectionError(f"'{name}' is out of range")
    return number


def _time_stamp(value: object) -> float:
    """Seconds since 1970, finite (an ``Infinity`` was stored, then exported as invalid JSON)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value < 1e11:
        raise CorrectionError("'created' must be a time (seconds since 1970)")
    return float(value)


class Corrections:
    """The corrections table of one library database."""

    def __init__(self, store: LibraryStore) -> None:
        self.store = store
        with store.transaction() as db:
            db.execute(TABLE)

    def add(self, correction: Correction, known_functions: frozenset[str] | None = None) -> Correction:
        """Store ``correction`` (replacing an earlier one of the same sentence and field)."""
        _check(correction, known_functions)
        correction.created = correction.created or time.time()
        with self.store.transaction() as db:
            cursor = db.execute(
                "INSERT INTO corrections (created, doc_id, title, position, text, context_before, "
                "context_after, section_kind, field, predicted, corrected, model_id) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?) "
                "ON CONFLICT(doc_id, text, field) DO UPDATE SET corrected = excluded.corrected, "
                "predicted = excluded.predicted, model_id = excluded.model_id, created = excluded.created, "
                "section_kind = excluded.section_kind, context_before = excluded.context_before, "
                "context_after = excluded.context_after RETURNING id",
                (correction.created, correction.doc_id, correction.title, correction.position,
                 correction.text, correction.context_before, correction.context_after,
                 correction.section_kind, correction.field, correction.predicted, correction.corrected,
                 correction.model_id))
            correction.id = int(cursor.fetchone()[0])
        return correction

    def remove(self, correction_id: int) -> bool:
        with self.store.transaction() as db:
            return db.execute("DELETE FROM corrections WHERE id = ?", (correction_id,)).rowcount > 0

    def all(self, field_name: str | None = None) -> list[Correction]:
        query = ("SELECT id, created, doc_id, title, position, text, context_before, context_after, "
                 "section_kind, field, predicted, corrected, model_id FROM corrections")
        args: tuple[str, ...] = ()
        if field_name is not None:
            query += " WHERE field = ?"
            args = (field_name,)
        rows = self.store.connection.execute(query + " ORDER BY id", args).fetchall()
        return [Correction(id=r[0], created=r[1], doc_id=r[2], title=r[3], position=r[4], text=r[5],
                           context_before=r[6], context_after=r[7], section_kind=r[8], field=r[9],
                           predicted=r[10], corrected=r[11], model_id=r[12]) for r in rows]

    def of_document(self, doc_id: str) -> dict[tuple[str, str], Correction]:
        """(text, field) -> correction, for one paper (what the GUI shows over the model's labels)."""
        return {(c.text, c.field): c for c in self.all() if c.doc_id == doc_id}

    def counts(self) -> CorrectionCounts:
        out = CorrectionCounts()
        for c in self.all():
            if c.field == "role":
                out.role += 1
                out.by_role[c.corrected] = out.by_role.get(c.corrected, 0) + 1
            else:
                out.function += 1
        return out

    def export_jsonl(self, path: Path) -> int:
        """Write every correction as JSONL (written to a temporary file, then renamed); returns the count."""
        from core.fileio import atomic_write_text

        rows = [json.dumps(c.to_training_row(), ensure_ascii=False, allow_nan=False) for c in self.all()]
        atomic_write_text(path, "".join(r + "\n" for r in rows))
        return len(rows)

    def import_jsonl(self, path: Path, known_functions: frozenset[str] | None = None) -> int:
        """Add the corrections of a JSONL file (this module's export, or plain training rows with a
        ``label``); returns how many were added or updated. Every line is read and checked first: a bad
        one stops with its line number and nothing is added."""
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise CorrectionError(f"cannot read {path}: {error}") from None
        corrections = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                correction = _correction_of(loads(line), path.name)
                _check(correction, known_functions)
            except (json.JSONDecodeError, KeyError, TypeError, ValueError, OverflowError,
                    CorrectionError) as error:
                raise CorrectionError(f"{path}:{number}: not a correction ({error})") from None
            corrections.append(correction)
        for correction in corrections:
            self.add(correction, known_functions)
        return len(corrections)
