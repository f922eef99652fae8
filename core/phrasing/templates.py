"""Formulaic spans and templates: the reusable wording of a sentence, and the sentence with its
content replaced by slots ("Little attention has been paid to [TOPIC].").

The lexicon (``resources/functions/formulaic-words.json``, built by ``rhetorica data formulas`` from
CS and biomedical abstracts) lists the *shared academic vocabulary*: words that are common in the
sentences of both domains, so they belong to the way papers are written rather than to any topic
("we", "propose", "results", "show", "little", "attention", "paid"...). A formulaic span is a maximal
run of such words (commas allowed inside) that holds at least ``min_content`` words that are not
mere function words; everything between spans becomes one slot, typed by what it looks like
([NUMBER], [CITATION]) or [CONTENT].

Shared vocabulary still holds topic words common to both fields ("sleep", "memory", "energy", "heart"),
so one more rule, of the shape of academic formulas: the object of a preposition is the content the
frame is about ("the effect of [X] on [Y]", "background on [X]"). The words right after a preposition
(up to the next function word or mark) are content, not formula, unless they start a frame of their
own: a deictic or possessive ("in this paper", "of our knowledge"), a quantity ("a number of", "one
of"), or a fixed phrase ("in order to", "for example", "in contrast") (:data:`FRAME_AFTER_PREPOSITION`).
Chosen on the dev split (token precision 0.528 -> 0.571, recall 0.795 -> 0.756, F1 0.635 -> 0.650);
test, read once: precision 0.557 -> 0.598, recall 0.734 -> 0.663, F1 0.633 -> 0.629. Topic words that
are not a preposition's object ("presents the ordinary differential equations") still pass as formula.

No model and no spaCy: it runs on every suggestion, in microseconds. Measured against spans marked
by hand (``models/datasets/gold_data/formulaic-spans.jsonl``) with ``rhetorica eval templates``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

LEXICON_FILE = "formulaic-words.json"
CONTENT_SLOT = "[CONTENT]"
# A word with a letter in it is one token, digits included ("CO2", "3D", "COVID-19"): never half formula,
# half slot. Only a token that starts with a letter can be formulaic (see formulaic_spans).
TOKEN = re.compile(r"[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*(?:['’-][A-Za-z0-9]+)*|\d+(?:[.,]\d+)*%?|[^\w\s]")
CITATION = re.compile(r"^\(?[^()]*\b(19|20)\d{2}[a-z]?\)?$")
# Words that glue a frame together but carry no move on their own.
FUNCTION_WORDS = frozenset((
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or", "but",
    "as", "than", "that", "this", "these", "those", "it", "its", "is", "are", "was", "were", "be",
    "been", "being", "has", "have", "had", "do", "does", "did", "which", "who", "whom", "whose",
    "what", "when", "where", "while", "we", "our", "us", "i", "you", "he", "she", "they", "their",
    "them", "his", "her", "not", "no", "can", "could", "may", "might", "will", "would", "shall",
    "should", "must", "also", "such", "so", "into", "over", "under", "between", "among", "about",
    "after", "before", "during", "through", "both", "each", "other", "more", "most", "all", "any",
    "some",
))
# Prepositions whose object is the sentence's content ("to" is left out: mostly an infinitive).
PREPOSITIONS = frozenset((
    "of", "on", "in", "for", "between", "among", "about", "with", "from", "by", "into", "across", "than",
    "upon", "over", "within", "without", "towards", "toward", "against", "via", "under", "during",
    "through",
))
# Words after a preposition that keep the frame going: deictics and possessives, quantities, and the
# nouns of fixed phrases (the taxonomy's markers and common academic phrases).
FRAME_AFTER_PREPOSITION = frozenset((
    "this", "these", "that", "those", "our", "its", "their", "each", "both", "all", "such", "which",
    "whom", "whose", "what", "whether", "it", "them", "us", "we", "any", "some", "other", "further",
    "more", "most", "here", "there", "one", "two", "three", "many", "several", "various", "different",
    "degree", "number", "amount", "amounts", "range", "variety", "lot", "majority", "kind", "kinds",
    "type", "types", "way", "ways", "level", "levels", "extent", "means", "lack", "importance", "role",
    "use", "order", "addition", "contrast", "particular", "general", "example", "instance", "terms",
    "term", "fact", "respect", "case", "context", "hand", "turn", "summary", "conclusion", "total",
    "line", "part", "comparison", "light", "view", "detail", "practice", "principle", "accordance",
    "agreement", "spite", "account", "future", "previous", "prior", "request", "caution", "section",
    "figure", "table", "interest", "debate", "research", "short", "brief", "sum", "common", "advance",
    "question", "place", "recent", "literature",
))


@dataclass(frozen=True)
class Lexicon:
    words: frozenset[str]
    min_content: int = 1  # non-function words a span needs
    min_tokens: int = 2


def default_lexicon_path() -> Path:
    from core.paths import resources_dir

    return resources_dir() / "functions" / LEXICON_FILE


@lru_cache(maxsize=4)
def load_lexicon(path: str | None = None) -> Lexicon:
    """The formulaic-word lexicon (default: the bundled one)."""
    from core.errors import RhetoricaError
    from core.fileio import read_text_input

    file = Path(path) if path else default_lexicon_path()
    text = read_text_input(file, "a formulaic-word lexicon (JSON)")
    try:
        data = json.loads(text)
        return Lexicon(frozenset(str(w) for w in data["words"]), int(data.get("min_content", 1)),
                       int(data.get("min_tokens", 2)))
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise RhetoricaError(f"{file}: not a formulaic-word lexicon ({type(error).__name__}: {error}); "
                             "build one with 'rhetorica data formulas'") from None


def tokens(text: str) -> list[tuple[int, int, str]]:
    """(start, end, token) for words, numbers and punctuation marks."""
    return [(m.start(), m.end(), m.group(0)) for m in TOKEN.finditer(text)]


def formulaic_spans(text: str, lexicon: Lexicon | None = None) -> list[tuple[int, int]]:
    """Character spans of the formulaic wording of ``text`` (increasing, non-overlapping)."""
    lexicon = lexicon or load_lexicon()
    found: list[tuple[int, int]] = []
    run: list[tuple[int, int, str]] = []

    def close() -> None:
        while run and not run[-1][2][0].isalpha():  # no trailing comma
            run.pop()
        words = [t for t in run if t[2][0].isalpha()]
        content = [t for t in words if t[2].lower() not in FUNCTION_WORDS]
        if len(words) >= lexicon.min_tokens and len(content) >= lexicon.min_content:
            found.append((run[0][0], run[-1][1]))
        run.clear()

    found_tokens = tokens(text)
    objects = preposition_objects(found_tokens)
    for index, (start, end, token) in enumerate(found_tokens):
        lower = token.lower()
        known = lower in lexicon.words or lower in FUNCTION_WORDS
        word = token[0].isalpha() and index not in objects and known
        if word or (token == "," and run):
            run.append((start, end, token))
        else:
            close()
    close()
    return _trim(text, found)


def preposition_objects(found: list[tuple[int, int, str]]) -> set[int]:
    """Indices of the tokens that are a preposition's object: the words right after a preposition, up
    to the next function word or mark, unless the first of them keeps the frame going
    (:data:`FRAME_AFTER_PREPOSITION`). They are content, whatever the lexicon says of them."""
    objects: set[int] = set()
    for index, (_, _, token) in enumerate(found[:-1]):
        if token.lower() not in PREPOSITIONS or found[index + 1][2].lower() in FRAME_AFTER_PREPOSITION:
            continue
        after = index + 1
        while (after < len(found) and found[after][2][0].isalpha()
               and found[after][2].lower() not in FUNCTION_WORDS):
            objects.add(after)
            after += 1
    return objects


def has_slot(template: str) -> bool:
    """Whether a template leaves the content to the author (a [CONTENT] slot): a template without one is
    another paper's sentence word for word (or with only its numbers and citations left out)."""
    return CONTENT_SLOT in template


