"""From the page flow (lines in reading order, tagged) to sections, paragraphs and sentences.

Front matter (title, authors, affiliations) is dropped; the abstract (with or
without its heading, structured or not) becomes the first section; body
headings open sections; the references list and everything after it is left
out, except appendices, which are kept as ``other`` sections.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

from core.document import Section, SectionKind, Sentence
from core.pdf.headings import (
    BACK_MATTER,
    HeadingMatch,
    is_abstract_heading,
    is_appendix,
    is_distinct_title_line,
    is_italic_lettered,
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
    r"|abbreviations|(?:table of )?contents$|date(?=:)|received(?=:)|article history(?=:)"
    r"|mathematics subject classification)\b",
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
_BARE_PAGE_NUMBER = re.compile(r"\d{1,3}")


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
            if (hm.number or ln.size > body_size * 1.05 or hm.title.upper() == hm.title
                    or is_italic_lettered(ln)):
                continue
            if section_kind(hm.title) is not SectionKind.OTHER or is_other_heading(hm.title) \
                    or is_references(hm.title) or is_abstract_heading(hm.title) or is_appendix(hm.title, ""):
                continue
            del out[i]
            if (ln.bold >= 0.7 or is_distinct_title_line(ln, body_font)) \
                    and not ln.text.rstrip().endswith((".", ",", ";")):
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


@dataclass
class _Start:
    """Where the body pass begins, and what lies above it."""

    pos: int  # index of the first line for the body pass
    stop: tuple[int, float]  # (page, y) where the abstract/body starts: Structure.authors_stop
    front_end: tuple[int, float] | None  # (page, y) of the abstract heading; front matter above it is dropped


@dataclass
class _Body:
    """What the body pass reads and the state it carries from line to line."""

    lines: list[Line]
    heads: dict[int, HeadingMatch]
    paragraph_titles: set[int]
    layouts: list[PageLayout]
    body_size: float
    page_heights: list[float]
    builder: SectionBuilder
    front_end: tuple[int, float] | None
    in_refs: bool = False  # inside the references list: dropped until an appendix or back matter
    abstract_closed: bool = False  # keywords seen: later headings are not structured-abstract labels
    last_number: str | None = None  # the last accepted section number ("2.1")
    skip_block: tuple[int, int] | None = None  # (page, block) whose lines are dropped
    # drop the next body-size block on this page (keywords under a lone label); None: nothing to drop
    skip_next_block: int | None = None
    back_matter_size: float = 0.0  # font size of back matter set small (BMC), 0 when none


@dataclass
class _Cursor:
    """The line the body pass is looking at, with the facts its steps share."""

    i: int
    ln: Line
    text: str  # stripped
    bare: str  # stripped, without trailing ":" and "."
    in_abstract: bool  # the open section is the abstract
    hm: HeadingMatch | None  # heading candidate; steps may reject it (set to None)

    def continues(self, body: _Body) -> bool:
        """The line follows the previous body line closely in the same column."""
        prev = body.builder.prev
        return (
            prev is not None and prev.page == self.ln.page
            and body.layouts[self.ln.page].column_of(prev) == body.layouts[self.ln.page].column_of(self.ln)
            and 0 <= self.ln.y0 - prev.y1 < 1.5 * self.ln.size
        )


def _body_lines(flow: list[Line]) -> list[Line]:
    """The flow without furniture, captions, figure text and display equations.

    Lines that read as equations or table rows get the ``equation`` tag (later passes see it
    on the shared Line objects) and are dropped with the rest."""
    _tag_contents_entries(flow)
    lines = [ln for ln in flow if not (ln.tags & SKIP_TAGS) and "contents" not in ln.tags]
    for ln in lines:
        if is_equation(ln) or is_tabular(ln):
            ln.tags.add("equation")
    return [ln for ln in lines if "equation" not in ln.tags]


def _tag_contents_entries(flow: list[Line]) -> None:
    """Tag a table-of-contents entry whose page number stands apart on its baseline, in its
    block (JCAP's contents list, whose "Acknowledgments" and "References" entries would
    otherwise end the paper on page 2); the entries are dropped like the page numbers."""
    for ln, nxt in itertools.pairwise(flow):
        if _BARE_PAGE_NUMBER.fullmatch(nxt.text.strip()) and nxt.page == ln.page and nxt.block == ln.block \
                and abs(nxt.y0 - ln.y0) < 0.5 * ln.size and nxt.x0 > ln.x1 + 3 * ln.size:
            ln.tags.add("contents")
    for ln, nxt in itertools.pairwise(flow):  # and the list's own label, so that no block after it is dropped
        if "contents" in nxt.tags and re.fullmatch(r"(?:table of )?contents", ln.text.strip(), re.IGNORECASE):
            ln.tags.add("contents")


def _first_body_heading(lines: list[Line], heads: dict[int, HeadingMatch], body_size: float) -> int | None:
    """Index of the first heading on pages 0-2 that opens the body (numbered, a known kind or the
    references), not set small: everything before it is front matter or an unheaded abstract."""
    return next(
        (i for i, hm in sorted(heads.items()) if lines[i].page <= 2 and _starts_body(hm)
         and not _is_small(lines[i], body_size)),
        None,
    )


def _abstract_heading_index(lines: list[Line], heads: dict[int, HeadingMatch],
                            first_heading: int | None) -> int | None:
    """Index of an "Abstract" heading (or run-in "Abstract." line) on the first two pages.

    One found after the first body heading of a known kind is not a front-matter abstract
    (e.g. a paper that discusses abstracts), so it does not count."""
    start = None
    for i, ln in enumerate(lines):
        if ln.page > 1:
            break
        if is_abstract_heading(ln.text) or (_RUN_IN_ABSTRACT.match(ln.text) and ln.page <= 1):
            start = i
            break
    if (start is not None and first_heading is not None and first_heading < start
            and section_kind(heads[first_heading].title) is not SectionKind.OTHER):
        return None
    return start


def _open_headed_abstract(builder: SectionBuilder, lines: list[Line], start: int) -> _Start:
    """Open the abstract at its heading; the text of a run-in "Abstract. We ..." line is kept.
    The body pass starts below the heading and drops front matter above it."""
    abstract_line = lines[start]
    builder.open_section("Abstract", SectionKind.ABSTRACT, 1, "", abstract_line.page, abstract_line.size)
    m = _RUN_IN_ABSTRACT.match(abstract_line.text)
    if m and not is_abstract_heading(abstract_line.text):
        builder.add_body(tail(abstract_line, m.end()))
    at = (abstract_line.page, abstract_line.y0)
    return _Start(start + 1, at, at)


def _bold_lead(prose: list[list[Line]]) -> list[Line] | None:
    """The first prose block when it is set in bold and the prose blocks after it are not: an abstract
    set apart from an unheaded introduction."""
    if len(prose) < 2:
        return None

    def bold(block: list[Line]) -> float:
        return sum(ln.bold * len(ln.text) for ln in block) / max(1, sum(len(ln.text) for ln in block))

    first, rest = prose[0], prose[1:]
    return first if bold(first) >= 0.7 and all(bold(b) < 0.3 for b in rest) else None


def _abstract_of_block(builder: SectionBuilder, block: list[Line]) -> None:
    """Open the abstract with the lines of an unheaded prose block."""
    builder.open_section("Abstract", SectionKind.ABSTRACT, 1, "", block[0].page, block[0].size)
    for ln in block:
        _add_body(builder, ln)


def _open_unheaded_start(builder: SectionBuilder, lines: list[Line], first_heading: int | None,
                         body_size: float) -> _Start:
    """Without an abstract heading: a first prose block set in bold before prose that is not is the
    abstract, and the prose after it an untitled introduction (:func:`_bold_lead`); otherwise the last
    prose block of the first page before the first heading is the abstract; else the body starts at the
    first heading, or at the first prose block, or at the top."""
    end = first_heading if first_heading is not None else len(lines)
    front = [ln for ln in lines[:end] if ln.page <= 1 and ln.size >= 0.7 * body_size]
    prose = [b for b in _blocks(front) if _is_prose_block(b)]
    lead = _bold_lead(prose)
    if lead is not None and first_heading is not None:
        # Nature's articles: the abstract set in bold, then the introduction without a heading
        _abstract_of_block(builder, lead)
        intro = prose[prose.index(lead) + 1][0]
        builder.open_section("", SectionKind.INTRODUCTION, 1, "", intro.page)  # no heading size: top level
        return _Start(lines.index(intro), (lead[0].page, lead[0].y0), None)
    if prose and first_heading is not None:
        block = prose[-1]
        _abstract_of_block(builder, block)
        return _Start(end, (block[0].page, block[0].y0), None)
    if first_heading is not None:
        return _Start(first_heading, (lines[first_heading].page, lines[first_heading].y0), None)
    if prose:
        pos = lines.index(prose[0][0])
        return _Start(pos, (lines[pos].page, lines[pos].y0), None)
    return _Start(0, (0, 0.0), None)


def _open_body(builder: SectionBuilder, lines: list[Line], heads: dict[int, HeadingMatch],
               body_size: float) -> _Start:
    """Find where the body starts (the abstract, or the first real heading) and open the
    abstract section when there is one; front matter before it is dropped."""
    first_heading = _first_body_heading(lines, heads, body_size)
    start = _abstract_heading_index(lines, heads, first_heading)
    if start is not None:
        return _open_headed_abstract(builder, lines, start)
    return _open_unheaded_start(builder, lines, first_heading, body_size)


# --- the body pass: each step takes the current line and returns how many lines it used,
# --- or None to leave the line to the next step ------------------------------------------


def _skip_marked_block(body: _Body, cur: _Cursor) -> int | None:
    """Drop the rest of a block marked as footnote or keywords, and the keyword block that
    follows a stand-alone label; a body-size line ends the marked block."""
    ln = cur.ln
    if body.skip_block is not None and (ln.page, ln.block) == body.skip_block:
        return 1
    if body.skip_next_block is not None and ln.page != body.skip_next_block:
        body.skip_next_block = None  # the keywords were set small and dropped as such: keep the next page
    if body.skip_next_block is not None and not _is_small(ln, 0.9 * body.body_size):
        body.skip_block = (ln.page, ln.block)
        body.skip_next_block = None
        return 1
    if not _is_small(ln, body.body_size):
        body.skip_block = None
    return None


def _skip_toc_entry(body: _Body, cur: _Cursor) -> int | None:
    """Drop a table-of-contents entry ("2.1 PageRank ...... 4"): a wide gap before a page number."""
    ln = cur.ln
    if _TOC_LINE.search(cur.text) and ln.gaps and ln.gaps[-1] >= len(ln.text) - 4:
        return 1
    return None


def _skip_front_matter(body: _Body, cur: _Cursor) -> int | None:
    """Drop front matter above the abstract heading on its page (authors side by side,
    affiliations) that the reading order put after it."""
    ln = cur.ln
    if body.front_end is not None and ln.page == body.front_end[0] and ln.y1 <= body.front_end[1] + 1:
        return 1
    return None


def _skip_footnote(body: _Body, cur: _Cursor) -> int | None:
    """Drop a footnote in the lower part of the page (a marker, or a small note number), with
    the rest of its block: some are set at body size, so the size test alone misses them."""
    ln, text, i = cur.ln, cur.text, cur.i
    if ln.y0 > 0.65 * body.page_heights[ln.page] and (_FOOTNOTE.match(text) or (
            _NUMBERED_NOTE.match(text) and ln.size < 0.97 * body.body_size
            and (ln.first_in_block or (i > 0 and body.lines[i - 1].size < 0.97 * body.body_size)))):
        body.skip_block = (ln.page, ln.block)
        return 1
    return None


def _skip_keywords(body: _Body, cur: _Cursor) -> int | None:
    """Drop keywords, index terms, dates and similar labelled front-matter blocks; they close
    the abstract for structured-abstract labels."""
    ln, text = cur.ln, cur.text
    if _KEYWORDS.match(text) and (cur.in_abstract or ln.page <= 1):
        body.skip_block = (ln.page, ln.block)
        body.abstract_closed = True
        nxt = body.lines[cur.i + 1] if cur.i + 1 < len(body.lines) else None
        in_its_block = nxt is not None and (nxt.page, nxt.block) == (ln.page, ln.block)
        if _KEYWORDS.fullmatch(text.rstrip(":.—- ")) and not in_its_block:
            body.skip_next_block = ln.page  # the label stands alone; the keywords follow as a block
        return 1
    return None


def _references_heading(body: _Body, cur: _Cursor) -> int | None:
    """A short "References" line starts the references list, which is left out."""
    _, title = split_number(cur.bare, allow_letters=body.in_refs)
    if is_references(title) and len(cur.text) < 40 and not _shares_its_row(body, cur):
        body.in_refs = True
        return 1
    return None


def _shares_its_row(body: _Body, cur: _Cursor) -> bool:
    """Another line beside this one in its column: a table's header cell ("Reference", "Year of
    publication", ...), not a heading, which stands alone on its row."""
    ln, layout = cur.ln, body.layouts[cur.ln.page]
    for j in (cur.i - 2, cur.i - 1, cur.i + 1, cur.i + 2):
        other = body.lines[j] if 0 <= j < len(body.lines) else None
        if other is None or other.page != ln.page or layout.column_of(other) != layout.column_of(ln):
            continue
        overlap = min(other.y1, ln.y1) - max(other.y0, ln.y0)
        if overlap > 0.5 * ln.size and (other.x0 >= ln.x1 or other.x1 <= ln.x0):
            return True
    return False


