"""Toolbar legend: one toggle per role in its colour (shows/hides its overlay) and an opacity slider."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QToolButton, QWidget

from app.gui.palette import RolePalette
from core.taxonomy.labels import ROLES


class Legend(QWidget):
    def __init__(self, palette: RolePalette, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.palette_ = palette
        self.buttons: dict[str, QToolButton] = {}
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.setSpacing(3)
        for role in ROLES:
            button = QToolButton()
            button.setText(role)
            button.setCheckable(True)
            button.setChecked(palette.is_visible(role))
            button.setToolTip(f"Show or hide {role} sentences")
            button.toggled.connect(lambda on, r=role: palette.set_visible(r, on))
            layout.addWidget(button)
            self.buttons[role] = button
        layout.addSpacing(8)
        layout.addWidget(QLabel("Opacity"))
        self.opacity = QSlider(Qt.Orientation.Horizontal)
        self.opacity.setRange(0, 100)
        self.opacity.setValue(round(palette.opacity * 100))
        self.opacity.setFixedWidth(90)
        self.opacity.setToolTip("Overlay opacity")
        self.opacity.valueChanged.connect(lambda v: palette.set_opacity(v / 100))
        layout.addWidget(self.opacity)
        layout.addStretch(1)
        palette.changed.connect(self.refresh)
        self.refresh()

    def set_counts(self, counts: dict[str, int] | None) -> None:
        """Show how many sentences have each role (None: just the role names)."""
        for role, button in self.buttons.items():
            button.setText(f"{role} {counts.get(role, 0)}" if counts is not None else role)

    def refresh(self) -> None:
        for role, button in self.buttons.items():
            color = self.palette_.color(role)
            text = RolePalette.text_color_on(color).name()
            if button.isChecked() != self.palette_.is_visible(role):
                button.setChecked(self.palette_.is_visible(role))
            if button.isChecked():
                style = (f"QToolButton {{ background: {color.name()}; color: {text}; border: 1px solid "
                         f"{color.darker(140).name()}; border-radius: 3px; padding: 2px 6px; }}")
            else:
                style = (f"QToolButton {{ background: transparent; color: #888; border: 1px dashed "
                         f"{color.name()}; border-radius: 3px; padding: 2px 6px; "
                         "text-decoration: line-through; }")
            button.setStyleSheet(style)
        value = round(self.palette_.opacity * 100)
        if self.opacity.value() != value:
            self.opacity.setValue(value)
