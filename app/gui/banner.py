"""An inline message bar above the pages (errors and notices stay in the window, not in modals)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QStyle, QWidget

STYLES = {  # background, text, standard icon
    "error": ("#fdecea", "#b3261e", QStyle.StandardPixmap.SP_MessageBoxCritical),
    "warning": ("#fff4e5", "#8a5300", QStyle.StandardPixmap.SP_MessageBoxWarning),
    "info": ("#e8f1fb", "#0b4f8a", QStyle.StandardPixmap.SP_MessageBoxInformation),
}


class Banner(QFrame):
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.kind = ""
        self.icon = QLabel()
        self.message = QLabel()
        self.message.setTextFormat(Qt.TextFormat.PlainText)  # file names and errors are data, not markup
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.actions_box = QHBoxLayout()
        self.close_button = QPushButton("✕")
        self.close_button.setFlat(True)
        self.close_button.setFixedWidth(28)
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(self.dismiss)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(self.icon)
        layout.addWidget(self.message, 1)
        layout.addLayout(self.actions_box)
        layout.addWidget(self.close_button)
        self.hide()

    def show_message(self, kind: str, text: str, actions: list[tuple[str, Callable[[], None]]] | None = None
                     ) -> None:
        background, foreground, icon = STYLES.get(kind, STYLES["info"])
        self.kind = kind
        self.setStyleSheet(f"#banner {{ background: {background}; border-bottom: 1px solid {foreground}; }}"
                           f"#banner QLabel {{ color: {foreground}; }}")
        self.icon.setPixmap(self.style().standardIcon(icon).pixmap(20, 20))
        self.message.setText(text)
        while self.actions_box.count():
            item = self.actions_box.takeAt(0)
            if item is None:  # not while count() > 0; the stubs allow it
                break
            widget = item.widget()
            if widget is not None:
                widget.deleteLater()
        for label, callback in actions or []:
            button = QPushButton(label)
            button.clicked.connect(callback)
            self.actions_box.addWidget(button)
        self.show()

    def dismiss(self) -> None:
        self.hide()
        self.kind = ""
        self.closed.emit()

    @property
    def text(self) -> str:
        return self.message.text() if self.isVisible() else ""