def _inside_references(body: _Body, cur: _Cursor) -> int | None:
    """Inside the references every line is dropped; a styled back-matter heading
    (acknowledgements) or an appendix heading after them opens an ``other`` section."""
    if not body.in_refs:
        return None
    ln, bare, hm = cur.ln, cur.bare, cur.hm
    styled = hm is not None or ln.bold >= 0.7 or ln.size > body.body_size * 1.08
    if BACK_MATTER.match(bare) and ln.first_in_block and len(ln.runs) == 1 \
            and not _is_small(ln, body.body_size):
        body.in_refs = False  # acknowledgements after the references
        body.builder.open_section(clean_text(bare), SectionKind.OTHER, 1, "", ln.page, ln.size)
    elif styled and not _is_small(ln, body.body_size):
        number, title = split_number(bare, allow_letters=True)
        if is_appendix(title, number) and len(title) < 100 and title[:1].isupper():
            body.in_refs = False
            body.last_number = number or "A"
            body.builder.open_section(title, SectionKind.OTHER, level_of(number), number, ln.page, ln.size)
    return 1


def _small_back_matter(body: _Body, cur: _Cursor) -> int | None:
    """Back matter set small (BMC: competing interests, contributions): its heading opens an
    ``other`` section and the small lines after it, at its size, are its text."""
    ln, bare = cur.ln, cur.bare
    if _is_small(ln, body.body_size) and ln.size >= 0.65 * body.body_size and BACK_MATTER.match(bare) \
            and (ln.first_in_block or ln.bold >= 0.7) and len(bare) < 60:
        body.builder.open_section(clean_text(bare), SectionKind.OTHER, 1, "", ln.page, ln.size)
        body.back_matter_size = ln.size
        return 1
    sections = body.builder.sections
    if _is_small(ln, body.body_size) and body.back_matter_size and ln.size >= body.back_matter_size - 0.6 \
            and sections and sections[-1].size == body.back_matter_size:
        body.builder.add_body(ln)
        return 1
    return None


