"""Two texts side by side: a rhetorical sentence alignment, a gap report and its exports (no Qt).

:func:`align` lines up the sentences of two papers (or a draft and a paper, or two abstracts) by
what each sentence *does* and what it is *about*: the pair score is a weighted cosine of the
model's function view and content view (``function_weight`` is the setting: the pair's
*similarity*, 0 to 1, what a reader is shown), plus small bonuses when the two sentences share their
role or their communicative function or sit at the same relative place (what the alignment chooses
by, never shown).

The alignment keeps most rhetorical order. Each side is cut into *blocks* (runs of sentences with
the same section kind); blocks of the same kind are matched in order (a longest common
subsequence over the kinds), and within each matched pair a monotone dynamic programme
(Needleman–Wunsch with a skip cost) pairs sentences one-to-one or one-to-many (a sentence with
up to ``max_merge`` adjacent sentences of the other side). Blocks that the in-order match left
over but whose kind the other side also has (reordered sections) are aligned the same way in a
second round; every sentence still left then goes through a global fallback that pairs mutual
best matches above a higher threshold. A side without section kinds (a draft without headings)
is aligned as one block against the whole other side.

:func:`core.alignment.align_gaps.gap_report` (which holds the gap types and reads only the two sides) says
what one side does that the other does not, checked against both texts' structure and ranked by
importance, phrased for people with the taxonomy's names ("B never admits a limitation"), and the
share of each role per section side by side. :mod:`core.alignment.align_export`
writes the result as JSON, Markdown and one standalone HTML page (inline CSS, SVG and script,
nothing fetched).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.alignment.align_gaps import GapItem as GapItem  # the gap types live in core.alignment.align_gaps
from core.alignment.align_gaps import GapReport, gap_report
from core.taxonomy.labels import NO_FUNCTION, UNCERTAIN_BELOW

if TYPE_CHECKING:  # pragma: no cover
    from core.document import Paper
    from core.labelling.analysis import PaperAnalysis
    from core.library.library import Library
    from core.taxonomy.functions import FunctionTaxonomy

ALIGN_FORMAT = 1
SIDES = ("a", "b")


# -- inputs ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AlignSentence:
    """One sentence of a side: its text, where it sits and the model's labels."""

    text: str
    section: str = ""  # the section heading as printed ("" for none)
    section_kind: str = ""  # a core.document.SectionKind value; "" when unknown (a draft)
    role: str = ""
    function: str = ""  # a taxonomy function id, "none" (below threshold) or "" (no function head)
    # the role's probability: below core.taxonomy.labels.UNCERTAIN_BELOW the gap report leaves the role out
    # (1.0 where it is not known, e.g. an alignment file written before it was kept)
    role_confidence: float = 1.0

    @property
    def confident_role(self) -> bool:
        return bool(self.role) and self.role_confidence >= UNCERTAIN_BELOW

    @property
    def clear_function(self) -> bool:
        return self.function not in ("", NO_FUNCTION)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AlignSentence:
        values: dict[str, Any] = {k: str(v) for k, v in data.items() if k != "role_confidence"}
        if "role_confidence" in data:
            values["role_confidence"] = float(data["role_confidence"])
        return cls(**values)


