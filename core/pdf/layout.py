"""Reading order of one page: one or two columns, with full-width parts between them.

The page is cut into horizontal bands at every full-width line (a line that
reaches well into both columns: title, abstract, wide captions, wide tables).
Inside each band the left column is read before the right one.  A page
without a clear empty gutter is read as a single column, top to bottom.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.pdf.lines import Line


@dataclass(frozen=True)
class PageLayout:
    """Column geometry of one page."""

    text_x0: float
    text_x1: float
    gutter: float | None  # x of the gap between two columns; None for one column

    def column_of(self, line: Line) -> int:
        """0 = left, 1 = right, -1 = spanning / single column."""
        if self.gutter is None:
            return -1
        if line.x1 <= self.gutter + 2:
            return 0
        if line.x0 >= self.gutter - 2:
            return 1
        return -1

    def column_bounds(self, column: int) -> tuple[float, float]:
        if self.gutter is None or column < 0:
            return self.text_x0, self.text_x1
        if column == 0:
            return self.text_x0, self.gutter
        return self.gutter, self.text_x1

    def spans_columns(self, line: Line) -> bool:
        if self.gutter is None:
            return True
        reach = 0.2 * (self.gutter - self.text_x0)
        return line.x0 < self.gutter - reach and line.x1 > self.gutter + reach


def _percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    if not values:
        return 0.0
    k = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return values[k]


def analyse_layout(lines: list[Line], page_width: float, body_size: float) -> PageLayout:
    """Find the text area and, when there is one, the column gutter."""
    body = [ln for ln in lines if ln.size >= 0.6 * body_size and len(ln.text) >= 12]
    if len(body) < 4:
        body = [ln for ln in lines if ln.size >= 0.8 * body_size and len(ln.text) >= 3]
    if len(body) < 4:
        body = lines
    if not body:
        return PageLayout(0.0, page_width, None)
    x0 = _percentile([ln.x0 for ln in body], 0.03)
    x1 = _percentile([ln.x1 for ln in body], 0.97)
    width = x1 - x0
    if not math.isfinite(width) or width <= 0:
        return PageLayout(x0, x1, None)
    # candidate gutters in the middle of the text area, at most ~400 of them: a damaged page can
    # put text at x = 1e8 (or 1e30), and 2-point steps over that would never finish
    step = max(2.0, width / 1000)
    lo, hi = x0 + 0.3 * width, x0 + 0.7 * width
    crossings: list[tuple[float, int]] = []
    x = lo
    while x <= hi:
        n = sum(1 for ln in body if ln.x0 < x - 1 and ln.x1 > x + 1)
        crossings.append((x, n))
        x += step
    if not crossings:
        return PageLayout(x0, x1, None)
    min_n = min(n for _x, n in crossings)
    # longest run of positions at the minimum
    run_start = None
    runs: list[tuple[float, float]] = []
    for x, n in crossings:
        if n == min_n:
            if run_start is None:
                run_start = x
            run_end = x
        elif run_start is not None:
            runs.append((run_start, run_end))
            run_start = None
    if run_start is not None:
        runs.append((run_start, run_end))
    run = max(runs, key=lambda r: r[1] - r[0])
    gx = (run[0] + run[1]) / 2
    left = [ln for ln in body if ln.x1 <= gx + 1]
    right = [ln for ln in body if ln.x0 >= gx - 1]
    # evidence for columns: long lines side by side at the same height on both sides of the gap
    long_left = [ln for ln in left if ln.width >= 0.25 * width]
    long_right = [ln for ln in right if ln.width >= 0.25 * width]
    side_by_side = 0
    for a in long_left:
        if any(b.y0 < a.y1 and a.y0 < b.y1 for b in long_right):
            side_by_side += 1
            if side_by_side >= 3:
                break
    # or: shorter lines (equations, lists) side by side with an almost empty gap between them
    short_pairs = 0
    if side_by_side < 3 and min_n <= 0.05 * len(body):
        mid_left = [ln for ln in left if ln.width >= 0.12 * width]
        mid_right = [ln for ln in right if ln.width >= 0.12 * width]
        for a in mid_left:
            if any(b.y0 < a.y1 and a.y0 < b.y1 for b in mid_right):
                short_pairs += 1
    two_columns = len(left) >= 3 and len(right) >= 3 and (side_by_side >= 3 or short_pairs >= 6)
    return PageLayout(x0, x1, gx if two_columns else None)


def reading_order(lines: list[Line], layout: PageLayout) -> list[Line]:
    """Lines of one page in reading order."""
    ordered = sorted(lines, key=lambda ln: (round(ln.y0, 1), ln.x0))
    if layout.gutter is None:
        return _boxes_side_by_side(_merge_rows(ordered), layout)
    out: list[Line] = []
    left: list[Line] = []
    right: list[Line] = []

    def flush() -> None:
        out.extend(left)
        out.extend(right)
        left.clear()
        right.clear()

    for ln in ordered:
        if layout.spans_columns(ln):
            flush()
            out.append(ln)
        elif ln.x0 >= layout.gutter - 2 or (ln.x0 + ln.x1) / 2 > layout.gutter:
            right.append(ln)  # in the right column, or mostly right of the gutter
        else:
            left.append(ln)
    flush()
    return out


def _merge_rows(lines: list[Line]) -> list[Line]:
    """Single column: lines sharing a row (e.g. side-by-side cells) stay left to right."""
    return sorted(lines, key=lambda ln: (round(ln.y0 / 2.0), ln.x0))


def _boxes_side_by_side(ordered: list[Line], layout: PageLayout) -> list[Line]:
    """Two boxes side by side on a one-column page (Elsevier's first page: "Article info" with the
    keywords on the left, the abstract on the right) are read one after the other, not line by line
    across both: a block of at least three lines beside another such block (vertically overlapping,
    horizontally apart, each at least a sixth of the text width, the right one's type no larger than the
    left one's) keeps its lines together, the left box first. A small-print sidebar beside body text
    (Frontiers' author notes) and rows of narrower cells (tables) are left as they are."""
    blocks: dict[int, list[Line]] = {}
    for ln in ordered:
        blocks.setdefault(ln.block, []).append(ln)
    width = max(1.0, layout.text_x1 - layout.text_x0)

    def box(lines: list[Line]) -> tuple[float, float, float, float]:
        return (min(ln.x0 for ln in lines), min(ln.y0 for ln in lines),
                max(ln.x1 for ln in lines), max(ln.y1 for ln in lines))

    boxes = {b: box(ls) for b, ls in blocks.items() if len(ls) >= 3}
    big = {b: bb for b, bb in boxes.items() if bb[2] - bb[0] >= width / 6}
    moved: dict[int, int] = {}  # a right box's block -> the left box's block it follows
    for left, (_lx0, ly0, lx1, ly1) in big.items():
        for right, (rx0, ry0, _rx1, ry1) in big.items():
            if left != right and rx0 > lx1 + 2 and ry0 < ly1 and ly0 < ry1 and right not in moved \
                    and _size(blocks[right]) <= _size(blocks[left]) + 1.0:
                moved[right] = left
    if not moved:
        return ordered
    out: list[Line] = []
    placed: set[int] = set()
    for ln in ordered:
        if ln.block in moved or ln.block in placed:
            continue
        if ln.block in big and any(v == ln.block for v in moved.values()):
            out.extend(blocks[ln.block])  # the left box whole, then each box beside it
            placed.add(ln.block)
            for right in sorted((r for r, lf in moved.items() if lf == ln.block), key=lambda r: big[r][1]):
                out.extend(blocks[right])
                placed.add(right)
            continue
        out.append(ln)
    out.extend(ln for right in moved if right not in placed for ln in blocks[right])
    return out


def _size(lines: list[Line]) -> float:
    """The font size of most of ``lines``' characters."""
    sizes: dict[float, int] = {}
    for ln in lines:
        sizes[round(ln.size, 1)] = sizes.get(round(ln.size, 1), 0) + len(ln.text)
    return max(sizes, key=lambda size: sizes[size])
