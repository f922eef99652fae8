"""Help > Shortcuts: a table of every action that has a keyboard shortcut.

An action may carry its Help name in the dynamic property ``HELP_NAME`` (a panel's "Remove" is listed as
"Remove (in the Library panel)"). The dialog is sized from its rows at the current font, no larger than
the screen, and stays resizable; long names wrap."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QResizeEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

HELP_NAME = "helpName"  # an action's name in the table, when its own text needs its place added
SCREEN_SHARE = 0.9  # the dialog opens no larger than this share of the screen's free area


def shortcut_rows(actions: list[QAction]) -> list[tuple[str, str]]:
    rows = []
    seen = set()
    for action in actions:
        keys = ", ".join(s.toString() for s in action.shortcuts() if not s.isEmpty())
        name = str(action.property(HELP_NAME) or action.text()).replace("&", "").rstrip(".…")
        if keys and (name, keys) not in seen:
            seen.add((name, keys))
            rows.append((name, keys))
    return rows


class ShortcutsDialog(QDialog):
    def __init__(self, actions: list[QAction], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.setSizeGripEnabled(True)
        rows = shortcut_rows(actions)
        table = QTableWidget(len(rows), 2)
        table.setHorizontalHeaderLabels(["Action", "Shortcut"])
        table.verticalHeader().hide()
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.setWordWrap(True)
        table.setTextElideMode(Qt.TextElideMode.ElideNone)
        for i, (name, keys) in enumerate(rows):
            table.setItem(i, 0, QTableWidgetItem(name))
            table.setItem(i, 1, QTableWidgetItem(keys))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self._layout = QVBoxLayout(self)
        self._layout.addWidget(table)
        self._layout.addWidget(buttons)
        self.table, self.buttons = table, buttons
        self._fit_to_content()

    def _fit_to_content(self) -> None:
        """Wide enough for every name and key at the current font and tall enough for every row, within
        the screen; rows grow when a narrower dialog wraps a name."""
        table, header = self.table, self.table.horizontalHeader()
        table.resizeColumnsToContents()
        table.resizeRowsToContents()
        frame = 2 * table.frameWidth()
        scroll = table.verticalScrollBar().sizeHint().width()
        margins = self._layout.contentsMargins()
        width = header.length() + frame + scroll + margins.left() + margins.right()
        height = (header.sizeHint().height() + table.verticalHeader().length() + frame + margins.top()
                  + margins.bottom() + self._layout.spacing() + self.buttons.sizeHint().height())
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        screen = self.screen()
        if screen is not None:
            area = screen.availableGeometry()
            width = min(width, int(area.width() * SCREEN_SHARE))
            height = min(height, int(area.height() * SCREEN_SHARE))
        self.resize(max(width, 320), max(height, 200))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # once the table has its new width: a wrapped name gets the lines it needs, and no more
        QTimer.singleShot(0, self, self.table.resizeRowsToContents)
