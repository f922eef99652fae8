"""The default phrase corpus as shipped: a read-only, compact pack that is usable the moment it is
read (no database to build, no index to train).

A pack is a folder (``resources/corpus``), written by ``rhetorica corpus build``:

- ``manifest.json``: format, the model that labelled and embedded it (id and the sha256 of its
  ``model.onnx``, whose function view the vectors are in), sources with licences and counts;
- ``papers.jsonl.gz``: one paper per line ``{"paper_id", "dataset", "title", "licence"}``;
- ``sentences.jsonl.gz``: one sentence per line ``[paper, position, text, section, section_kind,
  role, function, function_confidence]`` (``paper`` = line number in ``papers.jsonl.gz``; packs built
  before session 18 have no confidence: read as 1.0);
- ``function.npy`` (int8 [n, d]) and ``function-scale.npy`` (float32 [n]): the L2-normalised
  function-view vectors, quantised per row (``vector ~= int8 * scale``).

Search (``core.library.pack_index``) is exact for a pack under 200,000 sentences (one int8 ->
float32 matrix product, a few milliseconds for 10^5 sentences on two cores); a bigger pack carries
``function.ann`` (faiss IVF + 8-bit candidates, re-ranked exactly on the int8 rows). The pack has
no content view: near-duplicates are found in the function view (:data:`PackCorpus.duplicate_view`).

It answers the same questions as :class:`core.library.library.Library` (``search``, ``sentences``,
``vectors_of``, ``paper``), so :mod:`core.phrasing.suggest` takes either.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from core.corpus_pipeline.stages import PackFilter
from core.jobs import JobContext
from core.json_shapes import loads
from core.library.pack_format import (
    MANIFEST,
    PACK_FORMAT,
    PACK_VERSION,
    PAPERS,
    SCALES,
    SENTENCES,
    VECTORS,
    PackPaper,
    PackSentence,
    PackWriter,
    file_sha256,
    quantise_rows,
    write_pack,
)
from core.library.pack_index import PackSearch
from core.library.store import LibraryError, PaperRecord, SentenceRecord, known_confidence

__all__ = ["MANIFEST", "PACK_FORMAT", "PACK_VERSION", "PAPERS", "SCALES", "SENTENCES", "VECTORS",
           "PackCorpus", "PackFilter", "PackPaper", "PackSentence", "PackWriter", "PaperInput", "build_pack",
           "file_sha256", "is_pack", "quantise_rows", "write_pack"]


def _plain_reason(error: BaseException) -> str:
    """Why a pack file cannot be read, in words (numpy's hint to load pickled data is not for users)."""
    if "pickle" in str(error) or "Python objects" in str(error):
        return "a file is not a plain numeric array"
    return str(error)


def _valid_row(row: object, papers: int) -> bool:
    """``[paper, position, text, section, section_kind, role, function(, confidence)]`` with a paper index in
    range."""
    if not isinstance(row, list) or not 7 <= len(row) <= 8:
        return False
    paper, position, *words = row[:7]  # text, section heading, section kind, role, function
    return (type(paper) is int and type(position) is int and 0 <= paper < papers
            and all(isinstance(v, str) for v in words))


def is_pack(folder: str | Path) -> bool:
    return (Path(folder) / MANIFEST).is_file() and (Path(folder) / VECTORS).is_file()


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
                self.papers = [PackPaper(**loads(line)) for line in handle if line.strip()]
            with gzip.open(self.folder / SENTENCES, "rt", encoding="utf-8") as handle:
                self._rows = [loads(line) for line in handle if line.strip()]
            self._vectors = np.load(self.folder / VECTORS, mmap_mode="r")
            self._scales = np.load(self.folder / SCALES)
        except (OSError, ValueError, TypeError, EOFError) as error:
            reason = _plain_reason(error)
            raise LibraryError(f"{self.folder}: damaged phrase-corpus pack ({reason})") from None
        if not len(self._rows) == len(self._vectors) == len(self._scales):
            raise LibraryError(f"{self.folder}: damaged phrase-corpus pack ({len(self._rows)} sentences, "
                               f"{len(self._vectors)} vectors, {len(self._scales)} scales)")
        self._by_paper_id = {p.paper_id: i for i, p in enumerate(self.papers)}
        self._search: PackSearch | None = None  # opened on the first search (core.library.pack_index)
        self.load_seconds = time.monotonic() - started

    # -- what core.phrasing.suggest asks ---------------------------------------------------------------
    def close(self) -> None:
        self._search = None

    def __enter__(self) -> PackCorpus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self._rows)

    def search(self, view: str, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(sentence ids [q, k'], cosine similarities [q, k']) best first; only the function view."""
        queries = np.atleast_2d(np.asarray(query, dtype=np.float32))
        if view != "function" or not len(self):
            empty = np.zeros((len(queries), 0))
            return empty.astype(np.int64), empty.astype(np.float32)
        dim = self._vectors.shape[1]
        if queries.shape[1] != dim:
            raise LibraryError(f"the phrase corpus has {dim}-d function vectors, the model "
                               f"gives {queries.shape[1]}-d: rebuild it with 'rhetorica corpus build'")
        queries = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
        if self._search is None:  # exact, or through the pack's function.ann when it has one
            self._search = PackSearch(self.folder / VECTORS, self._vectors, self._scales)
        return self._search.search(queries, k)

    def sentences(self, ids: Sequence[int]) -> list[SentenceRecord]:
        return [self._record(int(i)) for i in ids if 0 <= i < len(self._rows)]

    def _record(self, i: int) -> SentenceRecord:
        """Sentence ``i`` from its row, checked (a damaged row is one line, not a crash)."""
        row = self._rows[i]
        if not _valid_row(row, len(self.papers)):
            raise LibraryError(f"{self.folder}: damaged phrase-corpus pack (sentence {i} is not a valid "
                               "row): rebuild it with 'rhetorica corpus build'")
        paper, position, text, section, kind, role, function, *rest = row
        return SentenceRecord(i, self.papers[paper].paper_id, position, text, section, kind, role, function,
                              function_confidence=known_confidence(rest[0] if rest else None))

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


def build_pack(papers: Iterable[PaperInput], model: Any, out: str | Path, manifest: dict[str, Any],
               keep: PackFilter | None = None, ctx: JobContext | None = None,
               papers_per_batch: int = 64, expected_papers: int = 0) -> dict[str, Any]:
    """Label (role, function) and embed (function view) every kept sentence of ``papers`` with
    ``model`` (a ``models.encoder.EncoderModel``) and write the pack to ``out``, in this process and
    in memory (:mod:`core.corpus_pipeline`'s local engine; ``rhetorica corpus build`` adds shards on
    disk and the Ray engine). Sentences are labelled in their sections (the role graph sees each
    section whole); a wording seen before (in any paper, case and spacing ignored) is skipped;
    ``papers_per_batch`` sections of kept sentences make one labelling call."""
    from core.corpus_pipeline.driver import LocalEngine, MemoryShards, run_pipeline
    from core.corpus_pipeline.stages import source_paper

    store = MemoryShards()
    result = run_pipeline((source_paper(p) for p in papers), LocalEngine(model, store), store, out, manifest,
                          model_sha256=str(manifest.get("model_sha256", "")), keep=keep,
                          sections_per_shard=papers_per_batch, ctx=ctx, expected_papers=expected_papers)
    return result.record
