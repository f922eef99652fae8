"""What a figure is made of, and how the paper speaks of it: features for graphical-abstract ranking
(issue 25, ``core.figures.figure_rank``).

Two kinds of evidence, both local and cheap:

* **The look** (:class:`FigureLook`, :func:`look_at_figures`): inside the figure's box on its page,
  with pymupdf only — the share covered by raster images and by vector drawings, drawn boxes,
  arrowheads, long horizontal/vertical lines (axes, frames, table rules), tick marks, the words set
  there (how many, how many are numbers, panel letters "a", "(b)"), and from a small rendering
  (at most :data:`RENDER_PIXELS` pixels a side) how much of the box is inked and how many tones the
  ink has. :func:`type_scores` turns a look into soft scores of :data:`FIGURE_TYPES` (diagram,
  chart, photo, table, text) and :func:`multi_panel` into a panel score, all in [0, 1].
* **The words** (:func:`caption_cues`, :func:`title_overlap`, :func:`caption_series`,
  :func:`mention_profile`): cue phrases of the caption ("overview", "schematic", "framework",
  "proposed model", "workflow", "study design", "flow diagram", "mechanism" …; "example",
  "screenshot" …; "comparison", "performance" …), the title words it uses, whether it is one of a
  series of like captions, and the sentences that mention the figure ("Figure 1 gives an overview",
  "as summarised in Fig. 7", "at a glance"), with the section kinds those sentences sit in.

Nothing here ranks: ``core.figures.figure_rank`` turns these into features and combines them with weights
fitted on readers' picks (``core.figures.figure_fit``). No model, no Qt: pymupdf, numpy and the standard
library.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from core.document import Figure, Paper, SectionKind

FIGURE_TYPES = ("diagram", "chart", "photo", "table", "text")
TYPE_WORDS = {"diagram": "a diagram", "chart": "a chart", "photo": "a photo or micrograph",
              "table": "a table-like figure", "text": "a figure made of text"}
RENDER_PIXELS = 96  # the longer side of the rendering the tones are read from
BLANK_INK = 0.005  # a box with less ink than this, and nothing drawn or written in it, is not the figure
_PAD = 2.0  # points around the box: lines on its edge belong to it
_GRID = 12  # cells a side for the vector coverage
_NUMBER = re.compile(r"^[(\[]?[-+−–±~≈<>]?\d[\d.,:%×x^eE+\-−]*[)\]]?[%°]?$")
_PANEL = re.compile(r"^[(\[]?([a-hA-H])[)\].:]?$")


@dataclass(frozen=True)
class FigureLook:
    """What the figure's box holds (see the module docstring). ``found`` is False when the box is
    unknown (no region found, no PDF): every other value is then 0."""

    found: bool = False
    raster_share: float = 0.0  # share of the box under raster images
    vector_share: float = 0.0  # share of grid cells touched by small vector items
    images: int = 0  # raster images of some size in the box
    boxes: int = 0  # stroked rectangles (not frames, not specks)
    text_boxes: int = 0  # ... with a word in them (the boxes of a diagram)
    bars: int = 0  # filled rectangles without an outline (bars, colour patches)
    arrows: int = 0  # small filled triangles (arrowheads)
    segments: int = 0  # stroked straight segments
    curves: int = 0  # stroked Bézier segments
    long_lines: int = 0  # horizontal/vertical lines of at least 40 % of the box side (axes, rules)
    ticks: int = 0  # short horizontal/vertical segments (tick marks)
    outlines: int = 0  # path items of filled shapes (text drawn as outlines, markers, areas)
    words: int = 0  # words set in the box (labels, cells)
    numeric_share: float = 0.0  # share of those words that are numbers
    panel_letters: int = 0  # distinct panel letters ("a", "(b)", "C")
    ink_share: float = 0.0  # share of rendered pixels that are not near white
    tones: float = 0.0  # distinct colours among the inked pixels, relative to their count (0–1)

    def to_dict(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FigureLook:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


# -- the look -----------------------------------------------------------------------------------------
Box = tuple[float, float, float, float]


def _area(box: Box) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def _intersection(a: Box, b: Box) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _inside(point: tuple[float, float], box: Box) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


@dataclass
class _PageContent:
    """One page's drawings, images and words, read once for all the figures on it."""

    drawings: list[dict[str, Any]]
    images: list[Box]
    words: list[tuple[float, float, float, float, str]]


