"""Continuous-scroll page view: the widget that composes the page units and routes input to them.

:class:`PageView` owns the scene and four units, each with one job:

- :class:`~app.gui.page_layout.PageLayout` — page positions, zoom, visible pages, navigation;
- :class:`~app.gui.page_rendering.PageRendering` — lazy, crisp page pixmaps and their cache;
- :class:`~app.gui.sentence_overlays.SentenceOverlays` — one role-coloured item per sentence;
- :class:`~app.gui.text_selection.TextSelection` — rubber-band text selection and copying.

The view wires them together, forwards mouse, wheel and resize events, and keeps the public API the
window uses (methods, properties and signals below).
"""

from __future__ import annotations

import pymupdf
from PySide6.QtCore import QPoint, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QContextMenuEvent, QMouseEvent, QPainter, QResizeEvent, QWheelEvent
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QWidget

from app.gui.page_layout import PageLayout
from app.gui.page_rendering import PageRendering
from app.gui.palette import RolePalette
from app.gui.render_client import RenderClient
from app.gui.sentence_overlays import SentenceItem, SentenceOverlays
from app.gui.text_selection import TextSelection
from core.document import Paper
from core.labelling.analysis import PaperAnalysis

PAGE_MIN_WIDTH = 560  # pixels: a letter-size page at ~0.9x, small print still readable
PAGE_MIN_HEIGHT = 240


