"""Graphical-abstract candidates: rank a paper's figures by how well they stand for the paper (issues 14, 25).

Each candidate figure gets features, and the ranking is a weighted sum of them:

* the caption–text scorer (:class:`core.model_api.CaptionScorer`): ``caption_match`` (title +
  abstract against the caption), ``best_sentence`` (the best single abstract sentence),
  ``mention_match`` (the abstract against the body sentences that mention the figure, 0 when none);
* priors (issue 14): ``first_figure`` (1 for Figure 1, the lowest printed number), ``position``
  (0 first … 1 last, by printed number), ``size`` (the share of its page the figure covers) and
  ``mentions`` (log of 1 + how often the body mentions it);
* the look of the figure itself (issue 25, :mod:`core.figures.figure_features`, pymupdf on the PDF):
  ``diagram``, ``chart``, ``photo``, ``table_like`` (soft type scores 0–1), ``multi_panel``,
  ``vector`` (1 − the share under raster images) and ``width`` (its share of the page width);
* the words around it: ``caption_overview`` / ``caption_detail`` / ``caption_result`` (cue phrases of
  the caption: "overview", "schematic", "proposed model", "workflow", "study design" … / "example",
  "screenshot", "histogram" … / "comparison", "performance" …), ``caption_length`` (log of 1 + its
  words), ``title_overlap`` (the share of the title's words it uses), ``series`` / ``series_later``
  (its caption is much like another's / an earlier one's: one of a series of like plots), ``mention_overview``
  (a mention calls it an overview or summary), ``mentioned_early`` (in the abstract or
  introduction), ``mentioned_late`` (in the discussion or conclusion), ``first_mention`` (where
  the first mention sits, 0 start … 1 end or never);
* where it sits: ``first_page``, ``last_figure``, ``appendix``;
* relative evidence (session 13): ``overview_strongest`` (1 for the figure(s) whose caption has the
  paper's strongest overview cue, when any caption has one: an overview cue says more when the paper's
  other captions lack it).

The issue-14 features (:data:`WITHIN_PAPER`) are centred and scaled within the paper (a ranking only
compares a paper's own figures); the others are used as they are (each is 0–1 or a small log), so a
weight means the same for any paper. The weights are measured, not guessed: ``core.figures.figure_fit`` fits
them on the hand-labelled dev set (``models/datasets/gold_data/graphical-abstract``, reported
leave-one-paper-out
by ``rhetorica eval figures``) and the model bundle carries them (``context.figures.ranker``); a bundle
with issue-14 weights ranks as before. Tables are not candidates unless asked for.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from core.document import Figure, Paper, SectionKind
from core.figures.figure_features import (
    TYPE_WORDS,
    FigureLook,
    MentionProfile,
    caption_cues,
    caption_series,
    figure_type,
    is_appendix_page,
    looks_for_paper,
    mention_profile,
    multi_panel,
    title_overlap,
    type_scores,
)
from core.model_api import CaptionScorer
from core.phrasing.lexical import content_words, stem, tfidf_similarity

SCORER_FEATURES = ("caption_match", "best_sentence", "mention_match")
PRIOR_FEATURES = ("first_figure", "position", "size", "mentions")
LOOK_FEATURES = ("diagram", "chart", "photo", "table_like", "multi_panel", "vector", "width")
TEXT_FEATURES = ("caption_overview", "caption_detail", "caption_result", "caption_length", "title_overlap",
                 "series", "series_later", "mention_overview", "mentioned_early", "mentioned_late",
                 "first_mention")
PLACE_FEATURES = ("first_page", "last_figure", "appendix")
RELATIVE_FEATURES = ("overview_strongest",)
FEATURES = (*SCORER_FEATURES, *PRIOR_FEATURES, *LOOK_FEATURES, *TEXT_FEATURES, *PLACE_FEATURES,
            *RELATIVE_FEATURES)
WITHIN_PAPER = frozenset((*SCORER_FEATURES, *PRIOR_FEATURES))  # scaled within the paper (issue 14)
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
    """One candidate with its rank, its score, the parts of the score and the evidence in words."""

    figure_id: str
    number: str
    kind: str
    page: int
    caption: str
    rank: int
    score: float
    parts: dict[str, float]  # weight x (scaled) feature, per feature with a weight
    features: dict[str, float]  # raw feature values
    best_sentence: str  # the abstract sentence that matches the caption best
    words: list[str]  # caption words that also occur in the title/abstract
    reason: str  # the evidence in words (no raw scores)
    figure_type: str = ""  # "diagram", "chart", "photo", "table", "text" or "" (unknown / unclear)
    look: dict[str, Any] = field(default_factory=dict)  # what the figure is made of (FigureLook)
    mentions: dict[str, Any] = field(default_factory=dict)  # how the text points to it

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
    looks: list[FigureLook] = field(default_factory=list)
    mentions: list[MentionProfile] = field(default_factory=list)

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


def number_order(figures: Sequence[Figure]) -> list[int]:
    """Indices of ``figures`` by printed number (Figure 1 first; roman numerals read; ties and numbers that
    do not read keep reading order)."""
    def key(i: int) -> tuple[float, int]:
        return (_number_value(figures[i].number), i)

    return sorted(range(len(figures)), key=key)


_ROMAN = {"I": 1, "V": 5, "X": 10}


def _number_value(number: str) -> float:
    digits = re.match(r"\d+", number)
    if digits:
        return float(digits.group())
    if number and all(c in _ROMAN for c in number.upper()):
        total = 0
        values = [_ROMAN[c] for c in number.upper()]
        for k, v in enumerate(values):
            total += -v if k + 1 < len(values) and values[k + 1] > v else v
        return float(total)
    return float("inf")


def figure_features(paper: Paper, scorer: CaptionScorer, include_tables: bool = False,
                    looks: Sequence[FigureLook] | None = None) -> FigureFeatures:
    """The raw features of every candidate figure (see the module docstring). ``looks`` (one per
    candidate, in :func:`candidate_figures` order) are read from the PDF when not given
    (:func:`core.figures.figure_features.looks_for_paper`)."""
    figures = candidate_figures(paper, include_tables)
    query, label = query_sentences(paper)
    n = len(figures)
    values = np.zeros((n, len(FEATURES)), dtype=np.float64)
    if n == 0:
        return FigureFeatures(figures, values, [], label, " ".join(query))
    looks = list(looks) if looks is not None else looks_for_paper(paper, figures)
    if len(looks) != n:
        raise ValueError(f"{len(looks)} looks for {n} candidate figures")

    def put(name: str, column: Sequence[float] | np.ndarray) -> None:
        values[:, FEATURES.index(name)] = column

    captions = _split_groups([[caption_body(f.caption)] for f in figures])
    mentions = [[paper.sentence_by_id(sid).text for sid in f.mentioned_by] for f in figures]
    text_groups: list[Sequence[str]] = [query, *[[s] for s in query]]
    matches = match_scores(scorer, text_groups, captions)
    whole_vector = scorer.group_vectors([query], "text")[0]
    mention_vectors = scorer.group_vectors([m if m else [] for m in mentions], "text")
    per_sentence = matches[1:]
    put("caption_match", matches[0])
    put("best_sentence", per_sentence.max(axis=0) if len(per_sentence) else np.zeros(n))
    put("mention_match", [float(mention_vectors[i] @ whole_vector) if mentions[i] else 0.0 for i in range(n)])
    # priors, by printed number: Figure 1 is the first figure wherever it is printed
    order = number_order(figures)
    rank_of = {i: k for k, i in enumerate(order)}
    put("first_figure", [1.0 if rank_of[i] == 0 else 0.0 for i in range(n)])
    put("position", [rank_of[i] / (n - 1) if n > 1 else 0.0 for i in range(n)])
    sizes = np.array([_area_share(paper, f) for f in figures])
    known = sizes[~np.isnan(sizes)]
    fill = float(np.median(known)) if len(known) else 0.0
    put("size", np.where(np.isnan(sizes), fill, sizes))
    put("mentions", [np.log1p(len(f.mentioned_by)) for f in figures])
    # the look (an unknown look takes the paper's median, so it neither helps nor hurts)
    look_rows = np.array([_look_row(look, paper, f) for look, f in zip(looks, figures, strict=True)])
    found = np.array([look.found for look in looks])
    if found.any() and not found.all():
        look_rows[~found] = np.median(look_rows[found], axis=0)
    elif not found.any():
        look_rows[:] = 0.0
    for k, name in enumerate(LOOK_FEATURES):
        put(name, look_rows[:, k])
    # the words
    profiles = [mention_profile(paper, f) for f in figures]
    bodies = [caption_body(f.caption) for f in figures]
    cues = [caption_cues(b) for b in bodies]
    put("caption_overview", [c[0] for c in cues])
    put("caption_detail", [c[1] for c in cues])
    put("caption_result", [c[2] for c in cues])
    put("overview_strongest", strongest([c[0] for c in cues]))
    put("caption_length", [np.log1p(len(b.split())) for b in bodies])
    put("title_overlap", [title_overlap(paper.title, b) for b in bodies])
    series, later = caption_series(bodies, order)
    put("series", series)
    put("series_later", later)
    put("mention_overview", [float(p.overview) for p in profiles])
    put("mentioned_early", [float(p.early) for p in profiles])
    put("mentioned_late", [float(p.late) for p in profiles])
    put("first_mention", [p.first_at for p in profiles])
    # where it sits
    put("first_page", [1.0 if f.page == 0 else 0.0 for f in figures])
    put("last_figure", [1.0 if rank_of[i] == n - 1 and n > 1 else 0.0 for i in range(n)])
    put("appendix", [1.0 if is_appendix_page(paper, f.page) else 0.0 for f in figures])
    best = [query[int(per_sentence[:, i].argmax())] if len(per_sentence) else "" for i in range(n)]
    return FigureFeatures(figures, values, best, label, " ".join(query), looks, profiles)


def strongest(values: Sequence[float]) -> list[float]:
    """1 for the values equal to the largest one, when it is above 0; else 0 (ties all get 1)."""
    top = max(values, default=0.0)
    return [1.0 if top > 1e-9 and v >= top - 1e-9 else 0.0 for v in values]


def _look_row(look: FigureLook, paper: Paper, figure: Figure) -> list[float]:
    """The :data:`LOOK_FEATURES` of one figure."""
    types = type_scores(look)
    width = 0.0
    if figure.page < len(paper.page_sizes):
        width = max(0.0, figure.bbox[2] - figure.bbox[0]) / max(1.0, paper.page_sizes[figure.page][0])
    return [types["diagram"], types["chart"], types["photo"], types["table"], multi_panel(look),
            1.0 - look.raster_share if look.found else 0.0, min(1.0, width)]


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


def model_inputs(values: np.ndarray) -> np.ndarray:
    """What the weights multiply: the :data:`WITHIN_PAPER` columns scaled within the paper, the others
    centred on the paper's mean (which changes no ranking) and otherwise as they are."""
    if len(values) == 0:
        return values
    out = values - values.mean(axis=0, keepdims=True)
    scaled = scale_within_paper(values)
    for k, name in enumerate(FEATURES):
        if name in WITHIN_PAPER:
            out[:, k] = scaled[:, k]
    return out


