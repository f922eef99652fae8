"""``rhetorica bench suggest``: how soon suggestions are usable on a fresh start, and how fast they come.

Measured in one fresh process, as the app meets them: loading the model bundle, opening the phrase
corpus (and the library when given) with :mod:`core.phrasing.suggestion_sources` (the folders, opening
and search that ``rhetorica suggest``, the GUI and the language server use), then the first query
(cold), then ``--queries`` more one at a time (p50 / p95 / max), each a full search (query labelling
and embedding, search, filters, MMR, templates, library PDF paths). Queries are the sentences of the
bundled sample paper (or ``--input FILE``, one per line), never the corpus's own sentences.

``--scale N`` measures the same at N sentences: the corpus's real function vectors replicated with
small Gaussian noise (``--noise``, per dimension σ/√d, re-normalised) up to N, searched through an
HNSW index (hnswlib, M 16, the library's engine for that view) instead of exactly; a replicated
sentence answers with its original's text. Index build time and the process's peak memory are
reported too.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from app.commands._options import (
    MAX_THREADS,
    as_text,
    bounded_float,
    bounded_int,
    bundle_path,
    input_file,
    input_folder,
    output_file,
    plain_help,
    write_output,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "suggest", help="Phrasing suggestions: time to first suggestion on a fresh start, latency per query.",
        description=plain_help(__doc__))
    parser.add_argument("--corpus", type=input_folder, default=None,
                        help="phrase corpus (default: the shipped one)")
    parser.add_argument("--library", type=input_folder, default=None, help="also search this library folder")
    parser.add_argument("--input", type=input_file, default=None, help="query sentences, one per line")
    parser.add_argument("--queries", type=bounded_int(1, 1_000_000), default=50)
    parser.add_argument("-k", type=bounded_int(1, 100), default=10)
    parser.add_argument("--model", type=as_text(bundle_path), default=None,
                        help="model bundle (default: the shipped one)")
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2)
    parser.add_argument("--scale", type=bounded_int(0, 100_000_000), default=0, metavar="N",
                        help="replicate the corpus's vectors to N sentences, searched with HNSW")
    parser.add_argument("--noise", type=bounded_float(0.0, 100.0), default=0.5,
                        help="replication noise (σ, see above)")
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT")
    parser.set_defaults(func=run)


class ReplicatedCorpus:
    """A pack's sentences replicated to ``n`` (noisy copies of its function vectors) behind an HNSW
    index: what a corpus or library of ``n`` sentences costs to search (bench only)."""

    duplicate_view = "function"

    def __init__(self, pack: Any, n: int, noise: float, seed: int = 0) -> None:
        import numpy as np

        from core.library.index import HnswIndex

        self.pack = pack
        base = pack.vectors_of(range(len(pack)), "function")
        rng = np.random.default_rng(seed)
        self.vectors = np.empty((n, base.shape[1]), dtype=np.float32)
        for start in range(0, n, len(base)):
            block = base[: min(len(base), n - start)]
            if start:  # the first copy is the real vectors
                block = block + rng.normal(scale=noise / np.sqrt(base.shape[1]), size=block.shape)
            self.vectors[start : start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
        started = time.perf_counter()
        self.index = HnswIndex(base.shape[1], capacity=n)
        for start in range(0, n, 100_000):
            chunk = self.vectors[start : start + 100_000]
            self.index.add(np.arange(start, start + len(chunk)), chunk)
        self.build_seconds = time.perf_counter() - started

    def __len__(self) -> int:
        return len(self.vectors)

    def search(self, view: str, query: Any, k: int) -> tuple[Any, Any]:
        return self.index.search(query, k)

    def sentences(self, ids: Any) -> list[Any]:
        from dataclasses import replace

        size = len(self.pack)
        return [replace(record, id=int(i)) for i in ids
                for record in self.pack.sentences([int(i) % size])]

    def vectors_of(self, ids: Any, view: str) -> Any:
        return self.vectors[list(ids)]

    def paper(self, paper_id: str) -> Any:
        return self.pack.paper(paper_id)

    def close(self) -> None:
        """Nothing to close: the pack is ``core.phrasing.suggestion_sources.PACKS``'s, kept open."""


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _queries(args: argparse.Namespace) -> list[str]:
    if args.input is not None:
        from core.fileio import read_text_input

        lines = [line.strip() for line in read_text_input(args.input, "query sentences").splitlines()]
        return [line for line in lines if line][: args.queries]
    from core.paths import sample_paper_path
    from core.pdf import parse_pdf

    paper = parse_pdf(sample_paper_path())
    body = [s.text for s in paper.sentences if 6 <= len(s.text.split()) <= 60]
    step = max(1, len(body) // max(1, args.queries))
    return body[::step][: args.queries]


def run(args: argparse.Namespace) -> int:
    import numpy as np

    queries = _queries(args)  # parsed before the clock starts: the app has the paper open already
    started = time.perf_counter()
    from core.phrasing.suggestion_sources import (
        NoSources,
        SuggestionRequest,
        available_templater,
        opened_sources,
        search,
        source_folders,
    )
    from models.encoder import load_model

    model = load_model(args.model, device="cpu", threads=args.threads)
    loaded_model = time.perf_counter()
    # the phrase corpus, and a library only when one is given (never the user's own)
    folders = source_folders("corpus" if args.library is None else "all", args.corpus, args.library)
    if not folders:
        raise NoSources()
    with opened_sources(folders, model) as opened:
        build_seconds = _replicate(opened.sources, args) if args.scale else None
        sources_open = time.perf_counter()
        templater = available_templater()
        first = search(opened, SuggestionRequest(queries[0], args.k), model, templater)
        first_done = time.perf_counter()
        latencies = []
        counts = [len(first.suggestions)]
        for query in queries[1:]:
            tick = time.perf_counter()
            result = search(opened, SuggestionRequest(query, args.k), model, templater)
            latencies.append(time.perf_counter() - tick)
            counts.append(len(result.suggestions))
        sizes = {s.kind: _sentence_count(s.library) for s in opened.sources}
    report: dict[str, Any] = {
        "corpus": str(dict(folders).get("corpus", "")) or None,  # the phrase corpus searched
        "sources": sizes,
        "model_id": model.model_id,
        "threads": args.threads,
        "seconds_to_model": round(loaded_model - started, 3),
        "seconds_to_open_sources": round(sources_open - loaded_model, 3),
        "seconds_first_query": round(first_done - sources_open, 3),
        "seconds_to_first_suggestions": round(first_done - started, 3),
        "queries": len(queries),
        "latency_ms": ({"p50": round(float(np.percentile(latencies, 50)) * 1000, 1),
                        "p95": round(float(np.percentile(latencies, 95)) * 1000, 1),
                        "max": round(max(latencies) * 1000, 1)} if latencies else {}),
        "mean_suggestions": round(float(np.mean(counts)), 2),
        **({"scale": args.scale, "noise": args.noise, "index": "hnswlib M16 ef64 (function view)",
            "index_build_seconds": round(build_seconds or 0.0, 1)} if args.scale else {}),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "command": "rhetorica bench suggest " + " ".join(
            f"{'-k' if k == 'k' else '--' + k.replace('_', '-')} {v}" for k, v in vars(args).items()
            if k not in ("func", "command", "bench_command", "json") and v is not None),
    }
    print(json.dumps(report, indent=2))
    if args.json is not None:
        write_output(args.json, json.dumps(report, indent=2) + "\n")
    return 0


def _replicate(sources: list[Any], args: argparse.Namespace) -> float:
    """Put the phrase corpus replicated to ``--scale`` sentences in its place in ``sources``; the
    index's build time in seconds."""
    from core.errors import RhetoricaError
    from core.phrasing.suggest import Source

    at = next((i for i, source in enumerate(sources) if source.kind == "corpus"), None)
    if at is None:
        raise RhetoricaError("bench suggest: --scale replicates the phrase corpus, and there is none to "
                             "replicate (give --corpus FOLDER)")
    replicated = ReplicatedCorpus(getattr(sources[at].library, "inner", sources[at].library), args.scale,
                                  args.noise)
    sources[at] = Source("corpus", replicated)
    return replicated.build_seconds


def _sentence_count(source: Any) -> int:
    source = getattr(source, "inner", source)  # the opened source behind RememberedPapers
    store = getattr(source, "store", None)  # a library; a pack knows its length
    return int(store.sentence_count()) if store is not None else len(source)
