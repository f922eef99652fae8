"""Lazy page rendering: pixmaps for the pages near the viewport, crisp at the current zoom, cached.

Pages are rendered at ``zoom × devicePixelRatio`` so that one rendered pixel lands on one device pixel,
only for the pages :meth:`PageLayout.visible_pages` names, and kept for the pages rendered last (LRU),
at most ``PIXMAP_CACHE_PAGES`` pages and ``PIXMAP_CACHE_BYTES`` of pixels (a page at 600 % is about
50 MB); the pages near the viewport are never dropped.  When the zoom changes, the pixmaps of other
pages (rendered for the old zoom) are dropped at once.  Requests go to the render process
(:class:`RenderClient`, which several views may share: each rendering's document has a token of its
own), at most ``MAX_IN_FLIGHT`` at a time; while it is not up (or if it dies) pages render here in short
banded steps, one slice of UI-thread time per event-loop turn.
"""

from __future__ import annotations

import itertools
import time
from collections import OrderedDict
from collections.abc import Callable

import pymupdf
from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QImage, QPixmap

from app.gui.page_layout import PageLayout
from app.gui.pdf_pages import BandedRender
from app.gui.render_client import RenderClient

PIXMAP_CACHE_PAGES = 24
PIXMAP_CACHE_BYTES = 256 * 1024 * 1024
MAX_IN_FLIGHT = 2  # page requests outstanding at the render process
RENDER_SLICE_S = 0.012  # fallback renderer: UI-thread time per turn before yielding to the event loop
_TOKENS = itertools.count(1)  # one per document opened, unique across the views sharing a render process


