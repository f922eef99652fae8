"""A panel's one status line: a muted label, a progress bar while a job runs, and a Cancel button.

:class:`app.gui.operation.PanelOperation` drives it (several operations of one panel may share it: the
Cancel button stops every one of them that is busy); the panel only places it (usually at its bottom).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QSizePolicy, QWidget

from app.gui.widgets import status_label, tool_button


class StatusLine(QWidget):
    """Label + progress bar + Cancel, in one row."""

    cancelRequested = Signal()

    def __init__(self, cancel_tip: str = "Stop", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = status_label()
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(140)
        self.progress.setMaximumHeight(14)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.cancel_button = tool_button("Cancel", cancel_tip)
        self.cancel_button.clicked.connect(self.cancelRequested)
        self.cancel_button.hide()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 4, 0)
        layout.setSpacing(4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.progress)
        layout.addWidget(self.cancel_button)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self._busy: set[int] = set()  # ids of the operations that are busy now

    def text(self) -> str:
        return self.label.text()

    def set_text(self, text: str) -> None:
        self.label.setText(text)

    def set_busy(self, owner: object, busy: bool) -> None:
        """``owner`` (an operation) is busy or not: Cancel shows while any owner is busy."""
        if busy:
            self._busy.add(id(owner))
        else:
            self._busy.discard(id(owner))
        self.cancel_button.setVisible(bool(self._busy))
        if not self._busy:
            self.progress.hide()

    def set_progress(self, done: int, total: int) -> None:
        """Show the bar: ``done`` of ``total`` (a moving bar when ``total`` is 0 or 1)."""
        if total > 1:
            self.progress.setRange(0, total)
            self.progress.setValue(max(0, min(done, total)))
        else:
            self.progress.setRange(0, 0)
        self.progress.show()

    def hide_progress(self) -> None:
        self.progress.hide()
