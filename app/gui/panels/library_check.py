"""The Library panel's quick check of its database, run in the background after a listing, once per
state of the database files (size, time, inode of the database and its write-ahead log)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from app.gui.library_jobs import check_job
from app.gui.operation import PanelOperation
from app.gui.session import Session
from app.gui.status_line import StatusLine


def database_state(folder: Path) -> tuple[object, ...]:
    """What changes when the library's database files change."""
    from core.library.store import DATABASE_NAME

    state: list[object] = [str(folder)]
    for name in (DATABASE_NAME, f"{DATABASE_NAME}-wal"):
        try:
            info = (folder / name).stat()
            state += [info.st_size, info.st_mtime_ns, info.st_ino]
        except OSError:
            state.append(None)
    return tuple(state)


class DatabaseCheck(QObject):
    """``damaged(error)`` when the quick check finds the database damaged; silent otherwise."""

    damaged = Signal(Exception)

    def __init__(self, panel: QWidget, session: Session) -> None:
        super().__init__(panel)
        quiet = StatusLine(parent=panel)  # never shown: the check says nothing unless it finds damage
        quiet.hide()
        self.op = PanelOperation(panel, session, quiet)
        self.checked: tuple[object, ...] | None = None  # the database state last checked

    def start(self, folder: Path, unless: Callable[[], bool]) -> None:
        """Check ``folder``'s database unless it was checked in this state, a check runs, or ``unless()``
        (the panel is busy; a damage found then is not said either)."""
        state = database_state(folder)
        if self.op.busy or unless() or state == self.checked:
            return
        self.checked = state
        self.op.run(check_job, folder, label="Checking the library", needs_model=False,
                    on_done=lambda problem: self._checked(problem, unless))

    def _checked(self, problem: Exception | None, unless: Callable[[], bool]) -> None:
        if problem is not None and not unless():
            self.damaged.emit(problem)

    def forget(self) -> None:
        """Check again at the next listing (a repair made a new database)."""
        self.checked = None