def _skip_small_text(body: _Body, cur: _Cursor) -> int | None:
    """Drop small lines (footnotes, figure text, side notes), except a numbered heading in bold or in
    small capitals (as tall as a body line) and abstract text set a little small that follows on from the
    abstract."""
    ln, hm = cur.ln, cur.hm
    numbered_heading = hm is not None and bool(hm.number) and (ln.bold >= 0.7
                                                                or ln.height >= 0.97 * body.body_size)
    if _is_small(ln, body.body_size) and not numbered_heading:
        prev = body.builder.prev
        abstract_text = cur.in_abstract and ln.size >= 0.75 * body.body_size and (
            prev is None or (cur.continues(body) and abs(prev.size - ln.size) < 0.6))
        if not abstract_text:
            return 1
    return None


def _demote_structured_label(body: _Body, cur: _Cursor) -> int | None:
    """A structured-abstract label ("Background", "Methods") inside the abstract stays in the
    abstract rather than opening a section."""
    hm, ln = cur.hm, cur.ln
    if hm is not None and cur.in_abstract and not body.abstract_closed and not hm.number \
            and _STRUCTURED_LABELS.match(hm.title) and ln.size <= body.body_size * 1.05 \
            and (body.builder.prev is None or cur.continues(body)):
        cur.hm = None
    return None


