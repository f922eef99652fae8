"""Page layout and zoom: where each page sits in the scene and how the view maps the scene on screen.

Scene coordinates are PDF points: pages stand in a vertical strip, centred on the widest page, with
``PAGE_GAP`` points between them; page *i*'s top-left corner is ``page_origin(i)``.  The view's
transform is the zoom.  This unit owns the page items (:class:`PageItem`), the zoom (fixed or "fit
width"), which pages are on screen, the current page and scrolling to a page or a rectangle.  It
says ``viewportChanged`` whenever what is on screen may have changed (zoom, scroll, resize).

When the view changes width (a dock opens or closes beside it) the page is fitted again: in "fit
width" mode always; at a fixed zoom chosen while the whole page width showed, the page shrinks to
stay whole (never above the chosen zoom), so no horizontal scroll bar hides the right column.  Only a
zoom the user set past the width (to read closer) keeps its horizontal scroll bar.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QPoint, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QGraphicsItem, QGraphicsView, QStyleOptionGraphicsItem, QWidget

PAGE_GAP = 14.0  # points between pages
ZOOM_STEPS = (0.25, 0.33, 0.5, 0.67, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0)
MIN_ZOOM, MAX_ZOOM = 0.2, 6.0


class PageItem(QGraphicsItem):
    """One page: white paper, the rendered pixmap when there is one, a thin border."""

    def __init__(self, index: int, width: float, height: float) -> None:
        super().__init__()
        self.index = index
        self.size = QRectF(0, 0, width, height)
        self.pixmap: QPixmap | None = None
        self.pixmap_scale = 0.0
        self.painted_with_pixmap = False
        self.on_first_paint: Callable[[], Any] | None = None
        self.setZValue(0)
        self.setCacheMode(QGraphicsItem.CacheMode.NoCache)

    def boundingRect(self) -> QRectF:
        return self.size.adjusted(-1, -1, 2, 2)

    def set_pixmap(self, pixmap: QPixmap | None, scale: float) -> None:
        self.pixmap = pixmap
        self.pixmap_scale = scale
        self.update()

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        painter.fillRect(self.size.translated(1.5, 1.5), QColor(0, 0, 0, 50))
        painter.fillRect(self.size, Qt.GlobalColor.white)
        if self.pixmap is not None:
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
            painter.drawPixmap(self.size, self.pixmap, QRectF(self.pixmap.rect()))
            if not self.painted_with_pixmap and self.pixmap_scale > 0:
                self.painted_with_pixmap = True
                if self.on_first_paint is not None:
                    callback, self.on_first_paint = self.on_first_paint, None
                    QTimer.singleShot(0, callback)
        painter.setPen(QPen(QColor("#9a9a9a"), 0))
        painter.drawRect(self.size)


class PageLayout(QObject):
    """The pages of one document laid out in ``view``'s scene, and the view's zoom and scrolling."""

    zoomChanged = Signal(float)
    pageChanged = Signal(int)  # 0-based page at the viewport's centre
    viewportChanged = Signal()  # zoom, scroll position or size changed: other pages may be on screen

    def __init__(self, view: QGraphicsView) -> None:
        super().__init__(view)
        self._view = view
        self._pages: list[PageItem] = []
        self._zoom = 1.0
        self._fit_width = True
        self._chosen_zoom = 1.0  # the fixed zoom the user chose (the shown one may be lower)
        self._keep_whole = False  # that zoom showed the whole width: shrink to keep it whole
        self._current_page = -1
        view.verticalScrollBar().valueChanged.connect(self._on_scrolled)

    # -- pages --------------------------------------------------------------------------
    @property
    def pages(self) -> list[PageItem]:
        """The page items, in page order (the layout's own list: do not change it)."""
        return self._pages

    @property
    def page_count(self) -> int:
        return len(self._pages)

    def lay_out(self, sizes: list[tuple[float, float]]) -> list[PageItem]:
        """Add one placeholder page item per ``(width, height)`` to the scene, top to bottom."""
        scene = self._view.scene()
        max_width = max((w for w, _ in sizes), default=612.0)
        y = PAGE_GAP
        for index, (width, height) in enumerate(sizes):
            item = PageItem(index, width, height)
            item.setPos((max_width - width) / 2, y)
            scene.addItem(item)
            self._pages.append(item)
            y += height + PAGE_GAP
        scene.setSceneRect(QRectF(-PAGE_GAP, 0, max_width + 2 * PAGE_GAP, y))
        return self._pages

    def show_from_top(self, zoom: float) -> None:
        """Apply ``zoom`` (0 or less: fit width) and scroll to the top of the first page."""
        self._fit_width = zoom <= 0
        self._chosen_zoom = max(MIN_ZOOM, min(MAX_ZOOM, zoom))
        self._keep_whole = self._chosen_zoom <= self.fit_zoom() + 1e-4
        self.apply_zoom(self.fit_zoom() if self._fit_width else self._chosen_zoom, keep_center=False)
        bar = self._view.verticalScrollBar()
        bar.setValue(bar.minimum())
        self._current_page = -1
        self._on_scrolled()

    def clear(self) -> None:
        """Forget the page items (the owner clears the scene)."""
        self._pages = []

    def page_origin(self, index: int) -> QPointF:
        return self._pages[index].pos()

    def page_rect_in_scene(self, index: int) -> QRectF:
        item = self._pages[index]
        return item.size.translated(item.pos())

    # -- zoom ---------------------------------------------------------------------------
    @property
    def zoom(self) -> float:
        return self._zoom

    def fit_zoom(self) -> float:
        """The zoom at which the widest page (and its gaps) fills the viewport's width."""
        if not self._pages:
            return 1.0
        width = self._view.scene().sceneRect().width()
        available = max(100, self._view.viewport().width() - 4)
        return max(MIN_ZOOM, min(MAX_ZOOM, available / width))

    @property
    def fits_width(self) -> bool:
        """True in "fit width" mode (the zoom follows the view's width)."""
        return self._fit_width

    @property
    def preferred_zoom(self) -> float:
        """The zoom to remember: 0.0 in "fit width" mode, else the zoom the user chose."""
        return 0.0 if self._fit_width else self._chosen_zoom

    def set_zoom(self, zoom: float) -> None:
        """A fixed zoom; it keeps the page whole as the view narrows if it shows the whole width now."""
        self._fit_width = False
        self._chosen_zoom = max(MIN_ZOOM, min(MAX_ZOOM, zoom))
        self._keep_whole = bool(self._pages) and self._chosen_zoom <= self.fit_zoom() + 1e-4
        self.apply_zoom(self._chosen_zoom)

    def zoom_in(self) -> None:
        self.set_zoom(next((z for z in ZOOM_STEPS if z > self._zoom * 1.01), MAX_ZOOM))

    def zoom_out(self) -> None:
        self.set_zoom(next((z for z in reversed(ZOOM_STEPS) if z < self._zoom / 1.01), MIN_ZOOM))

    def fit_width(self) -> None:
        self._fit_width = True
        self.apply_zoom(self.fit_zoom())

    def apply_zoom(self, zoom: float, keep_center: bool = True) -> None:
        """Set the view's transform to ``zoom`` (clamped), keeping the vertical centre if asked."""
        view = self._view
        zoom = max(MIN_ZOOM, min(MAX_ZOOM, zoom))
        center = view.mapToScene(view.viewport().rect().center())
        changed = abs(zoom - self._zoom) > 1e-4
        self._zoom = zoom
        view.resetTransform()
        view.scale(zoom, zoom)
        if keep_center:
            view.centerOn(QPointF(view.scene().sceneRect().center().x(), center.y()))
        if changed:
            self.zoomChanged.emit(zoom)
        self.viewportChanged.emit()

    def _refit_zoom(self) -> float:
        if self._fit_width:
            return self.fit_zoom()
        return min(self._chosen_zoom, self.fit_zoom()) if self._keep_whole else self._chosen_zoom

    def on_resized(self) -> None:
        """The view changed size (a dock opened or closed beside it, the window was resized): fit the
        page again in "fit width" mode, and keep a whole-width fixed zoom whole."""
        if self._pages and (self._fit_width or self._keep_whole):
            self.apply_zoom(self._refit_zoom())
        else:
            self.viewportChanged.emit()

    # -- navigation ---------------------------------------------------------------------
    def visible_pages(self, margin: int = 1) -> list[int]:
        """Pages on screen (top to bottom), then up to ``margin`` pages either side of them."""
        if not self._pages:
            return []
        view = self._view
        area = view.mapToScene(view.viewport().rect()).boundingRect()
        hits = [i for i in range(len(self._pages)) if self.page_rect_in_scene(i).intersects(area)]
        if not hits:
            return []
        lo, hi = max(0, hits[0] - margin), min(len(self._pages) - 1, hits[-1] + margin)
        # visible first (top to bottom), then the margin pages
        return hits + [i for i in range(lo, hi + 1) if i not in hits]

    def current_page(self) -> int:
        if not self._pages:
            return -1
        center_y = self._view.mapToScene(self._view.viewport().rect().center()).y()
        for i, item in enumerate(self._pages):
            if item.pos().y() + item.size.height() + PAGE_GAP / 2 >= center_y:
                return i
        return len(self._pages) - 1

    def go_to_page(self, index: int) -> None:
        if not self._pages:
            return
        index = max(0, min(len(self._pages) - 1, index))
        top = self._pages[index].pos().y() - PAGE_GAP / 2
        self._view.verticalScrollBar().setValue(round(top * self._zoom))
        self._on_scrolled()

    def next_page(self) -> None:
        self.go_to_page(self.current_page() + 1)

    def prev_page(self) -> None:
        # from mid-page, go to the top of this page first
        page = self.current_page()
        top = self._pages[page].pos().y() if self._pages else 0
        at_top = self._view.mapToScene(QPoint(0, 0)).y() <= top + 2
        self.go_to_page(page - 1 if at_top else page)

    def show_rect(self, page: int, bbox: tuple[float, float, float, float] | None) -> None:
        """Scroll so that ``bbox`` on ``page`` (points) is visible (or the page top)."""
        if not (0 <= page < len(self._pages)):
            return
        if bbox is None:
            self.go_to_page(page)
            return
        origin = self.page_origin(page)
        rect = QRectF(origin.x() + bbox[0], origin.y() + bbox[1], bbox[2] - bbox[0], bbox[3] - bbox[1])
        self._view.ensureVisible(rect, 40, 80)
        self._on_scrolled()

    def _on_scrolled(self, *_: object) -> None:
        self.viewportChanged.emit()
        page = self.current_page()
        if page != self._current_page:
            self._current_page = page
            self.pageChanged.emit(page)