def pixmap_bytes(pixmap: QPixmap | None) -> int:
    """Memory a pixmap's pixels take."""
    if pixmap is None:
        return 0
    return pixmap.width() * pixmap.height() * max(1, pixmap.depth() // 8)


class PageRendering(QObject):
    """Keeps the pixmaps of ``layout``'s pages near the viewport current; call :meth:`schedule_visible`."""

    def __init__(self, layout: PageLayout, client: RenderClient | None,
                 device_pixel_ratio: Callable[[], float], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._layout = layout
        self._client = client
        self._device_pixel_ratio = device_pixel_ratio
        self._doc: pymupdf.Document | None = None
        self._token = next(_TOKENS)
        self._opened = 0  # the token the render process has a document open for (0: none)
        self._in_flight: set[int] = set()
        self._lru: OrderedDict[int, int] = OrderedDict()  # page -> bytes of its pixmap
        self._cache_scale = 0.0  # the scale the cached pixmaps were last kept for
        self._queue: list[int] = []
        self._job: BandedRender | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._render_next)
        self.renders = 0  # pages rendered (for tests/benchmarks)
        if client is not None:
            client.pageRendered.connect(self._on_page_rendered)
            client.pageFailed.connect(self._on_page_failed)
            client.ready.connect(self.schedule_visible)
            client.stopped.connect(self._on_client_stopped)

    def open(self, doc: pymupdf.Document, path: str | None) -> None:
        """Render ``doc`` from now on (the render process opens ``path`` when given)."""
        self._close_in_client()
        self._doc = doc
        self._token = next(_TOKENS)
        if self._client is not None and path is not None:
            self._client.open(self._token, path)
            self._opened = self._token

    def clear(self) -> None:
        """Stop rendering and forget the document; replies still on their way are ignored."""
        self._timer.stop()
        self._queue.clear()
        self._job = None
        self._in_flight.clear()
        self._close_in_client()
        self._token = next(_TOKENS)
        self._lru.clear()
        self._doc = None

    def _close_in_client(self) -> None:
        if self._opened and self._client is not None:
            self._client.close(self._opened)
        self._opened = 0

    @property
    def cached_bytes(self) -> int:
        """Memory the cached page pixmaps take."""
        return sum(self._lru.values())

    def scale(self) -> float:
        """Device pixels per point at the current zoom."""
        return self._layout.zoom * self._device_pixel_ratio()

    @property
    def uses_render_server(self) -> bool:
        """True once the render process is up; until then (and if it fails) pages render here."""
        return self._client is not None and self._client.available and self._client.is_ready

    def has_pixmap(self, index: int) -> bool:
        pages = self._layout.pages
        return 0 <= index < len(pages) and pages[index].pixmap is not None

    def is_sharp(self, index: int) -> bool:
        """True when page ``index`` has a pixmap rendered at the current zoom (not a stale one)."""
        return self.has_pixmap(index) and abs(self._layout.pages[index].pixmap_scale - self.scale()) < 1e-3

    def schedule_visible(self) -> None:
        """Queue the pages near the viewport that lack a pixmap at the current scale."""
        if self._doc is None:
            return
        scale = self.scale()
        pages = self._layout.pages
        near = self._layout.visible_pages()
        if abs(scale - self._cache_scale) > 1e-3:
            self._cache_scale = scale
            self._drop_stale(scale, set(near))
        wanted = [i for i in near if abs(pages[i].pixmap_scale - scale) > 1e-3]
        self._queue = wanted
        if wanted and not self._timer.isActive():
            self._timer.start()

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
            more = self._render_step(self._doc)
            now = time.perf_counter()
            if not more or now + 1.5 * (now - step_start) > start + RENDER_SLICE_S:
                break
        if self._queue or self._job is not None:
            self._timer.start()

    def _request_renders(self) -> None:
        client = self._client
        if client is None or not client.is_ready:
            return  # ``ready`` reschedules
        scale = self.scale()
        pages = self._layout.pages
        for index in list(self._queue):
            if len(self._in_flight) >= MAX_IN_FLIGHT:
                break
            if index in self._in_flight or abs(pages[index].pixmap_scale - scale) <= 1e-3:
                continue
            if client.render(self._token, index, scale):
                self._in_flight.add(index)

    def _on_page_rendered(self, token: int, index: int, scale: float, image: QImage) -> None:
        pages = self._layout.pages
        if token != self._token or not (0 <= index < len(pages)):
            return
        self._in_flight.discard(index)
        if abs(scale - self.scale()) <= 1e-3:
            pages[index].set_pixmap(QPixmap.fromImage(image), scale)
            self.renders += 1
            self._remember(index)
        self.schedule_visible()

    def _on_page_failed(self, token: int, index: int, message: str) -> None:
        if token == self._token:
            self._in_flight.discard(index)

    def _on_client_stopped(self) -> None:
        self._in_flight.clear()
        self.schedule_visible()  # falls back to rendering on this thread

    def _remember(self, index: int) -> None:
        """Cache page ``index``'s new pixmap; drop the least recently rendered pages (not those near the
        viewport) while the cache is over its page count or its bytes."""
        pages = self._layout.pages
        self._lru.pop(index, None)
        self._lru[index] = pixmap_bytes(pages[index].pixmap)
        keep = set(self._layout.visible_pages()) | {index}
        total = self.cached_bytes
        for old in list(self._lru):
            if len(self._lru) <= PIXMAP_CACHE_PAGES and total <= PIXMAP_CACHE_BYTES:
                break
            if old not in keep:
                total -= self._lru.pop(old)
                pages[old].set_pixmap(None, 0.0)

    def _drop_stale(self, scale: float, keep: set[int]) -> None:
        """The zoom changed: drop the pixmaps of other scales, except on the pages in ``keep`` (shown
        scaled until their new pixmap arrives)."""
        for item in self._layout.pages:
            if item.pixmap is not None and item.index not in keep and abs(item.pixmap_scale - scale) > 1e-3:
                self._lru.pop(item.index, None)
                item.set_pixmap(None, 0.0)

    def _render_step(self, doc: pymupdf.Document) -> bool:
        """One render step; False when there is nothing left to do."""
        scale = self.scale()
        pages = self._layout.pages
        job = self._job
        if job is not None and (abs(job.scale - scale) > 1e-3 or job.index not in self._queue):
            job = self._job = None
        if job is None:
            while self._queue and abs(pages[self._queue[0]].pixmap_scale - scale) <= 1e-3:
                self._queue.pop(0)
            if not self._queue:
                return False
            job = self._job = BandedRender(doc, self._queue[0], scale)
        finished = job.step()
        item = pages[job.index]
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