def _run_in_section(body: _Body, cur: _Cursor) -> int | None:
    """A numbered run-in heading ("2.1. Centrality. In this method ...") that follows the last
    section number opens a section; the text after the title is its first body text."""
    hm, ln, i, lines = cur.hm, cur.ln, cur.i, body.lines
    if hm is None or hm.number:
        bx0, bx1 = body.layouts[ln.page].column_bounds(body.layouts[ln.page].column_of(ln))
        ri = run_in_heading(ln, lines[i + 1] if i + 1 < len(lines) else None,
                            wide=ln.width >= 0.55 * (bx1 - bx0))
        if ri is not None and plausible_next(ri[0], body.last_number):
            number, title, used, body_at = ri
            body.last_number = number
            body.builder.open_section(clean_text(title), section_kind(title), level_of(number), number,
                                      ln.page, ln.size)
            rest = tail(lines[i + used - 1], body_at)
            if rest.text:
                body.builder.add_body(rest)
            return used
    return None


def _check_numbering(body: _Body, cur: _Cursor) -> int | None:
    """A numbered heading must follow the last section number (a bold body-size one may also
    jump); otherwise it is a numbered list item, not the next section."""
    hm, ln = cur.hm, cur.ln
    if hm is not None and hm.number:
        if plausible_next(hm.number, body.last_number, strict=not hm.styled) or (
                hm.styled and plausible_next(hm.number, body.last_number) is False and ln.bold >= 0.7
                and ln.size >= body.body_size):
            body.last_number = hm.number
        else:
            cur.hm = None
    return None


