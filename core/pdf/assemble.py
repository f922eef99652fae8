"""``parse_pdf``: the steps in order, page by page, into a :class:`core.document.Paper`."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

import pymupdf

from core.document import Figure, PageRect, Paper
from core.errors import CorruptPdfError, RhetoricaError
from core.fileio import file_sha256
from core.jobs import JobContext, ensure_context
from core.pdf.captions import CAPTION_START, Caption, caption_label
from core.pdf.frontmatter import find_authors, find_title, title_text
from core.pdf.furniture import mark_furniture
from core.pdf.headings import is_references, split_number
from core.pdf.layout import PageLayout, analyse_layout, reading_order
from core.pdf.linekinds import is_tabular
from core.pdf.lines import Line, extract_lines, head, tail
from core.pdf.mentions import mentioned_ids
from core.pdf.opening import open_pdf
from core.pdf.regions import assign_regions, inside, page_graphics, region_options
from core.pdf.structure import build_structure
from core.pdf.textmap import clean_text, join_lines
from core.text.sentences import split_sentences

PARSER_VERSION = "pdf-12"


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
_DANGLING = re.compile(r"(?:\(|\b(?:Supplementary|Suppl\.|Extended\s+Data|see|and|of|in|the))\s*$",
                       re.IGNORECASE)


def _starts_block(ln: Line, prev: Line | None) -> bool:
    if ln.first_in_block or prev is None or prev.page != ln.page:
        return True
    if abs(prev.size - ln.size) > 0.6 or ln.y0 < prev.y0 - 1:
        return True
    return ln.y0 - prev.y1 > 0.5 * ln.height


def _under_set_in_line(ln: Line, prev: Line | None) -> bool:
    """``ln`` sits right under a line set in from both sides (a panel label "(b) Dropout network"), which
    does not run on into it: for a figure caption, that starts a block."""
    return (prev is not None and prev.page == ln.page and prev.x0 - ln.x0 > 2 * ln.size
            and prev.x1 < ln.x1 - 2 * ln.size and not _DANGLING.search(prev.text))


def _paragraph_after(nxt: Line, last: Line, body_size: float) -> bool:
    """``nxt`` starts the body text after a caption's ``last`` line although the PDF puts them in one block:
    set apart by more than a line's gap, or back in the body's font size after a caption in a size of its own
    ("Figure 1 Steps of the method" in bold, a blank line, "The steps involved …")."""
    gap = nxt.y0 - last.y1
    back_to_body = abs(last.size - body_size) >= 0.6 and abs(nxt.size - body_size) < 0.6
    return gap > 0.8 * max(last.height, 1) or back_to_body


_ABBREVIATIONS = {"vs.", "e.g.", "i.e.", "cf.", "al.", "fig.", "figs.", "eq.", "eqs.", "resp.", "approx.",
                  "ca.", "no.", "viz.", "sec.", "ref.", "refs."}


def _continues_caption(nxt: Line, last: Line, body_size: float, hang: float | None = None) -> bool:
    """``nxt`` is the next line of the caption whose line so far ends with ``last``: in its block below it (no
    paragraph gap), or close under it in the same size and column (or at the caption's hanging indent,
    ``hang``: where its words start after the label). A line that starts in lower case after a
    caption's sentence has ended is the body's ("… k = 2." then "pre-processing results in …", a sentence
    continued from the column before, in the caption's block)."""
    words = last.text.split()
    ended = bool(words) and words[-1].endswith(".") and words[-1].lower() not in _ABBREVIATIONS
    if ended and nxt.text[:1].islower():
        return False
    same_block = (nxt.block == last.block and nxt.page == last.page
                  and not _paragraph_after(nxt, last, body_size))
    aligned = (abs(nxt.x0 - last.x0) < 5 or abs((nxt.x0 + nxt.x1) - (last.x0 + last.x1)) < 10
               or (hang is not None and abs(nxt.x0 - hang) < 3))
    close = (0 <= nxt.y0 - last.y1 <= 0.6 * max(last.height, 1)
             and abs(nxt.size - last.size) < 0.6 and aligned
             and not last.text.rstrip().endswith(".")
             and min(nxt.x1, last.x1) - max(nxt.x0, last.x0) > 0)
    return (same_block and nxt.y0 >= last.y0 - 1) or close


def _past_lines_beside(ordered: list[Line], j: int, cap: Caption, body_size: float) -> int | None:
    """A figure caption whose reading order lines beside it interrupt — the figure's own labels, a page
    number, or the caption of the figure next to it, read across the page first: the index of the caption's
    next line (in its block, right under it) when no line before it reaches into the caption's span, else
    None."""
    if cap.kind != "figure":
        return None
    last = cap.lines[-1]
    left, right = min(ln.x0 for ln in cap.lines), max(ln.x1 for ln in cap.lines)
    for k in range(j, min(j + 60, len(ordered))):
        line = ordered[k]
        if line.page != last.page or "furniture" in line.tags:
            return None
        in_span = min(line.x1, right) - max(line.x0, left) > 0
        if in_span and line.block == last.block and _continues_caption(line, last, body_size):
            return k if k > j else None
        if in_span:
            return None  # something in the caption's column: the caption has ended
    return None


def _hanging_indent(first: Line) -> float | None:
    """Where a caption's words start after its label ("Figure 13: Effect of …"): a caption set with a hanging
    indent continues there (JMLR)."""
    m = CAPTION_START.match(first.text)
    if m is None:
        return None
    k = m.end("num")
    while k < len(first.text) and first.text[k] in " :.|—–-":
        k += 1
    return first.cx0[k] if 0 < k < len(first.cx0) else None


def _caption_words_before_a_label(cap: Caption, line: Line) -> Line | None:
    """A figure caption's line that reads like a table row: its numbers ("50, 100 and 200 nA; n = 25
    neurons). Field", "Figures 5, 7 and 9."), or a label inside the figure beside it that the PDF joined to it
    across a wide gap right of the caption ("entrainment. (a) Ve (first row in …" + "Iinj = 150 pA", Nature's
    side captions). The caption's words (before that gap), or None: a table's row under its caption, or no
    words."""
    if cap.kind != "figure":
        return None
    right = max(ln.x1 for ln in cap.lines)
    beyond = [g for g in line.gaps if g < len(line.cx0) and line.cx0[g] > right + 3]
    if not beyond:  # a justified line's wide space inside the caption's column
        return line if re.search(r"[A-Za-z]{3,}", line.text) else None
    words = head(line, beyond[0])
    return words if len(re.findall(r"[A-Za-z]{3,}", words.text)) >= 3 else None


def _with_bold_lead(line: Line) -> Line:
    """``line`` (a part cut from a longer one) with its leading bold run measured from its own style runs."""
    lead = 0
    for start, end, bold, _italic in line.runs:
        if not bold or start > lead + 1:
            break
        lead = end
    return replace(line, first_bold_chars=lead, tags=line.tags)


def _split_side_by_side_captions(ordered: list[Line], body_size: float) -> list[Line]:
    """Two figures' captions side by side that the PDF joined into one block, line by line across a wide gap
    ("Fig. 2 The frequency of checks …" + "Fig. 3 The frequency of aggressive …", Springer): each line cut
    where the second caption's column starts, the left parts first, then the right ones, so that each
    caption reads as itself. Only a caption line whose part after a gap starts a caption too is cut, and the
    lines of its block at the same place."""
    cuts: dict[tuple[int, int], float] = {}
    for line in ordered:
        if not line.gaps or "furniture" in line.tags or caption_label(line, body_size, True) is None:
            continue
        for g in line.gaps:
            right = _with_bold_lead(tail(line, g))
            if right.text and caption_label(right, body_size, True) is not None:
                cuts.setdefault((line.page, line.block), right.x0)
                break
    if not cuts:
        return ordered
    out: list[Line] = []
    right_parts: dict[tuple[int, int], list[Line]] = {}
    last_of_block = {(ln.page, ln.block): i for i, ln in enumerate(ordered)}
    for i, line in enumerate(ordered):
        key = (line.page, line.block)
        x = cuts.get(key)
        if x is None:
            out.append(line)
        elif line.x0 >= x - 3:
            right_parts.setdefault(key, []).append(line)
        else:
            at = next((g for g in line.gaps if abs(tail(line, g).x0 - x) <= 6), None)
            if at is None:
                out.append(line)
            else:
                out.append(head(line, at))
                right_parts.setdefault(key, []).append(_with_bold_lead(tail(line, at)))
        if x is not None and last_of_block[key] == i:
            out.extend(right_parts.pop(key, []))
    return out


def _find_captions(ordered: list[Line], body_size: float) -> list[Caption]:
    captions: list[Caption] = []
    taken: set[int] = set()  # positions of ``ordered`` that a caption has read
    i = 0
    while i < len(ordered):
        ln = ordered[i]
        prev = ordered[i - 1] if i else None
        if i in taken or "furniture" in ln.tags:
            i += 1
            continue
        label = caption_label(ln, body_size, _starts_block(ln, prev))
        if label is None and _under_set_in_line(ln, prev):
            # figures only: table captions stay as they were (the sentence golds are anchored on them)
            label = caption_label(ln, body_size, True)
            label = label if label is not None and label[0] == "figure" else None
        if label is None:
            i += 1
            continue
        cap = Caption(label[0], label[1], [ln])
        hang = _hanging_indent(ln) if cap.kind == "figure" else None
        j = i + 1
        while j < len(ordered) and len(cap.lines) < 45:
            nxt = ordered[j]
            last = cap.lines[-1]
            if "furniture" in nxt.tags:
                break
            another = caption_label(nxt, body_size, _starts_block(nxt, last)) is not None
            if another or not _continues_caption(nxt, last, body_size, hang):
                # a caption beside this one, or the labels of the figure beside it, may come first
                ahead = _past_lines_beside(ordered, j, cap, body_size)
                if ahead is None:
                    break
                j, nxt = ahead, ordered[ahead]
            if is_tabular(nxt) or (nxt.gaps and any(ch.isdigit() for ch in nxt.text)):
                words = _caption_words_before_a_label(cap, nxt)
                if words is None:
                    break  # a table row right under its caption
                nxt = words
            cap.lines.append(nxt)
            taken.add(j)
            j += 1
        captions.append(cap)
        i += 1
    return captions


def _find_rotated_captions(vertical: list[Line], body_size: float) -> list[Caption]:
    """Captions of rotated (landscape) tables and figures, set vertically on the page."""
    captions: list[Caption] = []
    for k, ln in enumerate(vertical):
        label = caption_label(ln, body_size, ln.first_in_block)
        if label is None:
            continue
        cap = Caption(label[0], label[1], [ln])
        for nxt in vertical[k + 1:]:
            if nxt.block != ln.block or caption_label(nxt, body_size, nxt.first_in_block):
                break
            cap.lines.append(nxt)
        captions.append(cap)
    return captions


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
        ordered = _split_side_by_side_captions(reading_order(lines, layout), body_size)
        captions = []
        for cap in _find_captions(ordered, body_size):
            # "Table 4. On average, ..." opening a column at body size, when Table 4 already
            # has a caption set apart: a sentence, not a second caption
            earlier = caption_sizes.get(cap.fig_id)
            size = cap.lines[0].size
            if earlier is not None and abs(size - body_size) < 0.3 and abs(earlier - body_size) >= 0.3:
                continue
            caption_sizes.setdefault(cap.fig_id, size)
            captions.append(cap)
        rotated_captions = _find_rotated_captions(rotated_pages[i], body_size)
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
