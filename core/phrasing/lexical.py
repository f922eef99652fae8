"""Word overlap between short texts, weighted by how rare each word is among the texts compared.

Used by the caption–text scorer (a paragraph or an abstract against a paper's captions): the IDF
comes from the texts being compared (one paper's captions and paragraphs), so words every caption
of that paper shares ("cells", "model") weigh little and the words that tell its figures apart
weigh most. No vocabulary ships with the app.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]{2,}")
STOPWORDS = frozenset((
    "about", "above", "after", "again", "against", "also", "among", "and", "another", "any", "are", "based",
    "been", "before", "being", "below", "between", "both", "but", "can", "could", "does", "doing", "down",
    "during", "each", "either", "even", "every", "first", "for", "from", "further", "had", "has", "have",
    "having", "here", "how", "however", "into", "its", "itself", "just", "like", "many", "may", "more",
    "most", "much", "must", "new", "not", "now", "only", "other", "others", "our", "over", "per", "same",
    "several", "should", "show", "shown", "shows", "since", "some", "such", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "three", "through", "thus", "two", "under",
    "until", "upon", "use", "used", "uses", "using", "very", "was", "were", "what", "when", "where", "which",
    "while", "who", "whose", "why", "will", "with", "within", "without", "would", "figure", "fig", "table",
    "panel", "panels", "left", "right", "top", "bottom", "example", "examples", "results", "result",
    "method", "methods", "paper", "proposed", "approach", "different", "given", "all", "one", "see",
))


def stem(word: str) -> str:
    """A crude suffix strip, enough to meet "encoders" with "encoder" and "labelling" with "label"."""
    for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "s", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def content_words(text: str, min_length: int = 4) -> list[str]:
    """Lower-cased words of ``min_length`` letters or more that are not glue words, in order, once each."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text):
        word = match.group(0).lower().strip("-")
        if len(word) >= min_length and word not in STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)


def _terms(text: str) -> Counter[str]:
    return Counter(stem(match.group(0).lower()) for match in _WORD.finditer(text)
                   if match.group(0).lower() not in STOPWORDS)


def tfidf_similarity(texts: Sequence[str], others: Sequence[str]) -> np.ndarray:
    """Cosine of log-TF x IDF vectors, (len(texts), len(others)); the IDF counts every text of both."""
    bags = [_terms(t) for t in (*texts, *others)]
    frequency: Counter[str] = Counter(term for bag in bags for term in bag)
    n = len(bags)
    vectors = []
    for bag in bags:
        weights = {t: (1.0 + math.log(c)) * (math.log((n + 1) / (frequency[t] + 1)) + 1.0)
                   for t, c in bag.items()}
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        vectors.append({t: w / norm for t, w in weights.items()})
    left, right = vectors[: len(texts)], vectors[len(texts):]
    out = np.zeros((len(left), len(right)), dtype=np.float32)
    for i, a in enumerate(left):
        for j, b in enumerate(right):
            small, large = (a, b) if len(a) <= len(b) else (b, a)
            out[i, j] = sum(w * large.get(t, 0.0) for t, w in small.items())
    return out
