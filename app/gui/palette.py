"""Role colours (Okabe–Ito, colour-blind safe), overlay opacity and per-role visibility."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor

import app.gui.qtfix  # noqa: F401  (refcount guard for PySide6 6.12 / pymupdf 1.28 on Python 3.11)
from core.taxonomy.labels import ROLES
from core.taxonomy.role_colors import DEFAULT_ROLE_COLORS, UNLABELLED_COLOR

DEFAULT_OPACITY = 0.35


class RolePalette(QObject):
    """Colours, opacity and visibility of the role overlay, shared by every view and panel."""

    changed = Signal()

    def __init__(self, colors: dict[str, str] | None = None, opacity: float = DEFAULT_OPACITY) -> None:
        super().__init__()
        self._colors = {role: QColor(DEFAULT_ROLE_COLORS[role]) for role in ROLES}
        for role, value in (colors or {}).items():
            if role in self._colors and QColor(value).isValid():
                self._colors[role] = QColor(value)
        self._opacity = float(opacity)
        self._visible = dict.fromkeys(ROLES, True)

    def color(self, role: str) -> QColor:
        return QColor(self._colors.get(role, QColor(UNLABELLED_COLOR)))

    def fill(self, role: str, opacity: float | None = None) -> QColor:
        """The role colour with the overlay opacity as alpha."""
        color = self.color(role)
        color.setAlphaF(max(0.0, min(1.0, self._opacity if opacity is None else opacity)))
        return color

    def colors(self) -> dict[str, str]:
        return {role: color.name() for role, color in self._colors.items()}

    def set_color(self, role: str, color: QColor | str) -> None:
        self._colors[role] = QColor(color)
        self.changed.emit()

    def set_colors(self, colors: dict[str, str]) -> None:
        for role, value in colors.items():
            if role in self._colors and QColor(value).isValid():
                self._colors[role] = QColor(value)
        self.changed.emit()

    @property
    def opacity(self) -> float:
        return self._opacity

    def set_opacity(self, value: float) -> None:
        value = max(0.0, min(1.0, float(value)))
        if abs(value - self._opacity) > 1e-6:
            self._opacity = value
            self.changed.emit()

    def is_visible(self, role: str) -> bool:
        return self._visible.get(role, True)

    def set_visible(self, role: str, visible: bool) -> None:
        if self._visible.get(role) != visible:
            self._visible[role] = visible
            self.changed.emit()

    @staticmethod
    def text_color_on(color: QColor) -> QColor:
        """Black or white, whichever reads better on ``color``."""
        luminance = 0.2126 * color.redF() + 0.7152 * color.greenF() + 0.0722 * color.blueF()
        return QColor("#000000") if luminance > 0.45 else QColor("#FFFFFF")
