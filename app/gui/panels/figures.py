"""Figures strip: thumbnails of the paper's figures and tables with captions.

Thumbnails are rendered by ``core.pdf.render_figure_png`` in a background worker (a generator:
one thumbnail per step, shown as it arrives); clicking one jumps to the figure on its page.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterator

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QListView, QListWidget, QListWidgetItem, QStackedWidget, QVBoxLayout, QWidget

from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.session import Session
from app.gui.widgets import hint_label, while_alive
from app.gui.workers import Worker
from core.document import Figure, Paper
from core.jobs import JobContext

THUMB = QSize(200, 150)
_LEADING_LABEL = re.compile(r"^(fig(ure)?|tab(le)?)\.?\s*[A-Z]?\d+[a-z]?(\s*[:.|]\s*|\s+)", re.IGNORECASE)
FIGURE_ROLE = Qt.ItemDataRole.UserRole


def render_thumbnails(ctx: JobContext, path: str, figures: list[Figure], zoom: float = 1.0
                      ) -> Iterator[tuple[int, bytes | None]]:
    """Yield ``(figure index, PNG bytes or None)`` for each figure, rendered in a child process."""
    from app.gui.pdf_jobs import figure_pngs_isolated

    yield from figure_pngs_isolated(ctx, path, figures, zoom)
    ctx.progress(len(figures), len(figures), "figures ready")


class FiguresPanel(QWidget):
    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.list = QListWidget()
        self.list.setViewMode(QListView.ViewMode.IconMode)
        self.list.setFlow(QListView.Flow.TopToBottom)
        self.list.setWrapping(False)
        self.list.setResizeMode(QListView.ResizeMode.Adjust)
        self.list.setIconSize(THUMB)
        self.list.setWordWrap(True)
        self.list.setSpacing(6)
        self.list.setUniformItemSizes(False)
        self.list.setMovement(QListView.Movement.Static)
        self.list.itemClicked.connect(self._on_clicked)
        self.list.itemActivated.connect(self._on_clicked)
        self.stack = QStackedWidget()
        self.empty = hint_label("Figures and tables appear here when a paper is open.")
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.list)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.stack)
        self.worker: Worker | None = None
        self.thumbnails_done = 0
        session.paperReady.connect(self._on_paper)
        session.failed.connect(self._on_failed)
        session.documentOpened.connect(while_alive(self, lambda _d: self._reset("Looking for figures…")))
        session.documentClosed.connect(
            while_alive(self, lambda: self._reset("Figures and tables appear here when a paper is open.")))

    def _on_failed(self, stage: str, _error: object) -> None:
        if stage == "parse":
            self._reset("No figures: the paper could not be read.")

    def _reset(self, message: str) -> None:
        if self.worker is not None:
            self.worker.cancel()
            self.worker = None
        self.list.clear()
        self.thumbnails_done = 0
        self.empty.setText(message)
        self.stack.setCurrentWidget(self.empty)

    def _on_paper(self, paper: Paper) -> None:
        self._reset("No figures or tables were found in this paper.")
        if not paper.figures:
            return
        placeholder = QPixmap(THUMB)
        placeholder.fill(Qt.GlobalColor.white)
        for i, figure in enumerate(paper.figures):
            kind = "Table" if figure.kind == "table" else "Figure"
            caption = " ".join(figure.caption.split())
            caption = _LEADING_LABEL.sub("", caption) or caption
            short = caption if len(caption) <= 90 else caption[:88] + "…"
            item = QListWidgetItem(QIcon(placeholder), f"{kind} {figure.number}: {short}")
            item.setToolTip(f"<b>{kind} {figure.number}</b> (page {figure.page + 1})<br>{caption}")
            item.setData(FIGURE_ROLE, i)
            item.setSizeHint(QSize(THUMB.width() + 16, THUMB.height() + 60))
            item.setTextAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
            self.list.addItem(item)
        self.stack.setCurrentWidget(self.list)
        worker = Worker(render_thumbnails, paper.source_path, list(paper.figures), name="figures")
        # weakly: a slot that holds its own sender keeps it alive for ever (Qt holds the slot)
        ref = weakref.ref(worker)
        worker.yielded.connect(while_alive(self, lambda value, r=ref: self._on_thumbnail(r(), value)))
        worker.finished.connect(while_alive(self, lambda r=ref: self._on_finished(r())))
        self.worker = worker
        self.session.tracker.start(worker, "Rendering figure thumbnails")

    def _on_finished(self, worker: Worker | None) -> None:
        if worker is not None and worker is self.worker:
            self.worker = None  # done: the panel lets go of it

    def _on_thumbnail(self, worker: Worker | None, value: tuple[int, bytes | None]) -> None:
        if worker is None or worker is not self.worker:
            return
        index, png = value
        item = self.list.item(index)
        if item is None:
            return
        self.thumbnails_done += 1
        if png:
            pixmap = QPixmap()
            if pixmap.loadFromData(png, "PNG"):
                item.setIcon(QIcon(pixmap.scaled(THUMB, Qt.AspectRatioMode.KeepAspectRatio,
                                                 Qt.TransformationMode.SmoothTransformation)))

    def _on_clicked(self, item: QListWidgetItem) -> None:
        paper = self.session.paper
        if paper is None:
            return
        figure = paper.figures[item.data(FIGURE_ROLE)]
        self.session.jump_to(figure.page, tuple(figure.bbox))


SPEC = register_panel(PanelSpec(
    id="figures", title="Figures", factory=FiguresPanel, order=40, shortcut="Ctrl+Shift+F",
    description="Thumbnails of figures and tables", tab_with="profile"))
