"""What the window shows with no paper open: a big hint, two buttons, the drag-and-drop hint."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget


class EmptyState(QWidget):
    openRequested = Signal()
    sampleRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAcceptDrops(False)  # the main window handles drops
        title = QLabel("Rhetorica")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title.setStyleSheet("font-size: 28pt; font-weight: bold; color: #333;")
        hint = QLabel("Open a scientific paper (PDF) to see the rhetorical role of every sentence:\n"
                      "background, objective, method, result, conclusion.")
        hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        hint.setWordWrap(True)
        hint.setStyleSheet("font-size: 12pt; color: #444;")
        self.open_button = QPushButton("Open a PDF…")
        self.open_button.setMinimumHeight(36)
        self.open_button.clicked.connect(self.openRequested)
        self.sample_button = QPushButton("Open the sample paper")
        self.sample_button.setMinimumHeight(36)
        self.sample_button.setDefault(True)  # the one-click start on a fresh profile
        self.sample_button.setToolTip("SPECTER (Cohan et al., 2020), shipped with Rhetorica")
        self.sample_button.clicked.connect(self.sampleRequested)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.sample_button)
        buttons.addStretch(1)
        drop = QLabel("…or drag and drop a PDF anywhere on this window.  Ctrl+O opens a file.")
        drop.setAlignment(Qt.AlignmentFlag.AlignCenter)
        drop.setStyleSheet("color: #777;")
        steps = QLabel(
            "<b>New here?</b> Open the sample paper, then click a highlighted sentence to see why it got "
            "its role.  Write in the Draft pane (Ctrl+D): every sentence is labelled as you type, and "
            "Suggestions (Ctrl+Shift+S) shows real sentences that do the same job, from the built-in "
            "phrase corpus.  Everything runs on this computer; nothing is uploaded.")
        steps.setAlignment(Qt.AlignmentFlag.AlignCenter)
        steps.setWordWrap(True)
        steps.setStyleSheet("color: #555; padding-top: 6px;")
        self.steps = steps
        self.error = QLabel("")
        self.error.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b3261e; font-size: 11pt; padding: 12px;")
        self.error.hide()
        self.notice = QLabel("")
        self.notice.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.notice.setWordWrap(True)
        self.notice.setStyleSheet("color: #8a5300; padding: 4px;")
        self.notice.hide()
        box = QWidget()
        box.setObjectName("emptyBox")
        box.setStyleSheet("#emptyBox { border: 2px dashed #bbb; border-radius: 12px; background: #fafafa; }")
        inner = QVBoxLayout(box)
        inner.setContentsMargins(40, 30, 40, 30)
        inner.setSpacing(14)
        inner.addWidget(title)
        inner.addWidget(hint)
        inner.addLayout(buttons)
        inner.addWidget(drop)
        inner.addWidget(steps)
        inner.addWidget(self.error)
        inner.addWidget(self.notice)
        box.setMaximumWidth(720)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(box, 4)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(2)

    def show_notice(self, text: str) -> None:
        """A secondary hint (e.g. no model bundle: papers open without roles)."""
        self.notice.setText(text)
        self.notice.setVisible(bool(text))

    def show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.setVisible(bool(text))