def _trim(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Drop leading function words that only bridge into the content ("and", "of") from each span."""
    out = []
    for start, end in spans:
        words = tokens(text[start:end])
        while len(words) > 2 and words[0][2].lower() in {"and", "or", "of", "to", "in", "on", "for", "with"}:
            words = words[1:]
        out.append((start + words[0][0], end))
    return out


def _slot(fragment: str) -> str:
    stripped = fragment.strip(" ,;:")
    if not stripped:
        return ""
    if CITATION.match(stripped) or re.fullmatch(r"\[\d+(?:[,–-]\s*\d+)*\]", stripped):
        return "[CITATION]"
    if re.fullmatch(r"[\d.,%±\s]+", stripped):
        return "[NUMBER]"
    return CONTENT_SLOT


def template_of(text: str, lexicon: Lexicon | None = None) -> tuple[list[tuple[int, int]], str]:
    """(formulaic spans, template): the spans kept verbatim, every stretch between them one slot.
    A sentence without a formulaic span has the template ""."""
    spans = formulaic_spans(text, lexicon)
    if not spans:
        return [], ""
    parts: list[str] = []
    cursor = 0
    for start, end in spans:
        gap = text[cursor:start]
        words = re.findall(r"[A-Za-z]+", gap)
        # A gap of glue words only ("In " before "this paper, we introduce") stays as written.
        glue = bool(words) and all(w.lower() in FUNCTION_WORDS for w in words) and not re.search(r"\d", gap)
        slot = _slot(gap) if any(ch.isalnum() for ch in gap) and not glue else ""
        if slot:  # keep the punctuation and spacing around the slot (": [CONTENT], ")
            lead = gap[: len(gap) - len(gap.lstrip(" ,;:"))]
            trail = gap[len(gap.rstrip(" ,;:")):]
            parts.append(f"{lead}{slot}{trail}")
        else:
            parts.append(gap)
        parts.append(text[start:end])
        cursor = end
    tail = text[cursor:]
    stripped = tail.rstrip(" .;:!?")
    ending = tail[len(stripped):]
    parts.append((f" {_slot(stripped)}" if _slot(stripped) else stripped) + ending.strip())
    return spans, re.sub(r"\s+", " ", "".join(parts)).strip()