def _abstract_section(body: _Body, cur: _Cursor) -> int | None:
    """An "Abstract" heading in the body (no front-matter abstract found) opens the abstract."""
    hm, ln = cur.hm, cur.ln
    if hm is not None and is_abstract_heading(hm.title):
        body.builder.open_section("Abstract", SectionKind.ABSTRACT, 1, "", ln.page, ln.size)
        return 1
    return None


def _wrapped_title(body: _Body, i: int, title: str) -> tuple[str, int]:
    """The heading title with up to two following lines that continue it (same size and
    weight, just below, not numbered, short, no full stop; bold, larger, or in small capitals), and the
    index after it."""
    lines, ln = body.lines, body.lines[i]
    j = i + 1
    cx0, cx1 = body.layouts[ln.page].column_bounds(body.layouts[ln.page].column_of(ln))
    # small capitals (IEEE): an all-capitals line as tall as a body line continues on another such line
    small_caps = ln.text.upper() == ln.text and ln.height >= 0.97 * body.body_size
    while j < len(lines) and j - i <= 2 and ln.width >= 0.55 * (cx1 - cx0):
        nxt = lines[j]
        if (nxt.page == ln.page and 0 <= nxt.y0 - ln.y1 <= 0.8 * ln.size + (j - i - 1) * ln.size * 1.3
                and abs(nxt.size - ln.size) < 0.3 and (nxt.bold >= 0.7) == (ln.bold >= 0.7)
                and (ln.bold >= 0.7 or ln.size > body.body_size * 1.08
                     or (small_caps and nxt.text.upper() == nxt.text))
                and not split_number(nxt.text)[0] and len(nxt.text) < 80
                and not nxt.text.rstrip().endswith(".")):
            title = f"{title} {nxt.text.strip()}"
            j += 1
        else:
            break
    return title, j


