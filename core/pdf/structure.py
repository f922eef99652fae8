"""From the page flow (lines in reading order, tagged) to sections, paragraphs and sentences.

Front matter (title, authors, affiliations) is dropped; the abstract (with or
without its heading, structured or not) becomes the first section; body
headings open sections; the references list and everything after it is left
out, except appendices, which are kept as ``other`` sections.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from core.document import Section, SectionKind, Sentence
from core.pdf.headings import (
    BACK_MATTER,
    HeadingMatch,
    is_abstract_heading,
    is_appendix,
    is_other_heading,
    is_references,
    level_of,
    looks_like_heading,
    plausible_next,
    run_in_heading,
    run_in_title_end,
    section_kind,
    split_number,
)
from core.pdf.layout import PageLayout
from core.pdf.linekinds import is_equation, is_tabular
from core.pdf.lines import Line, tail
from core.pdf.outline import settle_levels_and_kinds
from core.pdf.paragraphs import TERMINAL, SectionBuilder, to_sentences
from core.pdf.textmap import clean_text, inner_compounds

SKIP_TAGS = {"furniture", "stray", "equation-number", "caption", "figure", "title", "equation"}
SMALL = 0.86  # lines under this share of the body font size are footnotes, figure text, side notes

_RUN_IN_ABSTRACT = re.compile(r"^(?:abstract|ABSTRACT|Abstract)\s*(?:[.:—–\-]\s*|\s+(?=[A-Z]))(?=\S)")
_KEYWORDS = re.compile(
    r"^(?:key\s?words?|index terms|subjects|jel|msc|ccs concepts|categories and subject|general terms"
    r"|abbreviations|(?:table of )?contents$|date(?=:)|received(?=:)|mathematics subject classification)\b",
    re.IGNORECASE,
)
_STRUCTURED_LABELS = re.compile(
    r"^(?:background|methods?|results?|conclusions?|objectives?|aims?|purpose|design|setting|findings"
    r"|interpretation|context|introduction|discussion|materials and methods|methodology|significance"
    r"|participants|measurements|main outcome measures?|limitations|implications)$",
    re.IGNORECASE,
)
_NUMBERED_NOTE = re.compile(r"^\d{1,2}\s+\S")
_FOOTNOTE = re.compile(r"^(?:[∗*†‡§¶⋆]\s*\S|\d{1,2}[A-Z][a-z])")
_TOC_LINE = re.compile(r"\s\d{1,3}$")


@dataclass
class Structure:
    sections: list[Section]
    sentences: list[Sentence]
    authors_stop: tuple[int, float]  # (page, y) where the abstract/body starts (authors lie above)


def _is_small(line: Line, body_size: float) -> bool:
    return line.size < SMALL * body_size


def _heading_matches(lines: list[Line], body_size: float, body_font: str
                     ) -> tuple[dict[int, HeadingMatch], set[int]]:
    """Heading candidates by line index, and the stand-alone bold paragraph titles of numbered
    papers (neither sections nor sentence text)."""
    out: dict[int, HeadingMatch] = {}
    paragraph_titles: set[int] = set()
    for i, ln in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        prv = lines[i - 1] if i else None
        hm = looks_like_heading(ln, body_size, next_line=nxt, prev_line=prv, body_font=body_font)
        if hm is not None and not _beside_other_text(ln, body_size, prv, nxt):
            out[i] = hm
    # in papers with numbered sections, unnumbered body-size bold lines are paragraph titles
    numbered = sum(1 for hm in out.values() if hm.number)
    if numbered >= 3:
        for i in list(out):
            hm = out[i]
            ln = lines[i]
            if hm.number or ln.size > body_size * 1.05 or (hm.title.upper() == hm.title):
                continue
            if section_kind(hm.title) is not SectionKind.OTHER or is_other_heading(hm.title) \
                    or is_references(hm.title) or is_abstract_heading(hm.title) or is_appendix(hm.title, ""):
                continue
            del out[i]
            if ln.bold >= 0.7 and not ln.text.rstrip().endswith((".", ",", ";")):
                paragraph_titles.add(i)
    return out, paragraph_titles


def _beside_other_text(ln: Line, body_size: float, *others: Line | None) -> bool:
    """Text on the same row next to it (equation parts, table cells): not a heading."""
    for other in others:
        if other is None or other.page != ln.page or _is_small(other, body_size):
            continue
        overlap = min(ln.y1, other.y1) - max(ln.y0, other.y0)
        if overlap > 0.3 * ln.height and (other.x0 >= ln.x1 - 1 or other.x1 <= ln.x0 + 1) \
                and min(abs(other.x0 - ln.x1), abs(ln.x0 - other.x1)) < 120:
            return True
    return False


def _starts_body(hm: HeadingMatch) -> bool:
    return bool(hm.number) or section_kind(hm.title) is not SectionKind.OTHER or is_references(hm.title)


def _add_body(builder: SectionBuilder, ln: Line) -> None:
    """Add a body line; a bold run-in paragraph title opening it is a label, not sentence text."""
    prev_text = builder.prev.text.rstrip() if builder.prev is not None else ""
    if ln.first_in_block or not prev_text or prev_text.endswith(TERMINAL):
        cut = run_in_title_end(ln)
        if cut is not None:
            ln = tail(ln, cut)
    builder.add_body(ln)


def _is_prose_block(block: list[Line]) -> bool:
    """Running text (an abstract without its heading), not names, affiliations or a venue box."""
    if len(block) < 3 or sum(len(ln.text) for ln in block) < 200:
        return False
    words = [w for ln in block for w in ln.text.split() if w[:1].isalpha()]
    lower = sum(1 for w in words if w[0].islower())
    return bool(words) and lower >= 0.5 * len(words)


def _blocks(lines: list[Line]) -> list[list[Line]]:
    """Runs of lines that read as one block: one pymupdf block, or tightly set lines, or
    one-line blocks in a row at one size and font (double-spaced manuscripts)."""
    per_block: dict[tuple[int, int], int] = {}
    for ln in lines:
        per_block[(ln.page, ln.block)] = per_block.get((ln.page, ln.block), 0) + 1
    blocks: list[list[Line]] = []
    for ln in lines:
        if blocks:
            last = blocks[-1][-1]
            gap = ln.y0 - last.y1
            alike = last.page == ln.page and abs(last.size - ln.size) < 0.3 and last.font == ln.font
            single = per_block[(last.page, last.block)] == 1 and per_block[(ln.page, ln.block)] == 1
            if last.page == ln.page and (last.block == ln.block or (alike and 0 <= gap < 0.8 * ln.size)
                                         or (alike and single and 0 <= gap < 1.6 * ln.size)):
                blocks[-1].append(ln)
                continue
        blocks.append([ln])
    return blocks


def build_structure(
    flow: list[Line],
    layouts: list[PageLayout],
    body_size: float,
    split: Callable[[str], list[tuple[int, int]]],
    all_lines: list[Line],
    body_font: str = "",
    page_heights: list[float] | None = None,
) -> Structure:
    if page_heights is None:
        page_heights = [1e9] * len(layouts)
    lines = [ln for ln in flow if not (ln.tags & SKIP_TAGS)]
    for ln in lines:
        if is_equation(ln) or is_tabular(ln):
            ln.tags.add("equation")
    lines = [ln for ln in lines if "equation" not in ln.tags]
    heads, paragraph_titles = _heading_matches(lines, body_size, body_font)
    builder = SectionBuilder(layouts, body_size, inner_compounds(ln.text for ln in lines))

    # --- where the body starts: the abstract, or the first real heading -------------
    start = None
    abstract_line: Line | None = None
    for i, ln in enumerate(lines):
        if ln.page > 1:
            break
        if is_abstract_heading(ln.text) or (_RUN_IN_ABSTRACT.match(ln.text) and ln.page <= 1):
            start = i
            abstract_line = ln
            break
    first_heading = next(
        (i for i, hm in sorted(heads.items()) if lines[i].page <= 2 and _starts_body(hm)
         and not _is_small(lines[i], body_size)),
        None,
    )
    if (start is not None and first_heading is not None and first_heading < start
            and section_kind(heads[first_heading].title) is not SectionKind.OTHER):
        start = None  # "Abstract" found after the first section: not a front-matter abstract
        abstract_line = None
    pos = 0
    if start is not None:
        assert abstract_line is not None
        builder.open_section("Abstract", SectionKind.ABSTRACT, 1, "", abstract_line.page,
                             abstract_line.size)
        m = _RUN_IN_ABSTRACT.match(abstract_line.text)
        if m and not is_abstract_heading(abstract_line.text):
            builder.add_body(tail(abstract_line, m.end()))
        pos = start + 1
        stop = (abstract_line.page, abstract_line.y0)
    else:
        end = first_heading if first_heading is not None else len(lines)
        front = [ln for ln in lines[:end] if ln.page <= 1 and ln.size >= 0.7 * body_size]
        prose = [b for b in _blocks(front) if _is_prose_block(b)]
        if prose and first_heading is not None:
            block = prose[-1]
            builder.open_section("Abstract", SectionKind.ABSTRACT, 1, "", block[0].page, block[0].size)
            for ln in block:
                _add_body(builder, ln)
            pos = end
            stop = (block[0].page, block[0].y0)
        elif first_heading is not None:
            pos = first_heading
            stop = (lines[pos].page, lines[pos].y0)
        elif prose:
            pos = lines.index(prose[0][0])
            stop = (lines[pos].page, lines[pos].y0)
        else:
            pos = 0
            stop = (0, 0.0)

    # --- the body ---------------------------------------------------------------------
    in_refs = False
    abstract_closed = False
    front_end = (abstract_line.page, abstract_line.y0) if abstract_line is not None else None
    last_number: str | None = None
    skip_block: tuple[int, int] | None = None
    skip_next_block = False
    back_matter_size = 0.0
    i = pos
    while i < len(lines):
        ln = lines[i]
        text = ln.text.strip()
        current = builder.sections[-1] if builder.sections else None
        in_abstract = current is not None and current.kind is SectionKind.ABSTRACT
        if skip_block is not None and (ln.page, ln.block) == skip_block:
            i += 1
            continue
        if skip_next_block and not _is_small(ln, 0.9 * body_size):
            skip_block = (ln.page, ln.block)
            skip_next_block = False
            i += 1
            continue
        if not _is_small(ln, body_size):
            skip_block = None
        if _TOC_LINE.search(text) and ln.gaps and ln.gaps[-1] >= len(ln.text) - 4:
            i += 1  # a table-of-contents entry ("2.1 PageRank ...... 4")
            continue
        if front_end is not None and ln.page == front_end[0] and ln.y1 <= front_end[1] + 1:
            i += 1  # front matter above the abstract heading (authors side by side, affiliations)
            continue
        if ln.y0 > 0.65 * page_heights[ln.page] and (_FOOTNOTE.match(text) or (
                _NUMBERED_NOTE.match(text) and ln.size < 0.97 * body_size
                and (ln.first_in_block or (i > 0 and lines[i - 1].size < 0.97 * body_size)))):
            skip_block = (ln.page, ln.block)  # a footnote set at body size
            i += 1
            continue
        if _KEYWORDS.match(text) and (in_abstract or ln.page <= 1):
            skip_block = (ln.page, ln.block)
            abstract_closed = True
            if _KEYWORDS.fullmatch(text.rstrip(":.—- ")):
                skip_next_block = True  # the label stands alone; the keywords follow as a block
            i += 1
            continue
        bare = text.rstrip(":.").strip()
        number, title = split_number(bare, allow_letters=in_refs)
        if is_references(title) and len(text) < 40:
            in_refs = True
            i += 1
            continue
        hm = heads.get(i)
        if in_refs:
            styled = hm is not None or ln.bold >= 0.7 or ln.size > body_size * 1.08
            if BACK_MATTER.match(bare) and ln.first_in_block and len(ln.runs) == 1 \
                    and not _is_small(ln, body_size):
                in_refs = False  # acknowledgements after the references
                builder.open_section(clean_text(bare), SectionKind.OTHER, 1, "", ln.page, ln.size)
            elif styled and not _is_small(ln, body_size):
                number, title = split_number(bare, allow_letters=True)
                if is_appendix(title, number) and len(title) < 100 and title[:1].isupper():
                    in_refs = False
                    last_number = number or "A"
                    builder.open_section(title, SectionKind.OTHER, level_of(number), number, ln.page, ln.size)
            i += 1
            continue
        prev = builder.prev
        continues = (
            prev is not None and prev.page == ln.page
            and layouts[ln.page].column_of(prev) == layouts[ln.page].column_of(ln)
            and 0 <= ln.y0 - prev.y1 < 1.5 * ln.size
        )
        if _is_small(ln, body_size) and ln.size >= 0.65 * body_size and BACK_MATTER.match(bare) \
                and (ln.first_in_block or ln.bold >= 0.7) and len(bare) < 60:
            builder.open_section(clean_text(bare), SectionKind.OTHER, 1, "", ln.page, ln.size)
            back_matter_size = ln.size
            i += 1
            continue
        if _is_small(ln, body_size) and back_matter_size and ln.size >= back_matter_size - 0.6 \
                and builder.sections and builder.sections[-1].size == back_matter_size:
            builder.add_body(ln)  # back matter set small (BMC): competing interests, contributions
            i += 1
            continue
        if _is_small(ln, body_size) and not (hm is not None and hm.number and ln.bold >= 0.7):
            abstract_text = in_abstract and ln.size >= 0.75 * body_size and (
                prev is None or (continues and abs(prev.size - ln.size) < 0.6))
            if not abstract_text:
                i += 1
                continue
        if hm is not None and in_abstract and not abstract_closed and not hm.number \
                and _STRUCTURED_LABELS.match(hm.title) and ln.size <= body_size * 1.05 \
                and (prev is None or continues):
            hm = None  # a structured-abstract label ("Background", "Methods"): stays in the abstract
        if hm is None or hm.number:
            bx0, bx1 = layouts[ln.page].column_bounds(layouts[ln.page].column_of(ln))
            ri = run_in_heading(ln, lines[i + 1] if i + 1 < len(lines) else None,
                                wide=ln.width >= 0.55 * (bx1 - bx0))
            if ri is not None and plausible_next(ri[0], last_number):
                number, title, used, body_at = ri
                last_number = number
                builder.open_section(clean_text(title), section_kind(title), level_of(number), number,
                                     ln.page, ln.size)
                rest = tail(lines[i + used - 1], body_at)
                if rest.text:
                    builder.add_body(rest)
                i += used
                continue
        if hm is not None and hm.number:
            if plausible_next(hm.number, last_number, strict=not hm.styled) or (
                    hm.styled and plausible_next(hm.number, last_number) is False and ln.bold >= 0.7
                    and ln.size >= body_size):
                last_number = hm.number
            else:
                hm = None  # a numbered list item, not the next section
        if hm is not None and is_abstract_heading(hm.title):
            builder.open_section("Abstract", SectionKind.ABSTRACT, 1, "", ln.page, ln.size)
            i += 1
            continue
        if hm is not None:
            title = hm.title
            j = i + 1
            # a heading wrapped onto a second line
            cx0, cx1 = layouts[ln.page].column_bounds(layouts[ln.page].column_of(ln))
            while j < len(lines) and j - i <= 2 and ln.width >= 0.55 * (cx1 - cx0):
                nxt = lines[j]
                if (nxt.page == ln.page and 0 <= nxt.y0 - ln.y1 <= 0.8 * ln.size + (j - i - 1) * ln.size * 1.3
                        and abs(nxt.size - ln.size) < 0.3 and (nxt.bold >= 0.7) == (ln.bold >= 0.7)
                        and (ln.bold >= 0.7 or ln.size > body_size * 1.08)
                        and not split_number(nxt.text)[0] and len(nxt.text) < 80
                        and not nxt.text.rstrip().endswith(".")):
                    title = f"{title} {nxt.text.strip()}"
                    j += 1
                else:
                    break
            builder.open_section(clean_text(title), section_kind(title), hm.level, hm.number, ln.page,
                                 ln.size)
            i = j
            continue
        if i in paragraph_titles:
            builder.prev = None  # the next line opens a paragraph
            i += 1
            continue
        _add_body(builder, ln)
        i += 1

    settle_levels_and_kinds(builder.sections)
    sections, sentences = to_sentences(builder.sections, split, all_lines)
    return Structure(sections, sentences, stop)


