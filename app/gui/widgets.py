"""Small reusable widgets: role-mix bars, probability bars, hint and status labels, the panels' layout,
tool buttons, and the one-line text helpers the panels share (``one_line``, ``clip``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QLayout,
    QSizePolicy,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.gui.palette import RolePalette
from core.taxonomy.labels import ROLES


def paint_role_mix(painter: QPainter, rect: QRectF, counts: Mapping[str, int], palette: RolePalette) -> None:
    """A horizontal stacked bar of role shares filling ``rect`` (grey outline when empty)."""
    total = sum(counts.get(r, 0) for r in ROLES)
    painter.save()
    painter.setPen(Qt.PenStyle.NoPen)
    if total <= 0:
        painter.setBrush(QColor("#eeeeee"))
        painter.drawRect(rect)
    else:
        x = rect.left()
        for role in ROLES:
            n = counts.get(role, 0)
            if n <= 0:
                continue
            width = rect.width() * n / total
            painter.setBrush(palette.color(role))
            painter.drawRect(QRectF(x, rect.top(), width, rect.height()))
            x += width
    painter.setPen(QPen(QColor("#777777"), 0))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawRect(rect)
    painter.restore()


class ProbabilityBars(QWidget):
    """One labelled bar per role showing its probability; the winning role is bold."""

    ROW = 20

    def __init__(self, palette: RolePalette, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._palette = palette
        self._probabilities: dict[str, float] = {}
        self._label = ""
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumHeight(self.ROW * len(ROLES) + 4)
        palette.changed.connect(self.update)

    def set_prediction(self, probabilities: Mapping[str, float] | None, label: str = "") -> None:
        self._probabilities = dict(probabilities or {})
        self._label = label
        self.setToolTip("\n".join(f"{r}: {self._probabilities.get(r, 0.0):.1%}" for r in ROLES)
                        if self._probabilities else "")
        self.update()

    def probabilities(self) -> dict[str, float]:
        return dict(self._probabilities)

    def sizeHint(self) -> QSize:
        return QSize(240, self.ROW * len(ROLES) + 4)

    def paintEvent(self, event: object) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        metrics = painter.fontMetrics()
        label_w = max(metrics.horizontalAdvance(r) for r in ROLES) + 10
        value_w = metrics.horizontalAdvance("100%") + 8
        bar_w = max(20, self.width() - label_w - value_w - 4)
        for i, role in enumerate(ROLES):
            y = 2 + i * self.ROW
            p = float(self._probabilities.get(role, 0.0))
            font = painter.font()
            font.setBold(role == self._label)
            painter.setFont(font)
            painter.setPen(self.palette().windowText().color())
            painter.drawText(QRectF(0, y, label_w, self.ROW), Qt.AlignmentFlag.AlignVCenter, role)
            track = QRectF(label_w, y + 4, bar_w, self.ROW - 8)
            painter.fillRect(track, QColor("#eeeeee"))
            if self._probabilities:
                painter.fillRect(QRectF(track.left(), track.top(), bar_w * p, track.height()),
                                 self._palette.color(role))
                painter.drawText(QRectF(label_w + bar_w + 4, y, value_w, self.ROW),
                                 Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, f"{p:.0%}")
        painter.end()


VIEW_MODES = ("roles", "functions")


def view_mode_row(tooltip: str) -> tuple[QHBoxLayout, QComboBox]:
    """A "Show [roles|functions]" row for a panel's top: (the row, its combo box)."""
    combo = QComboBox()
    combo.addItems(list(VIEW_MODES))
    combo.setToolTip(tooltip)
    row = QHBoxLayout()
    row.setContentsMargins(4, 2, 4, 0)
    row.addWidget(QLabel("Show"))
    row.addWidget(combo)
    row.addStretch(1)
    return row, combo


MUTED = "#6b6b6b"  # secondary text: status lines, sources, hints
ACCENT = "#1f4e8c"  # emphasis in panels (scores, headings)


