"""Page text as lines: one :class:`Line` per visual line fragment group, with per-character x positions.

``extract_lines`` reads one page with ``get_text("rawdict")`` (never with
``TEXT_PRESERVE_IMAGES``: image bytes are not needed and cost 4x the time),
drops rotated text (arXiv side stamps, watermarks) and superscript footnote
markers, and merges fragments that sit on the same baseline inside one
pymupdf block (justified text is often split at wide spaces).
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field, replace

import pymupdf

# ligatures + whitespace + mediabox clip + CID for unknown unicode; no images.
TEXT_FLAGS = (
    pymupdf.TEXT_PRESERVE_LIGATURES
    | pymupdf.TEXT_PRESERVE_WHITESPACE
    | pymupdf.TEXT_MEDIABOX_CLIP
    | pymupdf.TEXT_CID_FOR_UNKNOWN_UNICODE
)

# Linux Libertine and Biolinum (ACM's acmart) name their faces by letters: LinLibertineT (regular),
# …TB (bold), …TZ (semibold), …TI (italic), …TBI / …TZI.
_BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi|medi|\.B$|-B$|-Bd|,B|CMBX|CMB\d|CMSSBX|\bBX"
                        r"|Lin(?:Libertine|Biolinum)[OT]?[BZ]", re.IGNORECASE)
_ITALIC_FONT = re.compile(r"italic|oblique|-It\b|\.I$|-I$|Ital|CMTI|CMSL|CMBXTI|CMMI"
                          r"|Lin(?:Libertine|Biolinum)[OT]?[BZ]?I$", re.IGNORECASE)
MATH_FONT = re.compile(
    r"CMMI|CMSY|CMEX|MSAM|MSBM|Math|Symbol|STIX(?!-?Two-?Text)|rsfs|eufm|LMMath|MT2M|MTMI|MTSY|MTEX|Euclid"
    r"|Lucida.*Math|Cambria.*Math|CMBSY|CMMIB|esint|wasy|txsy|pxsy|txmi|pxmi",
    re.IGNORECASE,
)
_MARKER = re.compile(r"^(?:[\d,∗*†‡§¶#⋆⋄♠♣♥♦]+|[a-h](?:,[a-h\d∗*])*,?)$")


@dataclass
class Line:
    """A line of text on one page (PDF points, origin top-left)."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    cx0: array  # x0 of each character of ``text``
    cx1: array  # x1 of each character of ``text``
    size: float  # dominant font size (character weighted)
    bold: float  # fraction of non-space characters in a bold font
    font: str  # dominant font name
    block: int  # pymupdf block number on the page
    first_in_block: bool = False
    first_bold_chars: int = 0  # length of the leading bold run (for caption labels)
    first_font_chars: int = 0  # length of the leading run in one font name (a label set in a font of its own)
    gaps: tuple[int, ...] = ()  # offsets in ``text`` where a wide horizontal gap was joined
    italic: float = 0.0  # fraction of non-space characters in italics
    math: float = 0.0  # fraction of non-space characters in math fonts
    runs: tuple[tuple[int, int, bool, bool], ...] = ()  # (start, end, bold, italic) style runs
    index: int = -1  # position in the document's line list (set by the caller)
    tags: set[str] = field(default_factory=set)

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2


_FONT_STYLE: dict[str, tuple[bool, bool]] = {}


def _font_style(font: str) -> tuple[bool, bool]:
    """(bold, italic) from a font name, cached (names repeat on every span)."""
    style = _FONT_STYLE.get(font)
    if style is None:
        style = _FONT_STYLE[font] = (bool(_BOLD_FONT.search(font)), bool(_ITALIC_FONT.search(font)))
    return style


class _Frag:
    __slots__ = ("bbox", "bold_lead", "chars", "fonts", "x0s", "x1s")

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.x0s: list[float] = []
        self.x1s: list[float] = []
        self.fonts: list[tuple[float, bool, str, bool]] = []  # per char (size, bold, font, italic)
        self.bbox = [1e9, 1e9, -1e9, -1e9]
        self.bold_lead = True