def _page_content(page: Any) -> _PageContent:
    drawings = page.get_cdrawings()
    images = []
    for info in page.get_image_info():
        x0, y0, x1, y1 = info["bbox"]
        if x1 - x0 > 2 and y1 - y0 > 2:
            images.append((x0, y0, x1, y1))
    words = [(w[0], w[1], w[2], w[3], w[4]) for w in page.get_text("words")]
    return _PageContent(drawings, images, words)


def _count_items(drawings: Iterable[dict[str, Any]], box: Box,
                 words: Sequence[tuple[float, float, float, float, str]]) -> dict[str, Any]:
    """Drawn boxes (and those with words in them), filled bars, arrowheads, stroked segments and curves,
    long lines, ticks, outlined glyph detail and the vector coverage in ``box``."""
    width, height = box[2] - box[0], box[3] - box[1]
    area = max(1.0, width * height)
    counts: dict[str, Any] = {"boxes": 0, "text_boxes": 0, "bars": 0, "arrows": 0, "segments": 0, "curves": 0,
                              "long_lines": 0, "ticks": 0, "outlines": 0}
    cells = np.zeros((_GRID, _GRID), dtype=bool)
    cw, ch = max(width, 1.0) / _GRID, max(height, 1.0) / _GRID
    centres = [((w[0] + w[2]) / 2, (w[1] + w[3]) / 2) for w in words]
    for path in drawings:
        rect = path.get("rect")
        if rect is None:
            continue
        x0, y0, x1, y1 = rect
        if x0 < box[0] - 4 or y0 < box[1] - 4 or x1 > box[2] + 4 or y1 > box[3] + 4:
            continue  # not (wholly) in the box: page frames, rules, the next figure
        fill = path.get("fill")
        stroked = "s" in str(path.get("type", ""))
        if fill is not None and not stroked and tuple(fill)[:3] == (1.0, 1.0, 1.0):
            continue  # white masks
        items = path.get("items") or []
        w, h = x1 - x0, y1 - y0
        if (w * h) < 0.25 * area:
            cx0, cy0 = int((x0 - box[0]) // cw), int((y0 - box[1]) // ch)
            cx1, cy1 = int((x1 - box[0]) // cw), int((y1 - box[1]) // ch)
            cells[max(0, cy0):min(_GRID, cy1 + 1), max(0, cx0):min(_GRID, cx1 + 1)] = True
        if not stroked:
            # lines drawn as thin filled shapes (charts exported from office software: axes, grid
            # lines, ticks and the plotted lines are fills) count as the strokes they stand for
            if min(w, h) < _THIN <= max(w, h):
                _count_stroke(counts, w, h, width, height, _THIN)
                continue
            thin = [it[1] for it in items if it[0] == "re" and min(it[1][2] - it[1][0], it[1][3] - it[1][1])
                    < _THIN <= max(it[1][2] - it[1][0], it[1][3] - it[1][1])]
            for r in thin:
                _count_stroke(counts, r[2] - r[0], r[3] - r[1], width, height, _THIN)
            items = [it for it in items if not (it[0] == "re" and it[1] in thin)]
            if not items:
                continue
        lines = [it for it in items if it[0] == "l"]
        kinds = {it[0] for it in items}
        if fill is not None and 2 <= len(lines) <= 3 and kinds <= {"l"} and max(w, h) <= 14:
            counts["arrows"] += 1
            continue
        is_frame = w >= 0.9 * width and h >= 0.9 * height
        sensible = 0.03 * width <= w and 0.03 * height <= h and not is_frame and w * h < 0.6 * area
        rect_like = "re" in kinds or "qu" in kinds or (len(lines) == 4 and kinds == {"l"}) or (
            bool(path.get("closePath")) and len(lines) == 3 and kinds == {"l"})
        if sensible and rect_like:
            n = max(1, sum(1 for it in items if it[0] in ("re", "qu")))
            if stroked:
                counts["boxes"] += n
                if any(x0 <= cx <= x1 and y0 <= cy <= y1 for cx, cy in centres):
                    counts["text_boxes"] += n
            else:
                counts["bars"] += n
            continue
        if not stroked:  # filled shapes: glyphs drawn as outlines, markers, areas
            counts["outlines"] += len(items)
            continue
        counts["curves"] += sum(1 for it in items if it[0] == "c")
        for it in lines:
            (ax, ay), (bx, by) = it[1], it[2]
            _count_stroke(counts, abs(bx - ax), abs(by - ay), width, height)
    counts["vector_share"] = float(cells.mean())
    return counts


_THIN = 1.5  # a filled shape thinner than this (points) is a line drawn as a fill


def _count_stroke(counts: dict[str, Any], dx: float, dy: float, width: float, height: float,
                  flat: float = 0.5) -> None:
    """Count one straight stroke ``dx`` by ``dy`` points long in a box ``width`` by ``height``: a segment,
    and a long line (axis, rule) or a tick mark when it is horizontal or vertical (less than ``flat``
    points across: a filled line is as thick as the stroke it stands for)."""
    counts["segments"] += 1
    if (dy < flat and dx >= 0.4 * width) or (dx < flat and dy >= 0.4 * height):
        counts["long_lines"] += 1
    elif (dy < flat and 0.5 <= dx <= 6) or (dx < flat and 0.5 <= dy <= 6):
        counts["ticks"] += 1


Word = tuple[float, float, float, float, str]


def _words_in(words: Iterable[Word], box: Box) -> list[Word]:
    """The words whose centre is in ``box``."""
    return [w for w in words if _inside(((w[0] + w[2]) / 2, (w[1] + w[3]) / 2), box)]


def _word_stats(words: Sequence[Word]) -> tuple[int, float, int]:
    """(words, share that are numbers, distinct panel letters)."""
    inside = [w[4] for w in words]
    if not inside:
        return 0, 0.0, 0
    numeric = sum(1 for w in inside if _NUMBER.match(w))
    letters = {m.group(1).lower() for w in inside if (m := _PANEL.match(w))}
    return len(inside), numeric / len(inside), len(letters)


def _tones(page: Any, box: Box) -> tuple[float, float]:
    """(ink share, tones) of a small rendering of ``box``: the share of pixels not near white, and the
    distinct colours (4 bits a channel) among those pixels over their count, capped at 1."""
    import pymupdf

    width, height = box[2] - box[0], box[3] - box[1]
    if width < 4 or height < 4:
        return 0.0, 0.0
    zoom = min(2.0, RENDER_PIXELS / max(width, height))
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), clip=pymupdf.Rect(box),
                          colorspace=pymupdf.csRGB, alpha=False)
    if pix.width == 0 or pix.height == 0:
        return 0.0, 0.0
    pixels = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)[:, :, :3]
    flat = pixels.reshape(-1, 3)
    inked = flat[flat.min(axis=1) < 230]
    if len(inked) == 0:
        return 0.0, 0.0
    codes = (inked.astype(np.int32) >> 4) @ np.array([256, 16, 1], dtype=np.int32)
    distinct = len(np.unique(codes))
    return len(inked) / len(flat), min(1.0, distinct / max(16.0, math.sqrt(len(inked)) * 4))


