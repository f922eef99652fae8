"""Clean text built from lines, with a map from every character back to its line and x-range.

Handles ligatures (ﬁ ﬂ ﬀ ﬃ ﬄ), hyphenation at line ends (dropped inside a word,
kept in compounds such as "state-of-the-\\nart"), soft hyphens, odd and
zero-width spaces, and accents printed as separate glyphs (composed with NFC).
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field

from core.pdf.lines import Line

LIGATURES = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",
    "\ufb06": "st",
}
_LIGATURE_TABLE = str.maketrans(LIGATURES)
SPACES = set("\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f"
             "\u3000\t\n\r")
DROP = set("\u200b\u200c\u200d\u2060\ufeff\ufffd\u00ad")
HYPHENS = set("-\u2010\u2011")
# spacing accents as printed by TeX next to the base letter -> combining marks
SPACING_ACCENTS = {
    "\u00b4": "\u0301",  # acute
    "`": "\u0300",
    "\u02cb": "\u0300",
    "\u00a8": "\u0308",  # diaeresis
    "\u02c6": "\u0302",  # circumflex
    "\u02dc": "\u0303",  # tilde
    "\u02c7": "\u030c",  # caron
    "\u00b8": "\u0327",  # cedilla
    "\u02da": "\u030a",  # ring
    "\u02d8": "\u0306",  # breve
    "\u02d9": "\u0307",  # dot above
    "\u02dd": "\u030b",  # double acute
    "\u00af": "\u0304",  # macron
}
# TeX puts accents on dotless letters: "´ı" is "í"
_DOTLESS = {"\u0131": "i", "\u0237": "j"}
# second halves that make a line-end hyphen a real compound hyphen
COMPOUND_TAILS = {
    "based", "level", "specific", "aware", "art", "the", "of", "and", "or", "to", "end", "like",
    "free", "wise", "trained", "tuned", "scale", "grained", "shot", "side", "time", "term",
    "order", "dimensional", "oriented", "driven", "related", "dependent", "independent",
    "agnostic", "only", "style", "sized", "size", "world", "domain", "task", "layer", "head",
    "step", "stage", "class", "label", "known", "defined", "made", "off", "up", "down", "out",
    "in", "on", "by", "for", "with", "centric", "friendly", "intensive", "efficient",
    "sensitive", "invariant", "quality", "resource", "source", "year", "old",
    "month", "week", "day", "point", "means", "fold", "length", "range", "way", "fit",
}

_WORD_BEFORE = re.compile(r"([\w-]+)-$")
_WORD_AFTER = re.compile(r"^([A-Za-z]+)")


@dataclass
class MappedText:
    """Text plus, per character, the index of its source line (-1: inserted) and its x-range."""

    chars: list[str] = field(default_factory=list)
    line_ids: array = field(default_factory=lambda: array("i"))
    xs0: array = field(default_factory=lambda: array("f"))
    xs1: array = field(default_factory=lambda: array("f"))
    # hyphenated words seen inside lines of the same document ("predicate-argument"): a line-end
    # hyphen between the same two halves is kept
    compounds: frozenset[str] = frozenset()
    # the last line ended on a soft hyphen (U+00AD), the typesetter's mark of a word broken at the line end
    soft_break: bool = False

    @property
    def text(self) -> str:
        return "".join(self.chars)

    def __len__(self) -> int:
        return len(self.chars)

    def _push(self, ch: str, line_id: int, x0: float, x1: float) -> None:
        self.chars.append(ch)
        self.line_ids.append(line_id)
        self.xs0.append(x0)
        self.xs1.append(x1)

    def _pop(self) -> None:
        self.chars.pop()
        self.line_ids.pop()
        self.xs0.pop()
        self.xs1.pop()

    def add_line(self, line: Line) -> None:
        """Append a line, joining it to what came before (space, or de-hyphenation)."""
        text = line.text
        if self.chars:
            self._join(text)
        lid = line.index
        for i, ch in enumerate(text):
            x0, x1 = line.cx0[i], line.cx1[i]
            self._add_char(ch, lid, x0, x1)
        if self.chars and 0xD800 <= ord(self.chars[-1]) <= 0xDFFF:
            self._pop()  # a lone surrogate half at the end of the line
        while self.chars and self.chars[-1] == " ":
            self._pop()
        self.soft_break = text.rstrip().endswith("\u00ad") and bool(self.chars) and self.chars[-1].isalpha()

    def _join(self, next_text: str) -> None:
        while self.chars and self.chars[-1] == " ":
            self._pop()
        if not self.chars:
            return
        if self.soft_break and next_text.lstrip("\u00ad")[:1].isalnum():
            return  # "extracellu\u00ad" + "lar": the word goes on
        last = self.chars[-1]
        if last in HYPHENS and len(self.chars) >= 2 and self.chars[-2].isalnum():
            tail = self.text[-60:]
            m = _WORD_BEFORE.search(tail)
            before = m.group(1) if m else ""
            # the next line as it will read: "ﬁts" is "fits" ("bene-" + "ﬁts" -> "benefits")
            n = _WORD_AFTER.match(next_text[:60].translate(_LIGATURE_TABLE))
            after = n.group(1) if n else ""
            stem = before.rsplit("-", 1)[-1]
            whole = f"{stem}{after}".lower()
            written_whole = whole in self.compounds and f"{stem}-{after}".lower() not in self.compounds
            if after and after[0].islower():
                compound = (
                    "-" in before
                    or after.lower() in COMPOUND_TAILS
                    or f"{before.lower()}-{after.lower()}" in self.compounds
                    or any(c.isdigit() for c in before)
                    or (len(before) >= 2 and before[:2].isupper())
                ) and not written_whole
                if not compound:
                    self._pop()  # drop the hyphen: "repre-" + "sentation"
                return  # join without a space either way
            if after and written_whole:
                self._pop()  # "SciB-" + "ERT" where the paper writes "SciBERT" elsewhere
                return
            if after or (next_text[:1].isdigit()):
                return  # "COVID-" + "19", "Transformer-" + "XL": keep hyphen, no space
        if last == "/":
            return
        self._push(" ", -1, self.xs1[-1], self.xs1[-1])

    def _add_char(self, ch: str, lid: int, x0: float, x1: float) -> None:
        if ch in DROP:
            return
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF:  # UTF-16 halves of math letters: pair them or drop them
            if code >= 0xDC00 and self.chars and 0xD800 <= ord(self.chars[-1][-1]) <= 0xDBFF:
                high = ord(self.chars[-1])
                self.chars[-1] = chr(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00))
                self.xs1[-1] = x1
            elif code <= 0xDBFF:
                if self.chars and 0xD800 <= ord(self.chars[-1][-1]) <= 0xDBFF:
                    self._pop()
                self._push(ch, lid, x0, x1)
            return
        if self.chars and 0xD800 <= ord(self.chars[-1][-1]) <= 0xDBFF:
            self._pop()  # a lone high surrogate
        if ch in SPACES or ch == " ":
            if self.chars and self.chars[-1] != " ":
                self._push(" ", lid, x0, x1)
            return
        lig = LIGATURES.get(ch)
        if lig is not None:
            w = (x1 - x0) / len(lig)
            for k, c in enumerate(lig):
                self._push(c, lid, x0 + k * w, x0 + (k + 1) * w)
            return
        if unicodedata.combining(ch) and self.chars and self.chars[-1].isalpha():
            composed = unicodedata.normalize("NFC", _DOTLESS.get(self.chars[-1], self.chars[-1]) + ch)
            if len(composed) == 1:
                self.chars[-1] = composed
                return
        accent = SPACING_ACCENTS.get(ch)
        if accent is not None:
            # accent printed after its letter, overlapping it
            if self.chars and self.chars[-1].isalpha() and x0 < self.xs1[-1] - 0.5:
                composed = unicodedata.normalize("NFC", _DOTLESS.get(self.chars[-1], self.chars[-1]) + accent)
                if len(composed) == 1:
                    self.chars[-1] = composed
                    return
            self._push(ch, lid, x0, x1)  # maybe composed with the next letter
            return
        if self.chars and self.chars[-1] in SPACING_ACCENTS and ch.isalpha():
            composed = unicodedata.normalize("NFC", _DOTLESS.get(ch, ch) + SPACING_ACCENTS[self.chars[-1]])
            if len(composed) == 1:
                self._pop()
                # a space the extractor put before the accent glyph, not between words: "( ˇR"
                if len(self.chars) >= 2 and self.chars[-1] == " " and x0 - self.xs1[-2] < 1.5:
                    self._pop()
                self._push(composed, lid, x0, x1)
                return
        if 0xE000 <= ord(ch) <= 0xF8FF or ord(ch) < 32:  # private-use or control: glyphs without text
            return
        if ch == "." and len(self.chars) >= 2 and self.chars[-1] == " " and self.chars[-2] in ".…":
            self._pop()  # a spaced ellipsis ". . ." becomes "…" so that it ends no sentence
            self.chars[-1] = "…"
            self.xs1[-1] = x1
            return
        self._push(ch, lid, x0, x1)

    def slice_lines(self, start: int, end: int) -> list[tuple[int, float, float]]:
        """(line id, x0, x1) for each source line touched by characters [start, end)."""
        out: dict[int, list[float]] = {}
        order: list[int] = []
        ids, xs0, xs1 = self.line_ids, self.xs0, self.xs1
        for i in range(start, end):
            lid = ids[i]
            if lid < 0 or self.chars[i] == " ":
                continue
            box = out.get(lid)
            if box is None:
                out[lid] = [xs0[i], xs1[i]]
                order.append(lid)
            else:
                if xs0[i] < box[0]:
                    box[0] = xs0[i]
                if xs1[i] > box[1]:
                    box[1] = xs1[i]
        return [(lid, out[lid][0], out[lid][1]) for lid in order]


def fix_surrogates(text: str) -> str:
    """Pair UTF-16 surrogate halves into real characters; drop the lone ones."""
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return text
    paired = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "ignore")
    return "".join(c for c in paired if not 0xD800 <= ord(c) <= 0xDFFF)


_INNER_COMPOUND = re.compile(r"\b([A-Za-z]{2,})-([A-Za-z]{2,})\b")
_WHOLE_WORD = re.compile(r"(?<![\w-])[A-Za-z]{4,}(?![\w-])")


def inner_compounds(texts: Iterable[str]) -> frozenset[str]:
    """The paper's own spelling, lower-cased: "left-right" compounds and whole words (4+ letters)
    written inside lines, used to decide line-end hyphens ("predicate-argument", "SciBERT")."""
    found: set[str] = set()
    for text in texts:
        text = text.translate(_LIGATURE_TABLE)
        body = text[:-1] if text.endswith("-") else text
        if "-" in body:
            for m in _INNER_COMPOUND.finditer(body):
                found.add(f"{m.group(1).lower()}-{m.group(2).lower()}")
        found.update(w.lower() for w in _WHOLE_WORD.findall(body))
    return frozenset(found)


def clean_text(text: str) -> str:
    """The same clean-up for a plain string (headings, captions, titles)."""
    text = fix_surrogates(text)
    out: list[str] = []
    for ch in text:
        if ch in DROP:
            continue
        if ch in SPACES:
            ch = " "
        ch = LIGATURES.get(ch, ch)
        if 0xE000 <= ord(ch[0]) <= 0xF8FF:
            continue
        out.append(ch)
    s = unicodedata.normalize("NFC", "".join(out))
    return re.sub(r"\s+", " ", s).strip()


def join_lines(lines: list[Line]) -> str:
    """Clean text of consecutive lines (de-hyphenated)."""
    m = MappedText()
    for ln in lines:
        m.add_line(ln)
    return unicodedata.normalize("NFC", m.text).strip()
