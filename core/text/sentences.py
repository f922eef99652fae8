"""Rule-based sentence splitting tuned for scientific prose.

``split_sentences(text)`` returns ``(start, end)`` character spans of the
sentences in ``text`` (leading/trailing whitespace excluded), in order.  It is
pure Python and ``re`` (no spaCy), fast enough for whole papers on start-up.

How a boundary is decided
-------------------------
Candidate ends are ``.``, ``?``, ``!``, ``...`` and ``…`` (with any closing
quotes/brackets right after them, and optionally a trailing citation such as
``[3]``, ``[12, 14]`` or a glued superscript ``.12``).  A candidate becomes a
boundary only when it is followed by whitespace (or the end of the text) and
the next sentence starts with something other than a lowercase letter or
continuing punctuation.  For ``.`` the token before the period is checked:

* *never-final* abbreviations (``Fig.``, ``Eq.``, ``Sec.``, ``e.g.``, ``i.e.``,
  ``cf.``, ``vs.``, ``Dr.``, ``Prof.`` …) never end a sentence;
* *numeric* abbreviations (``No.``, ``Vol.``, ``pp.``, ``approx.``, ``resp.``,
  months …) do not end a sentence before a number or ``(``;
* *ambiguous* tokens (``et al.``, single capital initials as in ``J. Smith``,
  dotted acronyms such as ``U.S.``, ``Inc.``, ``Ltd.``) end a sentence only
  when the next word is a typical sentence opener ("The", "We", "However" …);
* a number that opens a sentence or follows ``:``/``;`` is a list marker
  (``1. Collect data``), not a sentence;
* a short parenthetical placed after the end and closed by its own period
  (``... then. (Centre A, R4).``) belongs to the sentence before it.

A blank line (two newlines) always ends a sentence; a single newline is
ordinary whitespace (PDF lines joined).
"""

from __future__ import annotations

import re

__all__ = ["split_sentence_texts", "split_sentences"]

# Never end a sentence (lowercase, without the final period).
_NEVER_FINAL = frozenset(
    """
    fig figs eq eqs eqn eqns tab tabs sec secs sect sects ch chap chaps ref refs e.g eg i.e ie cf vs viz
    w.r.t wrt a.k.a aka esp incl excl dr prof mr mrs ms mx rev hon gen col lt sgt capt thm def lem prop
    cor alg defn appx suppl ed eds proc conf trans dept univ et ibid op cit
    """.split()  # noqa: SIM905
)

# Do not end a sentence when the next token starts with a digit or "(".
_NUMERIC = frozenset(
    """
    no nos vol vols p pp art arts approx resp ca cca nr num jan feb mar apr jun jul aug sep sept oct nov
    dec min max
    """.split()  # noqa: SIM905
)

# End a sentence only if the next word is a typical sentence opener.
_AMBIGUOUS = frozenset(
    """
    al inc ltd corp co jr sr st bros
    """.split()  # noqa: SIM905
)

# Words that open sentences and rarely follow initials or "et al." inside one.
_OPENERS = frozenset(
    """
    The This These That Those There Then Thus Therefore Hence However Moreover Furthermore Finally
    Further Additionally Also Although While When Where Whereas Since Because Unlike Using Based By With
    Without In On At To For From As Of Our We It Its They Their He She His Her Here Such Both Each Most
    Many Some All Any One Two Three First Second Third Next Last Overall Specifically Instead Similarly
    Consequently Nevertheless Nonetheless Indeed Notably Importantly Experimental Experiments Results If
    Given After Before During Despite A An
    """.split()  # noqa: SIM905
)

# ".", "!", "?", "...", "…" followed by closing quotes/brackets.
_TERMINATOR = re.compile(r"(?:\.{2,}|…|[.!?]+)[\"'”’)\]]*")
# Optional trailing citation after the terminator: " [3]", "[12, 14]", "[3-5]".
_BRACKET_CITATION = re.compile(r"[ \t]?\[\d+(?:\s*[,;–-]\s*\d+)*\]")
# Glued superscript citation after the period: "shown.12 Next", "shown.3,4 Next".
_SUPERSCRIPT = re.compile(r"\d{1,3}(?:[,–-]\d{1,3})*(?=\s)")
# A short parenthetical right after a sentence end, itself closed by a terminator:
# "... happy then. (Centre A, R4)." or "... shown. (Smith et al., 2020)."
_TRAILING_PAREN = re.compile(r"\([^()\n.!?]{1,80}(?:\.[^()\n.!?\s][^()\n.!?]*)*\)[.!?]")
_WHITESPACE = re.compile(r"\s+")
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
_DOTTED_ACRONYM = re.compile(r"(?:[A-Za-z]{1,2}\.)+[A-Za-z]{1,2}")
_WORD = re.compile(r"[A-Za-z]+")
_CONTINUATION = frozenset(",;:)]}%")
_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.&-")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the sentences in ``text``, whitespace trimmed."""
    spans: list[tuple[int, int]] = []
    block_start = 0
    for blank in _BLANK_LINE.finditer(text):
        _split_block(text, block_start, blank.start(), spans)
        block_start = blank.end()
    _split_block(text, block_start, len(text), spans)
    return spans


def split_sentence_texts(text: str) -> list[str]:
    """The sentences of ``text`` as strings (see :func:`split_sentences`)."""
    return [text[start:end] for start, end in split_sentences(text)]


