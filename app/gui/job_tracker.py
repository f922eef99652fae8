"""Keeps track of running background workers for the status bar (progress + Cancel).

A progress report with a total of 0 means "busy, no measure" (a step that cannot say how far it is,
such as the training's parity check: ``app.gui.job_progress``): the tracker then also emits ``changed``,
on which the status bar shows a moving bar (its range, else, stays the last measured one)."""

from __future__ import annotations

import weakref

from PySide6.QtCore import QObject, Signal

from app.gui.workers import Worker


class JobTracker(QObject):
    """Starts workers and tells the status bar what runs; ``cancel_all`` stops cancellable ones."""

    changed = Signal()
    progress = Signal(str, int, int, str)  # label, done, total, message

    def __init__(self) -> None:
        super().__init__()
        self._jobs: list[tuple[Worker, str, bool]] = []

    def start(self, worker: Worker, label: str, cancellable: bool = True) -> Worker:
        """Register ``worker`` and start it (connect your own slots before calling this)."""
        self._jobs.append((worker, label, cancellable))
        # weakly: a slot that holds its own sender keeps it alive for ever (Qt holds the slot)
        ref = weakref.ref(worker)
        worker.progress.connect(lambda d, t, m, r=ref, lab=label: self._relay(self.label_of(r(), lab),
                                                                              d, t, m))
        worker.finished.connect(lambda r=ref: self._done(r()))
        worker.start()
        self.changed.emit()
        return worker

    def _relay(self, label: str, done: int, total: int, message: str) -> None:
        if total <= 0:  # busy, no measure: the status bar shows a moving bar again
            self.changed.emit()
        self.progress.emit(label, done, total, message)

    def _done(self, worker: Worker | None) -> None:
        self._jobs = [j for j in self._jobs if j[0] is not worker]
        self.changed.emit()

    def relabel(self, worker: Worker, label: str) -> None:
        """A running job moved on to another stage (the paper's roles are shown, its sentences are now
        embedded for the panels): the status bar, and what Esc says it cancelled, name the new one."""
        jobs = [(w, label if w is worker else lab, c) for w, lab, c in self._jobs]
        if jobs != self._jobs:
            self._jobs = jobs
            self.changed.emit()

    def label_of(self, worker: Worker | None, default: str = "") -> str:
        return next((lab for w, lab, _c in self._jobs if w is worker), default)

    def active(self) -> list[tuple[Worker, str, bool]]:
        return list(self._jobs)

    def labels(self) -> list[str]:
        return [label for _, label, _ in self._jobs]

    @property
    def busy(self) -> bool:
        return bool(self._jobs)

    @property
    def cancellable(self) -> bool:
        return any(c and not w.is_cancelled for w, _, c in self._jobs)

    def cancel_all(self) -> int:
        return len(self.cancel_all_named())

    def cancel_all_named(self) -> list[str]:
        """Cancel every cancellable job; the labels of those cancelled now."""
        named = []
        for worker, label, cancellable in self._jobs:
            if cancellable and not worker.is_cancelled:
                worker.cancel()
                named.append(label)
        return named
