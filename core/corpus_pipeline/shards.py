"""Labelled shards on disk, and their merge into one pack.

A shard is two files in the work folder: ``shard-NNNNNNNN.npz`` (the int8 vectors and their
scales; read without pickle) and ``shard-NNNNNNNN.json`` (its key, papers and sentence rows),
each written to a temporary name and renamed; the JSON, written last, marks the shard finished.
A shard is reused only when its key (model + rows, :meth:`ShardSpec.key`) matches, so a re-run after
a failure skips finished shards and redoes only the rest, and a changed input or model redoes what
changed. Two engines, or a shard retried after a lost worker, writing the same shard write the same
bytes under the same name: nothing is duplicated.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from core.corpus_pipeline.stages import ShardData
from core.errors import RhetoricaError
from core.jobs import JobContext, ensure_context
from core.library.pack_format import PackPaper, PackSentence, PackWriter

MARKER = "rhetorica-corpus-shards"
_SHARD_FILE = re.compile(r"shard-\d{8}\.(npz|json)(\.\d+\.tmp)?")


@dataclass(frozen=True)
class ShardSummary:
    shard_id: int
    papers: int
    sentences: int
    dim: int
    reused: bool = False


class ShardStore:
    """The work folder of one build (on storage every worker can reach when the build is spread)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def _is_marked(self) -> bool:
        marker = self.folder / "README"
        try:
            return marker.is_file() and marker.read_text(encoding="utf-8").startswith(MARKER)
        except (OSError, UnicodeDecodeError):
            return False

    def check(self) -> None:
        """One line, before any work, when the folder exists, holds anything and is not a shard
        folder (a build never writes into, or removes files of, a folder that is not its own)."""
        if self.folder.exists() and not self.folder.is_dir():
            raise RhetoricaError(f"{self.folder}: is a file, not a folder; give --work a folder")
        if self.folder.is_dir() and any(self.folder.iterdir()) and not self._is_marked():
            raise RhetoricaError(f"{self.folder}: holds other files and is not a shard folder of "
                                 "'rhetorica corpus build'; give --work a new or empty folder")

    def create(self) -> None:
        self.check()
        self.folder.mkdir(parents=True, exist_ok=True)
        marker = self.folder / "README"
        if not marker.exists():
            marker.write_text(f"{MARKER}: labelled shards of a 'rhetorica corpus build' (safe to delete)\n",
                              encoding="utf-8")

    def _name(self, shard_id: int) -> str:
        return f"shard-{shard_id:08d}"

    def finished(self, shard_id: int, key: str) -> ShardSummary | None:
        """The shard's summary when it is on disk with this key (else None)."""
        meta = self.folder / f"{self._name(shard_id)}.json"
        if not meta.is_file() or not (self.folder / f"{self._name(shard_id)}.npz").is_file():
            return None
        try:
            record = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(record, dict) or record.get("key") != key:
            return None
        papers, sentences, dim = record.get("papers"), record.get("sentences"), record.get("dim")
        if not isinstance(papers, list) or not isinstance(sentences, list) or type(dim) is not int:
            return None  # damaged: labelled again
        try:
            self.read(shard_id)
        except RhetoricaError:
            return None  # damaged (a cut .npz, rows that do not match): labelled again
        return ShardSummary(shard_id, len(papers), len(sentences), dim, reused=True)

    def write(self, data: ShardData) -> ShardSummary:
        name = self._name(data.shard_id)
        pid = os.getpid()
        tmp = self.folder / f"{name}.npz.{pid}.tmp"
        with open(tmp, "wb") as handle:
            np.savez(handle, quantised=data.quantised, scales=data.scales)
        tmp.replace(self.folder / f"{name}.npz")
        dim = int(data.quantised.shape[1]) if data.quantised.ndim == 2 else 0
        record = {"key": data.key, "dim": dim, "papers": [p.row() for p in data.papers],
                  "sentences": [s.row() for s in data.sentences]}
        tmp = self.folder / f"{name}.json.{pid}.tmp"
        tmp.write_text(json.dumps(record, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
        tmp.replace(self.folder / f"{name}.json")
        return ShardSummary(data.shard_id, len(data.papers), len(data.sentences), dim)

    def read(self, shard_id: int) -> tuple[list[PackPaper], list[PackSentence], np.ndarray, np.ndarray]:
        name = self._name(shard_id)
        try:
            record = json.loads((self.folder / f"{name}.json").read_text(encoding="utf-8"))
            with np.load(self.folder / f"{name}.npz", allow_pickle=False) as arrays:
                quantised, scales = arrays["quantised"], arrays["scales"]
            papers = [PackPaper(**row) for row in record["papers"]]
            sentences = [PackSentence(*row) for row in record["sentences"]]
            if not len(sentences) == len(quantised) == len(scales) or quantised.dtype != np.int8:
                raise ValueError(f"{len(sentences)} sentences but {len(quantised)} vectors")
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as error:
            raise RhetoricaError(f"{self.folder}: shard {shard_id} is damaged ({error}); delete it and "
                                 "build again") from None
        return papers, sentences, quantised, scales

    def remove(self) -> None:
        """Delete the store's own files (after a merge), then the folder when that leaves it empty;
        nothing else in it is ever deleted."""
        if not self._is_marked():
            return
        for path in self.folder.iterdir():
            if _SHARD_FILE.fullmatch(path.name) and path.is_file() and not path.is_symlink():
                path.unlink(missing_ok=True)
        (self.folder / "README").unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            self.folder.rmdir()  # only when empty


def source_counts(papers: Iterable[PackPaper], sentences_per_paper: dict[int, int],
                  first_index: int = 0) -> dict[str, dict[str, Any]]:
    """The manifest's ``sources``: per dataset (in order of first appearance) licence, papers and
    sentences."""
    counts: dict[str, dict[str, Any]] = {}
    for index, paper in enumerate(papers, first_index):
        entry = counts.setdefault(paper.dataset, {"licence": paper.licence, "papers": 0, "sentences": 0})
        entry["papers"] += 1
        entry["sentences"] += sentences_per_paper.get(index, 0)
    return counts


class ShardReader(Protocol):
    def read(self, shard_id: int) -> tuple[list[PackPaper], list[PackSentence], Any, Any]: ...


def merge_shards(store: ShardReader, summaries: list[ShardSummary], out: str | Path, manifest: dict[str, Any],
                 ctx: JobContext | None = None) -> dict[str, Any]:
    """Write the pack from the shards in shard order (streamed: one shard in memory at a time)."""
    ctx = ensure_context(ctx)
    ordered = sorted(summaries, key=lambda s: s.shard_id)
    if [s.shard_id for s in ordered] != list(range(len(ordered))):
        raise RhetoricaError("the shards to merge are not numbered 0..n-1 (a shard is missing)")
    total = sum(s.sentences for s in ordered)
    dims = {s.dim for s in ordered if s.sentences}
    if len(dims) > 1:
        raise RhetoricaError(f"the shards hold vectors of different widths {sorted(dims)}: build again")
    writer = PackWriter(out, total, dims.pop() if dims else 0)
    try:
        counts = _merge_into(writer, store, ordered, ctx)
    except BaseException:
        writer.abort()  # the previous pack at ``out`` stays as it was
        raise
    return writer.finish({**manifest, "sources": counts})


def _merge_into(writer: PackWriter, store: ShardReader, ordered: list[ShardSummary],
                ctx: JobContext) -> dict[str, dict[str, Any]]:
    counts: dict[str, dict[str, Any]] = {}
    for done, summary in enumerate(ordered, 1):
        ctx.check()
        papers, sentences, quantised, scales = store.read(summary.shard_id)
        per_paper: dict[int, int] = {}
        for sentence in sentences:
            per_paper[sentence.paper] = per_paper.get(sentence.paper, 0) + 1
        for dataset, entry in source_counts(papers, per_paper, writer.papers).items():
            total_entry = counts.setdefault(dataset, {"licence": entry["licence"], "papers": 0,
                                                      "sentences": 0})
            total_entry["papers"] += entry["papers"]
            total_entry["sentences"] += entry["sentences"]
        if len(sentences) != summary.sentences:
            raise RhetoricaError(f"shard {summary.shard_id} changed while the pack was written; build again")
        writer.add(papers, sentences, quantised, scales)
        ctx.progress(done, len(ordered), f"merging shard {done} of {len(ordered)}")
    return counts