def _split_block(text: str, lo: int, hi: int, spans: list[tuple[int, int]]) -> None:
    start = lo
    pos = lo
    while True:
        match = _TERMINATOR.search(text, pos, hi)
        if match is None:
            break
        end = match.end()
        pos = end
        terminator = match.group(0)
        end = _absorb_citation(text, match.start(), end, hi, terminator)
        if end < hi and not text[end].isspace():
            continue
        next_start = _skip_space(text, end, hi)
        if next_start >= hi:
            break  # the rest is trailing whitespace: the block's last sentence ends here
        if not _starts_sentence(text, next_start, hi):
            continue
        if _TRAILING_PAREN.match(text, next_start, hi):
            continue  # "... then. (Centre A, R4). Next": a parenthetical closing the sentence
        if terminator[0] == "." and terminator[:2] != ".." and not _period_ends_sentence(
            text, start, match.start(), next_start, hi
        ):
            continue
        _append_trimmed(text, start, end, spans)
        start = next_start
        pos = max(pos, next_start)
    _append_trimmed(text, start, hi, spans)


def _absorb_citation(text: str, term_start: int, end: int, hi: int, terminator: str) -> int:
    """Extend a sentence end over a citation placed after its final punctuation."""
    cite = _BRACKET_CITATION.match(text, end, hi)
    if cite is not None and _next_is_capital_or_end(text, cite.end(), hi):
        return cite.end()
    before = text[term_start - 1] if term_start > 0 else ""
    if terminator == "." and (before.islower() or before == ")"):
        sup = _SUPERSCRIPT.match(text, end, hi)
        if sup is not None and _next_is_capital_or_end(text, sup.end(), hi):
            return sup.end()
    return end


def _next_is_capital_or_end(text: str, pos: int, hi: int) -> bool:
    nxt = _skip_space(text, pos, hi)
    if nxt >= hi:
        return True
    if nxt == pos:  # glued to the next word: not a trailing citation
        return False
    ch = text[nxt]
    return ch.isupper() or ch.isdigit() or ch in "([\"“‘'"


def _skip_space(text: str, pos: int, hi: int) -> int:
    ws = _WHITESPACE.match(text, pos, hi)
    return ws.end() if ws else pos


def _starts_sentence(text: str, pos: int, hi: int) -> bool:
    ch = text[pos]
    if ch.islower():
        return False
    return ch not in _CONTINUATION


def _period_ends_sentence(text: str, sent_start: int, period: int, next_start: int, hi: int) -> bool:
    """Decide whether the ``.`` at ``period`` ends the sentence begun at ``sent_start``."""
    tok_start = period
    while tok_start > sent_start and text[tok_start - 1] in _TOKEN_CHARS:
        tok_start -= 1
    token = text[tok_start:period]
    # Drop leading ".", "&", "-" glued to the word (e.g. "--3." or "...x.").
    while token and token[0] in ".&-":
        token = token[1:]
        tok_start += 1
    if not token:
        return True
    lower = token.lower()
    next_char = text[next_start]
    if len(token) == 1 and token.isupper():  # an initial: "J. Smith", "P. Jones"
        return _next_is_opener(text, next_start, hi)
    if lower in _NEVER_FINAL:
        return False
    if lower in _NUMERIC:
        return not (next_char.isdigit() or next_char == "(")
    if lower in _AMBIGUOUS:
        return _next_is_opener(text, next_start, hi)
    if token.isdigit():  # "in 2020." ends a sentence; "1." opening a list item does not
        return not (len(token) <= 3 and _is_list_marker(text, sent_start, tok_start))
    if _DOTTED_ACRONYM.fullmatch(token):
        # "U.S.", "i.i.d.", "Ph.D.", "R.J.": like an initial.  ("3.2.", "example.com." end normally.)
        return _next_is_opener(text, next_start, hi)
    return True


def _is_list_marker(text: str, sent_start: int, tok_start: int) -> bool:
    """A number at the start of a sentence, or after ':' / ';', followed by '.'."""
    before = text[sent_start:tok_start].rstrip()
    if not before:
        return True
    return before[-1] in ":;"


def _next_is_opener(text: str, pos: int, hi: int) -> bool:
    word = _WORD.match(text, pos, hi)
    if word is None:
        return False
    after = word.end()
    if after < hi and text[after] == ".":  # "J. R. Smith": another initial
        return False
    return word.group(0) in _OPENERS


def _append_trimmed(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        spans.append((start, end))


def cut_out(start: int, end: int, line_starts: list[int], line_ends: list[int]) -> list[tuple[int, int]]:
    """The parts of the span ``[start, end)`` outside the lines ``[line_starts[k], line_ends[k])`` (sorted,
    not overlapping: a draft's heading lines, which the splitter may have run a sentence across). Only
    the lines the span crosses are looked at, so a long draft with many headings costs no more per
    sentence."""
    import bisect

    pieces = [(start, end)]
    k = bisect.bisect_right(line_ends, start)
    while k < len(line_starts) and line_starts[k] < end:
        pieces = [part for a, b in pieces
                  for part in ((a, min(b, line_starts[k])), (max(a, line_ends[k]), b)) if part[0] < part[1]]
        k += 1
    return pieces
