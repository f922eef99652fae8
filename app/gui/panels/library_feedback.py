"""The Library panel's messages: the page shown when the list is empty or cannot be read (with "Add
PDF files…", "Add a folder…" or "Repair library…"), and the one-line summary of the last job with its
details list and, for a damaged library, "Repair library…"."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QListWidget, QPushButton, QToolButton, QVBoxLayout, QWidget

from app.gui.panels.library_text import EMPTY
from app.gui.widgets import muted

REPAIR_TIP = "Check your library and salvage what can be read (the old database file is kept)"
LINK_STYLE = "QToolButton { color: #1f4e8c; }"
BOLD_LINK_STYLE = "QToolButton { color: #1f4e8c; font-weight: 600; }"


def push_button(text: str, slot: Callable[[], object], tip: str = "") -> QPushButton:
    button = QPushButton(text)
    button.setToolTip(tip)
    button.clicked.connect(lambda _checked=False: slot())
    return button


def link_button(text: str, tip: str = "", style: str = LINK_STYLE, checkable: bool = False) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setAutoRaise(True)
    button.setCheckable(checkable)
    button.setStyleSheet(style)
    return button


class EmptyPage(QWidget):
    """The message in place of the list, with the buttons that fit it."""

    def __init__(self, add_files: Callable[[], object], add_folder: Callable[[], object],
                 repair: Callable[[], object]) -> None:
        super().__init__()
        self.message = QLabel(EMPTY)
        self.message.setTextFormat(Qt.TextFormat.PlainText)  # a damaged library's message names its path
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setStyleSheet(f"color: {muted()}; padding: 12px 16px 4px 16px;")
        self.add_buttons = (push_button("Add PDF files…", add_files),
                            push_button("Add a folder…", add_folder))
        self.repair_button = push_button("Repair library…", repair, REPAIR_TIP)
        self.repair_button.hide()
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (*self.add_buttons, self.repair_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        layout.addStretch(2)

    def show_repair(self, damaged: bool) -> None:
        """Offer "Repair library…" (and not "Add…") while the library is damaged."""
        self.repair_button.setVisible(damaged)
        for button in self.add_buttons:
            button.setVisible(not damaged)

    def set_enabled(self, enabled: bool) -> None:
        for button in (*self.add_buttons, self.repair_button):
            button.setEnabled(enabled)


class SummaryBar(QWidget):
    """One line about the last job (with "Repair library…" for a damaged library, "Details" when there
    are detail lines, and ✕), and the details list under it (shown on "Details")."""

    def __init__(self, repair: Callable[[], object]) -> None:
        super().__init__()
        self.summary = QLabel("")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        self.details_button = link_button("Details", checkable=True)
        self.details_button.toggled.connect(self._show_details)
        dismiss = link_button("✕", "Dismiss", style="")
        dismiss.clicked.connect(self.dismiss)
        self.repair = link_button("Repair library…", REPAIR_TIP, BOLD_LINK_STYLE)
        self.repair.clicked.connect(lambda _checked=False: repair())
        self.repair.hide()
        self.row = QWidget()
        row = QHBoxLayout(self.row)
        row.setContentsMargins(6, 0, 2, 0)
        for widget, stretch in ((self.summary, 1), (self.repair, 0), (self.details_button, 0), (dismiss, 0)):
            row.addWidget(widget, stretch)
        self.details = QListWidget()
        self.details.setMaximumHeight(90)
        self.details.setStyleSheet("QListWidget { font-size: 9pt; }")
        self.details.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.row)
        layout.addWidget(self.details)
        self.hide()

    def _show_details(self, on: bool) -> None:
        self.details.setVisible(on)

    def say(self, text: str, details: Sequence[str] = (), repair: bool = False) -> None:
        self.summary.setText(text)
        self.repair.setVisible(repair)
        self.details.clear()
        self.details.addItems(list(details))
        self.details_button.setVisible(bool(details))
        self.details_button.setChecked(False)
        self.details.hide()
        self.show()

    def dismiss(self) -> None:
        self.hide()
        self.details.hide()
        self.details_button.setChecked(False)
