"""``rhetorica bench index``: nearest-neighbour engines for the library, side by side on the same vectors.

Engines: hnswlib (HNSW, float32: the product design's baseline), usearch (HNSW with int8 vectors)
and faiss (HNSW over 8-bit scalar-quantised vectors). Each engine runs in its own subprocess, so the
memory it reports is its own: resident memory after building and dropping the input array, minus
the resident memory before the vectors were loaded. Recall@10 is against exact (numpy) search;
latency is one query at a time (p50 / p95 over the queries), the way suggestions query.

The vectors are real sentence embeddings (``--vectors FILE.npy``, or a library's ``--view``); to
reach ``--n`` they are replicated with small Gaussian noise (``--noise``, then re-normalised): the
report says how many are real. Queries are held-out real vectors with the same noise.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from app.commands._options import (
    MAX_THREADS,
    bounded_float,
    bounded_int,
    input_file,
    input_folder,
    output_file,
    write_output,
)

ENGINES = ("hnswlib", "usearch", "faiss")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "index", help="Nearest-neighbour engines (hnswlib, usearch, faiss): memory, build, recall, latency.",
        description=__doc__)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--vectors", type=input_file, help="a .npy of real embeddings [n, d]")
    source.add_argument("--library", type=input_folder, metavar="DIR",
                        help="a library folder (its --view vectors)")
    parser.add_argument("--view", choices=("content", "function"), default="content")
    parser.add_argument("--n", type=bounded_int(1, 100_000_000), default=100_000,
                        help="index size (default 100000)")
    parser.add_argument("--queries", type=bounded_int(1, 1_000_000), default=500)
    parser.add_argument("--noise", type=bounded_float(0.0, 100.0), default=0.05,
                        help="noise added to replicated vectors: std × 1/sqrt(d) per dimension")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--m", type=bounded_int(2, 1_024), default=16, help="HNSW connectivity (default 16)")
    parser.add_argument("--ef-search", type=bounded_int(1, 100_000), default=64)
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2)
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT")
    parser.set_defaults(func=run)


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _real_vectors(args: argparse.Namespace) -> Any:
    import numpy as np

    from core.errors import RhetoricaError

    if args.vectors is not None:
        with open(args.vectors, "rb") as handle:
            if handle.read(6) != b"\x93NUMPY":
                raise RhetoricaError(f"{args.vectors}: not a .npy file (save the vectors with numpy.save)")
        try:
            # mapped: the .npy header is checked before any data is read
            vectors = np.load(args.vectors, mmap_mode="r")
        except (ValueError, OSError, EOFError) as error:
            raise RhetoricaError(f"{args.vectors}: not a .npy array of vectors ({error})") from None
        if vectors.ndim != 2 or vectors.dtype.kind not in "fiu" or not all(vectors.shape):
            raise RhetoricaError(f"{args.vectors}: not an [n, d] array of numbers (shape {vectors.shape}, "
                                 f"{vectors.dtype})")
        return np.asarray(vectors, dtype=np.float32)
    from core.library.library import Library
    from core.library.store import DATABASE_NAME

    if not (args.library / DATABASE_NAME).is_file():  # never create a library by looking
        raise RhetoricaError(f"{args.library}: not a library folder (no {DATABASE_NAME})")
    with Library(args.library) as library:
        chunks = [vectors for _, vectors in library.store.vectors(args.view)]
    if not chunks:
        raise RhetoricaError(f"{args.library}: the library has no {args.view} vectors")
    return np.concatenate(chunks)


def _replicate(real: Any, n: int, noise: float, seed: int) -> Any:
    import numpy as np

    rng = np.random.default_rng(seed)
    d = real.shape[1]
    picks = rng.integers(0, len(real), size=n)
    out = real[picks] + rng.standard_normal((n, d)).astype(np.float32) * (noise / np.sqrt(d))
    out[: min(n, len(real))] = real[: min(n, len(real))]
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def _exact_top10(data: Any, queries: Any) -> Any:
    import numpy as np

    best = np.zeros((len(queries), 10), dtype=np.int64)
    for start in range(0, len(queries), 100):
        scores = queries[start: start + 100] @ data.T
        top = np.argpartition(-scores, 9, axis=1)[:, :10]
        order = np.take_along_axis(-scores, top, axis=1).argsort(axis=1)
        best[start: start + 100] = np.take_along_axis(top, order, axis=1)
    return best


def run(args: argparse.Namespace) -> int:
    import numpy as np

    real = _real_vectors(args)
    real = real / np.linalg.norm(real, axis=1, keepdims=True)
    held = min(args.queries, len(real) // 10)
    rng = np.random.default_rng(7)
    order = rng.permutation(len(real))
    query_pool, base = real[order[:held]], real[order[held:]]
    data = _replicate(base, args.n, args.noise, seed=1)
    queries = _replicate(query_pool, args.queries, args.noise, seed=2)
    started = time.perf_counter()
    truth = _exact_top10(data, queries)
    exact_seconds = (time.perf_counter() - started) / len(queries)
    results: dict[str, Any] = {
        "n": args.n, "dim": int(data.shape[1]), "real_vectors": int(min(len(base), args.n)),
        "replicated_with_noise": max(0, args.n - len(base)), "noise": args.noise, "queries": len(queries),
        "view": args.view, "m": args.m, "ef_search": args.ef_search, "threads": args.threads,
        "exact_numpy_ms_per_query": round(exact_seconds * 1000, 2), "engines": {},
        "command": "rhetorica bench index " + " ".join(sys.argv[3:]) if len(sys.argv) > 3 else "",
    }
    with tempfile.TemporaryDirectory(prefix="rhetorica-bench-index-") as tmp:
        np.save(Path(tmp) / "data.npy", data)
        np.save(Path(tmp) / "queries.npy", queries)
        np.save(Path(tmp) / "truth.npy", truth)
        del data
        for engine in [e.strip() for e in args.engines.split(",") if e.strip()]:
            out = Path(tmp) / f"{engine}.json"
            command = [sys.executable, "-m", "app.commands.bench_index", "--worker", engine, tmp,
                       str(args.m), str(args.ef_search), str(args.threads), str(out)]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                results["engines"][engine] = {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
            else:
                results["engines"][engine] = json.loads(out.read_text(encoding="utf-8"))
            print(engine, json.dumps(results["engines"][engine]), flush=True)
    if args.json is not None:
        write_output(args.json, json.dumps(results, indent=2) + "\n")
    return 0


def _build(engine: str, data: Any, m: int, ef_search: int, threads: int) -> tuple[Any, Any]:
    """(index, query function one vector -> labels[10])."""
    import numpy as np

    n, d = data.shape
    if engine == "hnswlib":
        import hnswlib

        index = hnswlib.Index(space="ip", dim=d)
        index.init_index(max_elements=n, ef_construction=200, M=m)
        index.set_num_threads(threads)
        index.add_items(data, np.arange(n))
        index.set_ef(ef_search)
        index.set_num_threads(1)
        return index, lambda q: index.knn_query(q, k=10)[0][0]
    if engine == "usearch":
        from usearch.index import Index

        index = Index(ndim=d, metric="cos", dtype="i8", connectivity=m, expansion_add=200,
                      expansion_search=ef_search)
        index.add(np.arange(n), data, threads=threads)
        return index, lambda q: index.search(q[0], 10).keys
    if engine == "faiss":
        import faiss

        faiss.omp_set_num_threads(threads)
        # faiss's stub types the second argument as a ScalarQuantizer object; the SWIG constructor
        # takes the quantizer type (ScalarQuantizer::QuantizerType, an int) as the C++ one does.
        hnsw_sq = cast("Callable[[int, int, int, int], faiss.IndexHNSWSQ]", faiss.IndexHNSWSQ)
        index = hnsw_sq(d, faiss.ScalarQuantizer.QT_8bit, m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = 200
        index.train(data)
        index.add(data)
        index.hnsw.efSearch = ef_search
        faiss.omp_set_num_threads(1)
        return index, lambda q: index.search(q, 10)[1][0]
    raise SystemExit(f"unknown engine {engine!r}: use {', '.join(ENGINES)}")


def _worker(engine: str, folder: Path, m: int, ef_search: int, threads: int, out: Path) -> None:
    import numpy as np

    if engine == "hnswlib":
        import hnswlib  # noqa: F401  (imported before the baseline, like the others)
    elif engine == "usearch":
        import usearch.index  # noqa: F401
    elif engine == "faiss":
        import faiss  # noqa: F401
    gc.collect()
    baseline = _rss_mb()
    data = np.load(folder / "data.npy")
    queries = np.load(folder / "queries.npy")
    truth = np.load(folder / "truth.npy")
    started = time.perf_counter()
    _index, query = _build(engine, data, m, ef_search, threads)
    build_seconds = time.perf_counter() - started
    n = len(data)
    del data
    gc.collect()
    memory = _rss_mb() - baseline - queries.nbytes / 2**20 - truth.nbytes / 2**20
    latencies, hits = [], 0
    for i in range(len(queries)):
        t0 = time.perf_counter()
        labels = query(queries[i: i + 1])
        latencies.append(time.perf_counter() - t0)
        hits += len(set(np.asarray(labels).tolist()) & set(truth[i].tolist()))
    ms = np.array(latencies) * 1000
    out.write_text(json.dumps({
        "build_seconds": round(build_seconds, 1), "memory_mb": round(memory, 1),
        "memory_mb_per_million": round(memory * 1e6 / n, 1),
        "recall_at_10": round(hits / (10 * len(queries)), 4),
        "latency_ms_p50": round(float(np.percentile(ms, 50)), 3),
        "latency_ms_p95": round(float(np.percentile(ms, 95)), 3),
    }), encoding="utf-8")


if __name__ == "__main__":  # a worker subprocess
    if len(sys.argv) == 8 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]),
                Path(sys.argv[7]))
    else:
        raise SystemExit("usage: python -m app.commands.bench_index --worker ENGINE DIR M EF THREADS OUT")
