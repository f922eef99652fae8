"""Markdown drafts (CommonMark/pandoc as scientific authors write them): headings are ``#`` lines;
sentences read without the markup: emphasis
markers, links (their text kept), images, inline code ticks, HTML tags and comments, footnote marks,
tables, code blocks and front matter go; pandoc citations (``[@smith2020; @lee2021]``) become "[1, 2]";
inline math ``$x$`` reads as text and display math ``$$ ... $$`` as "[equation]". The pane shows and
saves the Markdown itself (``plain`` is the source)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.draft_formats.reading import ReadingBuilder, ReadingHeading, assemble_draft
from core.draft_formats.types import ParsedDraft

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_DISPLAY_MATH = re.compile(r"^\s{0,3}\$\$")
_SKIPPED_LINE = re.compile(r"^\s{0,3}(?:\||\[\^[^\]]+\]:|\[[^\]]+\]:\s|(?:[-*_]\s*){3,}$|(?:=+|-+)\s*$)")
_LIST_MARK = re.compile(r"\s{0,12}(?:[-*+]|\d{1,3}[.)])\s+")
_QUOTE_MARK = re.compile(r"\s{0,3}(?:>\s?)+")
_KEY = r"[\w][\w:.#$%&+?<>~/-]*"
_INLINE = re.compile(
    r"(?P<comment><!--.*?-->)"
    r"|(?P<image>!\[[^\]\n]*\]\([^)\n]*\))"
    rf"|(?P<cite>\[[^\[\]\n]*-?@{_KEY}[^\[\]\n]*\])"
    r"|(?P<footnote>\[\^[^\]\n]+\])"
    r"|\[(?P<link>[^\[\]\n]+)\](?:\([^)\n]*\)|\[[^\]\n]*\])"
    r"|`(?P<code>[^`\n]+)`"
    r"|(?<!\$)\$(?P<math>[^$\n]+?)\$(?!\$)"
    r"|(?P<escape>\\[\\`*_{}\[\]()#+\-.!$<>|])"
    r"|(?P<tag></?[A-Za-z][^>\n]*>)"
    r"|(?P<emph>\*{1,3}(?=\S)|(?<=\S)\*{1,3}|(?<!\w)_{1,3}(?=\S)|(?<=\S)_{1,3}(?!\w))"
)
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?")
_MACRO_SPACE = re.compile(r"(\\[A-Za-z]+)(\s+)(?=[^\s{\[])")
_SCRIPT_MARK = re.compile(r"[\^_](?=\S)")
_CITE_KEY = re.compile(rf"-?@({_KEY})")


@dataclass
class CitationNumbers:
    """Numbers citation keys by first appearance, as a numeric bibliography style does."""

    numbers: dict[str, int] = field(default_factory=dict)

    def placeholder(self, keys: list[str]) -> str:
        for key in keys:
            self.numbers.setdefault(key, len(self.numbers) + 1)
        return "[" + ", ".join(str(self.numbers[key]) for key in keys) + "]" if keys else ""


def math_as_text(latex: str) -> str:
    """Inline math as plain text ("\\alpha = 0.05" → "α = 0.05"), through pylatexenc."""
    from pylatexenc.latex2text import LatexNodes2Text

    latex = _MACRO_SPACE.sub(r"\1{}\2", _DEGREES.sub("°", latex))  # "\alpha = 1": keep the space
    try:
        text = LatexNodes2Text(math_mode="text").latex_to_text(latex)
    except Exception:  # pylatexenc raises assorted errors on odd math; the raw text still reads
        text = latex
    return " ".join(_SCRIPT_MARK.sub("", text).split())


def _inline(builder: ReadingBuilder, line: str, offset: int, cites: CitationNumbers) -> None:
    """Append one line's text without its inline markup (``offset``: where the line starts)."""
    at = 0
    for match in _INLINE.finditer(line):
        builder.verbatim(line[at:match.start()], offset + at, None)
        at = match.end()
        kind = match.lastgroup
        start, end = offset + match.start(), offset + match.end()
        if kind == "cite":
            keys = _CITE_KEY.findall(match.group())
            builder.replaced(cites.placeholder(keys), start, end, None)
        elif kind in ("link", "code"):
            builder.verbatim(match.group(kind), offset + match.start(kind), None)
        elif kind == "math":
            builder.replaced(math_as_text(match.group("math")), start, end, None)
        elif kind == "escape":
            builder.replaced(match.group()[1], start, end, None)
    builder.verbatim(line[at:], offset + at, None)


def _front_matter(lines: list[str]) -> tuple[int, str | None]:
    """(lines of a leading YAML block, its title)."""
    if not lines or lines[0].rstrip() != "---":
        return 0, None
    title = None
    for number, line in enumerate(lines[1:], start=1):
        if line.rstrip() in ("---", "..."):
            return number + 1, title
        match = re.match(r"title:\s*[\"']?(.*?)[\"']?\s*$", line)
        if match and title is None:
            title = re.sub(r"[*_`]", "", match.group(1)) or None
    return 0, None  # not closed: not front matter


def parse_markdown(text: str) -> ParsedDraft:
    from core.drafts import heading_of

    builder = ReadingBuilder()
    cites = CitationNumbers()
    lines = text.splitlines(keepends=True)
    skip, title = _front_matter(lines)
    offset = sum(len(line) for line in lines[:skip])
    fence: str | None = None
    math_start: int | None = None
    math_text = ""
    in_comment = False
    for line in lines[skip:]:
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        here = offset
        offset += len(line)
        if fence is not None:  # inside a code block
            if body.strip().startswith(fence):
                fence = None
            builder.paragraph_break(here, None)
            continue
        if math_start is not None:
            math_text += body
            if body.rstrip().endswith("$$"):
                closed = math_text.rstrip()[:-2].rstrip().endswith(".")
                builder.replaced("[equation]" + ("." if closed else ""), math_start, here + len(body), None)
                builder.verbatim(ending, here + len(body), None)
                math_start = None
            continue
        if in_comment:
            in_comment = "-->" not in body
            continue
        if body.lstrip().startswith("<!--") and "-->" not in body:
            in_comment = True
            continue
        match = _FENCE.match(body)
        if match:
            fence = match.group(1)[:3]
            builder.paragraph_break(here, None)
            continue
        if _DISPLAY_MATH.match(body):
            rest = body.strip()[2:]
            if rest.rstrip().endswith("$$"):  # $$ ... $$ on one line
                closed = rest.rstrip()[:-2].rstrip().endswith(".")
                builder.replaced("[equation]" + ("." if closed else ""), here, here + len(body), None)
                builder.verbatim(ending, here + len(body), None)
            else:
                math_start, math_text = here, rest
            continue
        if _SKIPPED_LINE.match(body):
            builder.paragraph_break(here, None)
            continue
        found = heading_of(body)
        if found is not None and found[0] > 0:  # a ``#`` line (a bare "Results" line is text here)
            builder.paragraph_break(here, None)
            start = builder.length
            builder.verbatim(body, here, None)
            builder.headings.append(ReadingHeading(start, builder.length, found[0], found[1], here, None))
            builder.verbatim(ending, here + len(body), None)
            builder.paragraph_break(here + len(line), None)
            continue
        cut = 0
        for mark in (_QUOTE_MARK, _LIST_MARK):
            match = mark.match(body, cut)
            if match:
                if mark is _LIST_MARK:
                    builder.paragraph_break(here, None)
                cut = match.end()
        _inline(builder, body[cut:], here + cut, cites)
        builder.verbatim(ending, here + len(body), None)
    return assemble_draft("md", builder, text, plain=text, title=title)
