"""Continuous-scroll page view: crisp lazy page rendering, zoom, text selection, role overlays.

Scene coordinates are PDF points: page *i* sits at ``page_origin(i)``; the view's transform is the
zoom.  Pages are rendered by pymupdf at ``zoom × devicePixelRatio`` so one rendered pixel lands on
one device pixel (crisp), only for pages near the viewport, one page per event-loop turn (the UI
never stalls), and cached (LRU).  Overlays are one :class:`SentenceItem` per sentence, built in
chunks when the analysis arrives.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QGuiApplication,
    QImage,
    QPainter,
    QPainterPath,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsView,
    QRubberBand,
    QStyleOptionGraphicsItem,
    QWidget,
)

from app.gui.palette import RolePalette
from app.gui.pdf_pages import BandedRender, text_in_rect
from app.gui.render_client import RenderClient

PAGE_GAP = 14.0  # points between pages
ZOOM_STEPS = (0.25, 0.33, 0.5, 0.67, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0)
MIN_ZOOM, MAX_ZOOM = 0.2, 6.0
PIXMAP_CACHE_PAGES = 24
OVERLAY_CHUNK = 100  # sentence items built per event-loop turn
MAX_IN_FLIGHT = 2  # page requests outstanding at the render process
RENDER_SLICE_S = 0.012  # fallback renderer: UI-thread time per turn before yielding to the event loop
DRAG_THRESHOLD = 5  # pixels before a press becomes a rubber-band selection


class PageItem(QGraphicsItem):
    """One page: white paper, the rendered pixmap when there is one, a thin border."""

    def __init__(self, index: int, width: float, height: float) -> None:
        super().__init__()
        self.index = index
        self.size = QRectF(0, 0, width, height)
        self.pixmap: QPixmap | None = None
        self.pixmap_scale = 0.0
        self.painted_with_pixmap = False
        self.on_first_paint: Any = None
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


class SentenceItem(QGraphicsItem):
    """The highlight of one sentence (its line rectangles) in its role colour."""

    def __init__(self, index: int, path: QPainterPath, palette: RolePalette) -> None:
        super().__init__()
        self.index = index
        self.role: str | None = None
        self.confidence = 0.0
        self._path = path
        self._bounds = path.boundingRect().adjusted(-2, -2, 2, 2)
        self._palette = palette
        self.hovered = False
        self.selected = False
        self.setZValue(1)
        self.setAcceptHoverEvents(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)

    def set_role(self, role: str | None, confidence: float, tooltip: str) -> None:
        self.role = role
        self.confidence = confidence
        self.setToolTip(tooltip)
        self.update()

    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        return self._path

    def hoverEnterEvent(self, event: Any) -> None:
        self.hovered = True
        self.update()

    def hoverLeaveEvent(self, event: Any) -> None:
        self.hovered = False
        self.update()

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        if self.role is None:
            if self.hovered or self.selected:  # not labelled yet: a thin outline shows what a click picks
                pen = QPen(QColor("#555555"), 0)
                pen.setCosmetic(True)
                painter.setPen(pen)
                painter.drawPath(self._path)
            return
        opacity = self._palette.opacity
        if self.hovered or self.selected:
            opacity = min(1.0, opacity + 0.2)
        painter.save()
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Multiply)
        painter.fillPath(self._path, QBrush(self._palette.fill(self.role, opacity)))
        painter.restore()
        if self.selected or self.hovered:
            pen = QPen(self._palette.color(self.role).darker(170 if self.selected else 130), 0)
            pen.setWidthF(2.0 if self.selected else 1.0)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(self._path)


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
        self._palette = palette
        self._renderer = renderer
        self._token = 0
        self._in_flight: set[int] = set()
        if renderer is not None:
            renderer.pageRendered.connect(self._on_page_rendered)
            renderer.pageFailed.connect(self._on_page_failed)
            renderer.ready.connect(self._schedule_visible)
            renderer.stopped.connect(self._on_renderer_stopped)
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
        self._doc: Any = None
        self._pages: list[PageItem] = []
        self._zoom = 1.0
        self._fit_width = True
        self._lru: OrderedDict[int, None] = OrderedDict()
        self._queue: list[int] = []
        self._job: BandedRender | None = None
        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(0)
        self._render_timer.timeout.connect(self._render_next)
        self._overlays: list[SentenceItem] = []
        self._overlay_paper: Any = None
        self._overlay_timer = QTimer(self)
        self._overlay_timer.setInterval(0)
        self._overlay_timer.timeout.connect(self._build_overlay_chunk)
        self._pending_overlay: tuple[Any, Any, int] | None = None
        self._selected = -1
        self._current_page = -1
        self._press_pos: QPoint | None = None
        self._rubber: QRubberBand | None = None
        self._selection_item: QGraphicsRectItem | None = None
        self.selected_text = ""
        self.renders = 0  # pages rendered (for tests/benchmarks)
        self.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        palette.changed.connect(self._on_palette_changed)

    # -- document -----------------------------------------------------------------------
    @property
    def page_count(self) -> int:
        return len(self._pages)

    @property
    def zoom(self) -> float:
        return self._zoom

    def set_document(self, doc: Any, sizes: list[tuple[float, float]], zoom: float = 0.0,
                     path: str | None = None) -> None:
        """Lay out placeholder pages at once; pages near the viewport render on the next turns."""
        self.clear()
        self._doc = doc
        self._token += 1
        if self._renderer is not None and path is not None:
            self._renderer.open(self._token, path)
        max_width = max((w for w, _ in sizes), default=612.0)
        y = PAGE_GAP
        for index, (width, height) in enumerate(sizes):
            item = PageItem(index, width, height)
            item.setPos((max_width - width) / 2, y)
            self.scene().addItem(item)
            self._pages.append(item)
            y += height + PAGE_GAP
        self.scene().setSceneRect(QRectF(-PAGE_GAP, 0, max_width + 2 * PAGE_GAP, y))
        if self._pages:
            self._pages[0].on_first_paint = self.firstPageShown.emit
        self._fit_width = zoom <= 0
        self._apply_zoom(self._fit_zoom() if zoom <= 0 else zoom, keep_center=False)
        self.verticalScrollBar().setValue(self.verticalScrollBar().minimum())
        self._current_page = -1
        self._on_scrolled()

    def clear(self) -> None:
        self._render_timer.stop()
        self._overlay_timer.stop()
        self._pending_overlay = None
        self._queue.clear()
        self._job = None
        self._in_flight.clear()
        self._token += 1
        self._lru.clear()
        self._overlays = []
        self._overlay_paper = None
        self._pages = []
        self._selection_item = None
        self._selected = -1
        self.selected_text = ""
        self.scene().clear()
        self._doc = None

    def page_origin(self, index: int) -> QPointF:
        return self._pages[index].pos()

    def page_rect_in_scene(self, index: int) -> QRectF:
        item = self._pages[index]
        return item.size.translated(item.pos())

    # -- zoom ---------------------------------------------------------------------------
    def _fit_zoom(self) -> float:
        if not self._pages:
            return 1.0
        width = self.scene().sceneRect().width()
        available = max(100, self.viewport().width() - 4)
        return max(MIN_ZOOM, min(MAX_ZOOM, available / width))

    def set_zoom(self, zoom: float) -> None:
        self._fit_width = False
        self._apply_zoom(zoom)

    def zoom_in(self) -> None:
        self.set_zoom(next((z for z in ZOOM_STEPS if z > self._zoom * 1.01), MAX_ZOOM))

    def zoom_out(self) -> None:
        self.set_zoom(next((z for z in reversed(ZOOM_STEPS) if z < self._zoom / 1.01), MIN_ZOOM))

    def fit_width(self) -> None:
        self._fit_width = True
        self._apply_zoom(self._fit_zoom())

    def _apply_zoom(self, zoom: float, keep_center: bool = True) -> None:
        zoom = max(MIN_ZOOM, min(MAX_ZOOM, zoom))
        center = self.mapToScene(self.viewport().rect().center())
        changed = abs(zoom - self._zoom) > 1e-4
        self._zoom = zoom
        self.resetTransform()
        self.scale(zoom, zoom)
        if keep_center:
            self.centerOn(QPointF(self.scene().sceneRect().center().x(), center.y()))
        if changed:
            self.zoomChanged.emit(zoom)
        self._schedule_visible()

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        if self._fit_width and self._pages:
            self._apply_zoom(self._fit_zoom())
        else:
            self._schedule_visible()

    def wheelEvent(self, event: Any) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            if event.angleDelta().y() > 0:
                self.zoom_in()
            elif event.angleDelta().y() < 0:
                self.zoom_out()
            event.accept()
            return
        super().wheelEvent(event)

    # -- navigation ---------------------------------------------------------------------
    def visible_pages(self, margin: int = 1) -> list[int]:
        if not self._pages:
            return []
        area = self.mapToScene(self.viewport().rect()).boundingRect()
        hits = [i for i, p in enumerate(self._pages) if self.page_rect_in_scene(i).intersects(area)]
        if not hits:
            return []
        lo, hi = max(0, hits[0] - margin), min(len(self._pages) - 1, hits[-1] + margin)
        # visible first (top to bottom), then the margin pages
        return hits + [i for i in range(lo, hi + 1) if i not in hits]

    def current_page(self) -> int:
        if not self._pages:
            return -1
        center_y = self.mapToScene(self.viewport().rect().center()).y()
        for i, item in enumerate(self._pages):
            if item.pos().y() + item.size.height() + PAGE_GAP / 2 >= center_y:
                return i
        return len(self._pages) - 1

    def go_to_page(self, index: int) -> None:
        if not self._pages:
            return
        index = max(0, min(len(self._pages) - 1, index))
        top = self._pages[index].pos().y() - PAGE_GAP / 2
        self.verticalScrollBar().setValue(round(top * self._zoom))
        self._on_scrolled()

    def next_page(self) -> None:
        self.go_to_page(self.current_page() + 1)

    def prev_page(self) -> None:
        # from mid-page, go to the top of this page first
        page = self.current_page()
        top = self._pages[page].pos().y() if self._pages else 0
        at_top = self.mapToScene(QPoint(0, 0)).y() <= top + 2
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
        self.ensureVisible(rect, 40, 80)
        self._on_scrolled()

    def _on_scrolled(self, *_: Any) -> None:
        self._schedule_visible()
        page = self.current_page()
        if page != self._current_page:
            self._current_page = page
            self.pageChanged.emit(page)

    # -- lazy rendering -----------------------------------------------------------------
    def _scale(self) -> float:
        return self._zoom * self.devicePixelRatioF()

    def _schedule_visible(self) -> None:
        if self._doc is None:
            return
        scale = self._scale()
        wanted = [i for i in self.visible_pages() if abs(self._pages[i].pixmap_scale - scale) > 1e-3]
        self._queue = wanted
        if wanted and not self._render_timer.isActive():
            self._render_timer.start()

    @property
    def uses_render_server(self) -> bool:
        """True once the render process is up; until then (and if it fails) pages render here."""
        return self._renderer is not None and self._renderer.available and self._renderer.is_ready

    def _render_next(self) -> None:
        if self._doc is None:
            return
        if self.uses_render_server:
            self._job = None
            self._request_renders()
            return
        # fallback (no render process): short steps on the UI thread, cheap ones batched
        start = time.perf_counter()
        while True:
            step_start = time.perf_counter()
            more = self._render_step()
            now = time.perf_counter()
            if not more or now + 1.5 * (now - step_start) > start + RENDER_SLICE_S:
                break
        if self._queue or self._job is not None:
            self._render_timer.start()

    def _request_renders(self) -> None:
        renderer = self._renderer
        if renderer is None or not renderer.is_ready:
            return  # ``ready`` reschedules
        scale = self._scale()
        for index in list(self._queue):
            if len(self._in_flight) >= MAX_IN_FLIGHT:
                break
            if index in self._in_flight or abs(self._pages[index].pixmap_scale - scale) <= 1e-3:
                continue
            if renderer.render(self._token, index, scale):
                self._in_flight.add(index)

    def _on_page_rendered(self, token: int, index: int, scale: float, image: QImage) -> None:
        if token != self._token or not (0 <= index < len(self._pages)):
            return
        self._in_flight.discard(index)
        if abs(scale - self._scale()) <= 1e-3:
            self._pages[index].set_pixmap(QPixmap.fromImage(image), scale)
            self.renders += 1
            self._remember(index)
        self._schedule_visible()

    def _on_page_failed(self, token: int, index: int, message: str) -> None:
        if token == self._token:
            self._in_flight.discard(index)

    def _on_renderer_stopped(self) -> None:
        self._in_flight.clear()
        self._schedule_visible()  # falls back to rendering on this thread

    def _remember(self, index: int) -> None:
        self._lru.pop(index, None)
        self._lru[index] = None
        while len(self._lru) > PIXMAP_CACHE_PAGES:
            old, _ = self._lru.popitem(last=False)
            self._pages[old].set_pixmap(None, 0.0)

    def _render_step(self) -> bool:
        """One render step; False when there is nothing left to do."""
        scale = self._scale()
        job = self._job
        if job is not None and (abs(job.scale - scale) > 1e-3 or job.index not in self._queue):
            job = self._job = None
        if job is None:
            while self._queue and abs(self._pages[self._queue[0]].pixmap_scale - scale) <= 1e-3:
                self._queue.pop(0)
            if not self._queue:
                return False
            job = self._job = BandedRender(self._doc, self._queue[0], scale)
        finished = job.step()
        item = self._pages[job.index]
        if finished or (job.bands_done and job.bands_done % 4 == 0):
            # show progress: the bands so far (the rest stays white) until the page is complete
            item.set_pixmap(QPixmap.fromImage(job.image), job.scale if finished else -1.0)
        if finished:
            self._job = None
            self.renders += 1
            if self._queue and self._queue[0] == job.index:
                self._queue.pop(0)
            self._remember(job.index)
        return bool(self._queue) or self._job is not None

    def has_pixmap(self, index: int) -> bool:
        return 0 <= index < len(self._pages) and self._pages[index].pixmap is not None

    # -- overlays -----------------------------------------------------------------------
    @property
    def overlay_items(self) -> list[SentenceItem]:
        return list(self._overlays)

    @property
    def overlays_pending(self) -> bool:
        return self._pending_overlay is not None

    def set_sentences(self, paper: Any) -> None:
        """Unlabelled sentence items (clickable, not coloured) while the analysis is pending."""
        self.set_overlays(paper, None)

    def set_overlays(self, paper: Any, analysis: Any) -> None:
        """One item per sentence, a chunk per event-loop turn; ``overlaysBuilt`` at the end.

        Items already built for the same paper (unlabelled, while the analysis ran) are reused and
        only get their roles, so labelling never removes and re-adds hundreds of scene items.
        """
        self._overlay_timer.stop()
        if self._overlay_paper is not paper or len(self._overlays) > len(paper.sentences):
            for item in self._overlays:
                self.scene().removeItem(item)
            self._overlays = []
        self._overlay_paper = paper
        self._pending_overlay = (paper, analysis, 0)
        self._overlay_timer.start()

    def _sentence_path(self, sentence: Any) -> QPainterPath:
        path = QPainterPath()
        path.setFillRule(Qt.FillRule.WindingFill)
        for r in sentence.rects:
            if not (0 <= r.page < len(self._pages)):
                continue
            origin = self.page_origin(r.page)
            path.addRect(QRectF(origin.x() + r.x0 - 0.5, origin.y() + r.y0 - 0.5,
                                (r.x1 - r.x0) + 1.0, (r.y1 - r.y0) + 1.0))
        return path

    def _build_overlay_chunk(self) -> None:
        if self._pending_overlay is None:
            self._overlay_timer.stop()
            return
        paper, analysis, start = self._pending_overlay
        sentences = paper.sentences
        end = min(len(sentences), start + OVERLAY_CHUNK)
        scene = self.scene()
        for sentence in sentences[start:end]:
            if sentence.index < len(self._overlays):
                item = self._overlays[sentence.index]
            else:
                item = SentenceItem(sentence.index, self._sentence_path(sentence), self._palette)
                item.selected = sentence.index == self._selected
                scene.addItem(item)
                self._overlays.append(item)
            if analysis is not None:
                prediction = analysis.roles[sentence.index]
                section = paper.section_of(sentence)
                heading = " ".join(p for p in (section.number, section.heading) if p) or section.kind.value
                tip = (f"<b>{prediction.label}</b> — {prediction.confidence:.0%} confident"
                       f"<br><i>{_escape(heading)}</i>")
                item.set_role(prediction.label, prediction.confidence, tip)
                item.setVisible(self._palette.is_visible(prediction.label))
        if end >= len(sentences):
            self._overlay_timer.stop()
            del self._overlays[len(sentences):]
            self._pending_overlay = None
            self.overlaysBuilt.emit(len(self._overlays))
        else:
            self._pending_overlay = (paper, analysis, end)

    def _on_palette_changed(self) -> None:
        for item in self._overlays:
            if item.role is not None:
                item.setVisible(self._palette.is_visible(item.role))
        self.viewport().update()

    def select_sentence(self, index: int) -> None:
        if 0 <= self._selected < len(self._overlays):
            self._overlays[self._selected].selected = False
            self._overlays[self._selected].update()
        self._selected = index
        if 0 <= index < len(self._overlays):
            self._overlays[index].selected = True
            self._overlays[index].update()

    # -- mouse: click selects a sentence, drag selects text -----------------------------
    def mousePressEvent(self, event: Any) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._press_pos = event.position().toPoint()
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: Any) -> None:
        if self._press_pos is not None:
            pos = event.position().toPoint()
            if self._rubber is None and (pos - self._press_pos).manhattanLength() >= DRAG_THRESHOLD:
                self._rubber = QRubberBand(QRubberBand.Shape.Rectangle, self.viewport())
                self._rubber.show()
            if self._rubber is not None:
                self._rubber.setGeometry(QRect(self._press_pos, pos).normalized())
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: Any) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self._press_pos is not None:
            if self._rubber is not None:
                rect = self._rubber.geometry()
                self._rubber.hide()
                self._rubber.deleteLater()
                self._rubber = None
                self.select_text_in(self.mapToScene(rect).boundingRect())
            else:
                self.click_at(self._press_pos)
            self._press_pos = None
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def contextMenuEvent(self, event: Any) -> None:
        self.contextMenuRequested.emit(self.sentence_at(event.pos()), event.globalPos())
        event.accept()

    def sentence_at(self, pos: QPoint) -> int:
        for item in self.items(pos):
            if isinstance(item, SentenceItem) and item.isVisible():
                return item.index
        return -1

    def click_at(self, pos: QPoint) -> None:
        index = self.sentence_at(pos)
        self._clear_text_selection()
        if index >= 0:
            self.sentenceClicked.emit(index)

    def select_text_in(self, scene_rect: QRectF) -> str:
        """Select (and return) the text inside ``scene_rect`` across the pages it touches."""
        self._clear_text_selection()
        if self._doc is None:
            return ""
        parts = []
        for i in range(len(self._pages)):
            page_rect = self.page_rect_in_scene(i)
            hit = page_rect.intersected(scene_rect)
            if hit.isEmpty():
                continue
            local = hit.translated(-page_rect.topLeft())
            text = text_in_rect(self._doc, i, (local.left(), local.top(), local.right(), local.bottom()))
            if text:
                parts.append(text)
        self.selected_text = "\n".join(parts)
        if self.selected_text:
            item = QGraphicsRectItem(scene_rect)
            pen = QPen(QColor("#0072B2"), 0, Qt.PenStyle.DashLine)
            pen.setCosmetic(True)
            item.setPen(pen)
            item.setBrush(QColor(0, 114, 178, 40))
            item.setZValue(2)
            self.scene().addItem(item)
            self._selection_item = item
        self.textSelected.emit(self.selected_text)
        return self.selected_text

    def _clear_text_selection(self) -> None:
        if self._selection_item is not None:
            self.scene().removeItem(self._selection_item)
            self._selection_item = None
        if self.selected_text:
            self.selected_text = ""
            self.textSelected.emit("")

    def copy_selection(self, fallback: str = "") -> str:
        text = self.selected_text or fallback
        if text:
            QGuiApplication.clipboard().setText(text)
        return text

    def sizeHint(self) -> QSize:
        return QSize(800, 900)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
