"""``parse_pdf``: the steps in order, page by page, into a :class:`core.document.Paper`."""

from __future__ import annotations

import os
from pathlib import Path

import pymupdf

from core.document import Figure, PageRect, Paper
from core.errors import CorruptPdfError, RhetoricaError
from core.fileio import file_sha256
from core.jobs import JobContext, ensure_context
from core.pdf.captions import (
    CAPTION_START,
    Caption,
    find_captions,
    find_rotated_captions,
    split_side_by_side_captions,
)
from core.pdf.frontmatter import find_authors, find_title, title_text
from core.pdf.furniture import mark_furniture
from core.pdf.headings import is_references, split_number
from core.pdf.layout import PageLayout, analyse_layout, reading_order
from core.pdf.lines import Line, extract_lines
from core.pdf.mentions import mentioned_ids
from core.pdf.opening import open_pdf
from core.pdf.regions import assign_regions, inside, page_graphics, region_options
from core.pdf.structure import build_structure
from core.pdf.textmap import clean_text, join_lines
from core.text.sentences import split_sentences

PARSER_VERSION = "pdf-16"


def body_font_size(pages: list[list[Line]]) -> float:
    """The most common font size, weighted by characters, before the references list
    (reference lists are often set smaller and can outweigh the body of a short paper)."""
    weight: dict[float, int] = {}
    for lines in pages:
        done = False
        for ln in lines:
            if len(ln.text) < 40 and weight and is_references(split_number(ln.text.strip().rstrip(":."))[1]):
                done = True
                break
            weight[ln.size] = weight.get(ln.size, 0) + len(ln.text)
        if done and sum(weight.values()) > 3000:
            break
    if not weight:
        return 10.0
    return max(weight.items(), key=lambda kv: kv[1])[0]


def body_font_name(pages: list[list[Line]], body_size: float) -> str:
    """The most common font among body-size lines."""
    weight: dict[str, int] = {}
    for lines in pages:
        for ln in lines:
            if abs(ln.size - body_size) < 0.3:
                weight[ln.font] = weight.get(ln.font, 0) + len(ln.text)
    return max(weight.items(), key=lambda kv: kv[1])[0] if weight else ""


# a line that ends like this runs on into the next one ("... (Supplementary" + "Fig. 15) of neurons")
def _metadata_title(doc: pymupdf.Document) -> str:
    """The title in the PDF's metadata when it looks like one (a fallback only)."""
    title = clean_text((doc.metadata or {}).get("title") or "")
    bad = (".dvi", ".doc", ".tex", ".pdf", "microsoft word", "untitled", "proceedings")
    if len(title.split()) < 3 or any(b in title.lower() for b in bad):
        return ""
    return title


def _rotate_box(box: tuple[float, float, float, float],
                matrix: pymupdf.Matrix) -> tuple[float, float, float, float]:
    r = pymupdf.Rect(box) * matrix
    r.normalize()
    return (r.x0, r.y0, r.x1, r.y1)


def _to_display_space(sentences: list, figures: list[Figure], rotations: list) -> None:
    """Pages with /Rotate: pymupdf extracts unrotated coordinates; the document model uses the
    page as displayed (``page.rect``), so rectangles are turned with the page's rotation matrix."""
    for sentence in sentences:
        if any(rotations[r.page] is not None for r in sentence.rects):
            sentence.rects = [
                r if rotations[r.page] is None
                else PageRect(r.page, *_rotate_box((r.x0, r.y0, r.x1, r.y1), rotations[r.page]))
                for r in sentence.rects
            ]
    for fig in figures:
        matrix = rotations[fig.page]
        if matrix is not None:
            fig.bbox = _rotate_box(fig.bbox, matrix)
            fig.caption_bbox = _rotate_box(fig.caption_bbox, matrix)


def parse_pdf(path: str | os.PathLike[str], ctx: JobContext | None = None, *,
              max_pages: int | None = None) -> Paper:
    """Parse a PDF into a :class:`Paper` (see docs/architecture.md)."""
    ctx = ensure_context(ctx)
    path = Path(path)
    doc = open_pdf(path, max_pages=max_pages)
    try:
        return _parse_open(doc, path, ctx)
    except RhetoricaError:
        raise
    # pymupdf failing on a damaged page; MuPDF's own FzErrorBase is not a RuntimeError
    except (RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase) as error:
        raise CorruptPdfError(str(path), f"is damaged: {str(error).strip().splitlines()[0][:120]}") from None
    finally:
        doc.close()