def status_label(text: str = "") -> QLabel:
    """A panel's muted one-line status (what was done, how long it took)."""
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)  # it shows file names and the user's filter words
    label.setStyleSheet(f"color: {MUTED}; padding: 2px 6px;")
    return label


def panel_layout(owner: QWidget, *parts: QWidget | QLayout | tuple[QWidget, int]) -> QVBoxLayout:
    """The panels' vertical layout: no margins, 2 px spacing, ``parts`` top to bottom (a
    ``(widget, stretch)`` pair for the one that takes the room)."""
    layout = QVBoxLayout(owner)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    for part in parts:
        if isinstance(part, tuple):
            layout.addWidget(part[0], part[1])
        elif isinstance(part, QLayout):
            layout.addLayout(part)
        else:
            layout.addWidget(part)
    return layout


def hint_label(text: str, parent: QWidget | None = None) -> QLabel:
    """A centred grey word-wrapped label for empty states."""
    label = QLabel(text, parent)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    label.setStyleSheet("color: #666; padding: 16px;")
    return label


def role_chip_style(color: QColor) -> str:
    text = RolePalette.text_color_on(color).name()
    return (f"background: {color.name()}; color: {text}; border-radius: 4px; "
            "padding: 2px 8px; font-weight: bold;")


UNCERTAIN_BACKGROUND = "#eeeeee"


def uncertain_chip_style(color: QColor) -> str:
    """A role chip for an uncertain label (``core.taxonomy.labels.UNCERTAIN_BELOW``): greyed, with a dashed
    border in the role colour instead of a solid fill."""
    return (f"background: {UNCERTAIN_BACKGROUND}; color: #444; border: 2px dashed {color.name()}; "
            "border-radius: 4px; padding: 1px 7px; font-style: italic;")


def clip(text: object, limit: int) -> str:
    """``text`` on one line (runs of white space made one space), cut to ``limit`` characters with "…"."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: max(0, limit - 1)].rstrip() + "…"


def one_line(text: object, limit: int = 200) -> str:
    """A message (an error, a status) as one line of at most ``limit`` characters."""
    return clip(text, limit)


def tool_button(text: str, tip: str) -> QToolButton:
    """A text-only tool button with a tooltip (the panels' buttons)."""
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    return button


def rich_message_label() -> QLabel:
    """A panel's centred, muted, word-wrapped rich-text message (empty states, "searching…")."""
    label = QLabel("")
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setStyleSheet(f"color: {MUTED}; padding: 12px 16px;")
    return label


def heading_label() -> QLabel:
    """A panel's rich-text heading over its results (hidden until there are results)."""
    label = QLabel("")
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setStyleSheet("padding: 2px 6px;")
    label.hide()
    return label


class MessageStack(QStackedWidget):
    """A panel's body: its content (a list of results) or, instead of it, a centred message."""

    def __init__(self, content: QWidget) -> None:
        super().__init__()
        self.message = rich_message_label()
        self.content = content
        self.addWidget(self.message)
        self.addWidget(content)

    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.setCurrentWidget(self.message)

    def show_content(self) -> None:
        self.setCurrentWidget(self.content)


def show_dock_of(widget: QWidget) -> None:
    """Show and raise the dock widget holding ``widget`` (nothing when it is not in one)."""
    dock = widget.parentWidget()
    while dock is not None and not isinstance(dock, QDockWidget):
        dock = dock.parentWidget()
    if dock is not None:
        dock.show()
        dock.raise_()

# Slots that outlive their widget do nothing: a panel connects lambdas to its session's signals, and a
# lambda, unlike a bound slot of a QObject, is not disconnected when the panel's C++ object is deleted;
# a session (and its jobs) can outlive a closed window for a moment, and a late analysisReady or
# thumbnail then reached a deleted widget ("Internal C++ object ... already deleted", seen in the test
# suite under load).
def while_alive(widget: QObject, slot: Callable[..., Any]) -> Callable[..., None]:
    """``slot``, called only while ``widget``'s C++ object exists."""

    def guarded(*args: Any) -> None:
        if shiboken6.isValid(widget):
            slot(*args)

    return guarded
