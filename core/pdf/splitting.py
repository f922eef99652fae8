"""Sentence spans for body paragraphs: the project splitter (core.text.sentences) when present.

Until ``core/text/sentences.py`` lands, a small rule-based fallback is used.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_ABBREV = {
    "fig", "figs", "eq", "eqs", "sec", "secs", "tab", "al", "e.g", "i.e", "cf", "vs", "etc", "approx",
    "ref", "refs", "no", "nos", "vol", "pp", "ch", "dr", "mr", "mrs", "ms", "prof", "st", "resp",
    "viz", "inc", "ltd", "co", "jr", "sr", "ca", "appx", "alg", "def", "thm", "lem", "prop",
}
_BOUNDARY = re.compile(r"[.!?][\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")


def _fallback_split(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        end = m.start() + 1
        word = re.search(r"(\S+)$", text[start:end])
        token = word.group(1).rstrip(".").lower() if word else ""
        if token in _ABBREV or (len(token) == 1 and token.isalpha()):
            continue
        seg = text[start:m.end()].strip()
        if seg:
            s = start + (len(text[start:m.end()]) - len(text[start:m.end()].lstrip()))
            spans.append((s, s + len(seg)))
        start = m.end()
    seg = text[start:].strip()
    if seg:
        s = start + (len(text[start:]) - len(text[start:].lstrip()))
        spans.append((s, s + len(seg)))
    return spans


def get_splitter() -> Callable[[str], list[tuple[int, int]]]:
    try:
        from core.text.sentences import split_sentences
    except ImportError:
        return _fallback_split
    return split_sentences


def splitter_name() -> str:
    return "core.text.sentences" if get_splitter() is not _fallback_split else "fallback"
