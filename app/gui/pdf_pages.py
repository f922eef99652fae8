"""Opening a PDF for display and rendering its pages to images (UI thread, pymupdf)."""

from __future__ import annotations

from pathlib import Path

import pymupdf
from PySide6.QtGui import QImage

from core.errors import CorruptPdfError, EncryptedPdfError, NotAPdfError

MAX_RENDER_SCALE = 5.0


def open_for_view(path: str | Path) -> pymupdf.Document:
    """Open ``path`` for page rendering; typed errors for files that cannot be shown."""
    path = Path(path)
    name = str(path)
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
    for page in doc:
        rect = page.rect
        sizes.append((float(rect.width), float(rect.height)))
    return sizes


def render_page(doc: pymupdf.Document, index: int, scale: float) -> QImage:
    """Page ``index`` rendered at ``scale`` device pixels per point (a detached QImage)."""
    scale = max(0.1, min(MAX_RENDER_SCALE, scale))
    pix = doc[index].get_pixmap(matrix=pymupdf.Matrix(scale, scale), alpha=False)
    image = QImage(pix.samples, pix.width, pix.height, pix.stride, QImage.Format.Format_RGB888)
    return image.copy()  # own the pixels: pix.samples dies with pix


def text_in_rect(doc: pymupdf.Document, index: int, rect: tuple[float, float, float, float]) -> str:
    """Text inside ``rect`` (points, top-left origin) on page ``index``."""
    return doc[index].get_textbox(pymupdf.Rect(*rect)).strip()
