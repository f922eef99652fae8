"""Settings dialog: model bundle, device, threads, role colours, overlay opacity, cache."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QColorDialog,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QSpinBox,
    QWidget,
)

from app.gui.palette import DEFAULT_ROLE_COLORS, RolePalette
from app.gui.settings import DEVICES, MAX_THREADS
from core.taxonomy.labels import ROLES


@dataclass
class SettingsValues:
    model_path: str = ""
    device: str = "auto"
    threads: int = 0
    colors: dict[str, str] = field(default_factory=dict)
    opacity: float = 0.35


class SettingsDialog(QDialog):
    def __init__(self, values: SettingsValues, parent: QWidget | None = None,
                 clear_cache: Callable[[], int] | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Rhetorica settings")
        self.colors = dict(DEFAULT_ROLE_COLORS) | dict(values.colors)
        form = QFormLayout(self)
        self.model_path = QLineEdit(values.model_path)
        self.model_path.setPlaceholderText("bundled default (resources/models/default)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.model_path, 1)
        row.addWidget(browse)
        form.addRow("Model bundle", row)
        self.device = QComboBox()
        self.device.addItems(DEVICES)
        self.device.setCurrentText(values.device)
        form.addRow("Device", self.device)
        self.threads = QSpinBox()
        self.threads.setRange(0, MAX_THREADS)
        self.threads.setSpecialValueText("automatic")
        self.threads.setValue(values.threads)
        form.addRow("CPU threads", self.threads)
        self.color_buttons: dict[str, QPushButton] = {}
        for role in ROLES:
            button = QPushButton(role)
            button.clicked.connect(lambda _=False, r=role: self._pick(r))
            self.color_buttons[role] = button
            form.addRow(f"Colour: {role}", button)
        reset = QPushButton("Reset colours (Okabe–Ito)")
        reset.clicked.connect(self._reset_colors)
        form.addRow("", reset)
        self.opacity = QSlider()
        self.opacity.setOrientation(self.opacity.orientation().Horizontal)
        self.opacity.setRange(0, 100)
        self.opacity.setValue(round(values.opacity * 100))
        form.addRow("Overlay opacity", self.opacity)
        if clear_cache is not None:
            clear = QPushButton("Clear the analysis cache")
            clear.setToolTip("Forget every cached parse and analysis (papers are read and labelled again)")
            clear.clicked.connect(lambda: clear.setText(f"Cleared {clear_cache()} cached files"))
            form.addRow("Cache", clear)
        form.addRow(QLabel("<small>Model changes apply at once; the paper is labelled again.</small>"))
        ok_cancel = QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        buttons = QDialogButtonBox(ok_cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self._refresh_colors()

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose a model bundle folder", self.model_path.text())
        if path:
            self.model_path.setText(path)

    def _pick(self, role: str) -> None:
        color = QColorDialog.getColor(QColor(self.colors[role]), self, f"Colour for {role}")
        if color.isValid():
            self.colors[role] = color.name()
            self._refresh_colors()

    def _reset_colors(self) -> None:
        self.colors = dict(DEFAULT_ROLE_COLORS)
        self._refresh_colors()

    def _refresh_colors(self) -> None:
        for role, button in self.color_buttons.items():
            color = QColor(self.colors[role])
            button.setStyleSheet(f"background: {color.name()}; color: "
                                 f"{RolePalette.text_color_on(color).name()};")

    def values(self) -> SettingsValues:
        return SettingsValues(model_path=self.model_path.text().strip(), device=self.device.currentText(),
                              threads=self.threads.value(), colors=dict(self.colors),
                              opacity=self.opacity.value() / 100)