def look_in_box(page: Any, content: _PageContent, box: Box, render: bool = True) -> FigureLook:
    """The look of one box of ``page`` (display coordinates, as :class:`core.document.Figure` holds)."""
    if page.rotation:
        import pymupdf

        r = pymupdf.Rect(box) * page.derotation_matrix
        r.normalize()
        box = (r.x0, r.y0, r.x1, r.y1)
    box = (box[0] - _PAD, box[1] - _PAD, box[2] + _PAD, box[3] + _PAD)
    area = max(1.0, _area(box))
    covered = sum(_intersection(img, box) for img in content.images)
    images = sum(1 for img in content.images
                 if _intersection(img, box) > 0.5 * _area(img) and _area(img) > 0.01 * area)
    inside = _words_in(content.words, box)
    counts = _count_items(content.drawings, box, inside)
    words, numeric, letters = _word_stats(inside)
    ink, tones = _tones(page, box) if render else (0.0, 0.0)
    drawn = sum(counts[k] for k in ("boxes", "bars", "arrows", "segments", "curves", "outlines"))
    if render and ink < BLANK_INK and images == 0 and words == 0 and drawn == 0:
        return FigureLook()  # a blank box: the region is wrong, so the look is unknown
    return FigureLook(
        found=True, raster_share=min(1.0, covered / area), vector_share=counts["vector_share"],
        images=images, boxes=counts["boxes"], text_boxes=counts["text_boxes"], bars=counts["bars"],
        arrows=counts["arrows"], segments=counts["segments"], curves=counts["curves"],
        long_lines=counts["long_lines"], ticks=counts["ticks"], outlines=counts["outlines"], words=words,
        numeric_share=numeric, panel_letters=letters, ink_share=ink, tones=tones)


