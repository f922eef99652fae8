"""Graphical-abstract candidates: rank a paper's figures by how well they stand for the paper (issue 14).

Each candidate figure gets a few features, and the ranking is a weighted sum of them:

* ``caption_match``: the caption–text scorer (:class:`core.model_api.CaptionScorer`) between the
  title + abstract and the caption;
* ``best_sentence``: the best score of one abstract sentence against the caption (a figure
  that shows one claim of the abstract well);
* ``mention_match``: the content similarity of the abstract and the body sentences that mention
  the figure ("Figure 3 shows …"), 0 when nothing mentions it;
* priors: ``first_figure`` (1 for the first figure), ``position`` (0 first … 1 last),
  ``size`` (the share of its page the figure covers) and ``mentions`` (log of 1 + how often the
  body mentions it).

Every feature is centred and scaled within the paper (a ranking only compares a paper's own
figures), so the weights mean the same for any paper. The weights are measured, not guessed:
``core.figure_fit`` fits them on the hand-labelled dev set
(``models/datasets/gold_data/graphical-abstract``) and the model bundle carries them
(``context.figures.ranker``). Tables are not candidates unless asked for.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from core.document import Figure, Paper, SectionKind
from core.lexical import content_words, stem, tfidf_similarity
from core.model_api import CaptionScorer

FEATURES = ("caption_match", "best_sentence", "mention_match", "first_figure", "position", "size", "mentions")
# Without fitted weights: the scorer alone (what the untrained baseline also uses).
SCORER_ONLY = {"caption_match": 1.0}
FALLBACK_ABSTRACT_SENTENCES = 8

_LABEL = re.compile(
    r"^\s*(?:supplementary\s+)?(?:figure|fig\.?|table|tab\.?)\s*S?[\dIVX]{1,4}[a-z]?\s*[:.|\-–—]?\s*",
    re.IGNORECASE)
def caption_body(caption: str) -> str:
    """The caption without its printed label ("Figure 3:", "Fig. 2.", "Table 1 |")."""
    return _LABEL.sub("", caption, count=1).strip() or caption.strip()


def shared_words(caption: str, text: str, limit: int = 6) -> list[str]:
    """Caption words (crudely stemmed) that also occur in ``text``, in caption order."""
    stems = {stem(w) for w in content_words(text)}
    return [w for w in content_words(caption) if stem(w) in stems][:limit]


@dataclass
class RankedFigure:
    """One candidate with its rank, its score and the parts of the score."""

    figure_id: str
    number: str
    kind: str
    page: int
    caption: str
    rank: int
    score: float
    parts: dict[str, float]  # weight x scaled feature, per feature with a weight
    features: dict[str, float]  # raw feature values
    best_sentence: str  # the abstract sentence that matches the caption best
    words: list[str]  # caption words that also occur in the title/abstract
    reason: str

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["score"] = round(self.score, 4)
        data["parts"] = {k: round(v, 4) for k, v in self.parts.items()}
        data["features"] = {k: round(v, 4) for k, v in self.features.items()}
        return data


@dataclass
class FigureRanking:
    """A paper's figures ranked as graphical-abstract candidates, best first."""

    paper: str
    source_path: str
    scorer: str
    weights: dict[str, float]
    weights_source: str
    query: str  # "abstract" or "opening sentences" (no abstract found)
    figures: list[RankedFigure] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "paper": self.paper,
            "source_path": self.source_path,
            "scorer": self.scorer,
            "weights": self.weights,
            "weights_source": self.weights_source,
            "query": self.query,
            "figures": [f.to_dict() for f in self.figures],
        }


@dataclass
class FigureFeatures:
    """The raw features of a paper's candidate figures (rows follow ``figures``)."""

    figures: list[Figure]
    values: np.ndarray  # (n, len(FEATURES))
    best_sentences: list[str]
    query: str
    query_text: str

    def column(self, name: str) -> np.ndarray:
        return self.values[:, FEATURES.index(name)]


