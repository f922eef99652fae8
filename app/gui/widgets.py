"""Small reusable widgets: role-mix bars, probability bars, hint and status labels, the panels' layout,
tool buttons, and the one-line text helpers the panels share (``one_line``, ``clip``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPalette, QPen, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QLayout,
    QSizePolicy,
    QStackedWidget,
    QStyle,
    QStyleOptionComboBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.gui.palette import RolePalette
from app.gui.panel_choices import remember
from core.taxonomy.labels import ROLES


def paint_role_mix(painter: QPainter, rect: QRectF, counts: Mapping[str, int], palette: RolePalette) -> None:
    """A horizontal stacked bar of role shares filling ``rect`` (grey outline when empty)."""
    total = sum(counts.get(r, 0) for r in ROLES)
    painter.save()
    painter.setPen(Qt.PenStyle.NoPen)
    if total <= 0:
        painter.setBrush(faint_color())
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
    painter.setPen(QPen(muted_color(), 0))
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
            painter.fillRect(track, faint_color(self.palette()))
            if self._probabilities:
                painter.fillRect(QRectF(track.left(), track.top(), bar_w * p, track.height()),
                                 self._palette.color(role))
                painter.drawText(QRectF(label_w + bar_w + 4, y, value_w, self.ROW),
                                 Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, f"{p:.0%}")
        painter.end()


VIEW_MODES = ("roles", "functions")


def view_mode_row(tooltip: str) -> tuple[QHBoxLayout, QComboBox]:
    """A "Show [roles|functions]" row for a panel's top: (the row, its combo box, remembered as "show")."""
    combo = remember(QComboBox(), "show")  # the choice comes back in the next session
    combo.addItems(list(VIEW_MODES))
    combo.setToolTip(tooltip)
    row = QHBoxLayout()
    row.setContentsMargins(4, 2, 4, 0)
    row.addWidget(QLabel("Show"))
    row.addWidget(combo)
    row.addStretch(1)
    return row, combo


MUTED = "#6b6b6b"  # secondary text in the default (light) palette; :func:`muted` follows the palette
ACCENT = "#1f4e8c"  # emphasis in panels (scores, headings)
MUTED_SHARE = 0.58  # secondary text: this share of the way from the background to the text colour


def _palette(palette: QPalette | None) -> QPalette | None:
    if palette is not None:
        return palette
    return QGuiApplication.palette() if QGuiApplication.instance() is not None else None


def blend(low: QColor, high: QColor, share: float) -> QColor:
    """The colour ``share`` of the way from ``low`` to ``high``."""
    return QColor.fromRgbF(*(a + (b - a) * share for a, b in ((low.redF(), high.redF()),
                                                              (low.greenF(), high.greenF()),
                                                              (low.blueF(), high.blueF()))))


def muted_color(palette: QPalette | None = None, share: float = MUTED_SHARE) -> QColor:
    """Secondary text (status lines, sources, hints) in ``palette`` (default: the application's): between
    its window colour and its text colour, so it reads on a light and on a dark palette alike."""
    found = _palette(palette)
    if found is None:
        return QColor(MUTED)
    return blend(found.color(QPalette.ColorRole.Window), found.color(QPalette.ColorRole.WindowText), share)


def is_dark(palette: QPalette | None = None) -> bool:
    """True for a palette whose windows are dark (light text on them)."""
    found = _palette(palette)
    return found is not None and found.color(QPalette.ColorRole.Window).lightnessF() < 0.5


def tone(light: str, dark: str, palette: QPalette | None = None) -> str:
    """``light`` in a light palette, ``dark`` in a dark one (a red or an amber that reads on either)."""
    return dark if is_dark(palette) else light


def accent(palette: QPalette | None = None) -> str:
    """Emphasis (scores, links, the rows' action buttons) that reads in a light and in a dark palette."""
    return tone(ACCENT, "#8ab4f8", palette)


def muted(palette: QPalette | None = None, share: float = MUTED_SHARE) -> str:
    """:func:`muted_color` as ``#rrggbb`` (for style sheets and rich text)."""
    return muted_color(palette, share).name()


def faint_color(palette: QPalette | None = None, share: float = 0.12) -> QColor:
    """A faint line, empty track or box in ``palette``: ``share`` of the way from its base colour to its
    text colour."""
    found = _palette(palette)
    if found is None:
        return blend(QColor("#ffffff"), QColor("#000000"), share)
    return blend(found.color(QPalette.ColorRole.Base), found.color(QPalette.ColorRole.Text), share)


