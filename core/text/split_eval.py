"""Scoring a sentence splitter against gold sentences (boundary and exact-sentence F1)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

Splitter = Callable[[str], list[tuple[int, int]]]


@dataclass
class SplitCounts:
    """Matched / predicted / gold counts for one or many documents."""

    boundary_tp: int = 0
    boundary_pred: int = 0
    boundary_gold: int = 0
    sentence_tp: int = 0
    sentence_pred: int = 0
    sentence_gold: int = 0

    def add(self, other: SplitCounts) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)


@dataclass
class SplitScores:
    documents: int
    gold_sentences: int
    predicted_sentences: int
    boundary_precision: float
    boundary_recall: float
    boundary_f1: float
    sentence_precision: float
    sentence_recall: float
    sentence_f1: float
    seconds: float
    sentences_per_second: float

    def to_dict(self) -> dict:
        return asdict(self)


def join_gold(sentences: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """Join gold sentences (stripped) with single spaces; return the text and the gold spans."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    offset = 0
    for sentence in sentences:
        sentence = sentence.strip()
        if not sentence:
            continue
        if parts:
            offset += 1
        spans.append((offset, offset + len(sentence)))
        parts.append(sentence)
        offset += len(sentence)
    return " ".join(parts), spans


def compare_spans(gold: Sequence[tuple[int, int]], predicted: Sequence[tuple[int, int]]) -> SplitCounts:
    """Counts for one document.  A boundary is the end offset of every sentence except the last."""
    gold_bounds = {end for _, end in gold[:-1]}
    pred_bounds = {end for _, end in predicted[:-1]}
    gold_set = set(gold)
    pred_set = set(predicted)
    return SplitCounts(
        boundary_tp=len(gold_bounds & pred_bounds),
        boundary_pred=len(pred_bounds),
        boundary_gold=len(gold_bounds),
        sentence_tp=len(gold_set & pred_set),
        sentence_pred=len(pred_set),
        sentence_gold=len(gold_set),
    )


def prf(tp: int, pred: int, gold: int) -> tuple[float, float, float]:
    """Precision, recall, F1; precision is 1.0 with no predictions, recall 1.0 with no gold."""
    precision = tp / pred if pred else 1.0
    recall = tp / gold if gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def evaluate_splitter(documents: Iterable[Sequence[str]], splitter: Splitter) -> SplitScores:
    """Split each document (gold sentences joined by spaces) and score against the gold spans."""
    joined = [join_gold(sentences) for sentences in documents]
    joined = [(text, spans) for text, spans in joined if spans]
    started = time.perf_counter()
    predictions = [splitter(text) for text, _ in joined]
    seconds = time.perf_counter() - started
    total = SplitCounts()
    for (_, gold), predicted in zip(joined, predictions, strict=True):
        total.add(compare_spans(gold, predicted))
    bp, br, bf = prf(total.boundary_tp, total.boundary_pred, total.boundary_gold)
    sp, sr, sf = prf(total.sentence_tp, total.sentence_pred, total.sentence_gold)
    return SplitScores(
        documents=len(joined),
        gold_sentences=total.sentence_gold,
        predicted_sentences=total.sentence_pred,
        boundary_precision=bp,
        boundary_recall=br,
        boundary_f1=bf,
        sentence_precision=sp,
        sentence_recall=sr,
        sentence_f1=sf,
        seconds=seconds,
        sentences_per_second=total.sentence_gold / seconds if seconds > 0 else float("inf"),
    )


def load_csabstruct(path: Path) -> list[list[str]]:
    """The ``sentences`` lists of a CSAbstruct JSONL split."""
    documents = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                documents.append(list(json.loads(line)["sentences"]))
    return documents
