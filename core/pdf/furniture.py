"""Page furniture that is not body text: running headers and footers, page numbers,
line numbers (review copies), equation numbers and stray stamps.

Rotated text (the arXiv side stamp, watermarks) never reaches here: ``lines.extract_lines``
drops it.
"""

from __future__ import annotations

import re
from collections import defaultdict

from core.pdf.lines import Line

_DIGITS = re.compile(r"\d+")
_PAGE_NUMBER = re.compile(
    r"^(?:page\s*)?[-–]?\s*\d{1,4}\s*[-–]?(?:\s*(?:of|/)\s*\d{1,4})?$|^[ivxlc]{1,6}$", re.IGNORECASE
)
_ONLY_NUMBER = re.compile(r"^\(?[\dA-Za-z]?\d{0,3}[.)]?\)?$")
_EQUATION_NUMBER = re.compile(r"^\(\s*[A-Z]?\d{1,3}(?:\.\d{1,2})?[a-z]?\s*\)$")
_STAMP = re.compile(r"^arXiv:\d{4}\.\d{4,5}", re.IGNORECASE)
_MARGIN = 0.1  # top/bottom share of the page where running heads live


def _key(text: str) -> str:
    return _DIGITS.sub("#", text.lower()).strip()


def mark_furniture(pages: list[list[Line]], page_heights: list[float]) -> None:
    """Tag furniture lines in place with ``"furniture"``."""
    n_pages = len(pages)
    seen: dict[tuple[str, str], set[int]] = defaultdict(set)
    placed: dict[tuple[str, int], set[int]] = defaultdict(set)  # same text at the same height
    for lines in pages:
        for ln in lines:
            zone = _zone(ln, page_heights[ln.page])
            if zone:
                seen[(zone, _key(ln.text))].add(ln.page)
            if len(ln.text) >= 8 and _zone(ln, page_heights[ln.page], 0.15):
                placed[(_key(ln.text), round(ln.y0 / 3))].add(ln.page)
    threshold = max(2, int(0.25 * n_pages)) if n_pages >= 3 else 99
    placed_threshold = max(3, int(0.4 * n_pages))
    for lines in pages:
        height = page_heights[lines[0].page] if lines else 0.0
        number_x: dict[int, int] = defaultdict(int)
        for ln in lines:
            zone = _zone(ln, height)
            text = ln.text.strip()
            if _STAMP.match(text):
                ln.tags.add("furniture")
                continue
            if zone and (_PAGE_NUMBER.match(text) or len(seen[(zone, _key(text))]) >= threshold):
                ln.tags.add("furniture")
                continue
            repeats = len(placed[(_key(text), round(ln.y0 / 3))]) if len(text) >= 8 else 0
            if n_pages >= 4 and repeats >= placed_threshold:
                ln.tags.add("furniture")  # repeated on many pages at the same place (running head)
                continue
            if _EQUATION_NUMBER.match(text):
                ln.tags.add("equation-number")
                continue
            if _ONLY_NUMBER.match(text) and any(c.isdigit() for c in text):
                number_x[round(ln.x0 / 10)] += 1
        # line numbers: many number-only lines stacked at one x position
        columns = {x for x, count in number_x.items() if count >= 8}
        if columns:
            for ln in lines:
                text = ln.text.strip()
                if (
                    round(ln.x0 / 10) in columns
                    and _ONLY_NUMBER.match(text)
                    and any(c.isdigit() for c in text)
                ):
                    ln.tags.add("furniture")
        # number-only lines anywhere else in the flow are not prose either
        for ln in lines:
            text = ln.text.strip()
            if "furniture" not in ln.tags and len(text) <= 4 and not any(c.isalpha() for c in text):
                ln.tags.add("stray")


def _zone(ln: Line, height: float, margin: float = _MARGIN) -> str:
    if height <= 0:
        return ""
    if ln.y1 <= margin * height:
        return "top"
    if ln.y0 >= (1 - margin) * height:
        return "bottom"
    return ""
