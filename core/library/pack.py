"""The default phrase corpus as shipped: a read-only, compact pack that is usable the moment it is
read (no database to build, no index to train).

A pack is a folder (``resources/corpus``), written by ``rhetorica corpus build``:

- ``manifest.json``: format, the model that labelled and embedded it (id and the sha256 of its
  ``model.onnx``, whose function view the vectors are in), sources with licences and counts;
- ``papers.jsonl.gz``: one paper per line ``{"paper_id", "dataset", "title", "licence"}``;
- ``sentences.jsonl.gz``: one sentence per line ``[paper, position, text, section, section_kind,
  role, function]`` (``paper`` = line number in ``papers.jsonl.gz``);
- ``function.npy`` (int8 [n, d]) and ``function-scale.npy`` (float32 [n]): the L2-normalised
  function-view vectors, quantised per row (``vector ~= int8 * scale``).

Search is exact (one int8 -> float32 matrix product, a few milliseconds for 10^5 sentences on two
cores), so a pack needs no approximate index. The pack has no content view: near-duplicates are
found in the function view (:data:`PackCorpus.duplicate_view`).

It answers the same questions as :class:`core.library.library.Library` (``search``, ``sentences``,
``vectors_of``, ``paper``), so :mod:`core.suggest` takes either.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from core.jobs import JobContext, ensure_context
from core.library.store import LibraryError, PaperRecord, SentenceRecord

PACK_FORMAT = "rhetorica-phrase-corpus"
PACK_VERSION = 1
MANIFEST = "manifest.json"
PAPERS = "papers.jsonl.gz"
SENTENCES = "sentences.jsonl.gz"
VECTORS = "function.npy"
SCALES = "function-scale.npy"


def is_pack(folder: str | Path) -> bool:
    return (Path(folder) / MANIFEST).is_file() and (Path(folder) / VECTORS).is_file()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class PackPaper:
    paper_id: str
    dataset: str
    title: str
    licence: str


@dataclass(frozen=True)
class PackSentence:
    paper: int  # index into the papers
    position: int
    text: str
    section: str
    section_kind: str
    role: str
    function: str


def quantise_rows(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 [n, d], float32 scales [n]) of L2-normalised rows."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    scales = np.maximum(np.abs(unit).max(axis=1), 1e-12) / 127.0
    return np.round(unit / scales[:, None]).astype(np.int8), scales.astype(np.float32)


def write_pack(folder: str | Path, papers: Sequence[PackPaper], sentences: Sequence[PackSentence],
               function_vectors: np.ndarray, manifest: dict[str, Any]) -> dict[str, Any]:
    """Write a pack atomically enough: every file goes to a temporary name first and the manifest,
    which marks a folder as a pack, is written last."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    if len(sentences) != len(function_vectors):
        raise ValueError(f"{len(sentences)} sentences but {len(function_vectors)} vectors")
    (out / MANIFEST).unlink(missing_ok=True)

    def gz_lines(name: str, rows: Iterable[Any]) -> None:
        tmp = out / f"{name}.tmp"
        # mtime=0: the same input gives the same bytes (reproducible builds)
        with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as gz:
            for row in rows:
                gz.write((json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))
        tmp.replace(out / name)

    gz_lines(PAPERS, ({"paper_id": p.paper_id, "dataset": p.dataset, "title": p.title, "licence": p.licence}
                      for p in papers))
    gz_lines(SENTENCES, ([s.paper, s.position, s.text, s.section, s.section_kind, s.role, s.function]
                         for s in sentences))
    quantised, scales = quantise_rows(np.asarray(function_vectors, dtype=np.float32))
    for name, array in ((VECTORS, quantised), (SCALES, scales)):
        tmp = out / f"{name}.tmp.npy"
        np.save(tmp, array)
        tmp.replace(out / name)
    record = {"format": PACK_FORMAT, "version": PACK_VERSION, **manifest,
              "papers": len(papers), "sentences": len(sentences),
              "function_dim": int(quantised.shape[1]) if quantised.ndim == 2 else 0}
    tmp = out / f"{MANIFEST}.tmp"
    tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(out / MANIFEST)
    return record


