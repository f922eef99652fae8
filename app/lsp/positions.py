"""Character offsets into a document's text and LSP positions (line, character) both ways.

LSP lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (never at the other characters ``str.splitlines``
breaks at), and a position's character counts code units of the encoding the client and server
agreed on: UTF-16 unless the client offered another (``general.positionEncodings``). One map per
text version: line starts are found once, so each conversion is a bisection plus one line's prefix.
"""

from __future__ import annotations

import operator
import re
from bisect import bisect_right

_LINE_END = re.compile(r"\r\n|\r|\n")
ENCODINGS = ("utf-16", "utf-8", "utf-32")


def _units(text: str, encoding: str) -> int:
    if text.isascii() or encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class PositionMap:
    """Positions of one text in one encoding ("utf-16", "utf-8" or "utf-32")."""

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        if encoding not in ENCODINGS:
            raise ValueError(f"unknown position encoding {encoding!r}")
        self.text = text
        self.encoding = encoding
        self._starts = [0, *(m.end() for m in _LINE_END.finditer(text))]

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def line_bounds(self, line: int) -> tuple[int, int]:
        """(start, end) offsets of ``line`` without its line ending."""
        start = self._starts[line]
        if line + 1 < len(self._starts):
            end = self._starts[line + 1]
            while end > start and self.text[end - 1] in "\r\n":
                end -= 1
            return start, end
        return start, len(self.text)

    def longest_line(self) -> tuple[int, int]:
        """(characters, line) of the longest line (its line ending left out; the first if several)."""
        ends = [*self._starts[1:], len(self.text)]
        lengths = list(map(operator.sub, ends, self._starts))  # line endings included: close enough
        line = lengths.index(max(lengths))
        start, end = self.line_bounds(line)
        return end - start, line

    def position(self, offset: int) -> tuple[int, int]:
        """(line, character) of a character offset (clamped to the text)."""
        offset = min(max(offset, 0), len(self.text))
        line = bisect_right(self._starts, offset) - 1
        start, end = self.line_bounds(line)
        return line, _units(self.text[start:min(offset, end)], self.encoding)

    def offset(self, line: int, character: int) -> int:
        """The character offset of a position; a line past the end is the end of the text, a character
        past the end of its line is the line's end (as the LSP says a client may send)."""
        if line < 0:
            return 0
        if line >= len(self._starts):
            return len(self.text)
        start, end = self.line_bounds(line)
        if character <= 0:
            return start
        text = self.text[start:end]
        if text.isascii() or self.encoding == "utf-32":
            return start + min(character, len(text))
        units = 0
        for index, char in enumerate(text):
            units += _units(char, self.encoding)
            if units > character:
                return start + index
            if units == character:
                return start + index + 1
        return end