def combine(values: np.ndarray, weights: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Scores (n,) and parts (n, F) of raw feature ``values`` under ``weights`` (unknown names are
    ignored, so a newer bundle's weights still rank)."""
    w = np.array([float(weights.get(name, 0.0)) for name in FEATURES])
    parts = model_inputs(values) * w
    return parts.sum(axis=1), parts


_KIND_PLACES = {"abstract": "the abstract", "introduction": "the introduction", "method": "the methods",
                "result": "the results", "discussion": "the discussion", "conclusion": "the conclusion",
                "related-work": "the related work", "other": "other sections"}


def explain(features: Mapping[str, float], kind: str, profile: MentionProfile, best_sentence: str,
            words: Sequence[str], first: bool) -> str:
    """The evidence for a figure in words: its type, its caption's cues, where the text points to it,
    the abstract sentence its caption matches, and where it sits. No raw scores."""
    bits = []
    if kind:
        what = TYPE_WORDS.get(kind, kind)
        bits.append(what + (" in several panels" if features.get("multi_panel", 0.0) >= 0.5 else ""))
    if features.get("caption_overview", 0.0) >= 0.5:
        bits.append("the caption presents it as an overview or model")
    elif features.get("caption_detail", 0.0) >= 0.5:
        bits.append("the caption presents a detail or an example")
    if profile.count:
        places = ", ".join(_KIND_PLACES.get(k, k) for k in profile.kinds[:3])
        times = f"{profile.count} time{'s' if profile.count != 1 else ''}"
        bits.append(f"pointed to {times} ({places})" + _overview_note(profile))
    else:
        bits.append("never pointed to in the text")
    if best_sentence:
        bits.append(f'its caption matches "{_clip(best_sentence)}"')
    if words:
        bits.append("shared words: " + ", ".join(words))
    where = []
    if features.get("first_figure"):
        where.append("the first figure")
    elif features.get("last_figure"):
        where.append("the last figure")
    if features.get("first_page"):
        where.append("on the first page")
    if features.get("appendix"):
        where.append("in the appendix")
    where.append(f"covers {100 * features.get('size', 0.0):.0f}% of its page")
    bits.append(", ".join(where))
    text = "; ".join(b for b in bits if b)
    return text[0].upper() + text[1:] if text else ("Best candidate" if first else "")


def _overview_note(profile: MentionProfile) -> str:
    """What a mention calls the figure, with its own words as the evidence."""
    if not profile.overview:
        return ""
    return f', described there as an overview or summary ("{_clip(profile.overview_words, 60)}")'


def _clip(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def rank_figures(paper: Paper, scorer: CaptionScorer, weights: Mapping[str, float] | None = None,
                 weights_source: str = "", include_tables: bool = False,
                 looks: Sequence[FigureLook] | None = None) -> FigureRanking:
    """The paper's candidate figures ranked best first, each with its score parts, features and reason.
    ``looks``: see :func:`figure_features` (read from the PDF when not given)."""
    chosen = dict(weights) if weights else dict(SCORER_ONLY)
    source = weights_source or ("fitted" if weights else "scorer only (no fitted weights)")
    feats = figure_features(paper, scorer, include_tables, looks)
    ranking = FigureRanking(paper.title, paper.source_path, scorer.scorer_id, chosen, source, feats.query)
    if not feats.figures:
        return ranking
    scores, parts = combine(feats.values, chosen)
    order = sorted(range(len(feats.figures)), key=lambda i: (-scores[i], i))
    for rank, i in enumerate(order, start=1):
        figure = feats.figures[i]
        raw = {name: float(feats.values[i, k]) for k, name in enumerate(FEATURES)}
        words = shared_words(caption_body(figure.caption), feats.query_text)
        look = feats.looks[i]
        kind = figure_type(look)
        profile = feats.mentions[i]
        ranking.figures.append(RankedFigure(
            figure_id=figure.id, number=figure.number, kind=figure.kind, page=figure.page,
            caption=figure.caption, rank=rank, score=float(scores[i]),
            parts={name: float(parts[i, k]) for k, name in enumerate(FEATURES) if chosen.get(name)},
            features=raw, best_sentence=feats.best_sentences[i], words=words,
            reason=explain(raw, kind, profile, feats.best_sentences[i], words, rank == 1),
            figure_type=kind, look=look.to_dict(),
            mentions={"count": profile.count, "sections": list(profile.kinds), "overview": profile.overview,
                      "overview_words": profile.overview_words,
                      "first_at": round(profile.first_at, 4)}))
    return ranking