def _is_faint(color: int, alpha: int) -> bool:
    """Light grey (watermarks) or nearly transparent text.  White is kept: it is often a heading
    set on a coloured box (PeerJ's "ABSTRACT")."""
    r, g, b = (color >> 16) & 255, (color >> 8) & 255, color & 255
    light_grey = min(r, g, b) >= 200 and max(r, g, b) < 250 and max(r, g, b) - min(r, g, b) <= 20
    return light_grey or alpha < 60


def _line_frag(line: dict) -> tuple[_Frag, float] | None:
    # very light text is a watermark ("DRAFT", "Preprint") or a hidden layer, not content
    spans = [s for s in line["spans"] if not _is_faint(s.get("color", 0), s.get("alpha", 255))]
    if not spans:
        return None
    sizes = [s["size"] for s in spans if any(not c["c"].isspace() for c in s["chars"])]
    if not sizes:
        return None
    main_size = max(sizes)
    baseline = max(s["origin"][1] for s in spans if s["size"] >= main_size - 0.01)
    frag = _Frag()
    prev_char = ""
    for span in spans:
        chars = span["chars"]
        if not chars:
            continue
        text = "".join(c["c"] for c in chars)
        size = span["size"]
        # Superscript footnote / affiliation markers: small, raised, symbols or digits after a word.
        if (
            size < 0.8 * main_size
            and span["origin"][1] < baseline - 0.15 * main_size
            and _MARKER.match(text.strip() or "x")
            and (prev_char == "" or not prev_char.isdigit())
            and frag.chars
        ):
            continue
        font = span["font"]
        bold_name, italic_name = _font_style(font)
        flags = span["flags"]
        bold = bool(flags & 16) or bold_name
        italic = bool(flags & 2) or italic_name
        for c in chars:
            ch = c["c"]
            x0, _y0, x1, _y1 = c["bbox"]
            frag.chars.append(ch)
            frag.x0s.append(x0)
            frag.x1s.append(x1)
            frag.fonts.append((size, bold, font, italic))
            if not ch.isspace():
                b = frag.bbox
                if x0 < b[0]:
                    b[0] = x0
                if x1 > b[2]:
                    b[2] = x1
                # use the span box for height (character boxes vary with glyphs), but not
                # the huge boxes some Type3 glyphs report
                sb = span["bbox"]
                sy0, sy1 = sb[1], sb[3]
                if sy1 - sy0 > 2.0 * main_size or size < 0.5 * main_size:
                    oy = span["origin"][1]
                    sy0, sy1 = oy - 0.9 * main_size, oy + 0.25 * main_size
                if sy0 < b[1]:
                    b[1] = sy0
                if sy1 > b[3]:
                    b[3] = sy1
                prev_char = ch
    if not frag.chars or frag.bbox[0] > frag.bbox[2]:
        return None
    return frag, baseline