def faint(palette: QPalette | None = None, share: float = 0.12) -> str:
    """:func:`faint_color` as ``#rrggbb``."""
    return faint_color(palette, share).name()


def soft_selection(palette: QPalette | None = None) -> str:
    """A selected row's background that keeps the palette's text colour readable on it: a quarter of the
    way from the base colour to the highlight colour (light blue in a light palette, dark in a dark one)."""
    found = _palette(palette)
    if found is None:
        return "#cfe0f7"
    return blend(found.color(QPalette.ColorRole.Base), found.color(QPalette.ColorRole.Highlight), 0.25).name()


def list_style(selector: str = "QListWidget", base: bool = False) -> str:
    """A results list's style sheet: a faint line under each row and a soft selection in the palette's
    text colour (``base``: the list's background and text are the palette's too), so that it reads in a
    dark palette as in a light one."""
    background = f"{selector} {{ background: palette(base); color: palette(text); }}" if base else ""
    return (background + f"{selector}::item {{ border-bottom: 1px solid {faint()}; }}"
            f"{selector}::item:selected {{ background: {soft_selection()}; color: palette(text); }}")


def status_label(text: str = "") -> QLabel:
    """A panel's muted one-line status (what was done, how long it took); a long one is cut, not made
    wider than its panel (its tooltip has all of it)."""
    label = ElidedLabel(text)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # no say in the width
    label.setStyleSheet(f"color: {muted()}; padding: 2px 6px;")
    return label


class ElidedLabel(QLabel):
    """A one-line plain-text label that shows as much of its text as its width allows, then "…" (the
    whole text in its tooltip when cut); it never asks for more width than a few characters."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)  # it shows file names and the user's filter words
        self._full = ""
        self._own_tip = ""
        self.setText(text)

    def text(self) -> str:
        return self._full

    def setText(self, text: str) -> None:
        self._full = str(text)
        self._elide()

    def setToolTip(self, tip: str) -> None:
        self._own_tip = tip
        self._elide()

    def minimumSizeHint(self) -> QSize:
        return QSize(self.fontMetrics().horizontalAdvance("…") * 4, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:
        shown, metrics = super().sizeHint(), self.fontMetrics()
        extra = shown.width() - metrics.horizontalAdvance(QLabel.text(self))  # margins, padding
        return QSize(metrics.horizontalAdvance(self._full) + extra + 2, shown.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        room = max(0, self.contentsRect().width() - 2)
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, room) \
            if self.isVisible() or self.width() > 0 else self._full
        QLabel.setText(self, shown)
        cut = shown != self._full
        QLabel.setToolTip(self, "\n".join(p for p in (self._full if cut else "", self._own_tip) if p))


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
    label.setStyleSheet(f"color: {muted()}; padding: 16px;")
    return label


def role_chip_style(color: QColor) -> str:
    text = RolePalette.text_color_on(color).name()
    return (f"background: {color.name()}; color: {text}; border-radius: 4px; "
            "padding: 2px 8px; font-weight: bold;")


UNCERTAIN_BACKGROUND = "#eeeeee"  # in the default (light) palette


def uncertain_chip_style(color: QColor) -> str:
    """A role chip for an uncertain label (``core.taxonomy.labels.UNCERTAIN_BELOW``): greyed, with a dashed
    border in the role colour instead of a solid fill (its colours from the palette)."""
    return (f"background: {faint(share=0.1)}; color: {muted(share=0.85)}; border: 2px dashed {color.name()}; "
            "border-radius: 4px; padding: 1px 7px; font-style: italic;")


def clip(text: object, limit: int) -> str:
    """``text`` on one line (runs of white space made one space), cut to ``limit`` characters with "…"."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: max(0, limit - 1)].rstrip() + "…"


def one_line(text: object, limit: int = 200) -> str:
    """A message (an error, a status) as one line of at most ``limit`` characters."""
    return clip(text, limit)


def combo_width_for(combo: QComboBox, sample: str) -> int:
    """The width ``combo`` needs to show ``sample`` whole, its frame and arrow included, at its own font
    and style (for a box of fixed width, such as the toolbar's zoom box: "400%" at any font size)."""
    option = QStyleOptionComboBox()
    option.initFrom(combo)
    option.editable = combo.isEditable()
    option.frame = True
    metrics = combo.fontMetrics()
    text = QSize(metrics.horizontalAdvance(sample) + metrics.averageCharWidth(), metrics.height())
    return combo.style().sizeFromContents(QStyle.ContentsType.CT_ComboBox, option, text, combo).width()


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
    label.setStyleSheet(f"color: {muted()}; padding: 12px 16px;")
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
