"""Re-reading only the paragraph an edit is in.

Reading a whole LaTeX draft (pylatexenc) takes about 300 ms for a 40,000-character paper on a loaded
2-core machine: too slow for every keystroke. An edit inside one paragraph changes nothing outside it
in the common case, so :func:`reread` finds the block of source between the blank lines around the
edit, reads that block alone before and after the edit, and splices the new block's sentences into
the previous :class:`app.lsp.drafts.Document` (later ranges shifted by the edit's length).

The splice is used only when it can vouch for itself, else the caller reads the whole text:
- the edit is one contiguous change that stays inside one block (the text between the blank lines or
  heading lines around it; no blank line in the block before or after the edit, so no paragraph was
  split or joined), not in the first block (a preamble, front matter);
- neither block holds anything whose effect reaches past it: a heading, ``\\appendix``, a macro
  definition, ``\\input``/``\\include``, the document environment's edges (LaTeX); a code fence, a
  math block, an HTML comment, a heading or setext underline (Markdown);
- the old block read alone gives exactly the sentences the whole read gave there (same ranges, same
  text with numbers masked: a citation is "[1]" alone and "[7]" in the paper), so the block does not
  depend on what surrounds it (an environment that spans blank lines, say);
- both blocks read without error (an unbalanced ``{`` while typing: the whole read reports it).

What the splice does not redo: citation and reference placeholders are numbered within the edited
paragraph ("[1]"), and numbers elsewhere that an edit shifts (a new ``\\label``, a new citation) are
not renumbered, until the next whole read (a label may then differ slightly); ranges are exact.
"""

from __future__ import annotations

import re
from dataclasses import replace

from app.lsp.drafts import Document, DocumentUnreadable, Sentence, paragraphs, read_parts

_BLANK = re.compile(r"\n[ \t\f\v]*\r?\n|\r[ \t\f\v]*\r")
_NUMBERS = re.compile(r"\d+|\?\?")
_TEX_REACHING = re.compile(
    r"\\(?:part|chapter|(?:sub)*section|(?:sub)?paragraph|appendix|input|include|subfile|newcommand|"
    r"renewcommand|providecommand|def|let|makeatletter|documentclass|usepackage|bibliography|"
    r"(?:begin|end)\s*\{(?:document|abstract|acknowledg\w*)\})(?![A-Za-z])")
_MD_REACHING = re.compile(r"```|~~~|<!--|-->|\$\$|^\s{0,3}#|^\s{0,3}(?:=+|-+)\s*$", re.MULTILINE)


def reread(previous: Document, old_text: str, new_text: str) -> Document | None:
    """``new_text``'s document spliced from ``previous`` (the document of ``old_text``), or None when
    the splice cannot vouch for the result."""
    if old_text == new_text:
        return previous
    prefix = _common_prefix(old_text, new_text)
    suffix = _common_suffix(old_text, new_text, prefix)
    old_change_end = len(old_text) - suffix
    # The block: between the blank lines around the change, and after (before) the heading line
    # nearest above (below) it, so a paragraph right under its heading is a block of its own.
    start = max([_block_start(old_text, prefix),
                 *(h.end for h in previous.headings if h.end <= prefix and h.end > h.start)])
    old_end = min([_block_end(old_text, old_change_end),
                   *(h.start for h in previous.headings if h.start >= old_change_end)])
    if start <= 0 or old_end < old_change_end:
        return None
    delta = len(new_text) - len(old_text)
    new_end = old_end + delta
    old_block, new_block = old_text[start:old_end], new_text[start:new_end]
    if _BLANK.search(old_block) or _BLANK.search(new_block):
        return None  # a paragraph split or joined
    if _reaches_out(previous.format, old_block) or _reaches_out(previous.format, new_block):
        return None
    if previous.format == "tex":
        opening = old_text.find("\\begin{document}")
        if opening >= 0 and start <= opening:
            return None  # the preamble
    try:
        old_alone, old_headings, _ = read_parts(old_block, previous.format)
        new_alone, new_headings, _ = read_parts(new_block, previous.format)
    except DocumentUnreadable:
        return None
    if old_headings or new_headings:
        return None
    inside = [n for n, s in enumerate(previous.sentences) if s.start < old_end and s.end > start]
    if any(previous.sentences[n].start < start or previous.sentences[n].end > old_end for n in inside):
        return None  # a sentence reaches over the block's edge
    if not _same_reading(old_alone, [previous.sentences[n] for n in inside], start):
        return None
    first = inside[0] if inside else _first_after(previous, start)
    heading, kind = _context_at(previous, first, start)
    sentences = [*previous.sentences[:first],
                 *(Sentence(s.text, s.start + start, s.end + start, heading, kind) for s in new_alone),
                 *(replace(s, start=s.start + delta, end=s.end + delta)
                   for s in previous.sentences[first + len(inside):])]
    headings = tuple(h if h.start < start else replace(h, start=h.start + delta, end=h.end + delta)
                     for h in previous.headings)
    return Document(previous.format, tuple(sentences), headings, tuple(paragraphs(new_text, sentences)),
                    previous.reader)


def _common_prefix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    low, high = 0, limit  # the longest equal prefix, by halving (string slices compare in C)
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str, prefix: int) -> int:
    limit = min(len(a), len(b)) - prefix
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle:] == b[len(b) - middle:]:
            low = middle
        else:
            high = middle - 1
    return low


def _block_start(text: str, position: int) -> int:
    """Just after the last blank line that ends at or before ``position`` (0 when none)."""
    start = 0
    for match in _BLANK.finditer(text, max(0, position - 20_000), position):
        start = match.end()
    return start


def _block_end(text: str, position: int) -> int:
    """Where the first blank line at or after ``position`` starts (the end of the text when none)."""
    match = _BLANK.search(text, position)
    return match.start() if match else len(text)


def _reaches_out(fmt: str, block: str) -> bool:
    if fmt == "tex":
        return bool(_TEX_REACHING.search(block))
    return bool(_MD_REACHING.search(block))


def _same_reading(alone: list[Sentence], whole: list[Sentence], offset: int) -> bool:
    if len(alone) != len(whole):
        return False
    return all(a.start + offset == w.start and a.end + offset == w.end
               and _NUMBERS.sub("#", a.text) == _NUMBERS.sub("#", w.text)
               for a, w in zip(alone, whole, strict=True))


def _first_after(document: Document, offset: int) -> int:
    for index, sentence in enumerate(document.sentences):
        if sentence.start >= offset:
            return index
    return len(document.sentences)


def _context_at(document: Document, index: int, offset: int) -> tuple[int, str | None]:
    """The heading in force at ``offset`` and the section kind its sentences carry."""
    heading = -1
    for number, found in enumerate(document.headings):
        if found.start < offset:
            heading = number
    for sentence in (*document.sentences[index:index + 1], *document.sentences[max(0, index - 1):index]):
        if sentence.heading == heading:
            return heading, sentence.section_kind
    return heading, document.headings[heading].section_kind if heading >= 0 else None