def _build_line(page: int, block: int, frags: list[_Frag]) -> Line | None:
    frags.sort(key=lambda f: f.bbox[0])
    chars: list[str] = []
    x0s: list[float] = []
    x1s: list[float] = []
    fonts: list[tuple[float, bool, str, bool]] = []
    gaps: list[int] = []
    for frag in frags:
        if chars and frag.bbox[0] - x1s[-1] > 0.9 * (frag.bbox[3] - frag.bbox[1]):
            gaps.append(len(chars))
        if chars and not chars[-1].isspace() and not frag.chars[0].isspace():
            gap_x0 = x1s[-1]
            chars.append(" ")
            x0s.append(gap_x0)
            x1s.append(max(gap_x0, frag.bbox[0]))
            fonts.append(fonts[-1])
        chars.extend(frag.chars)
        x0s.extend(frag.x0s)
        x1s.extend(frag.x1s)
        fonts.extend(frag.fonts)
    # strip surrounding whitespace
    start, end = 0, len(chars)
    while start < end and chars[start].isspace():
        start += 1
    while end > start and chars[end - 1].isspace():
        end -= 1
    if start >= end:
        return None
    chars, x0s, x1s, fonts = chars[start:end], x0s[start:end], x1s[start:end], fonts[start:end]
    gaps = [g - start for g in gaps if start < g < end]
    weight: dict[float, int] = {}
    font_weight: dict[str, int] = {}
    bold_count = visible = 0
    lead = 0
    lead_open = True
    italic_count = 0
    math_count = 0
    math_fonts: dict[str, bool] = {}
    runs: list[list] = []  # [start, end, bold, italic]
    first_font = next((f[2] for ch, f in zip(chars, fonts) if not ch.isspace()), "")
    font_lead = next((k for k, (ch, f) in enumerate(zip(chars, fonts))
                      if not ch.isspace() and f[2] != first_font), len(chars))
    for k, (ch, (size, bold, font, italic)) in enumerate(zip(chars, fonts)):
        if not ch.isspace():
            if runs and runs[-1][2] == bold and runs[-1][3] == italic:
                runs[-1][1] = k + 1
            else:
                runs.append([k, k + 1, bold, italic])
            if italic:
                italic_count += 1
            is_math = math_fonts.get(font)
            if is_math is None:
                is_math = math_fonts[font] = bool(MATH_FONT.search(font))
            if is_math:
                math_count += 1
        if ch.isspace():
            if lead_open and bold:
                lead += 1
            continue
        visible += 1
        key = round(size * 2) / 2
        weight[key] = weight.get(key, 0) + 1
        font_weight[font] = font_weight.get(font, 0) + 1
        if bold:
            bold_count += 1
            if lead_open:
                lead += 1
        else:
            lead_open = False
    if visible == 0:
        return None
    size = max(weight.items(), key=lambda kv: (kv[1], kv[0]))[0]
    font = max(font_weight.items(), key=lambda kv: kv[1])[0]
    y0 = min(f.bbox[1] for f in frags)
    y1 = max(f.bbox[3] for f in frags)
    return Line(
        page=page,
        x0=min(f.bbox[0] for f in frags),
        y0=y0,
        x1=max(f.bbox[2] for f in frags),
        y1=y1,
        text="".join(chars),
        cx0=array("f", x0s),
        cx1=array("f", x1s),
        size=size,
        bold=bold_count / visible,
        font=font,
        italic=italic_count / visible,
        math=math_count / visible,
        runs=tuple((a, b, bo, it) for a, b, bo, it in runs),
        block=block,
        first_bold_chars=lead,
        first_font_chars=font_lead,
        gaps=tuple(gaps),
    )


def extract_lines(page: pymupdf.Page, page_index: int, rotated: list[Line] | None = None) -> list[Line]:
    """All horizontal text lines of ``page``, fragments on one baseline merged, in block order.

    Vertical lines (rotated tables and their captions, side stamps) are left out of the result;
    when ``rotated`` is given they are appended to it, one Line per pymupdf line.
    """
    data = page.get_text("rawdict", flags=TEXT_FLAGS)
    out: list[Line] = []
    for block_no, block in enumerate(data["blocks"]):
        if block.get("type", 0) != 0:
            continue
        rows: list[tuple[float, float, list[_Frag]]] = []  # (baseline, height, frags)
        first_rotated = True
        for line in block["lines"]:
            dx, dy = line["dir"]
            if abs(dy) > 0.05 or dx <= 0:  # rotated or mirrored: stamps, watermarks, axis labels
                if rotated is not None and abs(dx) < 0.05:
                    got = _line_frag(line)
                    built = _build_line(page_index, block_no, [got[0]]) if got else None
                    if built is not None:
                        x0, y0, x1, y1 = line["bbox"]
                        built.x0, built.y0, built.x1, built.y1 = x0, y0, x1, y1
                        built.first_in_block = first_rotated
                        built.tags.add("rotated")
                        first_rotated = False
                        rotated.append(built)
                continue
            got = _line_frag(line)
            if got is None:
                continue
            frag, baseline = got
            height = frag.bbox[3] - frag.bbox[1]
            for row in rows:
                if abs(row[0] - baseline) < 0.35 * max(height, row[1]):
                    row[2].append(frag)
                    break
            else:
                rows.append((baseline, height, [frag]))
        first = True
        for _baseline, height, frags in sorted(rows, key=lambda r: r[0]):
            for part in _split_margin_numbers(frags, height):
                built = _build_line(page_index, block_no, part)
                if built is None:
                    continue
                built.first_in_block = first
                first = False
                out.append(built)
    return out