class PackCorpus:
    """A phrase-corpus pack opened for suggestions (read-only; thread-safe: nothing is shared
    but immutable arrays)."""

    duplicate_view = "function"  # the view near-duplicates are judged in (a pack has no content view)

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        started = time.monotonic()
        if not is_pack(self.folder):
            raise LibraryError(f"{self.folder}: not a phrase-corpus pack (no {MANIFEST} / {VECTORS})")
        try:
            self.manifest: dict[str, Any] = json.loads((self.folder / MANIFEST).read_text(encoding="utf-8"))
            if self.manifest.get("format") != PACK_FORMAT:
                raise LibraryError(f"{self.folder}: {MANIFEST} is not a phrase-corpus manifest")
            with gzip.open(self.folder / PAPERS, "rt", encoding="utf-8") as handle:
                self.papers = [PackPaper(**json.loads(line)) for line in handle if line.strip()]
            with gzip.open(self.folder / SENTENCES, "rt", encoding="utf-8") as handle:
                self._rows = [json.loads(line) for line in handle if line.strip()]
            self._vectors = np.load(self.folder / VECTORS, mmap_mode="r")
            self._scales = np.load(self.folder / SCALES)
        except (OSError, ValueError, TypeError, EOFError) as error:
            raise LibraryError(f"{self.folder}: damaged phrase-corpus pack ({error})") from None
        if not len(self._rows) == len(self._vectors) == len(self._scales):
            raise LibraryError(f"{self.folder}: damaged phrase-corpus pack "
                               f"({len(self._rows)} sentences, {len(self._vectors)} vectors)")
        self._by_paper_id = {p.paper_id: i for i, p in enumerate(self.papers)}
        self._dense: np.ndarray | None = None
        self.load_seconds = time.monotonic() - started

    # -- what core.suggest asks ---------------------------------------------------------------
    def close(self) -> None:
        self._dense = None

    def __enter__(self) -> PackCorpus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self._rows)

    def _matrix(self) -> np.ndarray:
        if self._dense is None:  # float32 once (about 50 MB per 10^5 x 128): every query reuses it
            self._dense = np.asarray(self._vectors, dtype=np.float32) * self._scales[:, None]
        return self._dense

    def search(self, view: str, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(sentence ids [q, k'], cosine similarities [q, k']) best first; only the function view."""
        queries = np.atleast_2d(np.asarray(query, dtype=np.float32))
        if view != "function" or not len(self):
            empty = np.zeros((len(queries), 0))
            return empty.astype(np.int64), empty.astype(np.float32)
        matrix = self._matrix()
        if queries.shape[1] != matrix.shape[1]:
            raise LibraryError(f"the phrase corpus has {matrix.shape[1]}-d function vectors, the model "
                               f"gives {queries.shape[1]}-d: rebuild it with 'rhetorica corpus build'")
        queries = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
        scores = queries @ matrix.T
        k = min(k, scores.shape[1])
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        order = np.take_along_axis(scores, top, axis=1).argsort(axis=1)[:, ::-1]
        ids = np.take_along_axis(top, order, axis=1)
        return ids.astype(np.int64), np.take_along_axis(scores, ids, axis=1).astype(np.float32)

    def sentences(self, ids: Sequence[int]) -> list[SentenceRecord]:
        out = []
        for i in ids:
            if 0 <= i < len(self._rows):
                paper, position, text, section, kind, role, function = self._rows[i]
                out.append(SentenceRecord(int(i), self.papers[paper].paper_id, position, text, section, kind,
                                          role, function))
        return out

    def vectors_of(self, ids: Sequence[int], view: str) -> np.ndarray:
        if view != "function":
            raise LibraryError("the phrase corpus keeps only the function view")
        index = np.asarray(list(ids), dtype=np.int64)
        return np.asarray(self._vectors[index], dtype=np.float32) * self._scales[index, None]

    def paper(self, paper_id: str) -> PaperRecord | None:
        index = self._by_paper_id.get(paper_id)
        if index is None:
            return None
        p = self.papers[index]
        count = 0  # not needed by suggestions; papers() is for listings
        return PaperRecord(p.paper_id, "", p.title, p.dataset, p.licence, "corpus",
                           str(self.manifest.get("model_id", "")), 0.0, count)

    # -- compatibility ------------------------------------------------------------------------
    def check_model(self, model_sha256: str) -> None:
        """Raise when the pack's vectors come from another model's function view."""
        built = str(self.manifest.get("model_sha256", ""))
        if built and model_sha256 and built != model_sha256:
            raise LibraryError(
                f"the phrase corpus was built with {self.manifest.get('model_id', 'another model')}, "
                "whose function view differs from the model in use: rebuild it with 'rhetorica corpus build'")


class _Section(Protocol):
    heading: str
    kind: str
    sentences: list[str]


class PaperInput(Protocol):
    """A paper to pack (``models.datasets.phrase_sources.PhrasePaper`` is one)."""

    dataset: str
    paper_id: str
    title: str
    sections: list[Any]

    @property
    def licence(self) -> str: ...


@dataclass
class PackFilter:
    """Which sentences a pack keeps: whole sentences of ordinary length, each wording once."""

    min_words: int = 5
    max_words: int = 80

    def keeps(self, text: str) -> bool:
        words = len(text.split())
        return self.min_words <= words <= self.max_words and any(c.isalpha() for c in text)


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def build_pack(papers: Iterable[PaperInput], model: Any, out: str | Path, manifest: dict[str, Any],
               keep: PackFilter | None = None, ctx: JobContext | None = None,
               papers_per_batch: int = 64, expected_papers: int = 0) -> dict[str, Any]:
    """Label (role, function) and embed (function view) every kept sentence of ``papers`` with
    ``model`` (a ``models.encoder.EncoderModel``) and write the pack to ``out``. Sentences are
    labelled in their sections (the role graph sees each section whole); a wording seen before (in
    any paper, case and spacing ignored) is skipped."""
    ctx = ensure_context(ctx)
    keep = keep or PackFilter()
    seen: set[str] = set()
    pack_papers: list[PackPaper] = []
    sentences: list[PackSentence] = []
    vectors: list[np.ndarray] = []
    counts: dict[str, dict[str, Any]] = {}
    batch: list[tuple[int, int, Any, list[str]]] = []  # (paper index, first position, section, sentences)

    def flush() -> None:
        if not batch:
            return
        encodings = model.encode_documents([(texts, section.kind) for _, _, section, texts in batch],
                                           with_embeddings=False, with_function_vectors=True)
        for (paper, start, section, texts), encoding in zip(batch, encodings, strict=True):
            functions = encoding.functions or []
            for i, (text, role) in enumerate(zip(texts, encoding.roles, strict=True)):
                function = functions[i].label if functions else ""
                sentences.append(PackSentence(paper, start + i, text, section.heading, section.kind,
                                              role.label, "" if function == "none" else function))
            vectors.append(encoding.function_vectors)
        batch.clear()

    for done, paper in enumerate(papers, 1):
        ctx.check()
        index = len(pack_papers)
        kept_any = False
        position = 0
        for section in paper.sections:
            texts = []
            for text in section.sentences:
                text = " ".join(str(text).split())
                if keep.keeps(text) and _key(text) not in seen:
                    seen.add(_key(text))
                    texts.append(text)
            if texts:
                batch.append((index, position, section, texts))
                position += len(texts)
                kept_any = True
                entry = counts.setdefault(paper.dataset,
                                          {"licence": paper.licence, "papers": 0, "sentences": 0})
                entry["sentences"] += len(texts)
        if kept_any:
            pack_papers.append(PackPaper(paper.paper_id, paper.dataset, paper.title, paper.licence))
            counts[paper.dataset]["papers"] += 1
        if len(batch) >= papers_per_batch:
            flush()
            ctx.progress(done, max(expected_papers, done), f"{len(sentences)} sentences labelled")
    flush()
    matrix = np.concatenate(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)
    return write_pack(out, pack_papers, sentences, matrix, {**manifest, "sources": counts})
