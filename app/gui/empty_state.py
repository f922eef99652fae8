"""What the window shows with no paper open: a big hint, two buttons, the drag-and-drop hint (its colours
from the palette, its lines wrapped at a large font)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QApplication, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.gui.widgets import faint, muted, tone

HINT = ("Open a scientific paper (PDF) to see the rhetorical role of every sentence:\n"
        "background, objective, method, result, conclusion.")
DROP_HINT = "…or drag and drop a PDF anywhere on this window.  Ctrl+O opens a file."
FIRST_STEPS = (
    "<b>New here?</b> Open the sample paper, then click a highlighted sentence to see why it got "
    "its role.  Write in the Draft pane (Ctrl+D): every sentence is labelled as you type, and "
    "Suggestions (Ctrl+Shift+S) shows real sentences that do the same job, from the built-in "
    "phrase corpus.  Everything runs on this computer; nothing is uploaded.")


class EmptyState(QWidget):
    openRequested = Signal()
    sampleRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAcceptDrops(False)  # the main window handles drops
        # colours from the palette (a dark one too): the text's, or between it and the background's
        big = _points(28, 2.0)
        title = _centred_label("Rhetorica", f"font-size: {big}pt; font-weight: bold;", wrap=False)
        hint = _centred_label(HINT, f"font-size: {_points(12, 1.15)}pt; color: {muted(share=0.85)};")
        buttons = self._build_buttons()
        drop = _centred_label(DROP_HINT, f"color: {muted()};")  # wrapped: a large font cut it at both ends
        self.steps = _centred_label(FIRST_STEPS, f"color: {muted(share=0.75)}; padding-top: 6px;")
        error = tone("#b3261e", "#f2b8b5")
        self.error = _centred_label("", f"color: {error}; font-size: {_points(11, 1.1)}pt; padding: 12px;")
        self.error.hide()
        self.notice = _centred_label("", f"color: {tone('#8a5300', '#ffb870')}; padding: 4px;")
        self.notice.hide()
        for label in (self.error, self.notice):  # file names and errors are data, not markup
            label.setTextFormat(Qt.TextFormat.PlainText)
        box = _dashed_box([title, hint, buttons, drop, self.steps, self.error, self.notice])
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(box, 4)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(2)

    def _build_buttons(self) -> QHBoxLayout:
        """The buttons "Open a PDF…" and "Open the sample paper" (the default), centred side by side."""
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
        return buttons

    def show_notice(self, text: str) -> None:
        """A secondary hint (e.g. no model bundle: papers open without roles)."""
        self.notice.setText(text)
        self.notice.setVisible(bool(text))

    def show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.setVisible(bool(text))


def _points(least: int, factor: float) -> int:
    """A font size of at least ``least`` points, and ``factor`` times the application's (a large one set
    by the user makes the big lines bigger, never smaller than the rest)."""
    return max(least, round(QApplication.font().pointSizeF() * factor))


def _centred_label(text: str, style: str, *, wrap: bool = True) -> QLabel:
    label = QLabel(text)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(wrap)
    label.setStyleSheet(style)
    return label


def _dashed_box(items: list[QWidget | QHBoxLayout]) -> QWidget:
    """The items stacked in a rounded, dashed frame at most 720 px wide."""
    box = QWidget()
    box.setObjectName("emptyBox")
    box.setStyleSheet(f"#emptyBox {{ border: 2px dashed {muted(share=0.3)}; border-radius: 12px; "
                      f"background: {faint(share=0.02)}; }}")
    inner = QVBoxLayout(box)
    inner.setContentsMargins(40, 30, 40, 30)
    inner.setSpacing(14)
    for item in items:
        if isinstance(item, QWidget):
            inner.addWidget(item)
        else:
            inner.addLayout(item)
    box.setMaximumWidth(720)
    return box
