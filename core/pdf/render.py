"""Rendering a figure crop as PNG bytes (on demand, never during parsing)."""

from __future__ import annotations

import os

import pymupdf

from core.document import Figure
from core.errors import CorruptPdfError, RhetoricaError
from core.pdf.opening import open_pdf

MAX_SIDE_PX = 6000  # a poster-sized figure is scaled down to this, not rendered at 300 dpi (MuPDF's limit)


def render_figure_png(path: str | os.PathLike[str], figure: Figure, zoom: float = 2.0) -> bytes:
    """PNG bytes of ``figure.bbox`` on its page at ``zoom`` x 72 dpi (less where the crop would be wider or
    taller than ``MAX_SIDE_PX``)."""
    doc = open_pdf(path, check_text=False)
    try:
        page = doc.load_page(figure.page)
        x0, y0, x1, y1 = figure.bbox
        clip = pymupdf.Rect(x0 - 1, y0 - 1, x1 + 1, y1 + 1) & page.rect  # a hairline margin
        if clip.is_empty or clip.width < 1 or clip.height < 1:
            clip = page.rect
        zoom = min(zoom, (MAX_SIDE_PX - 2) / max(clip.width, clip.height))  # (pixel rounding)
        pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), clip=clip, alpha=False)
        return pix.tobytes("png")
    except RhetoricaError:
        raise
    except Exception as error:  # MuPDF's limits and a damaged page's content
        reason = f"figure on page {figure.page + 1} cannot be rendered ({error})"
        raise CorruptPdfError(str(path), reason) from None
    finally:
        doc.close()
