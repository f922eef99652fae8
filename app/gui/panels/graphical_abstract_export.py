"""The graphical abstract's export: the chosen figure rendered at 300 dpi with its caption drawn in a
strip under it, and the caption in a sidecar ``.txt`` (touches no widget: a worker may run it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter

from core.jobs import JobContext

EXPORT_DPI = 300
CAPTION_PT = 9.0  # the caption strip's font size, in points at the export's dpi


@dataclass(frozen=True)
class ExportedFigure:
    """What :func:`export_figure_png` wrote: the PNG, the caption's ``.txt`` and the sizes in pixels."""

    png: Path
    text: Path | None
    width: int
    height: int
    figure_height: int  # the rendered figure; the caption strip is the rest
    caption_height: int


def caption_text(caption: str) -> str:
    return " ".join(caption.split())


def sidecar_path(out_path: str | Path) -> Path:
    """Where the caption of the PNG ``out_path`` is written: the same name with the suffix ``.txt``."""
    return Path(out_path).with_suffix(".txt")


def sidecar_problem(out_path: str | Path, replace_sidecar: bool = False) -> str:
    """One line saying why the caption's ``.txt`` cannot be written beside ``out_path`` without replacing
    a file nobody confirmed ("" when it can): the PNG's own name ends in ``.txt`` (its caption would
    overwrite it), or the ``.txt`` exists already and ``replace_sidecar`` is False."""
    out = Path(out_path)
    if out.suffix.lower() == ".txt":
        return f"{out.name} ends in .txt, where its caption goes; choose a name ending in .png"
    text = sidecar_path(out)
    if not replace_sidecar and (text.exists() or text.is_symlink()):
        return f"{text.name} already exists and would be replaced by the figure's caption"
    return ""


def export_figure_png(pdf_path: str | Path, page: int, bbox: Sequence[float], caption: str,
                      out_path: str | Path, dpi: int = EXPORT_DPI, caption_strip: bool = True,
                      sidecar: bool = True, replace_sidecar: bool = False) -> ExportedFigure:
    """Render ``bbox`` (PDF points) of ``page`` (0-based) at ``dpi`` into the PNG ``out_path``, the caption
    drawn in a white strip under the figure (``caption_strip``), and write the caption to ``out_path``
    with the suffix ``.txt`` (``sidecar``). Only the region is rendered, so this is fast; it touches no
    widget (a worker may run it). With ``sidecar``, nothing is written (:class:`FileExistsError`) when
    the ``.txt`` exists and ``replace_sidecar`` is False, or when ``out_path`` itself ends in ``.txt``."""
    import pymupdf

    from core.fileio import atomic_write_text

    out = Path(out_path)
    problem = sidecar_problem(out, replace_sidecar) if sidecar else ""
    if problem:
        raise FileExistsError(f"{problem}; nothing was written")
    doc = pymupdf.open(str(pdf_path))
    try:
        pdf_page = doc.load_page(page)
        clip = pymupdf.Rect(*bbox) & pdf_page.rect
        if clip.is_empty or clip.width < 1 or clip.height < 1:
            clip = pdf_page.rect
        pix = pdf_page.get_pixmap(clip=clip, dpi=dpi, alpha=False)
        image = QImage()
        if not image.loadFromData(pix.tobytes("png"), "PNG"):
            raise OSError(f"cannot render page {page + 1} of {pdf_path}")
    finally:
        doc.close()
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    text = caption_text(caption)
    strip = 0
    if caption_strip and text:
        image, strip = _with_caption(image, text, dpi)
    dots = round(dpi / 0.0254)
    image.setDotsPerMeterX(dots)
    image.setDotsPerMeterY(dots)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # a file where its folder should be, no permission: a plain reason
        raise OSError(f"its folder cannot be made ({error.strerror or error})") from None
    # PySide6's stub types the format as bytes, but its binding accepts only str here (6.12: bytes
    # raises "called with wrong argument values").
    if not image.save(str(out), cast(bytes, "PNG")):
        raise OSError("the image could not be saved there (check that the folder is writable)")
    text_path: Path | None = None
    if sidecar:
        text_path = sidecar_path(out)
        atomic_write_text(text_path, (caption.strip() or text) + "\n")
    return ExportedFigure(out, text_path, image.width(), image.height(), image.height() - strip, strip)


def _with_caption(figure: QImage, text: str, dpi: int) -> tuple[QImage, int]:
    """``figure`` with ``text`` wrapped in a white strip under it; returns the image and the strip height."""
    scale = dpi / 72.0
    font = QFont("Helvetica")
    font.setPixelSize(max(8, round(CAPTION_PT * scale)))
    margin = max(4, round(6 * scale))
    width = figure.width()
    inner = max(1, width - 2 * margin)
    flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop) | int(Qt.TextFlag.TextWordWrap)
    bounds = QFontMetrics(font).boundingRect(QRect(0, 0, inner, 100_000), flags, text)
    strip = bounds.height() + 2 * margin
    out = QImage(width, figure.height() + strip, QImage.Format.Format_RGB32)
    out.fill(QColor("white"))
    painter = QPainter(out)
    try:
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        painter.drawImage(0, 0, figure)
        painter.setFont(font)
        painter.setPen(QColor("black"))
        box = QRect(margin, figure.height() + margin, inner, bounds.height() + margin)
        painter.drawText(box, flags, text)
    finally:
        painter.end()
    return out, strip


def export_job(ctx: JobContext, pdf_path: str, page: int, bbox: Sequence[float], caption: str,
               out_path: str, replace_sidecar: bool = False) -> ExportedFigure:
    ctx.progress(0, 1, "rendering at 300 dpi")
    exported = export_figure_png(pdf_path, page, bbox, caption, out_path, replace_sidecar=replace_sidecar)
    ctx.progress(1, 1, "saved")
    return exported