def _frag_text(frag: _Frag) -> str:
    return "".join(frag.chars).strip()


def _split_margin_numbers(frags: list[_Frag], height: float) -> list[list[_Frag]]:
    """Keep a line number printed in the margin (review copies) apart from the text beside it."""
    if len(frags) < 2:
        return [frags]
    frags = sorted(frags, key=lambda f: f.bbox[0])
    parts: list[list[_Frag]] = []
    first, last = frags[0], frags[-1]
    head = _frag_text(first)
    gap = frags[1].bbox[0] - first.bbox[2]
    smaller = first.fonts[0][0] < 0.85 * max(size for size, *_rest in frags[1].fonts)
    # a section number ("3   SCIDOCS ...") sits closer and in the heading's own size
    if head.isdigit() and len(head) <= 4 and (gap > 2 * height or (smaller and gap > height)):
        parts.append([first])
        frags = frags[1:]
    tail_part: list[list[_Frag]] = []
    if len(frags) >= 2 and _frag_text(last).isdigit() and len(_frag_text(last)) <= 4 \
            and last.bbox[0] - frags[-2].bbox[2] > 2 * height:
        tail_part.append([last])
        frags = frags[:-1]
    return [*parts, frags, *tail_part]


def head(line: Line, end: int) -> Line:
    """A copy of ``line`` up to character ``end`` (same index: positions still map back). It shares the
    line's tags: what tags the part (a caption) tags the whole line, so its rest is not read as body text."""
    text = line.text[:end].rstrip()
    end = len(text)
    x1 = line.cx1[end - 1] if 0 < end <= len(line.cx1) else line.x0
    return replace(line, x1=x1, text=text, cx0=line.cx0[:end], cx1=line.cx1[:end],
                   gaps=tuple(g for g in line.gaps if g < end),
                   runs=tuple((a, min(b, end), bo, it) for a, b, bo, it in line.runs if a < end))


def _bold_lead(runs: tuple[tuple[int, int, bool, bool], ...]) -> int:
    """The length of the leading bold run from style runs (a space between two bold runs stays in it)."""
    lead = 0
    for start, end, bold, _italic in runs:
        if not bold or start > lead + 1:
            break
        lead = end
    return lead


def tail(line: Line, start: int) -> Line:
    """A copy of ``line`` from character ``start`` on (same index: positions still map back); its leading
    bold run is its own (a caption label that starts the part: "Fig. 3" after a gap)."""
    text = line.text[start:]
    stripped = len(text) - len(text.lstrip())
    start += stripped
    text = line.text[start:]
    x0 = line.cx0[start] if start < len(line.cx0) else line.x1
    runs = tuple((max(0, a - start), b - start, bo, it) for a, b, bo, it in line.runs if b > start)
    return Line(
        page=line.page,
        x0=x0,
        y0=line.y0,
        x1=line.x1,
        y1=line.y1,
        text=text,
        cx0=line.cx0[start:],
        cx1=line.cx1[start:],
        size=line.size,
        bold=line.bold,
        font=line.font,
        block=line.block,
        first_in_block=line.first_in_block,
        first_bold_chars=(line.first_bold_chars - start if start < line.first_bold_chars
                          else _bold_lead(runs)),
        first_font_chars=max(0, line.first_font_chars - start),
        gaps=tuple(g - start for g in line.gaps if g > start),
        italic=line.italic,
        math=line.math,
        runs=runs,
        index=line.index,
        tags=set(line.tags),
    )
