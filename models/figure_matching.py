"""Mention matching: the caption–text scorer's own task (issue 14), without torch.

For each paragraph of a paper that mentions a figure ("as Figure 3 shows …", the reference
masked), rank that paper's figures by the score of the paragraph against each caption; the
mention is matched when the top figure is one the paragraph names. Training
(``models.training.figure_head``) and ``rhetorica eval figures`` build the same
:class:`MatchingSet` from ``models.datasets.figure_pairs``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.model_api import CaptionScorer
from core.phrasing.lexical import tfidf_similarity
from core.text.sentences import split_sentence_texts
from models.datasets.figure_pairs import FigurePaper
from models.figure_scorer import group_sentences, unit_means

TEXT_MODES = ("sentences", "paragraph")


@dataclass
class MatchingSet:
    """Figures (caption sentence groups) and mentions (text sentence groups) of some papers."""

    papers: list[str] = field(default_factory=list)  # "source:paper_id"
    caption_groups: list[list[str]] = field(default_factory=list)
    figure_paper: list[int] = field(default_factory=list)
    figure_kind: list[str] = field(default_factory=list)
    text_groups: list[list[str]] = field(default_factory=list)
    mention_paper: list[int] = field(default_factory=list)
    positives: list[list[int]] = field(default_factory=list)  # figure rows each mention names

    @property
    def mention_count(self) -> int:
        return len(self.text_groups)

    def sentences(self) -> list[str]:
        """Every distinct sentence of the set (captions and mentions)."""
        texts, _ = group_sentences([*self.caption_groups, *self.text_groups])
        return texts


def matching_set(papers: Iterable[FigurePaper], text: str = "paragraph") -> MatchingSet:
    """The figures and mentions of ``papers`` (mentions that name none of the paper's figures
    are dropped). ``text``: a mention is its whole paragraph or only its mentioning sentences."""
    if text not in TEXT_MODES:
        raise ValueError(f"unknown text mode {text!r}: use one of {', '.join(TEXT_MODES)}")
    out = MatchingSet()
    for paper in papers:
        rows: dict[str, int] = {}
        number = len(out.papers)
        for figure in paper.figures:
            caption = split_sentence_texts(figure.caption)
            if not caption:
                continue
            rows[figure.figure_id] = len(out.caption_groups)
            out.caption_groups.append(caption)
            out.figure_paper.append(number)
            out.figure_kind.append(figure.kind)
        if not rows:
            continue
        out.papers.append(f"{paper.source}:{paper.paper_id}")
        for mention in paper.mentions:
            named = [rows[f] for f in mention.figure_ids if f in rows]
            group = (list(mention.sentences) if text == "sentences" and mention.sentences
                     else split_sentence_texts(mention.paragraph))
            if named and group:
                out.text_groups.append(group)
                out.mention_paper.append(number)
                out.positives.append(named)
    return out


def set_vectors(vectors_of: Callable[[list[str]], np.ndarray], groups: Sequence[Sequence[str]]) -> np.ndarray:
    """Unit mean vectors of sentence groups, ``vectors_of`` giving unit content vectors of sentences."""
    sentences, rows = group_sentences(groups)
    if not sentences:
        return np.zeros((len(groups), 0), dtype=np.float32)
    return unit_means(vectors_of(sentences), rows)


@dataclass
class MatchingReport:
    """Mention matching over a set: accuracy@1, mean reciprocal rank, mentions and candidates."""

    accuracy_at_1: float
    mrr: float
    mentions: int
    mean_candidates: float
    first_figure_accuracy: float  # the baseline: always the paper's first candidate

    def to_dict(self) -> dict[str, float | int]:
        return {"accuracy_at_1": round(self.accuracy_at_1, 4), "mrr": round(self.mrr, 4),
                "mentions": self.mentions, "mean_candidates": round(self.mean_candidates, 2),
                "first_figure_accuracy": round(self.first_figure_accuracy, 4)}


def candidates_by_paper(data: MatchingSet, kinds: Sequence[str] = ("figure",)) -> dict[int, list[int]]:
    """Figure rows of ``kinds`` per paper number."""
    by_paper: dict[int, list[int]] = {}
    for row, (paper, kind) in enumerate(zip(data.figure_paper, data.figure_kind, strict=True)):
        if kind in kinds:
            by_paper.setdefault(paper, []).append(row)
    return by_paper


def lexical_scores(data: MatchingSet, kinds: Sequence[str] = ("figure",)) -> dict[int, np.ndarray]:
    """Per mention, the word-overlap score (``core.phrasing.lexical``, the paper's own IDF) against each of
    its paper's candidate captions, in ``candidates_by_paper`` order."""
    by_paper = candidates_by_paper(data, kinds)
    mentions: dict[int, list[int]] = {}
    for row, paper in enumerate(data.mention_paper):
        mentions.setdefault(paper, []).append(row)
    out: dict[int, np.ndarray] = {}
    for paper, rows in mentions.items():
        candidates = by_paper.get(paper, [])
        if not candidates:
            continue
        scores = tfidf_similarity([" ".join(data.text_groups[m]) for m in rows],
                                  [" ".join(data.caption_groups[c]) for c in candidates])
        out.update({m: scores[i] for i, m in enumerate(rows)})
    return out


def mention_report(text_vectors: np.ndarray, caption_vectors: np.ndarray, data: MatchingSet,
                   kinds: Sequence[str] = ("figure",), min_candidates: int = 2,
                   lexical: Mapping[int, np.ndarray] | None = None,
                   lexical_weight: float = 0.0) -> MatchingReport:
    """Rank each mention's paper's figures of ``kinds`` by cosine (plus ``lexical_weight`` x the
    ``lexical`` scores when given); mentions that name none of them, or whose paper has fewer than
    ``min_candidates``, are left out."""
    by_paper = candidates_by_paper(data, kinds)
    hits, reciprocal, sizes, first = [], [], [], []
    for m, paper in enumerate(data.mention_paper):
        candidates = by_paper.get(paper, [])
        positives = set(data.positives[m]) & set(candidates)
        if len(candidates) < min_candidates or not positives:
            continue
        scores = caption_vectors[candidates] @ text_vectors[m]
        if lexical is not None and lexical_weight:
            scores = scores + lexical_weight * lexical[m]
        order = [candidates[i] for i in np.argsort(-scores, kind="stable")]
        rank = next(i for i, row in enumerate(order) if row in positives) + 1
        hits.append(rank == 1)
        reciprocal.append(1.0 / rank)
        sizes.append(len(candidates))
        first.append(candidates[0] in positives)
    n = len(hits)
    return MatchingReport(float(np.mean(hits)) if n else 0.0, float(np.mean(reciprocal)) if n else 0.0, n,
                          float(np.mean(sizes)) if n else 0.0, float(np.mean(first)) if n else 0.0)


def scorer_report(scorer: CaptionScorer, data: MatchingSet) -> MatchingReport:
    """Mention matching with a scorer: its vectors, and its word-overlap weight."""
    text = scorer.group_vectors(data.text_groups, "text")
    caption = scorer.group_vectors(data.caption_groups, "caption")
    weight = scorer.lexical_weight
    return mention_report(text, caption, data, lexical=lexical_scores(data) if weight else None,
                          lexical_weight=weight)