@dataclass
class AlignSide:
    """A paper-like input: its sentences in reading order and both embedding views (one row per
    sentence, L2-normalised). ``kind`` says where it came from ("pdf", "library", "draft")."""

    title: str
    sentences: list[AlignSentence]
    content: np.ndarray  # (n, d) the content view
    function: np.ndarray  # (n, k) the function view
    source: str = ""
    kind: str = ""

    def __post_init__(self) -> None:
        n = len(self.sentences)
        for name in ("content", "function"):
            vectors = getattr(self, name)
            if vectors.ndim != 2 or len(vectors) != n:
                raise ValueError(f"{name} vectors {vectors.shape} do not match {n} sentences")

    def __len__(self) -> int:
        return len(self.sentences)

    def to_dict(self) -> dict[str, Any]:
        """The side without its vectors (exports carry labels and text only)."""
        return {"title": self.title, "source": self.source, "kind": self.kind,
                "sentences": [asdict(s) for s in self.sentences]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AlignSide:
        sentences = [AlignSentence.from_dict(s) for s in data["sentences"]]
        empty = np.zeros((len(sentences), 0), dtype=np.float32)
        return cls(str(data.get("title", "")), sentences, empty, empty.copy(), str(data.get("source", "")),
                   str(data.get("kind", "")))


def _normalised(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[1] == 0:
        return vectors.reshape(len(vectors), -1)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def side_from_paper(paper: Paper, analysis: PaperAnalysis, *, kind: str = "pdf") -> AlignSide:
    """A side from a parsed paper and its analysis (``analyze_paper(..., with_embeddings=True,
    with_function_vectors=True)``; without a function view the content view stands in for it)."""
    if len(analysis.roles) != len(paper.sentences):
        raise ValueError(f"analysis has {len(analysis.roles)} roles for {len(paper.sentences)} sentences")
    if analysis.embeddings is None:
        raise ValueError("the analysis has no embeddings: run analyze_paper(..., with_embeddings=True)")
    functions = analysis.functions
    sentences = []
    for sentence in paper.sentences:
        index = sentence.section_index
        section = paper.sections[index] if 0 <= index < len(paper.sections) else None
        function = functions[sentence.index].label if functions is not None else ""
        role = analysis.roles[sentence.index]
        sentences.append(AlignSentence(sentence.text, section.heading if section else "",
                                       section.kind.value if section else "", role.label, function,
                                       role.confidence))
    content = analysis.embeddings
    function_view = analysis.function_vectors if analysis.function_vectors is not None else content
    return AlignSide(paper.title or Path(paper.source_path).name, sentences, _normalised(content),
                     _normalised(function_view), paper.source_path, kind)


def side_from_library(library: Library, paper_id: str) -> AlignSide:
    """A side from a library paper (its id, or a unique start of it): stored labels and both views."""
    store = library.store
    paper_id = store.resolve_paper_id(paper_id)  # LibraryError (one line) for an unknown id
    record = store.paper(paper_id)
    records = store.sentences_of(paper_id)
    ids = [r.id for r in records]
    content = library.vectors_of(ids, "content") if ids else np.zeros((0, 0), np.float32)
    try:
        function = library.vectors_of(ids, "function") if ids else content
    except KeyError:  # stored without a function view
        function = content
    sentences = [AlignSentence(r.text, r.section, r.section_kind, r.role, r.function, r.role_confidence)
                 for r in records]
    title = (record.title if record is not None else "") or paper_id
    return AlignSide(title, sentences, _normalised(content), _normalised(function),
                     record.source if record is not None else "", "library")


def paper_from_text(text: str, *, title: str = "", source: str = "") -> Paper:
    """A draft's text as a :class:`Paper` (no pages): section headings (markdown ``#`` lines, or
    short lines naming a known section such as "2 Methods") start sections with their kind; text
    before any heading has no section (the model sees no section kind, as in the draft pane). Each
    part is split into sentences like the draft pane does (``core.text.sentences``)."""
    from core.document import Paper, Section, SectionKind, Sentence
    from core.drafts import heading_of
    from core.pdf.headings import is_abstract_heading, section_kind, split_number
    from core.text.sentences import split_sentence_texts

    parts: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in text.splitlines():
        found = heading_of(line)
        if found is not None:
            level, name = found
            _, bare = split_number(name)
            known = is_abstract_heading(bare) or section_kind(bare) is not SectionKind.OTHER
            first = len(parts) == 1 and not "".join(parts[0][1]).strip()
            if level == 1 and not known and not title and first:
                title = name  # a leading "# Title"
                continue
            parts.append((name, []))
            continue
        parts[-1][1].append(line)
    paper = Paper(title=title, source_path=source, sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
                  page_sizes=[])
    for heading, lines in parts:
        sentences = split_sentence_texts("\n".join(lines))
        if heading is None:
            section_index = -1
        else:
            number, bare = split_number(heading)
            kind = SectionKind.ABSTRACT if is_abstract_heading(bare) else section_kind(bare)
            paper.sections.append(Section(bare, kind, number=number, first_sentence=len(paper.sentences),
                                          sentence_count=len(sentences)))
            section_index = len(paper.sections) - 1
        for sentence in sentences:
            index = len(paper.sentences)
            paper.sentences.append(Sentence(f"s{index}", sentence, section_index, index, []))
    return paper


# -- settings and results -------------------------------------------------------------------------
@dataclass(frozen=True)
class AlignSettings:
    """How pairs are scored and chosen (all in cosine units)."""

    function_weight: float = 0.7  # weight of the function view; the content view gets the rest
    # The role bonus and the position weight were chosen on CSAbstruct dev-dedup pairs (rhetorica eval
    # align): 0.05 / 0 gave precision 0.41 at coverage 0.19, 0.2 / 0.2 precision 0.51 at coverage 0.58.
    role_bonus: float = 0.2  # added when both sentences have the same role
    function_bonus: float = 0.1  # added when both have the same function (not "none")
    # Added × (1 − |relative position in A − relative position in B|): rhetorical order is also place
    # in the text (papers open with background and close with conclusions).
    position_weight: float = 0.2
    min_score: float = 0.5  # a pair scoring below this is never aligned in a section
    skip_cost: float = 0.02  # what leaving a sentence unaligned costs in the dynamic programme
    max_merge: int = 3  # one sentence may pair with up to this many adjacent ones
    merge_penalty: float = 0.02  # per extra sentence in a one-to-many pair
    fallback_min_score: float = 0.65  # threshold of the global fallback pass

    def __post_init__(self) -> None:
        if not 0.0 <= self.function_weight <= 1.0:
            raise ValueError(f"function_weight must be between 0 and 1, not {self.function_weight}")
        if self.max_merge < 1:
            raise ValueError("max_merge must be at least 1")


# Each way of pairing in a few words, and explained (the ids stay in the JSON).
METHOD_WORDS = {"section": "in matching sections", "reordered": "in matching sections placed differently",
                "fallback": "elsewhere in the text"}
METHOD_EXPLAINED = {
    "section": "paired within sections of the same kind, in reading order",
    "reordered": "paired within sections of the same kind that the two texts place in a different order",
    "fallback": "paired outside the matched sections: a close match found anywhere in the text"}


def method_text(method: str, *, explained: bool = False) -> str:
    """A pair's way of pairing in words: "elsewhere in the text" (``explained``: "paired outside the
    matched sections: a close match found anywhere in the text")."""
    return (METHOD_EXPLAINED if explained else METHOD_WORDS).get(method, method)


@dataclass(frozen=True)
class AlignedPair:
    """Sentences of A (indices) aligned with sentences of B: one-to-one or one-to-many.

    ``score`` is the mean pair score of the members (what the alignment chose by: similarity plus the
    role, function and position bonuses, so at times above 1; never shown); ``similarity`` is the
    mean weighted cosine of the members, between 0 and 1 (what a reader is shown); ``role``/
    ``function`` are shared by every member ("" when not); ``method`` is "section" (matched sections,
    in order), "reordered" (the same kind of section, out of order) or "fallback" (the global pass):
    :func:`method_text` says each in words."""

    a_indices: tuple[int, ...]
    b_indices: tuple[int, ...]
    score: float
    role: str = ""
    function: str = ""
    method: str = "section"
    similarity: float = -1.0  # -1: not known (a file written before it was kept): see ``shown_score``

    @property
    def shown_score(self) -> float:
        """The number a reader sees, between 0 and 1: the similarity (for an older file without it,
        the pair score held to 0..1)."""
        return self.similarity if self.similarity >= 0 else min(max(self.score, 0.0), 1.0)

    def to_dict(self) -> dict[str, Any]:
        return {"a": list(self.a_indices), "b": list(self.b_indices), "score": round(self.score, 4),
                "similarity": round(self.similarity, 4), "role": self.role, "function": self.function,
                "method": self.method}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AlignedPair:
        similarity = float(data.get("similarity", -1.0))
        return cls(tuple(int(i) for i in data["a"]), tuple(int(i) for i in data["b"]), float(data["score"]),
                   str(data.get("role", "")), str(data.get("function", "")),
                   str(data.get("method", "section")), similarity if 0.0 <= similarity <= 1.0 else -1.0)


@dataclass
class Alignment:
    """The result of :func:`align`: pairs (in A's reading order), the sentences left over on each
    side, the settings used, which blocks were matched, and the gap report."""

    a: AlignSide
    b: AlignSide
    pairs: list[AlignedPair]
    unaligned_a: list[int]
    unaligned_b: list[int]
    settings: AlignSettings
    gaps: GapReport = field(default_factory=GapReport)
    # (A start, A end, B start, B end, section kind, method) of each pair of blocks aligned by the DP
    blocks: list[tuple[int, int, int, int, str, str]] = field(default_factory=list)

    def partners(self, side: str) -> dict[int, AlignedPair]:
        """Sentence index of ``side`` ("a"/"b") → the pair it belongs to."""
        found: dict[int, AlignedPair] = {}
        for pair in self.pairs:
            for index in (pair.a_indices if side == "a" else pair.b_indices):
                found[index] = pair
        return found

    @property
    def coverage(self) -> tuple[float, float]:
        """Shares of A's and B's sentences that are aligned."""
        return (1 - len(self.unaligned_a) / max(len(self.a), 1),
                1 - len(self.unaligned_b) / max(len(self.b), 1))

    def to_dict(self) -> dict[str, Any]:
        return {"format": ALIGN_FORMAT, "settings": asdict(self.settings), "a": self.a.to_dict(),
                "b": self.b.to_dict(), "pairs": [p.to_dict() for p in self.pairs],
                "unaligned_a": list(self.unaligned_a), "unaligned_b": list(self.unaligned_b),
                "blocks": [{"a": [a0, a1], "b": [b0, b1], "section_kind": kind, "method": method}
                           for a0, a1, b0, b1, kind, method in self.blocks],
                "gaps": self.gaps.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Alignment:
        if data.get("format") != ALIGN_FORMAT:
            raise ValueError(f"unsupported alignment format {data.get('format')} (expected {ALIGN_FORMAT})")
        return cls(AlignSide.from_dict(data["a"]), AlignSide.from_dict(data["b"]),
                   [AlignedPair.from_dict(p) for p in data["pairs"]],
                   [int(i) for i in data["unaligned_a"]], [int(i) for i in data["unaligned_b"]],
                   AlignSettings(**data["settings"]), GapReport.from_dict(data.get("gaps", {})),
                   [(int(b["a"][0]), int(b["a"][1]), int(b["b"][0]), int(b["b"][1]), str(b["section_kind"]),
                     str(b["method"])) for b in data.get("blocks", [])])


# -- scoring and the dynamic programme ------------------------------------------------------------
def similarity_matrix(a: AlignSide, b: AlignSide, settings: AlignSettings | None = None) -> np.ndarray:
    """How alike each pair of sentences is (len(a) × len(b)): the cosine of the function view and of
    the content view, weighted by ``function_weight`` (between -1 and 1: what a reader is shown)."""
    settings = settings or AlignSettings()
    n, m = len(a), len(b)
    similarity = np.zeros((n, m), dtype=np.float64)
    if n == 0 or m == 0:
        return similarity
    w = settings.function_weight
    for weight, va, vb in ((w, a.function, b.function), (1.0 - w, a.content, b.content)):
        if weight == 0.0:
            continue
        if va.shape[1] == 0 or vb.shape[1] == 0 or va.shape[1] != vb.shape[1]:
            raise ValueError(f"the two sides' vectors do not match ({va.shape} and {vb.shape}): "
                             "were they embedded by the same model?")
        similarity += weight * (va.astype(np.float64) @ vb.astype(np.float64).T)
    return similarity


def score_matrix(a: AlignSide, b: AlignSide, settings: AlignSettings | None = None,
                 similarity: np.ndarray | None = None) -> np.ndarray:
    """Pair scores (len(a) × len(b)) the alignment chooses by: :func:`similarity_matrix` (given, or
    computed) plus the role, function and position bonuses (so above 1 at times: never shown)."""
    settings = settings or AlignSettings()
    n, m = len(a), len(b)
    scores = similarity_matrix(a, b, settings) if similarity is None else similarity.copy()
    if n == 0 or m == 0:
        return scores
    roles_a = np.array([s.role for s in a.sentences], dtype=object)
    roles_b = np.array([s.role for s in b.sentences], dtype=object)
    same_role = (roles_a[:, None] == roles_b[None, :]) & (roles_a[:, None] != "")
    functions_a = np.array([s.function for s in a.sentences], dtype=object)
    functions_b = np.array([s.function for s in b.sentences], dtype=object)
    real = (functions_a != "") & (functions_a != NO_FUNCTION)
    same_function = (functions_a[:, None] == functions_b[None, :]) & real[:, None]
    scores += settings.role_bonus * same_role + settings.function_bonus * same_function
    if settings.position_weight:
        place_a = np.arange(n) / max(n - 1, 1)
        place_b = np.arange(m) / max(m - 1, 1)
        scores += settings.position_weight * (1.0 - np.abs(place_a[:, None] - place_b[None, :]))
    return scores


def _dp(scores: np.ndarray, settings: AlignSettings) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Monotone alignment of one block pair: (A indices, B indices) groups, in order.

    D[i, j] = best value aligning the first i of A with the first j of B. Moves: skip A_i or B_j
    (``-skip_cost``), pair A_i..A_{i-p+1} with B_j..B_{j-q+1} where p == 1 or q == 1 (value: the sum
    of the members' ``score - min_score``, each member at least ``min_score``, minus
    ``merge_penalty`` per extra member). A row at a time in numpy; skipping B is a running maximum."""
    n, m = scores.shape
    gain = scores - settings.min_score
    blocked = np.where(gain >= 0, gain, -np.inf)  # a pair below the threshold is never made
    skip = settings.skip_cost
    k = settings.max_merge
    moves = [(1, 1)] + [(1, q) for q in range(2, k + 1)] + [(p, 1) for p in range(2, k + 1)]
    value = np.full((n + 1, m + 1), -np.inf)
    value[0] = -skip * np.arange(m + 1)
    choice = np.zeros((n + 1, m + 1), dtype=np.int8)  # 0 skip A, 1 skip B, 2 + move index
    choice[0, 1:] = 1
    steps = skip * np.arange(m + 1)
    for i in range(1, n + 1):
        best = value[i - 1] - skip
        code = np.zeros(m + 1, dtype=np.int8)
        for move_index, (p, q) in enumerate(moves):
            if p > i or q > m:
                continue
            if p == 1:  # A_i with B_{j-q+1..j}: sum over q consecutive columns of row i-1
                row = blocked[i - 1]
                total = row[: m - q + 1].copy()
                for t in range(1, q):
                    total = total + row[t: m - q + 1 + t]
            else:  # A_{i-p+1..i} with B_j
                total = blocked[i - p: i].sum(axis=0)
            candidate = np.full(m + 1, -np.inf)
            candidate[q:] = value[i - p, : m + 1 - q] + total - settings.merge_penalty * (p + q - 2)
            better = candidate > best
            best = np.where(better, candidate, best)
            code = np.where(better, 2 + move_index, code)
        shifted = best + steps
        running = np.maximum.accumulate(shifted)
        value[i] = running - steps
        from_left = shifted < running
        choice[i] = np.where(from_left, 1, code)
    groups: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
    i, j = n, m
    while i > 0 or j > 0:
        if i == 0:
            j -= 1
            continue
        c = int(choice[i, j])
        if c == 0:
            i -= 1
        elif c == 1:
            j -= 1
        else:
            p, q = moves[c - 2]
            groups.append((tuple(range(i - p, i)), tuple(range(j - q, j))))
            i, j = i - p, j - q
    groups.reverse()
    return groups


def _blocks(side: AlignSide) -> list[tuple[int, int, str]]:
    """Runs of sentences with the same section kind: (start, end, kind)."""
    runs: list[tuple[int, int, str]] = []
    for index, sentence in enumerate(side.sentences):
        if runs and runs[-1][2] == sentence.section_kind:
            runs[-1] = (runs[-1][0], index + 1, sentence.section_kind)
        else:
            runs.append((index, index + 1, sentence.section_kind))
    return runs


def _match_blocks(blocks_a: list[tuple[int, int, str]], blocks_b: list[tuple[int, int, str]]
                  ) -> list[tuple[int, int]]:
    """Block pairs of the same known kind, in order on both sides, with the most sentences paired
    (a weighted longest common subsequence)."""
    n, m = len(blocks_a), len(blocks_b)
    table = np.zeros((n + 1, m + 1))
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            a0, a1, kind_a = blocks_a[i - 1]
            b0, b1, kind_b = blocks_b[j - 1]
            best = max(table[i - 1, j], table[i, j - 1])
            if kind_a and kind_a == kind_b:
                best = max(best, table[i - 1, j - 1] + min(a1 - a0, b1 - b0))
            table[i, j] = best
    matched: list[tuple[int, int]] = []
    i, j = n, m
    while i > 0 and j > 0:
        a0, a1, kind_a = blocks_a[i - 1]
        b0, b1, kind_b = blocks_b[j - 1]
        if kind_a and kind_a == kind_b and table[i, j] == table[i - 1, j - 1] + min(a1 - a0, b1 - b0):
            matched.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif table[i - 1, j] >= table[i, j - 1]:
            i -= 1
        else:
            j -= 1
    matched.reverse()
    return matched


def _shared(values: list[str]) -> str:
    return values[0] if values and all(v == values[0] for v in values) else ""


def _pair(a: AlignSide, b: AlignSide, scores: np.ndarray, similarity: np.ndarray, a_indices: tuple[int, ...],
          b_indices: tuple[int, ...], method: str) -> AlignedPair:
    score = float(np.mean([scores[i, j] for i in a_indices for j in b_indices]))
    alike = float(np.mean([similarity[i, j] for i in a_indices for j in b_indices]))
    roles = [a.sentences[i].role for i in a_indices] + [b.sentences[j].role for j in b_indices]
    functions = [a.sentences[i].function for i in a_indices] + [b.sentences[j].function for j in b_indices]
    function = _shared(functions)
    return AlignedPair(a_indices, b_indices, score, _shared(roles),
                       function if function != NO_FUNCTION else "", method, min(max(alike, 0.0), 1.0))


def align(a: AlignSide, b: AlignSide, *, function_weight: float = 0.7, settings: AlignSettings | None = None,
          taxonomy: FunctionTaxonomy | None = None) -> Alignment:
    """Align two sides (see the module docstring). ``settings`` overrides every knob; otherwise the
    defaults with ``function_weight``. The gap report uses ``taxonomy`` (default: the shipped one)."""
    if settings is None:
        settings = AlignSettings(function_weight=function_weight)
    similarity = similarity_matrix(a, b, settings)
    scores = score_matrix(a, b, settings, similarity)
    blocks_a, blocks_b = _blocks(a), _blocks(b)
    if all(kind == "" for _, _, kind in blocks_a) or all(kind == "" for _, _, kind in blocks_b):
        # a side without section kinds (a draft without headings): one block against the other whole side
        plan = [(0, len(a), 0, len(b), "", "section")] if len(a) and len(b) else []
    else:
        matched = _match_blocks(blocks_a, blocks_b)
        plan = [(*blocks_a[i][:2], *blocks_b[j][:2], blocks_a[i][2], "section") for i, j in matched]
        used_a = {i for i, _ in matched}
        used_b = {j for _, j in matched}
        for i, (a0, a1, kind) in enumerate(blocks_a):  # reordered sections: same kind, out of order
            if i in used_a or not kind:
                continue
            for j, (b0, b1, kind_b) in enumerate(blocks_b):
                if j not in used_b and kind_b == kind:
                    plan.append((a0, a1, b0, b1, kind, "reordered"))
                    used_b.add(j)
                    break
    pairs: list[AlignedPair] = []
    for a0, a1, b0, b1, _, method in plan:
        for group_a, group_b in _dp(scores[a0:a1, b0:b1], settings):
            pairs.append(_pair(a, b, scores, similarity, tuple(a0 + i for i in group_a),
                               tuple(b0 + j for j in group_b), method))
    # the global fallback: mutual best matches among the sentences still left, above a higher bar
    taken_a = {i for p in pairs for i in p.a_indices}
    taken_b = {j for p in pairs for j in p.b_indices}
    free_a = [i for i in range(len(a)) if i not in taken_a]
    free_b = [j for j in range(len(b)) if j not in taken_b]
    if free_a and free_b:
        sub = scores[np.ix_(free_a, free_b)]
        order = np.argsort(-sub, axis=None, kind="stable")
        used_rows: set[int] = set()
        used_cols: set[int] = set()
        for flat in order:
            r, c = divmod(int(flat), len(free_b))
            if sub[r, c] < settings.fallback_min_score:
                break
            if r in used_rows or c in used_cols:
                continue
            used_rows.add(r)
            used_cols.add(c)
            pairs.append(_pair(a, b, scores, similarity, (free_a[r],), (free_b[c],), "fallback"))
    pairs.sort(key=lambda p: (p.a_indices[0], p.b_indices[0]))
    taken_a = {i for p in pairs for i in p.a_indices}
    taken_b = {j for p in pairs for j in p.b_indices}
    return Alignment(a, b, pairs, [i for i in range(len(a)) if i not in taken_a],
                     [j for j in range(len(b)) if j not in taken_b], settings, gap_report(a, b, taxonomy),
                     blocks=plan)