class PageView(QGraphicsView):
    """Pages of one PDF in a vertical strip, with role overlays."""

    sentenceClicked = Signal(int)
    pageChanged = Signal(int)  # 0-based page at the viewport's centre
    zoomChanged = Signal(float)
    firstPageShown = Signal()
    overlaysBuilt = Signal(int)  # number of sentence items
    textSelected = Signal(str)
    contextMenuRequested = Signal(int, QPoint)  # sentence index under the mouse (-1: none), global pos

    def __init__(self, palette: RolePalette, renderer: RenderClient | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.setBackgroundBrush(QColor("#e4e4e4"))
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.SmoothPixmapTransform)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.setDragMode(QGraphicsView.DragMode.NoDrag)
        # a vertical bar that comes and goes would change the width "fit width" was computed for
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.setMouseTracking(True)
        # the docks give way before the page does: they shrink, the page keeps a readable width
        self.setMinimumSize(PAGE_MIN_WIDTH, PAGE_MIN_HEIGHT)
        self._layout = PageLayout(self)
        self._rendering = PageRendering(self._layout, renderer, self.devicePixelRatioF, self)
        self._overlays = SentenceOverlays(self.scene(), self._layout, palette, self)
        self._selection = TextSelection(self, self._layout)
        self._layout.viewportChanged.connect(self._rendering.schedule_visible)
        self._layout.zoomChanged.connect(self.zoomChanged)
        self._layout.pageChanged.connect(self.pageChanged)
        self._overlays.built.connect(self.overlaysBuilt)
        self._selection.textSelected.connect(self.textSelected)

    # -- document -----------------------------------------------------------------------
    @property
    def page_count(self) -> int:
        return self._layout.page_count

    def set_document(self, doc: pymupdf.Document, sizes: list[tuple[float, float]], zoom: float = 0.0,
                     path: str | None = None) -> None:
        """Lay out placeholder pages at once; pages near the viewport render on the next turns."""
        self.clear()
        self._rendering.open(doc, path)
        self._selection.set_document(doc)
        pages = self._layout.lay_out(sizes)
        if pages:
            pages[0].on_first_paint = self.firstPageShown.emit
        self._layout.show_from_top(zoom)

    def clear(self) -> None:
        self._rendering.clear()
        self._overlays.clear()
        self._layout.clear()
        self._selection.clear()
        self.scene().clear()

    def page_origin(self, index: int) -> QPointF:
        return self._layout.page_origin(index)

    def page_rect_in_scene(self, index: int) -> QRectF:
        return self._layout.page_rect_in_scene(index)

    # -- zoom and navigation (PageLayout) -------------------------------------------------
    @property
    def zoom(self) -> float:
        return self._layout.zoom

    def set_zoom(self, zoom: float) -> None:
        self._layout.set_zoom(zoom)

    def zoom_in(self) -> None:
        self._layout.zoom_in()

    def zoom_out(self) -> None:
        self._layout.zoom_out()

    def fit_width(self) -> None:
        self._layout.fit_width()

    @property
    def fits_width(self) -> bool:
        """True in "fit width" mode."""
        return self._layout.fits_width

    @property
    def preferred_zoom(self) -> float:
        """The zoom to remember for the next paper: 0.0 for "fit width", else the one chosen."""
        return self._layout.preferred_zoom

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._layout.on_resized()

    def wheelEvent(self, event: QWheelEvent) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            if event.angleDelta().y() > 0:
                self.zoom_in()
            elif event.angleDelta().y() < 0:
                self.zoom_out()
            event.accept()
            return
        super().wheelEvent(event)

    def visible_pages(self, margin: int = 1) -> list[int]:
        return self._layout.visible_pages(margin)

    def current_page(self) -> int:
        return self._layout.current_page()

    def go_to_page(self, index: int) -> None:
        self._layout.go_to_page(index)

    def next_page(self) -> None:
        self._layout.next_page()

    def prev_page(self) -> None:
        self._layout.prev_page()

    def show_rect(self, page: int, bbox: tuple[float, float, float, float] | None) -> None:
        """Scroll so that ``bbox`` on ``page`` (points) is visible (or the page top)."""
        self._layout.show_rect(page, bbox)

    # -- rendering (PageRendering) --------------------------------------------------------
    @property
    def uses_render_server(self) -> bool:
        """True once the render process is up; until then (and if it fails) pages render here."""
        return self._rendering.uses_render_server

    @property
    def renders(self) -> int:
        """Pages rendered so far (for tests/benchmarks)."""
        return self._rendering.renders

    def has_pixmap(self, index: int) -> bool:
        return self._rendering.has_pixmap(index)

    def is_sharp(self, index: int) -> bool:
        """True when page ``index`` shows a pixmap rendered at the current zoom."""
        return self._rendering.is_sharp(index)

    # -- overlays (SentenceOverlays) ------------------------------------------------------
    @property
    def overlay_items(self) -> list[SentenceItem]:
        return self._overlays.items

    @property
    def overlays_pending(self) -> bool:
        return self._overlays.pending

    def set_sentences(self, paper: Paper) -> None:
        """Unlabelled sentence items (clickable, not coloured) while the analysis is pending."""
        self.set_overlays(paper, None)

    def set_overlays(self, paper: Paper, analysis: PaperAnalysis | None) -> None:
        """One item per sentence, a chunk per event-loop turn; ``overlaysBuilt`` at the end."""
        self._overlays.set_overlays(paper, analysis)

    def select_sentence(self, index: int) -> None:
        self._overlays.select(index)

    # -- mouse: click selects a sentence, drag selects text (TextSelection) ---------------
    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._selection.press(event.position().toPoint())
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._selection.pressed:
            self._selection.drag(event.position().toPoint())
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self._selection.pressed:
            click = self._selection.release()
            if click is not None:
                self.click_at(click)
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        self.contextMenuRequested.emit(self.sentence_at(event.pos()), event.globalPos())
        event.accept()

    def sentence_at(self, pos: QPoint) -> int:
        for item in self.items(pos):
            if isinstance(item, SentenceItem) and item.isVisible():
                return item.index
        return -1

    def click_at(self, pos: QPoint) -> None:
        index = self.sentence_at(pos)
        self._selection.clear_selection()
        if index >= 0:
            self.sentenceClicked.emit(index)

    @property
    def selected_text(self) -> str:
        return self._selection.selected_text

    def select_text_in(self, scene_rect: QRectF) -> str:
        """Select (and return) the text inside ``scene_rect`` across the pages it touches."""
        return self._selection.select_text_in(scene_rect)

    def copy_selection(self, fallback: str = "") -> str:
        return self._selection.copy(fallback)

    def sizeHint(self) -> QSize:
        return QSize(800, 900)