def candidate_figures(paper: Paper, include_tables: bool = False) -> list[Figure]:
    """The paper's main figures in reading order (page, then top), tables only when asked for.
    Supplementary figures and tables ("S1", "S2", ...) are never candidates."""
    chosen = [f for f in paper.figures if (include_tables or f.kind == "figure")
              and not f.number.upper().startswith("S")]
    return sorted(chosen, key=lambda f: (f.page, f.bbox[1], f.bbox[0]))


_NOT_PROSE = re.compile(r"https?://|www\.|github\.com|@|^\W")


def is_prose(sentence: str) -> bool:
    """False for what parsing leaves in an abstract that is not a sentence of it: links, e-mail
    addresses, footnote marks, fragments of fewer than four words."""
    return len(sentence.split()) >= 4 and not _NOT_PROSE.search(sentence.strip())


def query_sentences(paper: Paper) -> tuple[list[str], str]:
    """The title and abstract sentences (or, with no abstract, the first sentences of the body)."""
    abstract = [s.text for s in paper.abstract_sentences if is_prose(s.text)]
    label = "abstract"
    if not abstract:
        intro = [s.text for s in paper.sentences if paper.section_of(s).kind is SectionKind.INTRODUCTION]
        abstract = [s for s in (intro or [s.text for s in paper.sentences]) if is_prose(s)]
        abstract = abstract[:FALLBACK_ABSTRACT_SENTENCES]
        label = "opening sentences"
    title = [paper.title] if paper.title.strip() else []
    return title + abstract, label


def _area_share(paper: Paper, figure: Figure) -> float:
    if not figure.region_found or figure.page >= len(paper.page_sizes):
        return float("nan")
    x0, y0, x1, y1 = figure.bbox
    width, height = paper.page_sizes[figure.page]
    return max(0.0, (x1 - x0) * (y1 - y0)) / max(1.0, width * height)


def figure_features(paper: Paper, scorer: CaptionScorer, include_tables: bool = False) -> FigureFeatures:
    """The raw features of every candidate figure (see the module docstring)."""
    figures = candidate_figures(paper, include_tables)
    query, label = query_sentences(paper)
    n = len(figures)
    values = np.zeros((n, len(FEATURES)), dtype=np.float64)
    if n == 0:
        return FigureFeatures(figures, values, [], label, " ".join(query))
    captions = _split_groups([[caption_body(f.caption)] for f in figures])
    mentions = [[paper.sentence_by_id(sid).text for sid in f.mentioned_by] for f in figures]
    text_groups: list[Sequence[str]] = [query, *[[s] for s in query]]
    matches = match_scores(scorer, text_groups, captions)
    whole_vector = scorer.group_vectors([query], "text")[0]
    mention_vectors = scorer.group_vectors([m if m else [] for m in mentions], "text")
    per_sentence = matches[1:]
    values[:, FEATURES.index("caption_match")] = matches[0]
    values[:, FEATURES.index("best_sentence")] = per_sentence.max(axis=0) if len(per_sentence) else 0.0
    values[:, FEATURES.index("mention_match")] = [
        float(mention_vectors[i] @ whole_vector) if mentions[i] else 0.0 for i in range(n)]
    values[:, FEATURES.index("first_figure")] = [1.0 if i == 0 else 0.0 for i in range(n)]
    values[:, FEATURES.index("position")] = [i / (n - 1) if n > 1 else 0.0 for i in range(n)]
    sizes = np.array([_area_share(paper, f) for f in figures])
    known = sizes[~np.isnan(sizes)]
    fill = float(np.median(known)) if len(known) else 0.0
    values[:, FEATURES.index("size")] = np.where(np.isnan(sizes), fill, sizes)
    values[:, FEATURES.index("mentions")] = [np.log1p(len(f.mentioned_by)) for f in figures]
    best = [query[int(per_sentence[:, i].argmax())] if len(per_sentence) else "" for i in range(n)]
    return FigureFeatures(figures, values, best, label, " ".join(query))


