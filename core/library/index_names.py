"""The names of a library's index files, and the one move from their earlier names to today's.

Today the index of each view is ``content.ann`` / ``function.ann`` (``store.INDEX_FILES``). Until
session 13 the files kept the names hnswlib had given them, ``content.hnsw`` / ``function.hnsw``
(``store.EARLIER_INDEX_FILES``), first holding hnswlib's graph, then (session 12) the faiss index.

:func:`move_to_current_names` runs when a library is opened. For each view whose file still has its
earlier name:

* only the earlier name is there: the file is renamed (``os.replace`` in the same folder: atomic,
  so at every moment exactly one of the two names exists). The integrity record the database keeps
  describes the file's bytes, not its name, so it still holds: faiss data is then checked and
  loaded as before; an hnswlib index of an earlier version or a damaged file fails its check or its
  load and is rebuilt from the database with one notice, as under any name;
* both names are there (a library an earlier version was run on after this one, or a move another
  process had under way): the file that passes its integrity check is kept, the one under today's
  name when both do (or neither), and the other is removed;
* the folder cannot be written (a read-only disk): nothing moves and nothing is removed; the library
  reads the file under its earlier name (:attr:`NameMove.path`) and says so once.

Nothing here reads or writes the database; ``check`` (the caller's integrity check) is asked only
when both names are there.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.library.store import EARLIER_INDEX_FILES, INDEX_FILES, VIEWS

IndexCheck = Callable[[str, Path], str | None]  # (view, file) -> why it must not be loaded, or None


def index_file(folder: Path, view: str) -> Path:
    """Where ``view``'s index is saved (today's name)."""
    return Path(folder) / INDEX_FILES[view]


def earlier_index_file(folder: Path, view: str) -> Path:
    """The name ``view``'s index file had before session 13."""
    return Path(folder) / EARLIER_INDEX_FILES[view]


def index_file_in_use(folder: Path, view: str) -> Path:
    """The file that holds ``view``'s index: today's name, or the earlier name when only that is there
    (a library this version has not opened yet, or one on a read-only disk)."""
    current, earlier = index_file(folder, view), earlier_index_file(folder, view)
    return earlier if earlier.is_file() and not current.is_file() else current


@dataclass(frozen=True)
class NameMove:
    """What became of one view's index file under its earlier name.

    ``outcome``: "renamed" (moved to today's name), "kept-current" (both were there: the earlier one
    was removed), "kept-earlier" (both were there, only the earlier one passed its check: it
    replaced the other), or "not-moved" (the folder cannot be written: ``error`` says why)."""

    view: str
    earlier: Path
    path: Path  # where the library reads the index now
    outcome: str
    error: str = ""

    @property
    def moved(self) -> bool:
        return self.outcome != "not-moved"


def move_to_current_names(folder: Path, check: IndexCheck) -> list[NameMove]:
    """Move every index file that still has its earlier name to today's (see the module's
    docstring); returns what happened to each such file ([] when there was none)."""
    moves = [_move(Path(folder), view, check) for view in VIEWS]
    found = [move for move in moves if move is not None]
    if any(move.moved for move in found):
        from core.fileio import fsync_dir

        fsync_dir(folder)
    return found


def _move(folder: Path, view: str, check: IndexCheck) -> NameMove | None:
    earlier, current = earlier_index_file(folder, view), index_file(folder, view)
    if not earlier.is_file():
        return None
    both = current.is_file()
    keep_earlier = both and check(view, current) is not None and check(view, earlier) is None
    try:
        if both and not keep_earlier:
            earlier.unlink()
            outcome = "kept-current"
        else:
            os.replace(earlier, current)
            outcome = "kept-earlier" if both else "renamed"
    except FileNotFoundError:  # another process moved it first: today's name is there now
        return NameMove(view, earlier, current, "kept-current")
    except OSError as error:
        used = earlier if keep_earlier or not both else current
        return NameMove(view, earlier, used, "not-moved", error.strerror or str(error))
    with contextlib.suppress(OSError):  # a temporary file an earlier version's killed save left
        (folder / f".{earlier.name}.tmp").unlink()
    return NameMove(view, earlier, current, outcome)


def not_moved_notice(folder: Path, moves: list[NameMove]) -> str | None:
    """The one line that says index files keep their earlier names (None: every one moved)."""
    stuck = [move for move in moves if not move.moved]
    if not stuck:
        return None
    earlier = ", ".join(move.earlier.name for move in stuck)
    today = ", ".join(INDEX_FILES[move.view] for move in stuck)
    return (f"the library folder {folder} cannot be written ({stuck[0].error}): its index files are read "
            f"under their earlier names {earlier} (renamed to {today} once it can be written)")
