"""Status bar: a message, a progress bar for running jobs and a Cancel button (Esc). The job's label is
cut to leave the message room (at a large font it ran under the label)."""

from __future__ import annotations

import contextlib

from PySide6.QtWidgets import QProgressBar, QPushButton, QStatusBar

from app.gui.job_tracker import JobTracker
from app.gui.widgets import ElidedLabel

LABEL_CHARS = 48  # the job's label takes at most this many average characters; the status message the rest
PROGRESS_CHARS = 16  # the progress bar's width, in average characters (at most)


class JobStatus:
    """Wires a :class:`JobTracker` into a ``QStatusBar``."""

    def __init__(self, bar: QStatusBar, tracker: JobTracker) -> None:
        self.tracker = tracker
        self.label = ElidedLabel("")  # a long one is cut (its tooltip has all of it), not drawn over
        chars = bar.fontMetrics().averageCharWidth()
        self.label.setMaximumWidth(chars * LABEL_CHARS)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(max(120, chars * PROGRESS_CHARS))
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.cancel = QPushButton("Cancel")
        self.cancel.setToolTip("Stop the running job (Esc)")
        self.cancel.clicked.connect(tracker.cancel_all)
        self.cancel.hide()
        bar.addPermanentWidget(self.label)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel)
        tracker.changed.connect(self._on_changed)
        tracker.progress.connect(self._on_progress)
        # The tracker may outlive the window (a job finishing after it closed): stop listening with it.
        bar.destroyed.connect(self._detach)

    def _detach(self) -> None:
        for signal, slot in ((self.tracker.changed, self._on_changed),
                             (self.tracker.progress, self._on_progress)):
            with contextlib.suppress(RuntimeError, TypeError):  # already gone
                signal.disconnect(slot)

    def _on_changed(self) -> None:
        labels = self.tracker.labels()
        busy = bool(labels)
        self.progress.setVisible(busy)
        self.cancel.setVisible(self.tracker.cancellable)
        if busy:
            self.label.setText(labels[-1] + (f" (+{len(labels) - 1} more)" if len(labels) > 1 else ""))
            self.progress.setRange(0, 0)  # busy until the first progress report
        else:
            self.label.setText("")

    def _on_progress(self, label: str, done: int, total: int, message: str) -> None:
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(min(done, total))
        same = message.lower().rstrip(".…") in label.lower()
        self.label.setText(f"{label}: {message}" if message and not same else label)
