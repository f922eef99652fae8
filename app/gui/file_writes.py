"""Jobs that write a file the author asked for (an annotated PDF, a graphical abstract's PNG), and the
question the window asks when it is closed while one runs: wait for it, quit anyway, or stay open.

A job is known by its worker's name: the module that starts it registers that name with
:func:`writes_a_file`. Tests answer the question by patching :func:`ask_while_writing` (``tests/conftest.py``
answers "quit anyway" unless a test says otherwise).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox, QWidget

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.job_tracker import JobTracker

WAIT, QUIT, CANCEL = "wait", "quit", "cancel"  # the answers of ask_while_writing
_WRITERS: set[str] = set()  # worker names of the jobs that write a file


def writes_a_file(name: str) -> str:
    """Register the worker name ``name`` as a job that writes a file; returns ``name``."""
    _WRITERS.add(name)
    return name


def files_being_written(tracker: JobTracker) -> list[str]:
    """The labels of the tracker's running jobs that write a file (and are not being cancelled)."""
    return [label for worker, label, _ in tracker.active()
            if worker.name in _WRITERS and not worker.is_cancelled]


def ask_while_writing(parent: QWidget, labels: list[str]) -> str:
    """"An export is still being written": WAIT (close once it is written), QUIT (cancel it and close)
    or CANCEL (the window stays open and the export goes on)."""
    box = QMessageBox(QMessageBox.Icon.Question, "An export is still being written",
                      f"An export is still being written ({'; '.join(labels)}).\n\nWait for it and close "
                      "then, quit anyway (the file is not written), or cancel?", parent=parent)
    wait = box.addButton("Wait for it", QMessageBox.ButtonRole.AcceptRole)
    quit_anyway = box.addButton("Quit anyway", QMessageBox.ButtonRole.DestructiveRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(wait)
    box.setEscapeButton(cancel)
    box.exec()
    clicked = box.clickedButton()
    return WAIT if clicked is wait else QUIT if clicked is quit_anyway else CANCEL
