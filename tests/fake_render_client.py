"""A stand-in for :class:`app.gui.render_client.RenderClient` (no process): records what the page
views ask of it and replies when the test says so."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage


class FakeRenderClient(QObject):
    pageRendered = Signal(int, int, float, QImage)
    pageFailed = Signal(int, int, str)
    ready = Signal()
    stopped = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.available = self.is_ready = True
        self.opened: list[tuple[int, str]] = []
        self.closed: list[int] = []
        self.requests: list[tuple[int, int, float]] = []

    def open(self, token: int, path: str) -> bool:
        self.opened.append((token, path))
        return True

    def close(self, token: int) -> bool:
        self.closed.append(token)
        return True

    def render(self, token: int, index: int, scale: float) -> bool:
        self.requests.append((token, index, scale))
        return True

    def reply(self, token: int, index: int, scale: float, width: int = 612, height: int = 792) -> None:
        """The page as the render process would send it (white, ``width`` × ``height`` pixels)."""
        image = QImage(width, height, QImage.Format.Format_RGB888)
        image.fill(0xFFFFFF)
        self.pageRendered.emit(token, index, scale, image)
