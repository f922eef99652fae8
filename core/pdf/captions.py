"""Figure and table captions: where they start and which lines they cover."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.pdf.lines import Line

CAPTION_START = re.compile(
    r"^(?P<label>(?:Supplementary\s+|Suppl\.\s+|Extended\s+Data\s+)?"
    r"(?:Figure|FIGURE|Fig\.?|FIG\.?|Table|TABLE|Tab\.))"
    r"\s*(?P<num>S?\d{1,3}[A-Za-z]?|[IVX]{1,5})\b(?P<rest>.*)$"
)
_PUNCT_AFTER = re.compile(r"^\s*(?:[:.|—–]|-\s)")


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
    if rest.lstrip().startswith(")"):
        return None
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