def _heading_section(body: _Body, cur: _Cursor) -> int | None:
    """A heading that survived the checks above opens a section (a title wrapped onto the next
    lines is joined)."""
    hm, ln = cur.hm, cur.ln
    if hm is None:
        return None
    title, j = _wrapped_title(body, cur.i, hm.title)
    title = _italic_title_tail(body, cur.i, j, title)
    body.builder.open_section(clean_text(title), section_kind(title), hm.level, hm.number, ln.page, ln.size)
    return j - cur.i


def _italic_title_tail(body: _Body, i: int, j: int, title: str) -> str:
    """An italic heading whose title runs on into the next line's italic run-in words ("3.4. Effect of
    ... Fragments on" / "Enzymatic Activity of Complex II. Finally, we ..."): those words end the title (the
    rest of that line is body text, where the run-in title is cut again)."""
    ln = body.lines[i]
    if j >= len(body.lines) or ln.italic < 0.9 or title.rstrip().endswith((".", ":")):
        return title
    nxt = body.lines[j]
    if nxt.page != ln.page or not 0 <= nxt.y0 - ln.y1 <= 0.8 * ln.size:
        return title
    cut = run_in_title_end(nxt)
    if cut is None:
        return title
    return f"{title} {nxt.text[:cut].strip(' .:')}"


def _paragraph_title(body: _Body, cur: _Cursor) -> int | None:
    """A stand-alone bold paragraph title is dropped; the line after it opens a paragraph."""
    if cur.i in body.paragraph_titles:
        body.builder.prev = None
        return 1
    return None


def _body_text(body: _Body, cur: _Cursor) -> int | None:
    """Anything left is body text of the open section."""
    _add_body(body.builder, cur.ln)
    return 1


_BODY_STEPS: tuple[Callable[[_Body, _Cursor], int | None], ...] = (
    _skip_marked_block,
    _skip_toc_entry,
    _skip_front_matter,
    _skip_footnote,
    _skip_keywords,
    _references_heading,
    _inside_references,
    _small_back_matter,
    _skip_small_text,
    _demote_structured_label,
    _run_in_section,
    _check_numbering,
    _abstract_section,
    _heading_section,
    _paragraph_title,
    _body_text,
)


def _read_body(body: _Body, pos: int) -> None:
    """The body pass: from ``pos`` on, each line goes through ``_BODY_STEPS`` in order until a
    step uses it (and maybe the lines after it)."""
    lines = body.lines
    i = pos
    while i < len(lines):
        ln = lines[i]
        text = ln.text.strip()
        current = body.builder.sections[-1] if body.builder.sections else None
        cur = _Cursor(i, ln, text, text.rstrip(":.").strip(),
                      current is not None and current.kind is SectionKind.ABSTRACT, body.heads.get(i))
        for step in _BODY_STEPS:
            used = step(body, cur)
            if used is not None:
                i += used
                break


def build_structure(
    flow: list[Line],
    layouts: list[PageLayout],
    body_size: float,
    split: Callable[[str], list[tuple[int, int]]],
    all_lines: list[Line],
    body_font: str = "",
    page_heights: list[float] | None = None,
) -> Structure:
    """Sections and sentences from the page flow: filter the lines, find heading candidates,
    open the abstract (or find where the body starts), read the body line by line, then settle
    heading levels and kinds and split the paragraphs into sentences."""
    if page_heights is None:
        page_heights = [1e9] * len(layouts)
    lines = _body_lines(flow)
    heads, paragraph_titles = _heading_matches(lines, body_size, body_font)
    builder = SectionBuilder(layouts, body_size, inner_compounds(ln.text for ln in lines))
    start = _open_body(builder, lines, heads, body_size)
    _read_body(_Body(lines, heads, paragraph_titles, layouts, body_size, page_heights, builder,
                     start.front_end), start.pos)
    settle_levels_and_kinds(builder.sections)
    sections, sentences = to_sentences(builder.sections, split, all_lines)
    return Structure(sections, sentences, start.stop)