def match_scores(scorer: CaptionScorer, text_groups: Sequence[Sequence[str]],
                 caption_groups: Sequence[Sequence[str]]) -> np.ndarray:
    """The scorer's match score of every text group against every caption group: the cosine of
    their vectors plus the scorer's weight times their word overlap."""
    text = scorer.group_vectors(text_groups, "text")
    caption = scorer.group_vectors(caption_groups, "caption")
    scores = text @ caption.T
    if scorer.lexical_weight:
        scores = scores + scorer.lexical_weight * tfidf_similarity(
            [" ".join(g) for g in text_groups], [" ".join(g) for g in caption_groups])
    return np.asarray(scores, dtype=np.float64)


def _split_groups(groups: list[list[str]]) -> list[list[str]]:
    from core.text.sentences import split_sentence_texts

    return [[s for text in group for s in split_sentence_texts(text)] for group in groups]


def scale_within_paper(values: np.ndarray) -> np.ndarray:
    """Each column centred on the paper's mean and divided by its spread (1 when flat)."""
    if len(values) == 0:
        return values
    centred = values - values.mean(axis=0, keepdims=True)
    spread = values.std(axis=0, keepdims=True)
    return centred / np.where(spread > 1e-9, spread, 1.0)


def combine(values: np.ndarray, weights: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Scores (n,) and parts (n, F) of raw feature ``values`` under ``weights``."""
    w = np.array([float(weights.get(name, 0.0)) for name in FEATURES])
    parts = scale_within_paper(values) * w
    return parts.sum(axis=1), parts


def _reason(features: dict[str, float], best_sentence: str, words: list[str], rank_first: bool) -> str:
    bits = []
    if best_sentence:
        bits.append(f'caption matches "{_clip(best_sentence)}" ({features["best_sentence"]:.2f})')
    if words:
        bits.append("shared words: " + ", ".join(words))
    if features["first_figure"]:
        bits.append("first figure")
    mentions = round(float(np.expm1(features["mentions"])))
    if mentions:
        bits.append(f"mentioned {mentions} time{'s' if mentions != 1 else ''} in the text")
    bits.append(f"covers {100 * features['size']:.0f}% of its page")
    text = "; ".join(bits)
    return text[0].upper() + text[1:] if text else ("Best candidate" if rank_first else "")


def _clip(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def rank_figures(paper: Paper, scorer: CaptionScorer, weights: Mapping[str, float] | None = None,
                 weights_source: str = "", include_tables: bool = False) -> FigureRanking:
    """The paper's candidate figures ranked best first, each with its score parts and reason."""
    chosen = dict(weights) if weights else dict(SCORER_ONLY)
    source = weights_source or ("fitted" if weights else "scorer only (no fitted weights)")
    feats = figure_features(paper, scorer, include_tables)
    ranking = FigureRanking(paper.title, paper.source_path, scorer.scorer_id, chosen, source, feats.query)
    if not feats.figures:
        return ranking
    scores, parts = combine(feats.values, chosen)
    order = sorted(range(len(feats.figures)), key=lambda i: (-scores[i], i))
    for rank, i in enumerate(order, start=1):
        figure = feats.figures[i]
        raw = {name: float(feats.values[i, k]) for k, name in enumerate(FEATURES)}
        words = shared_words(caption_body(figure.caption), feats.query_text)
        ranking.figures.append(RankedFigure(
            figure_id=figure.id, number=figure.number, kind=figure.kind, page=figure.page,
            caption=figure.caption, rank=rank, score=float(scores[i]),
            parts={name: float(parts[i, k]) for k, name in enumerate(FEATURES) if chosen.get(name)},
            features=raw, best_sentence=feats.best_sentences[i], words=words,
            reason=_reason(raw, feats.best_sentences[i], words, rank == 1)))
    return ranking