def look_at_figures(path: str | Path, figures: Sequence[Figure], render: bool = True) -> list[FigureLook]:
    """The look of each figure (an unknown look for a figure without a found region), each page read
    once. Call it on the thread that owns pymupdf (:func:`looks_for_paper` picks the way)."""
    import pymupdf

    out: list[FigureLook] = [FigureLook() for _ in figures]
    by_page: dict[int, list[int]] = {}
    for i, figure in enumerate(figures):
        if figure.region_found:
            by_page.setdefault(figure.page, []).append(i)
    if not by_page:
        return out
    doc = pymupdf.open(str(path))
    try:
        for number, indices in sorted(by_page.items()):
            if number >= doc.page_count:
                continue
            page = doc.load_page(number)
            content = _page_content(page)
            for i in indices:
                out[i] = look_in_box(page, content, figures[i].bbox, render)
    finally:
        doc.close()
    return out


def looks_job(ctx: Any, path: str, figures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """:func:`look_at_figures` for a child process (``core.procjobs``): plain dicts both ways."""
    return [look.to_dict() for look in look_at_figures(path, [Figure.from_dict(f) for f in figures])]


def looks_for_paper(paper: Paper, figures: Sequence[Figure]) -> list[FigureLook]:
    """The looks of ``figures`` of ``paper``: read from its PDF (``paper.source_path``, when it is still the
    file that was parsed) on the main thread, or in a child process from any other thread (MuPDF is not
    thread-safe: a GUI worker must not use it beside the UI thread). Unknown looks when the PDF is gone,
    changed or unreadable: the ranking then goes by the other evidence."""
    from core.fileio import file_sha256

    unknown = [FigureLook() for _ in figures]
    path = Path(paper.source_path) if paper.source_path else None
    if path is None or not path.is_file() or not figures:
        return unknown
    try:
        if paper.sha256 and file_sha256(path) != paper.sha256:
            return unknown
        if threading.current_thread() is threading.main_thread():
            return look_at_figures(path, figures)
        from core.procjobs import run_in_process

        dicts = [f.to_dict() for f in figures]
        data = run_in_process(None, "core.figures.figure_features:looks_job", str(path), dicts)
        return [FigureLook.from_dict(d) for d in data]
    except Exception:  # a PDF MuPDF cannot read again: rank without the looks
        return unknown


# -- what the look says -------------------------------------------------------------------------------
def _ramp(value: float, low: float, high: float) -> float:
    """0 at or below ``low``, 1 at or above ``high``, linear between."""
    if high <= low:
        return float(value >= high)
    return min(1.0, max(0.0, (value - low) / (high - low)))


def type_scores(look: FigureLook) -> dict[str, float]:
    """Soft scores (0–1) of each of :data:`FIGURE_TYPES`; all 0 for an unknown look."""
    if not look.found:
        return dict.fromkeys(FIGURE_TYPES, 0.0)
    raster = look.raster_share
    vector = 1.0 - raster
    numbers = look.numeric_share * _ramp(look.words, 3, 10)
    axes = _ramp(look.long_lines, 1, 3) * _ramp(look.ticks + 3 * numbers * look.words / 10, 2, 8)
    chart = vector * max(axes, min(1.0, numbers * 1.5) * _ramp(look.segments + look.curves, 5, 30))
    shapes = _ramp(look.text_boxes + look.arrows + 0.3 * look.boxes, 1, 4)  # boxes with words, arrows
    diagram = vector * shapes * (1.0 - 0.7 * numbers) * _ramp(look.words, 1, 6)
    photo = raster * _ramp(look.ink_share, 0.35, 0.75) * _ramp(look.tones, 0.15, 0.5)
    table = (vector * _ramp(look.long_lines, 2, 5) * _ramp(look.words, 15, 40)
             * (1.0 - _ramp(look.ticks, 3, 10)) * (1.0 - shapes * 0.5))
    drawn = look.segments + look.curves + look.boxes + look.arrows
    text = (1.0 - raster) * _ramp(look.words, 8, 30) * (1.0 - _ramp(drawn, 2, 10))
    return {"diagram": round(diagram, 4), "chart": round(chart, 4), "photo": round(photo, 4),
            "table": round(table, 4), "text": round(text, 4)}


def figure_type(look: FigureLook) -> str:
    """The most likely of :data:`FIGURE_TYPES`, "" when none is likely or the look is unknown."""
    scores = type_scores(look)
    best = max(FIGURE_TYPES, key=lambda k: scores[k])
    return best if scores[best] >= 0.3 else ""


def multi_panel(look: FigureLook) -> float:
    """1 for a composite of panels (several images, or panel letters), 0 for one panel."""
    if not look.found:
        return 0.0
    return max(_ramp(look.images, 1, 2), _ramp(look.panel_letters, 1, 2))


# -- what the words say -------------------------------------------------------------------------------
_OVERVIEW_CUES = re.compile(
    r"\b(?:overview|schematic|schema|framework|architecture|proposed\s+(?:model|method|approach|system|"
    r"framework|pipeline)|workflow|work\s+flow|pipeline|study\s+design|flow\s*(?:diagram|chart)|flowchart|"
    r"graphical\s+(?:summary|abstract)|mechanism|model\s+of|conceptual|concept|illustration\s+of|"
    r"summary\s+of|outline\s+of|overall|consort|design\s+of\s+the\s+stud|system\s+design|our\s+(?:model|"
    r"method|approach|system))",
    re.IGNORECASE)
_DETAIL_CUES = re.compile(
    r"\b(?:example|examples|screenshot|screen\s+shot|snapshot|sample\s+(?:of|from)|samples\s+(?:of|from)|"
    r"pseudo-?code|algorithm\s+\d|code\s+(?:snippet|listing)|photograph\s+of|map\s+of|location\s+of|"
    r"supplementary|appendix|histogram|distribution\s+of|hyper-?parameter|ablation|sensitivity\s+to)",
    re.IGNORECASE)
# A mention that calls the figure an overview or summary. Words for what a figure shows ("depicts",
# "illustrates", "framework", "main result") were cues too until session 32: they said nothing true
# of an overview ("Figure 7 depicts the data loss probabilities"), and the graphical-abstract ranker
# did better without them (leave-one-paper-out MRR 0.682 → 0.728 on the 60 dev papers).
_OVERVIEW_MENTION = re.compile(
    r"\b(?:overview|summari[sz]|outline|at\s+a\s+glance|big\s+picture|overall)", re.IGNORECASE)


_RESULT_CUES = re.compile(
    r"\b(?:comparison|compared|performance|outperform\w*|results?\b|accuracy|effects?\s+of|versus|vs\.?|"
    r"improv\w+|speed-?up|throughput|error|precision|recall)",
    re.IGNORECASE)
HEAD_WORDS = 8  # a cue in the caption's first words names what the figure is


def _cue(pattern: re.Pattern[str], caption_body: str) -> float:
    """1 when ``pattern`` is among the caption's first :data:`HEAD_WORDS` words, 0.5 when it is elsewhere
    in its first sentence, else 0."""
    first = caption_body.split(". ")[0]
    head = " ".join(first.split()[:HEAD_WORDS])
    return 1.0 if pattern.search(head) else 0.5 if pattern.search(first) else 0.0


def caption_cues(caption_body: str) -> tuple[float, float, float]:
    """(overview, detail, result): whether the caption names an overview, schema, framework, model or
    design ("overview", "schematic", "proposed model", "workflow", "study design", "flow diagram",
    "mechanism", "model of" …), a detail (an example, a screenshot, a sample, pseudocode, a map, a
    histogram, an ablation …) or a result (a comparison, performance, an effect, accuracy …); each 1 in
    the caption's first words, 0.5 later in its first sentence, else 0."""
    return (_cue(_OVERVIEW_CUES, caption_body), _cue(_DETAIL_CUES, caption_body),
            _cue(_RESULT_CUES, caption_body))


def title_overlap(title: str, caption_body: str) -> float:
    """The share of the title's content words (crudely stemmed) that the caption uses."""
    from core.phrasing.lexical import content_words, stem

    words = {stem(w) for w in content_words(title)}
    if not words:
        return 0.0
    return len(words & {stem(w) for w in content_words(caption_body)}) / len(words)


def caption_series(caption_bodies: Sequence[str], order: Sequence[int]) -> tuple[list[float], list[float]]:
    """(series, later) per caption: the largest word overlap (Jaccard of stemmed content words) with any
    other caption of the paper — a member of a series of like figures ("Precision curves for A", "… for
    B") — and with an earlier one by ``order`` (indices, first figure first): a later member of a series."""
    from core.phrasing.lexical import content_words, stem

    words = [{stem(w) for w in content_words(c)} for c in caption_bodies]
    rank = {i: k for k, i in enumerate(order)}

    def jaccard(a: set[str], b: set[str]) -> float:
        return len(a & b) / len(a | b) if a | b else 0.0

    series, later = [], []
    for i, own in enumerate(words):
        others = [(jaccard(own, words[j]), rank[j] < rank[i]) for j in range(len(words)) if j != i]
        series.append(max((v for v, _ in others), default=0.0))
        later.append(max((v for v, before in others if before), default=0.0))
    return series, later


@dataclass(frozen=True)
class MentionProfile:
    """How the body points to one figure."""

    count: int = 0  # sentences that mention it
    overview: bool = False  # a mention calls it an overview or summary
    overview_cue: str = ""  # the cue word near that mention ("overview", "summarised")
    overview_words: str = ""  # the words from the reference to the cue ("Figure 1 gives an overview")
    early: bool = False  # mentioned in the abstract or introduction
    late: bool = False  # mentioned in the discussion or conclusion
    kinds: tuple[str, ...] = ()  # section kinds of the mentions, in order of first appearance
    first_at: float = 1.0  # where the first mention sits in the body (0 start … 1 end; 1 when never)
    sentence: str = ""  # the mention that calls it an overview, else the first mention


def mention_profile(paper: Paper, figure: Figure) -> MentionProfile:
    """:class:`MentionProfile` of ``figure`` from its ``mentioned_by`` sentences."""
    sentences = []
    for sid in figure.mentioned_by:
        try:
            sentences.append(paper.sentence_by_id(sid))
        except (IndexError, KeyError, ValueError):
            continue
    if not sentences:
        return MentionProfile()
    kinds: list[str] = []
    for sentence in sentences:
        kind = paper.section_of(sentence).kind.value
        if kind not in kinds:
            kinds.append(kind)
    evidence = [(s.text, found) for s in sentences if (found := overview_evidence(s.text, figure.number))]
    early = {SectionKind.ABSTRACT.value, SectionKind.INTRODUCTION.value}
    late = {SectionKind.DISCUSSION.value, SectionKind.CONCLUSION.value}
    total = max(1, len(paper.sentences) - 1)
    cue, words = evidence[0][1] if evidence else ("", "")
    return MentionProfile(
        count=len(sentences), overview=bool(evidence), overview_cue=cue, overview_words=words,
        early=bool(early & set(kinds)), late=bool(late & set(kinds)), kinds=tuple(kinds),
        first_at=min(s.index for s in sentences) / total,
        sentence=evidence[0][0] if evidence else sentences[0].text)


def overview_evidence(sentence: str, number: str) -> tuple[str, str] | None:
    """(cue, words) when the sentence says an overview or summary word within a few words of its
    reference to figure ``number``: the cue as written ("overview", "summarised") and the words from the
    reference to the cue ("Figure 1 gives an overview", "summarised in Fig. 2"); None when it says none."""
    for m in re.finditer(rf"\b(?:Fig(?:ure)?s?\.?)\s*{re.escape(number)}\b", sentence, re.IGNORECASE):
        start = max(0, m.start() - 60)
        cue = _OVERVIEW_MENTION.search(sentence[start:m.end() + 60])
        if cue is None:
            continue
        cue_end = _word_end(sentence, start + cue.end())  # "summari" → "summarised"
        first, last = min(m.start(), start + cue.start()), _word_end(sentence, max(m.end(), cue_end))
        while first > 0 and not sentence[first - 1].isspace() and sentence[first - 1] != "(":
            first -= 1
        return " ".join(sentence[start + cue.start():cue_end].split()), " ".join(sentence[first:last].split())
    return None


def _word_end(text: str, at: int) -> int:
    """Where the word running through ``at`` ends (before a space or punctuation)."""
    while at < len(text) and not text[at].isspace() and text[at] not in ",;:.)":
        at += 1
    return at


def _mentions_as_overview(sentence: str, number: str) -> bool:
    """The sentence calls figure ``number`` an overview or summary (:func:`overview_evidence`)."""
    return overview_evidence(sentence, number) is not None


_APPENDIX = re.compile(r"^\s*(?:appendi|supplement|[A-H]\s*[.:]?\s+[A-Z])", re.IGNORECASE)


def is_appendix_page(paper: Paper, page: int) -> bool:
    """The page comes after the main text: a section of kind "other" after the conclusion or discussion
    (an appendix) starts on or before it, and no main-text section starts after it."""
    main = {SectionKind.INTRODUCTION, SectionKind.METHOD, SectionKind.RESULT, SectionKind.DISCUSSION,
            SectionKind.CONCLUSION}
    seen_end = False
    appendix_from: int | None = None
    for section in paper.sections:
        if section.kind in (SectionKind.CONCLUSION, SectionKind.DISCUSSION):
            seen_end = True
            appendix_from = None
        elif section.kind in main:
            appendix_from = None
        elif seen_end and section.kind is SectionKind.OTHER and appendix_from is None and _APPENDIX.match(
                section.heading):
            appendix_from = section.page
    return appendix_from is not None and page >= appendix_from
