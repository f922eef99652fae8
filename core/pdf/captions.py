"""Figure and table captions: where they start and which lines they cover (:func:`find_captions` on a page's
lines in reading order; :func:`find_rotated_captions` for landscape pages)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.pdf.linekinds import is_tabular
from core.pdf.lines import Line, head, tail

CAPTION_START = re.compile(
    r"^(?P<label>(?:Supplementary\s+|Suppl\.\s+|Extended\s+Data\s+)?"
    r"(?:Figure|FIGURE|Fig\.?|FIG\.?|Table|TABLE|Tab\.))"
    r"\s*(?P<num>S?\d{1,3}[A-Za-z]?|[IVX]{1,5})\b(?P<rest>.*)$"
)
_PUNCT_AFTER = re.compile(r"^\s*(?:[:.|—–]|-\s)")
_PANEL_MENTION = re.compile(r"\.[a-z]\)?\s+[a-z]")  # "1.b shows": a panel of the figure named in a sentence


@dataclass
class Caption:
    kind: str  # "figure" | "table"
    number: str
    lines: list[Line] = field(default_factory=list)

    @property
    def page(self) -> int:
        return self.lines[0].page

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        return (
            min(ln.x0 for ln in self.lines),
            min(ln.y0 for ln in self.lines),
            max(ln.x1 for ln in self.lines),
            max(ln.y1 for ln in self.lines),
        )

    @property
    def fig_id(self) -> str:
        return ("fig" if self.kind == "figure" else "tab") + self.number


def caption_label(line: Line, body_size: float, starts_block: bool) -> tuple[str, str] | None:
    """(kind, number) when ``line`` starts a caption, else None.

    A caption starts a text block and its label is set apart: punctuation after
    the number ("Figure 3:", "Fig. 3.", "Table 2 |"), a bold label, a label in a font of
    its own, or a caption font that differs from the body.  "Figure 3 shows ..." inside a paragraph is
    a mention, not a caption, and so is a label closed by a parenthesis ("(see Supplementary Fig. 3). Next…",
    "(Fig. 15) of neurons"): a line that begins where a parenthetical reference ends. A label in print under
    0.6 of the body's size is text inside a figure (a screenshot of a paper), not a caption.
    """
    text = line.text.strip()
    m = CAPTION_START.match(text)
    if not m:
        return None
    label = m.group("label")
    number = m.group("num")
    rest = m.group("rest")
    if rest.lstrip().startswith(")") or _PANEL_MENTION.match(rest):
        return None  # "(Fig. 15) of neurons", "Figure 1.b shows an Adya-style graph …": mentions
    if line.size < 0.6 * body_size:
        return None  # print this small is text inside a figure (a picture of a page), not its caption
    kind = "table" if label.lower().startswith("tab") else "figure"
    punct = bool(_PUNCT_AFTER.match(rest)) or rest.strip() == ""
    label_len = len(text) - len(rest)
    bold_label = line.first_bold_chars >= label_len - 1 and line.first_bold_chars > 0
    # a figure's label in a font of its own, the caption text in another (a bold face not named bold);
    # figures only: table captions stay as they were (the sentence golds are anchored on them)
    font_label = (kind == "figure" and label_len - 1 <= line.first_font_chars <= label_len + 1
                  and len(rest.strip()) > 0)
    other_font = abs(line.size - body_size) >= 0.6
    if not starts_block and not (bold_label and punct):
        return None
    if not (punct or bold_label or other_font or font_label):
        return None
    # "Table 2 shows ..." in body font, no punctuation: a mention at a paragraph start
    if not punct and not bold_label and rest.strip()[:1].islower():
        return None
    if number[0] == "S":
        number = "S" + number[1:]
    return kind, number


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
    beyond = [g for g in line.gaps if tail(line, g).x0 > right + 3]
    if not beyond:  # a justified line's wide space inside the caption's column
        return line if re.search(r"[A-Za-z]{3,}", line.text) else None
    words = head(line, beyond[0])
    return words if len(re.findall(r"[A-Za-z]{3,}", words.text)) >= 3 else None


def split_side_by_side_captions(ordered: list[Line], body_size: float) -> list[Line]:
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
            right = tail(line, g)
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
                right_parts.setdefault(key, []).append(tail(line, at))
        if x is not None and last_of_block[key] == i:
            out.extend(right_parts.pop(key, []))
    return out


def find_captions(ordered: list[Line], body_size: float) -> list[Caption]:
    """The captions among one page's lines in reading order: each starts at a line :func:`caption_label`
    accepts and takes the lines that continue it (:func:`_continues_caption`), past lines beside it that
    reading order puts first (:func:`_past_lines_beside`), up to 45 lines."""
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


def find_rotated_captions(vertical: list[Line], body_size: float) -> list[Caption]:
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
