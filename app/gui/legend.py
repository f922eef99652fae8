"""Toolbar legend: one toggle per role in its colour (shows/hides its overlay) and an opacity slider.

The legend fits the room the toolbar leaves it instead of falling into the toolbar's "»" overflow: it
asks for its widest form (role names with their counts, "Opacity" and a wide slider) but makes do with
less, showing the most its width allows (:data:`FORMS`: the names with counts, then the names, then
short names; the counts and full names are always in the buttons' tooltips). A button with the keyboard
focus has a solid frame in its text colour."""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QToolButton, QWidget

from app.gui.palette import RolePalette
from app.gui.widgets import muted
from core.taxonomy.labels import ROLES

SHORT = {"background": "bkg", "objective": "obj", "method": "mth", "result": "res", "conclusion": "con",
         "other": "oth"}


class Form(NamedTuple):
    """One way of drawing the legend: the buttons' text, whether "Opacity" is written, the slider's width
    (in average character widths)."""

    names: str  # "full" or "short"
    counts: bool
    label: bool
    slider_chars: int


FORMS = (Form("full", True, True, 11), Form("full", True, False, 8), Form("full", False, False, 7),
         Form("short", True, False, 6), Form("short", False, False, 5))


class Legend(QWidget):
    def __init__(self, palette: RolePalette, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.palette_ = palette
        self.buttons: dict[str, QToolButton] = {}
        self._counts: dict[str, int] | None = None
        self._form = FORMS[0]
        self._widths: list[int] = []  # each form's width (measured when the texts or fonts change)
        self._room = 0  # the width the toolbar gave it (0: none yet)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.setSpacing(3)
        for role in ROLES:
            button = QToolButton()
            button.setCheckable(True)
            button.setChecked(palette.is_visible(role))
            button.toggled.connect(lambda on, r=role: palette.set_visible(r, on))
            layout.addWidget(button)
            self.buttons[role] = button
        self.spacer = 8
        layout.addSpacing(self.spacer)
        self.opacity_label = QLabel("Opacity")
        layout.addWidget(self.opacity_label)
        self.opacity = QSlider(Qt.Orientation.Horizontal)
        self.opacity.setRange(0, 100)
        self.opacity.setValue(round(palette.opacity * 100))
        self.opacity.setToolTip("Overlay opacity")
        self.opacity.valueChanged.connect(lambda v: palette.set_opacity(v / 100))
        layout.addWidget(self.opacity)
        layout.addStretch(1)
        palette.changed.connect(self.refresh)
        self.refresh()

    # -- what is shown -------------------------------------------------------------------
    def set_counts(self, counts: dict[str, int] | None) -> None:
        """Show how many sentences have each role (None: just the role names)."""
        self._counts = dict(counts) if counts is not None else None
        self._measure()

    def _text(self, role: str, form: Form) -> str:
        name = role if form.names == "full" else SHORT.get(role, role[:3])
        return f"{name} {self._counts.get(role, 0)}" if form.counts and self._counts is not None else name

    def _apply(self, form: Form) -> None:
        self._form = form
        for role, button in self.buttons.items():
            button.setText(self._text(role, form))
            count = f": {self._counts.get(role, 0)} sentences" if self._counts is not None else ""
            button.setToolTip(f"Show or hide {role} sentences{count}")
        self.opacity_label.setVisible(form.label)
        self.opacity.setFixedWidth(self.fontMetrics().averageCharWidth() * form.slider_chars)

    def form(self) -> Form:
        """The form the legend is drawn in now."""
        return self._form

    # -- its size ------------------------------------------------------------------------
    def _measure(self) -> None:
        """Each form's width (the buttons' own, with their style), then the form that fits now."""
        layout = self.layout()
        margins = layout.contentsMargins() if layout is not None else None
        spacing = layout.spacing() if layout is not None else 0
        chrome = (margins.left() + margins.right() if margins is not None else 0) + self.spacer
        widths = []
        for form in FORMS:
            self._apply(form)
            parts = [b.sizeHint().width() for b in self.buttons.values()] + [self.opacity.width()]
            if form.label:
                parts.append(self.opacity_label.sizeHint().width())
            widths.append(sum(parts) + spacing * len(parts) + chrome)
        self._widths = widths
        self._fit()
        self.updateGeometry()

    def _fit(self) -> None:
        width = self._room or self.sizeHint().width()
        fits = [form for form, need in zip(FORMS, self._widths, strict=True) if need <= width]
        self._apply(fits[0] if fits else FORMS[-1])

    def sizeHint(self) -> QSize:
        return QSize(self._widths[0] if self._widths else 400, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        return QSize(self._widths[-1] if self._widths else 200, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._room = event.size().width()
        if self._widths:
            self._fit()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange) and self._widths:
            self._measure()

    # -- its colours ---------------------------------------------------------------------
    def refresh(self) -> None:
        restyled = False
        for role, button in self.buttons.items():
            if button.isChecked() != self.palette_.is_visible(role):
                button.setChecked(self.palette_.is_visible(role))
            style = self._style(role, button.isChecked())
            if button.styleSheet() != style:
                button.setStyleSheet(style)
                restyled = True
        value = round(self.palette_.opacity * 100)
        if self.opacity.value() != value:
            self.opacity.setValue(value)
        if restyled or not self._widths:  # (the opacity alone changes no button's size)
            self._measure()

    def _style(self, role: str, shown: bool) -> str:
        """A shown role: its colour, the text black or white; a hidden one: dashed and struck through.
        Either way the keyboard focus shows as a solid frame (the padding makes up for its width)."""
        color = self.palette_.color(role)
        if shown:
            text = RolePalette.text_color_on(color).name()
            box = f"background: {color.name()}; color: {text}; border: 1px solid {color.darker(140).name()};"
        else:
            text = muted(self.palette())
            box = (f"background: transparent; color: {text}; border: 1px dashed {color.name()}; "
                   "text-decoration: line-through;")
        return (f"QToolButton {{ {box} border-radius: 3px; padding: 2px 6px; }}"
                f"QToolButton:focus {{ border: 2px solid {text}; padding: 1px 5px; }}")
