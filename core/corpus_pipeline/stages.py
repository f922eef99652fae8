"""The pipeline's stages as plain functions over dataclasses (no engine, no model loading).

sources -> :class:`SourcePaper` (a dataset paper as it is, or a parsed PDF: :func:`source_from_pdf`)
-> :class:`SentenceSelector` (filter, each wording once, in paper order: a sequential, cheap, text-only
stage) -> :func:`plan_shards` (consecutive kept papers cut where the one-process builder always cut
its labelling batches) -> :func:`label_shard` (one ``encode_documents`` call per shard, so every
engine labels exactly the same batches and gets the same floats) -> :class:`ShardData`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from core.library.pack_format import PackPaper, PackSentence, quantise_rows

if TYPE_CHECKING:  # pragma: no cover
    from core.document import Paper

SECTIONS_PER_SHARD = 64  # the one-process builder's labelling batch (sections of kept sentences)


@dataclass(frozen=True)
class SourceSection:
    heading: str
    kind: str  # a core.document.SectionKind value
    sentences: tuple[str, ...]


@dataclass(frozen=True)
class SourcePaper:
    """One paper as a source gives it: its sections' sentences in reading order."""

    dataset: str
    paper_id: str
    title: str
    licence: str
    sections: tuple[SourceSection, ...]


def source_paper(paper: Any) -> SourcePaper:
    """A :class:`SourcePaper` from anything shaped like one (``PhrasePaper``: dataset, paper_id,
    title, licence, sections of heading/kind/sentences)."""
    if isinstance(paper, SourcePaper):
        return paper
    return SourcePaper(paper.dataset, paper.paper_id, paper.title, paper.licence,
                       tuple(SourceSection(s.heading, s.kind, tuple(str(t) for t in s.sentences))
                             for s in paper.sections))


def source_from_pdf(paper: Paper, dataset: str, licence: str) -> SourcePaper:
    """A parsed PDF as a source paper (id: the file's sha256; its body sections in order)."""
    sections = []
    for section in paper.sections:
        first, count = section.first_sentence, section.sentence_count
        texts = tuple(s.text for s in paper.sentences[first: first + count])
        if texts:
            sections.append(SourceSection(section.heading, section.kind.value, texts))
    return SourcePaper(dataset, paper.sha256, paper.title, licence, tuple(sections))


@dataclass
class PackFilter:
    """Which sentences a pack keeps: whole sentences of ordinary length, each wording once."""

    min_words: int = 5
    max_words: int = 80

    def keeps(self, text: str) -> bool:
        words = len(text.split())
        return self.min_words <= words <= self.max_words and any(c.isalpha() for c in text)


def wording_key(text: str) -> str:
    return " ".join(text.lower().split())


@dataclass(frozen=True)
class KeptSection:
    position: int  # the paper's position of its first kept sentence
    heading: str
    kind: str
    texts: tuple[str, ...]


@dataclass(frozen=True)
class KeptPaper:
    index: int  # its line in the pack's papers file
    paper: PackPaper
    sections: tuple[KeptSection, ...]


class SentenceSelector:
    """The sentences stage: whitespace folded, the filter applied, a wording seen before (in any
    paper, case and spacing ignored) skipped. Stateful and sequential: papers must come in their
    final order. Wordings are remembered as 16-byte digests (bounded memory per sentence)."""

    def __init__(self, keep: PackFilter | None = None) -> None:
        self.keep = keep or PackFilter()
        self._seen: set[bytes] = set()
        self.papers = 0

    def select(self, paper: SourcePaper) -> KeptPaper | None:
        sections = []
        position = 0
        for section in paper.sections:
            texts = []
            for raw in section.sentences:
                text = " ".join(str(raw).split())
                if not self.keep.keeps(text):
                    continue
                digest = hashlib.blake2b(wording_key(text).encode("utf-8"), digest_size=16).digest()
                if digest in self._seen:
                    continue
                self._seen.add(digest)
                texts.append(text)
            if texts:
                sections.append(KeptSection(position, section.heading, section.kind, tuple(texts)))
                position += len(texts)
        if not sections:
            return None
        kept = KeptPaper(self.papers, PackPaper(paper.paper_id, paper.dataset, paper.title, paper.licence),
                         tuple(sections))
        self.papers += 1
        return kept

    def run(self, papers: Iterable[SourcePaper]) -> Iterator[KeptPaper]:
        for paper in papers:
            kept = self.select(paper)
            if kept is not None:
                yield kept


