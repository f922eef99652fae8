"""The pipeline's one driver: sources -> sentences -> shards -> (engine) labels -> merge.

The sequential stages (reading sources in order, choosing sentences, cutting shards, merging) run
here, in the calling process, whatever the engine; the engine (:class:`ShardEngine`) only labels
shards and writes them to the store, as many at a time as it has room for. A shard already in the
store with the same key is not labelled again.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from core.corpus_pipeline.shards import ShardStore, ShardSummary, merge_shards
from core.corpus_pipeline.stages import (
    SECTIONS_PER_SHARD,
    PackFilter,
    SentenceSelector,
    ShardData,
    ShardSpec,
    SourcePaper,
    plan_shards,
)
from core.jobs import JobContext, ensure_context
from core.library.pack_format import PackPaper, PackSentence


class ShardSink(Protocol):
    """Where labelled shards go and are merged from: :class:`ShardStore` (a folder: resumable)
    or :class:`MemoryShards` (nothing on disk)."""

    def create(self) -> None: ...

    def finished(self, shard_id: int, key: str) -> ShardSummary | None: ...

    def write(self, data: ShardData) -> ShardSummary: ...

    def read(self, shard_id: int) -> tuple[list[PackPaper], list[PackSentence], Any, Any]: ...

    def remove(self) -> None: ...


class MemoryShards:
    """Shards kept in memory (a one-off build that needs no resuming: ``core.library.pack.build_pack``)."""

    def __init__(self) -> None:
        self._shards: dict[int, ShardData] = {}

    def create(self) -> None:
        pass

    def finished(self, shard_id: int, key: str) -> ShardSummary | None:
        return None

    def write(self, data: ShardData) -> ShardSummary:
        self._shards[data.shard_id] = data
        dim = int(data.quantised.shape[1]) if data.quantised.ndim == 2 else 0
        return ShardSummary(data.shard_id, len(data.papers), len(data.sentences), dim)

    def read(self, shard_id: int) -> tuple[list[PackPaper], list[PackSentence], Any, Any]:
        data = self._shards.pop(shard_id)
        return data.papers, data.sentences, data.quantised, data.scales

    def remove(self) -> None:
        self._shards.clear()


class ShardEngine(Protocol):
    """Labels shards: ``submit`` one (returns at once or when labelled), ``collect`` the summaries of
    those finished since (blocking until one is, when some are in flight)."""

    capacity: int  # shards in flight at most

    def submit(self, spec: ShardSpec, key: str) -> None: ...

    def collect(self) -> list[ShardSummary]: ...

    def in_flight(self) -> int: ...


@dataclass
class PipelineResult:
    record: dict[str, Any]  # the pack's manifest
    shards: int
    shards_reused: int
    sentences_labelled: int  # in the shards labelled by this run (not reused)
    seconds: float
    driver_seconds: float  # of ``seconds``, the sequential stages here (sources, sentences, shards, merge)
    merge_seconds: float


class _Counted:
    """An iterator that counts what it gave (source papers read so far, for progress)."""

    def __init__(self, items: Iterable[SourcePaper]) -> None:
        self._items = iter(items)
        self.count = 0

    def __iter__(self) -> Iterator[SourcePaper]:
        for item in self._items:
            self.count += 1
            yield item


def run_pipeline(sources: Iterable[SourcePaper], engine: ShardEngine, store: ShardSink, out: str | Path,
                 manifest: dict[str, Any], *, model_sha256: str, keep: PackFilter | None = None,
                 sections_per_shard: int = SECTIONS_PER_SHARD, ctx: JobContext | None = None,
                 expected_papers: int = 0, keep_shards: bool = True) -> PipelineResult:
    """Build the pack ``out`` from ``sources`` (in their order) with ``engine`` labelling the shards.
    ``keep_shards=False`` deletes the store's folder after a successful merge."""
    ctx = ensure_context(ctx)
    started = time.monotonic()
    store.create()
    counted = _Counted(sources)
    summaries: dict[int, ShardSummary] = {}
    reused = labelled = 0
    engine_seconds = 0.0

    def collect() -> list[ShardSummary]:
        nonlocal engine_seconds
        started_here = time.monotonic()
        finished = engine.collect()
        engine_seconds += time.monotonic() - started_here
        return finished

    def take(finished: list[ShardSummary]) -> None:
        nonlocal labelled
        for summary in finished:
            summaries[summary.shard_id] = summary
            labelled += summary.sentences
        done = counted.count
        ctx.progress(done, max(expected_papers, done),
                     f"{sum(s.sentences for s in summaries.values())} sentences labelled"
                     + (f" ({reused} shard(s) reused)" if reused else ""))

    for spec in plan_shards(SentenceSelector(keep).run(counted), sections_per_shard):
        ctx.check()
        key = spec.key(model_sha256)
        done_before = store.finished(spec.shard_id, key)
        if done_before is not None:
            summaries[spec.shard_id] = done_before
            reused += 1
            continue
        while engine.in_flight() >= engine.capacity:
            take(collect())
        submitted = time.monotonic()
        engine.submit(spec, key)
        engine_seconds += time.monotonic() - submitted
    while engine.in_flight():
        ctx.check()
        take(collect())
    ordered = [summaries[i] for i in sorted(summaries)]
    merging = time.monotonic()
    record = merge_shards(store, ordered, out, manifest, ctx=None)
    merge_seconds = time.monotonic() - merging
    if not keep_shards:
        store.remove()
    seconds = time.monotonic() - started
    return PipelineResult(record, len(ordered), reused, labelled, seconds, seconds - engine_seconds,
                          merge_seconds)


class LocalEngine:
    """Labels each shard here, at once, with a model already loaded (no Ray)."""

    capacity = 1

    def __init__(self, model: Any, store: ShardSink) -> None:
        self.model = model
        self.store = store
        self._finished: list[ShardSummary] = []

    def submit(self, spec: ShardSpec, key: str) -> None:
        from core.corpus_pipeline.stages import label_shard

        self._finished.append(self.store.write(label_shard(self.model, spec, key)))

    def collect(self) -> list[ShardSummary]:
        finished, self._finished = self._finished, []
        return finished

    def in_flight(self) -> int:
        return len(self._finished)


def shard_store(folder: str | Path | None) -> ShardSink:
    """The store for a build: a folder (resumable) or memory (``None``)."""
    return MemoryShards() if folder is None else ShardStore(folder)