def _parse_open(doc: pymupdf.Document, path: Path, ctx: JobContext) -> Paper:
    sha = file_sha256(path)
    metadata_title = _metadata_title(doc)
    n = doc.page_count
    pages: list[list[Line]] = []
    sizes: list[tuple[float, float]] = []
    all_lines: list[Line] = []
    unrotated: list[tuple[float, float]] = []  # the coordinate space of the extracted text
    rotations: list[pymupdf.Matrix | None] = []  # pages with /Rotate: text comes unrotated
    rotated_pages: list[list[Line]] = []  # vertical lines, kept only on pages with a vertical caption
    for i in range(n):
        ctx.progress(i, 2 * n, f"reading page {i + 1} of {n}")
        page = doc.load_page(i)
        sizes.append((page.rect.width, page.rect.height))
        unrotated.append((page.cropbox.width, page.cropbox.height) if page.rotation else sizes[-1])
        rotations.append(page.rotation_matrix if page.rotation else None)
        vertical: list[Line] = []
        lines = extract_lines(page, i, vertical)
        for ln in lines:
            ln.index = len(all_lines)
            all_lines.append(ln)
        pages.append(lines)
        rotated_pages.append([ln for ln in vertical if CAPTION_START.match(ln.text.strip())] and vertical)
    body_size = body_font_size(pages)
    mark_furniture(pages, [h for _w, h in unrotated])

    flow: list[Line] = []
    layouts: list[PageLayout] = []
    raw_figures: list[tuple[Caption, tuple[float, float, float, float], bool]] = []
    caption_sizes: dict[str, float] = {}
    for i in range(n):
        ctx.progress(n + i, 2 * n, f"laying out page {i + 1} of {n}")
        lines = [ln for ln in pages[i] if "furniture" not in ln.tags]
        layout = analyse_layout(lines, unrotated[i][0], body_size)
        layouts.append(layout)
        ordered = split_side_by_side_captions(reading_order(lines, layout), body_size)
        captions = []
        for cap in find_captions(ordered, body_size):
            # "Table 4. On average, ..." opening a column at body size, when Table 4 already
            # has a caption set apart: a sentence, not a second caption
            earlier = caption_sizes.get(cap.fig_id)
            size = cap.lines[0].size
            if earlier is not None and abs(size - body_size) < 0.3 and abs(earlier - body_size) >= 0.3:
                continue
            caption_sizes.setdefault(cap.fig_id, size)
            captions.append(cap)
        rotated_captions = find_rotated_captions(rotated_pages[i], body_size)
        for cap in rotated_captions:
            graphics = page_graphics(doc.load_page(i))
            others = [ln for ln in rotated_pages[i] if ln not in cap.lines]
            boxes = [(ln.x0, ln.y0, ln.x1, ln.y1) for ln in others] + list(graphics.boxes)
            if boxes:
                bbox = (min(b[0] for b in boxes), min(b[1] for b in boxes),
                        max(b[2] for b in boxes), max(b[3] for b in boxes))
                raw_figures.append((cap, bbox, True))
            else:
                raw_figures.append((cap, (layout.text_x0, 0.05 * unrotated[i][1], layout.text_x1,
                                          0.95 * unrotated[i][1]), False))
        if captions:
            graphics = page_graphics(doc.load_page(i))
            cap_boxes = [c.bbox for c in captions]
            options = [
                region_options(cap, graphics, ordered, layout, unrotated[i], body_size,
                               [b for b in cap_boxes if b != cap.bbox])
                for cap in captions
            ]
            for cap, (bbox, found) in zip(captions, assign_regions(options)):
                for ln in cap.lines:
                    ln.tags.add("caption")
                if found:
                    for ln in ordered:
                        if "caption" not in ln.tags and inside(ln, bbox):
                            ln.tags.add("figure")
                raw_figures.append((cap, bbox, found))
        flow.extend(ordered)

    running = [ln.text for lines in pages[1:4] for ln in lines if "furniture" in ln.tags]
    title_lines = find_title(pages[0], unrotated[0][1], body_size, running) if pages else []
    for ln in title_lines:
        ln.tags.add("title")
    structure = build_structure(flow, layouts, body_size, split_sentences, all_lines,
                                body_font_name(pages, body_size), [h for _w, h in unrotated])
    title = title_text(title_lines) or metadata_title
    stop_page, stop_y = structure.authors_stop
    authors_stop = stop_y if stop_page == 0 else unrotated[0][1] * 0.6
    authors = find_authors(pages[0], title_lines, authors_stop, body_size) if pages else []

    figures: list[Figure] = []
    seen: set[str] = set()
    for cap, bbox, found in raw_figures:
        if cap.fig_id in seen:
            continue
        seen.add(cap.fig_id)
        x0, y0, x1, y1 = bbox  # a 4-tuple of floats, whatever sequence it came as
        figures.append(Figure(
            id=cap.fig_id, kind=cap.kind, number=cap.number,
            caption=clean_text(join_lines(cap.lines)), page=cap.page, bbox=(x0, y0, x1, y1),
            caption_bbox=cap.bbox, region_found=found,
        ))
    if any(m is not None for m in rotations):
        _to_display_space(structure.sentences, figures, rotations)
    by_id = {f.id: f for f in figures}
    for sentence in structure.sentences:
        for fid in mentioned_ids(sentence.text):
            fig = by_id.get(fid)
            if fig is not None:
                fig.mentioned_by.append(sentence.id)
    ctx.progress(2 * n, 2 * n, "done")
    return Paper(
        title=title,
        source_path=str(path),
        sha256=sha,
        page_sizes=sizes,
        authors=authors,
        sections=structure.sections,
        sentences=structure.sentences,
        figures=figures,
        parser_version=PARSER_VERSION,
    )