@dataclass(frozen=True)
class ShardSpec:
    """What one labelling call gets: consecutive kept papers (never split between shards)."""

    shard_id: int
    papers: tuple[KeptPaper, ...]

    @property
    def sections(self) -> list[KeptSection]:
        return [section for paper in self.papers for section in paper.sections]

    @property
    def sentence_count(self) -> int:
        return sum(len(section.texts) for section in self.sections)

    def key(self, model_sha256: str) -> str:
        """A digest of everything the shard's output depends on: the model and the shard's rows."""
        digest = hashlib.sha256(json.dumps(["rhetorica-shard-1", model_sha256, self.shard_id],
                                           separators=(",", ":")).encode("utf-8"))
        for kept in self.papers:
            rows = [[s.position, s.heading, s.kind, list(s.texts)] for s in kept.sections]
            digest.update(json.dumps([kept.index, kept.paper.row(), rows],
                                     ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        return digest.hexdigest()


def plan_shards(kept: Iterable[KeptPaper],
                sections_per_shard: int = SECTIONS_PER_SHARD) -> Iterator[ShardSpec]:
    """Cut the kept papers into shards: a shard closes after the paper that brings it to
    ``sections_per_shard`` sections (the one-process builder's batching, kept so that packs stay
    byte-identical to the ones it built)."""
    if sections_per_shard < 1:
        raise ValueError("sections_per_shard must be at least 1")
    papers: list[KeptPaper] = []
    sections = 0
    shard_id = 0
    for paper in kept:
        papers.append(paper)
        sections += len(paper.sections)
        if sections >= sections_per_shard:
            yield ShardSpec(shard_id, tuple(papers))
            shard_id += 1
            papers, sections = [], 0
    if papers:
        yield ShardSpec(shard_id, tuple(papers))


@dataclass
class ShardData:
    """A labelled shard: its papers and sentence rows (paper = index in the whole pack) and the
    sentences' function-view vectors, quantised per row."""

    shard_id: int
    key: str
    papers: list[PackPaper]
    sentences: list[PackSentence]
    quantised: np.ndarray  # int8 [n, d]
    scales: np.ndarray  # float32 [n]


def label_shard(model: Any, spec: ShardSpec, key: str) -> ShardData:
    """Label (role, function) and embed (function view) a shard's sentences with ``model`` (a
    ``models.encoder.EncoderModel``) in ONE call: each section is a document (the role graph sees
    it whole); the sentence graph batches all of the shard's sentences together."""
    items = [(paper, section) for paper in spec.papers for section in paper.sections]
    encodings = model.encode_documents([(list(section.texts), section.kind) for _, section in items],
                                       with_embeddings=False, with_function_vectors=True)
    sentences: list[PackSentence] = []
    vectors: list[np.ndarray] = []
    for (paper, section), encoding in zip(items, encodings, strict=True):
        functions = encoding.functions or []
        for i, (text, role) in enumerate(zip(section.texts, encoding.roles, strict=True)):
            function = functions[i].label if functions else ""
            confidence = functions[i].confidence if functions and function not in ("", "none") else 0.0
            sentences.append(PackSentence(paper.index, section.position + i, text, section.heading,
                                          section.kind, role.label, "" if function == "none" else function,
                                          confidence))
        vectors.append(encoding.function_vectors)
    matrix = np.concatenate(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)
    quantised, scales = quantise_rows(np.asarray(matrix, dtype=np.float32))
    return ShardData(spec.shard_id, key, [p.paper for p in spec.papers], sentences, quantised, scales)
