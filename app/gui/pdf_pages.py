"""Opening a PDF for display and rendering its pages to images (UI thread, pymupdf)."""

from __future__ import annotations

import time
from pathlib import Path

import pymupdf
from PySide6.QtGui import QImage, QPainter

from core.errors import CorruptPdfError, EncryptedPdfError, NotAPdfError

MAX_RENDER_SCALE = 5.0


def check_pdf_file(path: str | Path) -> None:
    """Raise the :class:`NotAPdfError` File › Open shows for a path that cannot be a PDF: a folder, a
    missing, unreadable or empty file, or one with no PDF header (the file is not opened as a PDF)."""
    path = Path(path)
    name = str(path)
    if path.is_dir():
        raise NotAPdfError(name, "this is a folder, not a PDF file")
    if not path.is_file():
        raise NotAPdfError(name, "file not found")
    try:
        with open(path, "rb") as handle:
            head = handle.read(1024)
    except OSError as error:
        raise NotAPdfError(name, f"cannot read the file ({error.strerror or error})") from error
    if not head:
        raise NotAPdfError(name, "the file is empty")
    if b"%PDF" not in head:
        raise NotAPdfError(name, "not a PDF file")


def open_for_view(path: str | Path) -> pymupdf.Document:
    """Open ``path`` for page rendering; typed errors for files that cannot be shown."""
    check_pdf_file(path)
    name = str(Path(path))
    try:
        doc = pymupdf.open(name, filetype="pdf")
    except Exception as error:  # pymupdf raises its own FileDataError / RuntimeError
        raise CorruptPdfError(name, "the PDF is damaged and cannot be opened") from error
    if doc.needs_pass:
        doc.close()
        raise EncryptedPdfError(name, "the PDF is password-protected; remove the password and reopen it")
    if doc.page_count == 0:
        doc.close()
        raise CorruptPdfError(name, "the PDF has no pages")
    return doc


def page_sizes(doc: pymupdf.Document) -> list[tuple[float, float]]:
    sizes = []
    for page in doc.pages():
        rect = page.rect
        sizes.append((float(rect.width), float(rect.height)))
    return sizes


def render_page(doc: pymupdf.Document, index: int, scale: float) -> QImage:
    """Page ``index`` rendered at ``scale`` device pixels per point (a detached QImage)."""
    scale = max(0.1, min(MAX_RENDER_SCALE, scale))
    pix = doc[index].get_pixmap(matrix=pymupdf.Matrix(scale, scale), alpha=False)
    image = QImage(pix.samples, pix.width, pix.height, pix.stride, QImage.Format.Format_RGB888)
    return image.copy()  # own the pixels: pix.samples dies with pix


class BandedRender:
    """Render one page in horizontal bands, one short step per call (keeps the UI thread responsive).

    pymupdf holds the GIL while it renders, so a whole page at once (50–150 ms on a busy 2-core
    machine) would freeze the event loop, and a thread would not help.  Instead: step 1 builds
    the page's display list, each next step rasterises a band of about ``BAND_PIXELS`` pixels
    straight into the page image at its exact pixel offset (no seams).

    Some pages cost about as much per band as in one go (a large scanned image or a shading is
    decoded again for every band's clip: 33 bands of 0.3–0.9 s where the whole page takes 1 s).
    Bands only help when they are cheap, so a band slower than ``SLOW_BAND_S`` ends the banding:
    the next step renders the rest of the page in one clip, and the page never costs much more
    than rendering it whole.
    """

    BAND_PIXELS = 40_000
    SLOW_BAND_S = 0.1

    def __init__(self, doc: pymupdf.Document, index: int, scale: float) -> None:
        self.index = index
        self.scale = max(0.1, min(MAX_RENDER_SCALE, scale))
        self._doc = doc
        self._matrix = pymupdf.Matrix(self.scale, self.scale)
        self._display_list: pymupdf.DisplayList | None = None
        self._page_rect = doc[index].rect
        full = (self._page_rect * self._matrix).irect
        self._origin = (full.x0, full.y0)
        self.image = QImage(max(1, full.width), max(1, full.height), QImage.Format.Format_RGB888)
        self.image.fill(0xFFFFFF)
        rows = max(16, self.BAND_PIXELS // max(1, full.width))
        self._bands = [(y, min(full.height, y + rows)) for y in range(0, max(1, full.height), rows)]
        self._next = 0

    @property
    def done(self) -> bool:
        return self._display_list is not None and self._next >= len(self._bands)

    @property
    def bands_done(self) -> int:
        return self._next

    def step(self) -> bool:
        """Do one short piece of work; True when the page is complete."""
        if self._display_list is None:
            self._display_list = self._doc[self.index].get_displaylist()
            return False
        if self._next >= len(self._bands):
            return True
        top, bottom = self._bands[self._next]
        self._next += 1
        start = time.perf_counter()
        self._render_band(top, bottom)
        if time.perf_counter() - start > self.SLOW_BAND_S and self._next < len(self._bands):
            # banding does not pay on this page: the rest in one clip (one decode, not one per band)
            self._bands[self._next:] = [(self._bands[self._next][0], self._bands[-1][1])]
        return self.done

    def _render_band(self, top: int, bottom: int) -> None:
        """Rasterise pixel rows ``top``..``bottom`` of the page into :attr:`image`."""
        assert self._display_list is not None
        y0 = self._page_rect.y0 + (self._origin[1] + top) / self.scale
        y1 = self._page_rect.y0 + (self._origin[1] + bottom) / self.scale
        clip = pymupdf.Rect(self._page_rect.x0, y0, self._page_rect.x1, y1)
        pix = self._display_list.get_pixmap(matrix=self._matrix, clip=clip, alpha=False)
        band = QImage(pix.samples, pix.width, pix.height, pix.stride, QImage.Format.Format_RGB888)
        painter = QPainter(self.image)
        painter.drawImage(pix.x - self._origin[0], pix.y - self._origin[1], band)
        painter.end()
        del band, pix


Word = tuple[float, float, float, float, str, int, int, int]  # x0, y0, x1, y1, text, block, line, word


def page_words(doc: pymupdf.Document, index: int) -> list[Word]:
    """The words of page ``index`` with their boxes (points) and block/line numbers, in reading order.

    One text extraction (5–10 ms a page); taking the text of a rectangle with ``get_textbox`` instead
    costs 150–300 ms on a dense page, every time."""
    return [(float(w[0]), float(w[1]), float(w[2]), float(w[3]), str(w[4]), int(w[5]), int(w[6]), int(w[7]))
            for w in doc[index].get_text("words")]


def words_text(words: list[Word], rect: tuple[float, float, float, float]) -> str:
    """The text of the ``words`` that overlap ``rect``: words joined by spaces, lines by newlines."""
    x0, y0, x1, y1 = rect
    lines: list[list[str]] = []
    last: tuple[int, int] | None = None
    for wx0, wy0, wx1, wy1, text, block, line, _ in words:
        if wx0 >= x1 or wx1 <= x0 or wy0 >= y1 or wy1 <= y0:
            continue
        if (block, line) != last:
            lines.append([])
            last = (block, line)
        lines[-1].append(text)
    return "\n".join(" ".join(line) for line in lines).strip()


def text_in_rect(doc: pymupdf.Document, index: int, rect: tuple[float, float, float, float]) -> str:
    """Text inside ``rect`` (points, top-left origin) on page ``index``."""
    return words_text(page_words(doc, index), rect)
