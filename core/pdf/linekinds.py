"""Lines that are not running text even inside the body flow: table rows that no caption
claimed, pseudo-code, and display equations."""

from __future__ import annotations

import re

from core.pdf.lines import MATH_FONT, Line

_PSEUDO_CODE = re.compile(r"^\d{1,3}:\s")
_NUMBER_TOKEN = re.compile(r"^[(\[]?[-+−±~<>≈]?\d[\d.,:/%×x]*[)\]*†‡]?[,;]?$")
_EQUATION_NUMBER_AT_END = re.compile(r"\(\s*[A-Z]?\d{1,3}(?:\.\d{1,2})?[a-z]?\s*\)\s*$")
_MATH_CHARS = set("=+−×∑∏∫≤≥∈∀∃→←⇒∂∇αβγδθλμσφψωΣΠΔΩ^_|‖{}")


def is_tabular(line: Line) -> bool:
    """A row of numbers (a table that no caption claimed) or a line of pseudo-code."""
    text = line.text
    if _PSEUDO_CODE.match(text):
        return True
    tokens = text.split()
    numeric = sum(1 for t in tokens if _NUMBER_TOKEN.match(t))
    return numeric >= 3 and numeric >= 0.4 * len(tokens)


def is_equation(line: Line) -> bool:
    text = line.text
    if sum(1 for c in text[1:] if ord(c) < 32 or 0x80 <= ord(c) < 0xA0) >= 1 and len(text) < 60:
        return True  # glyphs without unicode (math fonts with broken encodings)
    if line.math >= 0.3 or MATH_FONT.search(line.font):
        words = re.findall(r"[A-Za-z]{4,}", text)
        if len(words) <= 2 or (line.math >= 0.5 and len(words) <= 4):
            return True
    numbered = _EQUATION_NUMBER_AT_END.search(text) and ("=" in text or line.math >= 0.15)
    if numbered and len(re.findall(r"[A-Za-z]{4,}", text)) <= 3:
        return True  # "v = Transformer(input)[CLS], (1)"
    math = sum(1 for c in text if c in _MATH_CHARS)
    words = re.findall(r"[A-Za-z]{3,}", text)
    return math >= 2 and len(words) <= 2 and len(text) < 120
