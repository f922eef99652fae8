"""Rendering a figure crop as PNG bytes (on demand, never during parsing)."""

from __future__ import annotations

import os

import pymupdf

from core.document import Figure
from core.pdf.opening import open_pdf


def render_figure_png(path: str | os.PathLike[str], figure: Figure, zoom: float = 2.0) -> bytes:
    """PNG bytes of ``figure.bbox`` on its page at ``zoom`` x 72 dpi."""
    doc = open_pdf(path, check_text=False)
    try:
        page = doc.load_page(figure.page)
        x0, y0, x1, y1 = figure.bbox
        clip = pymupdf.Rect(x0 - 1, y0 - 1, x1 + 1, y1 + 1) & page.rect  # a hairline margin
        if clip.is_empty or clip.width < 1 or clip.height < 1:
            clip = page.rect
        pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), clip=clip, alpha=False)
        return pix.tobytes("png")
    finally:
        doc.close()
