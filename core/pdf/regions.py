"""Figure and table regions: the graphics (raster images, vector drawings) and their
labels next to a caption, or a fallback crop when nothing is found."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pymupdf

from core.pdf.captions import Caption
from core.pdf.layout import PageLayout
from core.pdf.lines import Line

Box = tuple[float, float, float, float]
_NUMBER = re.compile(r"^[(\[]?[-+−±]?\d[\d.,%]*[)\]]?$")
HEAD_BAND = 0.1  # a graphic ending in the top tenth of the page is a running-head band, not a figure


@dataclass
class PageGraphics:
    boxes: list[Box]
    page: pymupdf.Page | None = None  # read again, only when a figure's labels are wanted
    _labels: list[tuple[float, float, float, float, float]] | None = None

    @property
    def labels(self) -> list[tuple[float, float, float, float, float]]:
        """Text set vertically on the page (rotated axis titles) as (x0, y0, x1, y1, font size): the
        parser's lines hold horizontal text only, so a figure's box takes these from here."""
        if self._labels is None:
            self._labels = _vertical_text(self.page) if self.page is not None else []
        return self._labels


def page_graphics(page: pymupdf.Page) -> PageGraphics:
    """Boxes of images and vector drawings on a page (no image bytes are decoded); its vertical text
    is read when first asked for (:attr:`PageGraphics.labels`)."""
    area = page.rect
    pw, ph = area.width, area.height
    boxes: list[Box] = []
    for info in page.get_image_info():
        x0, y0, x1, y1 = info["bbox"]
        if x1 - x0 > 2 and y1 - y0 > 2:
            boxes.append((max(0, x0), max(0, y0), min(pw, x1), min(ph, y1)))
    for path in page.get_cdrawings():
        r = path.get("rect")
        if r is None:
            continue
        x0, y0, x1, y1 = r
        w, h = x1 - x0, y1 - y0
        if w >= 0.9 * pw and h >= 0.9 * ph:  # page background
            continue
        if w < 0.5 and h < 0.5:
            continue
        if y1 < 0.07 * ph or y0 > 0.93 * ph:  # running-head rules and logos
            continue
        fill = path.get("fill")
        if fill is not None and path.get("color") is None and tuple(fill)[:3] == (1.0, 1.0, 1.0):
            continue  # white boxes (often masks)
        boxes.append((x0, y0, x1, y1))
    return PageGraphics(_merge_boxes(boxes), page)


def _vertical_text(page: pymupdf.Page) -> list[tuple[float, float, float, float, float]]:
    """Boxes and font sizes of the text runs set vertically on ``page``."""
    out = []
    for span in page.get_texttrace():
        if abs(span["dir"][0]) > 0.1 or not any(chr(c[0]).strip() for c in span["chars"]):
            continue
        x0, y0, x1, y1 = span["bbox"]
        out.append((x0, y0, x1, y1, float(span["size"])))
    return out


def _merge_boxes(boxes: list[Box], limit: int = 4000) -> list[Box]:
    """Cap the number of boxes on drawing-heavy pages by merging into a coarse grid."""
    if len(boxes) <= limit:
        return boxes
    cells: dict[tuple[int, int], list[float]] = {}
    for x0, y0, x1, y1 in boxes:
        key = (int(x0 // 20), int(y0 // 20))
        c = cells.get(key)
        if c is None:
            cells[key] = [x0, y0, x1, y1]
        else:
            c[0], c[1], c[2], c[3] = min(c[0], x0), min(c[1], y0), max(c[2], x1), max(c[3], y1)
    return [tuple(c) for c in cells.values()]  # type: ignore[misc]


def _overlap_x(a0: float, a1: float, b0: float, b1: float) -> float:
    return min(a1, b1) - max(a0, b0)


def _union(boxes: list[Box]) -> Box:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes),
            max(b[3] for b in boxes))


@dataclass
class RegionOptions:
    """Where the graphic of one caption may be: scored candidates (lower is better) and a fallback."""

    candidates: list[tuple[float, float, Box]]  # (score, gap to the caption, box)
    fallback: Box
    preferred: list[bool] = field(default_factory=list)  # per candidate: on the caption's usual side

    def usual(self, box: Box) -> bool:
        """Whether ``box`` (one of the candidates) lies on the caption's usual side: above a figure's
        caption, below a table's; a side caption's figure counts as usual too."""
        return any(b == box and (k >= len(self.preferred) or self.preferred[k])
                   for k, (_s, _g, b) in enumerate(self.candidates))


def region_options(
    caption: Caption,
    graphics: PageGraphics,
    page_lines: list[Line],
    layout: PageLayout,
    page_size: tuple[float, float],
    body_size: float,
    caption_boxes: list[Box],
) -> RegionOptions:
    """Candidate regions above and below ``caption`` (graphics and their labels between the
    caption and the nearest running text), scored by their distance to the caption."""
    cx0, cy0, cx1, cy1 = caption.bbox
    pw, ph = page_size
    # horizontal window: the caption's column, or the full text width for wide captions
    if layout.gutter is not None and not (cx0 < layout.gutter - 10 and cx1 > layout.gutter + 10):
        col = 0 if (cx0 + cx1) / 2 < layout.gutter else 1
        wx0, wx1 = layout.column_bounds(col)
        wx0 -= 6
        wx1 += 6
    else:
        wx0, wx1 = layout.text_x0 - 10, layout.text_x1 + 10
    wx0, wx1 = max(0.0, wx0), min(pw, wx1)
    for ox0, oy0, ox1, oy1 in caption_boxes:  # a caption beside this one, level with it: each takes its half
        if min(oy1, cy1) - max(oy0, cy0) > 0:
            if ox0 >= cx1 - 2:
                wx1 = min(wx1, (cx1 + ox0) / 2)
            elif ox1 <= cx0 + 2:
                wx0 = max(wx0, (ox1 + cx0) / 2)
    caption_ids = {id(ln) for ln in caption.lines}

    col_width = (layout.column_bounds(0)[1] - layout.column_bounds(0)[0]) if layout.gutter else (wx1 - wx0)
    prose_width = 0.6 * min(col_width, wx1 - wx0 - 12)

    column_edges = [layout.text_x0] + ([layout.gutter + 4] if layout.gutter else [])
    if layout.gutter:
        column_edges += [x for x in (_right_column_x0(page_lines, layout),) if x is not None]

    def is_prose(ln: Line, x0: float = wx0, x1: float = wx1, min_width: float = prose_width) -> bool:
        """Running text of the column ``x0``..``x1`` (by default the caption's): it bounds a figure's band."""
        if id(ln) in caption_ids or "furniture" in ln.tags:
            return False
        if _overlap_x(ln.x0, ln.x1, x0, x1) <= 0.5 * ln.width:
            return False
        if ln.size >= 1.15 * body_size and sum(c.isalpha() for c in ln.text) >= 4 \
                and any(abs(ln.x0 - edge) < 4 for edge in column_edges):
            return True  # a section heading at the column's left edge
        if len(ln.gaps) >= 2 or (ln.gaps and (any(_NUMBER.match(t) for t in ln.text.split())
                        or sum(c.isdigit() for c in ln.text) >= 0.2 * len(ln.text.replace(" ", "")))):
            return False  # a table row: cells apart, with numbers
        return ln.size >= 0.9 * body_size and ln.width >= min_width and len(ln.text) >= 30

    def band(direction: int) -> tuple[float, float]:
        if direction < 0:
            limit = 0.04 * ph
            for ln in page_lines:
                if ln.y1 <= cy0 + 1 and is_prose(ln):
                    limit = max(limit, ln.y1)
            for b in caption_boxes:
                if b[3] <= cy0 - 1 and _overlap_x(b[0], b[2], wx0, wx1) > 0:
                    limit = max(limit, b[3])
            return limit, cy0
        limit = 0.96 * ph
        for ln in page_lines:
            if ln.y0 >= cy1 - 1 and is_prose(ln):
                limit = min(limit, ln.y0)
        for b in caption_boxes:
            if b[1] >= cy1 + 1 and _overlap_x(b[0], b[2], wx0, wx1) > 0:
                limit = min(limit, b[1])
        return cy1, limit

    def candidate(direction: int) -> Box | None:
        top, bottom = band(direction)
        found = [
            b for b in graphics.boxes
            if b[1] >= top - 2 and b[3] <= bottom + 2 and _overlap_x(b[0], b[2], wx0, wx1) > 0
            and (b[2] - b[0]) + (b[3] - b[1]) > 1
        ]
        if caption.kind == "figure":
            found = [b for b in found if (b[2] - b[0]) > 3 or (b[3] - b[1]) > 3]
            if found and max((b[2] - b[0]) * (b[3] - b[1]) for b in found) < 50 and len(found) < 3:
                found = []
            if all((b[3] - b[1]) < 1.5 for b in found):
                found = []  # horizontal strokes only: rules and link underlines (PLOS), not a figure
        if not found and caption.kind == "table":
            # a table without rules: its text lines in the band
            texts_lines = [
                ln for ln in page_lines
                if id(ln) not in caption_ids and ln.y0 >= top - 1 and ln.y1 <= bottom + 1
                and _overlap_x(ln.x0, ln.x1, wx0, wx1) > 0 and "furniture" not in ln.tags
            ]
            texts = [(ln.x0, ln.y0, ln.x1, ln.y1) for ln in texts_lines]
            cells = [t for t in texts_lines if t.gaps or t.width < 0.5 * col_width
                     or any(_NUMBER.match(w) for w in t.text.split())]
            if len(texts) >= 3 and len(cells) >= max(3, len(texts) // 2) and bottom - top < 0.7 * ph:
                found = texts
        if not found and caption.kind == "figure" and direction < 0:
            # a figure made of text (pseudo-code, a formula, an example): the lines between the
            # caption and the running text above it, when they are few and close to the caption
            texts_lines = [
                ln for ln in page_lines
                if id(ln) not in caption_ids and ln.y0 >= top - 1 and ln.y1 <= bottom + 1
                and _overlap_x(ln.x0, ln.x1, wx0, wx1) > 0 and "furniture" not in ln.tags
            ]
            if 2 <= len(texts_lines) <= 40 and bottom - top < 0.5 * ph \
                    and bottom - max(ln.y1 for ln in texts_lines) < 3 * body_size:
                found = [(ln.x0, ln.y0, ln.x1, ln.y1) for ln in texts_lines]
        if not found:
            return None
        return grown(found, top, bottom)

    def grown(found: list[Box], top: float, bottom: float) -> Box | None:
        """The graphics' union grown by the text lines (labels, cells) lying within it, never over the
        caption or the running text that bounds the band (``top``, ``bottom``)."""
        x0, y0, x1, y1 = _union(found)
        for ln in page_lines:
            if id(ln) in caption_ids or "furniture" in ln.tags:
                continue
            if ln.y0 >= top - 1 and ln.y1 <= bottom + 1 and ln.x0 >= x0 - 20 and ln.x1 <= x1 + 20 \
                    and (ln.y1 >= y0 - 12 and ln.y0 <= y1 + 12):
                x0, y0, x1, y1 = min(x0, ln.x0), min(y0, ln.y0), max(x1, ln.x1), max(y1, ln.y1)
        x0, y0, x1, y1 = with_labels((x0, y0, x1, y1), found, top, bottom)
        x0, x1 = max(x0, 0.0), min(x1, pw)
        y0, y1 = max(y0, 0.0, top + 1.0), min(y1, ph, bottom - 1.0)
        if (x1 - x0) <= 10 or (y1 - y0) <= 8:
            return None
        return (x0, y0, x1, y1)

    def continues_caption(ln: Line) -> bool:
        """A line flush with the caption's left edge and abutting it: the caption's last line, which
        caption detection left out (after a line of subscripts), not a label."""
        near = 0.5 * ln.height
        return abs(ln.x0 - cx0) < 2 and (-1 <= ln.y0 - cy1 < near or -1 <= cy0 - ln.y1 < near)

    def with_labels(box: Box, found: list[Box], top: float, bottom: float) -> Box:
        """``box`` grown by the labels around it: short lines set smaller than the body (axis titles,
        legend entries that run past the legend's marks) and vertical text (a rotated axis title),
        each touching the box as it grows, within the band and the caption's column (or the
        graphics' width, when wider)."""
        lo = min(wx0, _union(found)[0]) - 2
        hi = max(wx1, _union(found)[2]) + 2
        labels = [
            (ln.x0, ln.y0, ln.x1, ln.y1) for ln in page_lines
            if id(ln) not in caption_ids and "furniture" not in ln.tags and ln.size < 0.95 * body_size
            and ln.width < prose_width and not continues_caption(ln)
        ] + [(b[0], b[1], b[2], b[3]) for b in graphics.labels if b[4] < 1.2 * body_size]
        labels = [b for b in labels if b[1] >= top - 1 and b[3] <= bottom + 1 and b[0] >= lo and b[2] <= hi]
        x0, y0, x1, y1 = box
        grew = True
        while grew:
            grew = False
            for b in labels:
                if (b[0] < x0 or b[1] < y0 or b[2] > x1 or b[3] > y1) and b[3] >= y0 - 12 \
                        and b[1] <= y1 + 12 and b[2] >= x0 - 20 and b[0] <= x1 + 20:
                    x0, y0, x1, y1 = min(x0, b[0]), min(y0, b[1]), max(x1, b[2]), max(y1, b[3])
                    grew = True
        return x0, y0, x1, y1

    def beside() -> Box | None:
        """A side caption's figure (Nature's layout: the caption in one column, its figure in the other
        at the same height): the graphics of the other column level with the caption, between the
        running text above and below them there."""
        if layout.gutter is None or cx0 < layout.gutter - 10 < cx1 - 20:
            return None
        ox0, ox1 = layout.column_bounds(0 if (cx0 + cx1) / 2 >= layout.gutter else 1)
        ox0, ox1 = ox0 - 6, ox1 + 6
        there = [b for b in graphics.boxes if b[3] >= HEAD_BAND * ph
                 and _overlap_x(b[0], b[2], ox0, ox1) > 0.5 * (b[2] - b[0])]
        level = [b for b in there if b[1] < cy1 and b[3] > cy0]
        if not level:
            return None
        prose = [ln for ln in page_lines if is_prose(ln, ox0, ox1, 0.6 * (ox1 - ox0 - 12))]
        first, last = min(b[1] for b in level), max(b[3] for b in level)
        top = max([0.04 * ph] + [ln.y1 for ln in prose if ln.y1 <= first + 1])
        bottom = min([0.96 * ph] + [ln.y0 for ln in prose if ln.y0 >= last - 1])
        found = [b for b in there if b[1] >= top - 2 and b[3] <= bottom + 2]
        return grown(found, top, bottom) if found else None

    order = (-1, 1) if caption.kind == "figure" else (1, -1)
    options: list[tuple[float, float, Box]] = []
    preferred: list[bool] = []
    for rank, direction in enumerate(order):
        box = candidate(direction)
        if box is not None:
            gap = max((cy0 - box[3]) if direction < 0 else (box[1] - cy1), 0.0)
            options.append((gap + (0.0 if rank == 0 else 8.0), gap, box))
            preferred.append(rank == 0)
    # Nothing above or below but a running-head band: a side caption, its figure beside it.
    if caption.kind == "figure" and all(box[3] < HEAD_BAND * ph for _s, _g, box in options):
        side = beside()
        if side is not None:
            options.append((4.0, 0.0, side))
            preferred.append(True)
    # fallback: a crop beside the caption, limited by the nearest prose
    direction = order[0]
    top, bottom = band(direction)
    if direction < 0:
        top = max(top, cy0 - 250)
    else:
        bottom = min(bottom, cy1 + 250)
    if bottom - top < 20:
        top, bottom = (max(0.0, cy0 - 150), cy0) if direction < 0 else (cy1, min(ph, cy1 + 150))
    return RegionOptions(options, (wx0, top, wx1, bottom), preferred)


def assign_regions(options: list[RegionOptions]) -> list[tuple[Box, bool]]:
    """One region per caption of a page: the closest candidates first, each graphic to one caption."""
    chosen: dict[int, Box] = {}
    claimed: list[Box] = []
    ranked = sorted((score, k, box) for k, opt in enumerate(options) for score, _gap, box in opt.candidates)
    # a graphic between two captions belongs to the nearer one
    nearest: dict[Box, float] = {}
    for opt in options:
        for _score, gap, box in opt.candidates:
            nearest[box] = min(nearest.get(box, gap), gap)
    ranked = [
        (score, k, box) for score, k, box in ranked
        if next(g for _s, g, b in options[k].candidates if b == box) <= nearest[box] + 0.5
    ]
    for _score, k, box in ranked:
        if k in chosen:
            continue
        if any(_covers(box, c) for c in claimed):
            continue
        chosen[k] = box
        claimed.append(box)
    _hand_over(options, chosen)
    return [(chosen[k], True) if k in chosen else (opt.fallback, False) for k, opt in enumerate(options)]


def _covers(box: Box, other: Box) -> bool:
    """``other`` covers more than half of ``box``: the two are the same graphic."""
    area = (box[2] - box[0]) * (box[3] - box[1])
    across = max(0.0, _overlap_x(box[0], box[2], other[0], other[2]))
    return across * max(0.0, min(box[3], other[3]) - max(box[1], other[1])) > 0.5 * area


def _hand_over(options: list[RegionOptions], chosen: dict[int, Box]) -> None:
    """A caption left without a region takes a graphic of its own that no caption took (one nearer
    to another caption, which found its own elsewhere), or takes it back from a caption that holds it
    on that caption's unusual side (below a figure's caption, above a table's) and has a graphic of
    its own on its usual side, which that caption takes instead. Frontiers: Figure 2's short caption
    sits between its diagram (above, a few points further) and Figure 3's chart (below, nearer); the
    chart is Figure 3's only graphic."""
    for k, opt in enumerate(options):
        if k in chosen:
            continue
        for _score, _gap, box in sorted(opt.candidates):
            holder = next((j for j, held in chosen.items() if _covers(box, held) or _covers(held, box)), None)
            if holder is None:
                chosen[k] = box
                break
            if options[holder].usual(chosen[holder]):
                continue
            others = [held for j, held in chosen.items() if j != holder]
            usual = [b for _s, _g, b in sorted(options[holder].candidates) if options[holder].usual(b)
                     and not _covers(b, box) and not any(_covers(b, o) for o in others)]
            if not usual or any(_covers(box, o) for o in others):
                continue
            chosen[holder], chosen[k] = usual[0], box
            break


def _right_column_x0(lines: list[Line], layout: PageLayout) -> float | None:
    xs = sorted(ln.x0 for ln in lines if layout.gutter is not None and ln.x0 >= layout.gutter - 2)
    return xs[len(xs) // 10] if xs else None


def inside(line: Line, box: Box, pad: float = 2.0) -> bool:
    cx = (line.x0 + line.x1) / 2
    cy = (line.y0 + line.y1) / 2
    return box[0] - pad <= cx <= box[2] + pad and box[1] - pad <= cy <= box[3] + pad
