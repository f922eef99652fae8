"""``rhetorica corpus build`` behind the CLI: which papers, which engine, where the shards go.

The papers come in a fixed order: each phrase source in turn (``--source``, at most ``max_papers``
each), then the PDFs (``--pdf``; sorted, as ``library add`` finds them) with the licence given for
them. The local engine (default) labels in this process and parses PDFs in a process pool; the
Ray engine (:mod:`models.corpus_ray`) spreads both over a Ray cluster. Both run
:func:`core.corpus_pipeline.driver.run_pipeline`, so the same input and model give the same pack.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from core.corpus_pipeline.stages import SECTIONS_PER_SHARD, SourcePaper, source_from_pdf, source_paper
from core.jobs import JobContext, ensure_context

ENGINES = ("local", "ray")
PDF_DATASET = "pdf"


@dataclass
class CorpusInput:
    sources: list[str]
    max_papers: int | None = None
    pdfs: list[Path] = field(default_factory=list)
    pdf_licence: str = "unknown"
    shared: Path | None = None  # the shared folder (default: ../shared)


@dataclass
class EngineOptions:
    engine: str = "local"
    address: str | None = None  # a Ray cluster (default: a local Ray)
    workers: int | None = None  # Ray: labelling actors (default: the cluster's CPUs); local: PDF parsers
    threads: int = 2  # onnxruntime threads per model
    work: Path | None = None  # shard folder (default: beside the pack, ".NAME.shards")
    keep_shards: bool = False
    sections_per_shard: int = SECTIONS_PER_SHARD


@dataclass
class CorpusBuildReport:
    record: dict[str, Any]
    engine: str
    workers: int
    shards: int
    shards_reused: int
    shards_retried: int
    sentences_labelled: int
    seconds: float
    driver_seconds: float  # the sequential stages in the driver (the rest is waiting on labelling)
    merge_seconds: float
    skipped_pdfs: list[tuple[str, str]]


def default_work_folder(out: Path) -> Path:
    return out.parent / f".{out.name}.shards"


def check_work_folder(work: Path, out: Path) -> None:
    """One line when the shard folder is the pack folder, inside it or above it (removing the shards
    would take the pack with them, or writing the pack would replace the shards)."""
    from core.errors import RhetoricaError

    w, o = Path(work).resolve(), Path(out).resolve()
    if w == o or o in w.parents or w in o.parents:
        where = "is" if w == o else "is inside" if o in w.parents else "holds"
        raise RhetoricaError(f"{work}: the shard folder {where} the pack folder {out}; give --work a "
                             "folder apart from --out")


def dataset_papers(spec: CorpusInput) -> Iterator[SourcePaper]:
    from models.datasets.phrase_sources import phrase_papers

    for source in spec.sources:
        for paper in islice(phrase_papers(source, spec.shared), spec.max_papers):
            yield source_paper(paper)


def pdf_papers(parsed: Iterable[tuple[Path, Any]], licence: str,
               skipped: list[tuple[str, str]]) -> Iterator[SourcePaper]:
    """Parsed PDFs as source papers; one that could not be parsed goes to ``skipped`` with why."""
    for path, paper in parsed:
        if isinstance(paper, str):
            skipped.append((str(path), paper))
        else:
            yield source_from_pdf(paper, PDF_DATASET, licence)


def build_corpus(spec: CorpusInput, bundle: str | Path | None, out: Path, manifest: dict[str, Any],
                 options: EngineOptions, ctx: JobContext | None = None) -> CorpusBuildReport:
    """Build the pack ``out`` (``manifest``: what the caller records besides the sources)."""
    from core.corpus_pipeline.driver import LocalEngine, run_pipeline
    from core.corpus_pipeline.shards import ShardStore
    from core.errors import RhetoricaError
    from core.library.pack_format import file_sha256
    from models.bundle import default_bundle_path

    if options.engine not in ENGINES:
        raise RhetoricaError(f"unknown engine {options.engine!r}; known: {', '.join(ENGINES)}")
    ctx = ensure_context(ctx)
    bundle_dir = Path(bundle) if bundle is not None else default_bundle_path()
    model_sha256 = file_sha256(bundle_dir / "model.onnx")
    work = options.work or default_work_folder(out)
    check_work_folder(work, out)
    store = ShardStore(work)
    store.check()  # an existing folder of other files is refused before any work
    skipped: list[tuple[str, str]] = []
    engine: Any
    if options.engine == "local":
        from core.corpus_pipeline.parse import parse_pdfs
        from models.encoder import load_model

        model = load_model(bundle_dir, device="cpu", threads=options.threads)
        parsers = options.workers if options.workers is not None else max(1, (os.cpu_count() or 2) - 1)
        papers = _chain(dataset_papers(spec),
                        pdf_papers(parse_pdfs(spec.pdfs, parsers, ordered=True), spec.pdf_licence, skipped))
        engine, workers = LocalEngine(model, store), 1
        result = run_pipeline(papers, engine, store, out, {"model_id": model.model_id,
                                                           "model_sha256": model_sha256, **manifest},
                              model_sha256=model_sha256, sections_per_shard=options.sections_per_shard,
                              ctx=ctx, keep_shards=options.keep_shards)
        retried = 0
    else:
        from models.bundle import model_id as bundle_model_id
        from models.bundle import verify_bundle
        from models.corpus_ray import RayEngine, connect, ray_parse

        bundle_manifest = verify_bundle(bundle_dir)  # checked here before any worker loads it
        model_id = bundle_model_id(bundle_manifest)
        ray, workers = connect(options.address, options.workers)
        try:
            store.create()
            engine = RayEngine(ray, workers, str(bundle_dir), options.threads, work)
            papers = _chain(dataset_papers(spec),
                            pdf_papers(ray_parse(ray, spec.pdfs, 2 * workers), spec.pdf_licence, skipped))
            result = run_pipeline(papers, engine, store, out, {"model_id": model_id,
                                                               "model_sha256": model_sha256, **manifest},
                                  model_sha256=model_sha256, sections_per_shard=options.sections_per_shard,
                                  ctx=ctx, keep_shards=options.keep_shards)
            retried = engine.retried
        finally:
            ray.shutdown()
    return CorpusBuildReport(result.record, options.engine, workers, result.shards, result.shards_reused,
                             retried, result.sentences_labelled, result.seconds, result.driver_seconds,
                             result.merge_seconds, skipped)


def _chain(*parts: Iterable[SourcePaper]) -> Iterator[SourcePaper]:
    for part in parts:
        yield from part
