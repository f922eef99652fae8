"""``rhetorica bench index``: nearest-neighbour engines for the library, side by side on the same vectors.

Engines:

* ``rhetorica``: the library's engine (``core.library.ann_index.IvfSq8Index``: faiss IVF over 8-bit
  scalar-quantised vectors, exact while small), built the way a library rebuild builds it (10,000
  vectors at a time, told the final size); ``--nprobe`` lists the probe counts to measure.
  ``rhetorica-loaded`` then measures the same index read back from the file it was saved to, as a
  library opens it (its memory is lower: lists grown by appending keep spare room);
* ``pack``: a phrase-corpus pack's search (``core.library.pack_index``): the same index over the
  pack's int8 rows, its candidates re-ranked exactly on the rows; ``pack-loaded`` then measures
  it as a pack is opened (the rows memory-mapped: the memory counts the pages the queries touched);
* ``ivfpq-rerank``: faiss IVF-PQ (``d/8`` bytes a vector) for candidates, then exact re-ranking of
  the best ``--rerank`` of them on int8 vectors (one byte a dimension, a scale a row: the pack's
  format) memory-mapped from a file; the memory counts the mapped pages the queries touched;
* ``hnswlib`` (HNSW, float32: the earlier engine), ``usearch`` (HNSW, int8) and ``faiss``
  (HNSW over 8-bit scalar-quantised vectors); ``--ef-search`` lists the ef values to measure;
* ``exact``: the numpy brute force (``core.library.index.ExactIndex``), the reference.

Each engine runs in its own subprocess, so the memory it reports is its own: resident memory after
building and dropping the input array (and again after the queries), minus the resident memory
before the vectors were loaded. Recall@10 is against exact (numpy) search; latency is one query at
a time (p50 / p95 over the queries), the way suggestions query.

End to end: ``--encode N`` real sentences of the shipped phrase corpus are encoded one at a time
with the shipped model (the view that matches the vectors' width), in this process, before the
engines run; query i's end-to-end time is encoding time i (mod N) plus its search time.

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
    plain_help,
    write_output,
)

ENGINES = ("rhetorica", "rhetorica-loaded", "pack", "pack-loaded", "ivfpq-rerank", "hnswlib", "usearch",
           "faiss", "exact")
DEFAULT_ENGINES = ("rhetorica", "hnswlib", "faiss")
BUILD_BATCH = 10_000  # what a library rebuild adds at a time (core.library.store.vectors)
LOADED = "rhetorica-loaded"  # measured after "rhetorica", from the file it saved
PACK_LOADED = "pack-loaded"  # measured after "pack", from the pack files it wrote
SAVED = "rhetorica.ann"


def _int_list(text: str) -> list[int]:
    """An argparse ``type=``: one whole number or several, comma-separated (each 1..100000)."""
    parse = bounded_int(1, 100_000)
    values = [parse(part) for part in text.split(",") if part.strip()]
    if not values:
        raise argparse.ArgumentTypeError(f"{text!r} names no number")
    return values


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "index", help="Nearest-neighbour engines (the library's faiss IVF-SQ8, IVF-PQ + re-ranking, hnswlib, "
                      "usearch, faiss HNSW): memory, build, recall, latency.",
        description=plain_help(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
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
    parser.add_argument("--engines", default=",".join(DEFAULT_ENGINES),
                        help=f"comma-separated, of: {', '.join(ENGINES)} "
                             f"(default: {','.join(DEFAULT_ENGINES)})")
    parser.add_argument("--m", type=bounded_int(2, 1_024), default=16, help="HNSW connectivity (default 16)")
    parser.add_argument("--ef-search", type=_int_list, default=[64],
                        help="HNSW ef at query time; several (64,128,256) are each measured on one build")
    parser.add_argument("--nprobe", type=_int_list, default=None,
                        help="IVF lists scanned per query; several are each measured on one build "
                             "(default: the engine's own setting)")
    parser.add_argument("--nlist", type=bounded_int(1, 1_000_000), default=None,
                        help="IVF lists (default: the engine's rule, about 2 × √n)")
    parser.add_argument("--rerank", type=bounded_int(10, 100_000), default=100,
                        help="ivfpq-rerank: candidates re-ranked exactly (default 100)")
    parser.add_argument("--encode", type=bounded_int(0, 100_000), default=200,
                        help="sentences encoded one at a time for the end-to-end latency (0: none)")
    parser.add_argument("--model", type=input_folder, default=None, metavar="BUNDLE",
                        help="model bundle for --encode (default: the shipped one)")
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
    out = np.empty((n, d), dtype=np.float32)
    for start in range(0, n, 100_000):  # in blocks: the noise of a million rows at once is 1.5 GB more
        stop = min(n, start + 100_000)
        picks = rng.integers(0, len(real), size=stop - start)
        block = real[picks] + rng.standard_normal((stop - start, d)).astype(np.float32) * (noise / np.sqrt(d))
        out[start:stop] = block
    out[: min(n, len(real))] = real[: min(n, len(real))]
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def _exact_top10(data: Any, queries: Any) -> Any:
    import numpy as np

    best = np.zeros((len(queries), 10), dtype=np.int64)
    for start in range(0, len(queries), 100):
        scores = queries[start: start + 100] @ data.T
        top = np.argpartition(-scores, 9, axis=1)[:, :10]
        order = np.take_along_axis(-scores, top, axis=1).argsort(axis=1)
        best[start: start + 100] = np.take_along_axis(top, order, axis=1)
    return best


def _encoding_ms(count: int, dim: int, bundle: Path | None, threads: int) -> dict[str, Any]:
    """Encode ``count`` sentences of the shipped phrase corpus one at a time with the model, in the
    view whose width is ``dim``: {"view", "model", "ms": [...]} (no "ms" when no view has that width)."""
    import gzip

    import numpy as np

    from core.errors import RhetoricaError
    from core.paths import resources_dir
    from models.encoder import load_model

    model = load_model(bundle, device="cpu", threads=threads)
    views = {model.embedding_dim: "content"}
    if model.has_functions:
        views[model.function_dim] = "function"
    if dim not in views:
        return {"model": model.model_id, "error": f"the model has no {dim}-d view"}
    view = views[dim]
    texts: list[str] = []
    try:
        with gzip.open(resources_dir() / "corpus" / "sentences.jsonl.gz", "rt", encoding="utf-8") as handle:
            for line in handle:
                texts.append(str(json.loads(line)[2]))
                if len(texts) >= count + 5:
                    break
    except (OSError, ValueError, IndexError) as error:
        raise RhetoricaError(f"cannot read the shipped phrase corpus for --encode ({error})") from None
    for text in texts[:5]:  # warm-up (the content graph loads on first use)
        model.embed([text], view=view)
    ms = []
    for text in texts[5:]:
        started = time.perf_counter()
        model.embed([text], view=view)
        ms.append((time.perf_counter() - started) * 1000)
    return {"model": model.model_id, "view": view, "sentences": len(ms),
            "p50": round(float(np.percentile(ms, 50)), 2), "p95": round(float(np.percentile(ms, 95)), 2),
            "ms": ms}


def run(args: argparse.Namespace) -> int:
    import numpy as np

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    real = _real_vectors(args)
    real = real / np.linalg.norm(real, axis=1, keepdims=True)
    held = min(args.queries, len(real) // 10)
    rng = np.random.default_rng(7)
    order = rng.permutation(len(real))
    query_pool, base = real[order[:held]], real[order[held:]]
    data = _replicate(base, args.n, args.noise, seed=1)
    queries = _replicate(query_pool, args.queries, args.noise, seed=2)
    del real, base
    started = time.perf_counter()
    truth = _exact_top10(data, queries)
    exact_seconds = (time.perf_counter() - started) / len(queries)
    encoding = _encoding_ms(args.encode, int(data.shape[1]), args.model, args.threads) if args.encode else {}
    encode_ms = encoding.pop("ms", [])
    results: dict[str, Any] = {
        "n": args.n, "dim": int(data.shape[1]), "real_vectors": int(min(len(order) - held, args.n)),
        "replicated_with_noise": max(0, args.n - (len(order) - held)), "noise": args.noise,
        "queries": len(queries), "view": args.view, "m": args.m, "ef_search": args.ef_search,
        "nprobe": args.nprobe, "nlist": args.nlist, "rerank": args.rerank, "threads": args.threads,
        "exact_numpy_ms_per_query": round(exact_seconds * 1000, 2), "encoding_ms": encoding, "engines": {},
        "command": "rhetorica bench index " + " ".join(sys.argv[3:]) if len(sys.argv) > 3 else "",
    }
    with tempfile.TemporaryDirectory(prefix="rhetorica-bench-index-") as tmp:
        np.save(Path(tmp) / "data.npy", data)
        np.save(Path(tmp) / "queries.npy", queries)
        np.save(Path(tmp) / "truth.npy", truth)
        del data
        config = {"m": args.m, "ef_search": args.ef_search, "nprobe": args.nprobe, "nlist": args.nlist,
                  "rerank": args.rerank, "threads": args.threads}
        (Path(tmp) / "config.json").write_text(json.dumps(config), encoding="utf-8")
        for built, loaded in (("rhetorica", LOADED), ("pack", PACK_LOADED)):
            if built in engines and loaded not in engines:
                engines.insert(engines.index(built) + 1, loaded)
        for engine in engines:
            if (engine == LOADED and not (Path(tmp) / SAVED).is_file()) or (
                    engine == PACK_LOADED and not (Path(tmp) / "pack" / "function.ann").is_file()):
                continue  # the worker that writes its files failed (its error is reported)
            out = Path(tmp) / f"{engine}.json"
            command = [sys.executable, "-m", "app.commands.lab.bench_index", "--worker", engine, tmp,
                       str(out)]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                results["engines"][engine] = {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
            else:
                results["engines"][engine] = _with_end_to_end(json.loads(out.read_text(encoding="utf-8")),
                                                              encode_ms)
            print(engine, json.dumps(results["engines"][engine]), flush=True)
    if args.json is not None:
        write_output(args.json, json.dumps(results, indent=2) + "\n")
    return 0


def _with_end_to_end(result: dict[str, Any], encode_ms: list[float]) -> dict[str, Any]:
    """Each measured setting's search latencies replaced by p50/p95, search alone and with the
    encoding of query i (mod the sentences encoded) added."""
    import numpy as np

    for setting in result.get("settings", []):
        search = np.asarray(setting.pop("latencies_ms"), dtype=np.float64)
        setting["latency_ms_p50"] = round(float(np.percentile(search, 50)), 3)
        setting["latency_ms_p95"] = round(float(np.percentile(search, 95)), 3)
        if encode_ms:
            encoding = np.asarray([encode_ms[i % len(encode_ms)] for i in range(len(search))])
            total = search + encoding
            setting["end_to_end_ms_p50"] = round(float(np.percentile(total, 50)), 2)
            setting["end_to_end_ms_p95"] = round(float(np.percentile(total, 95)), 2)
    first = (result.get("settings") or [{}])[0]
    for key in ("recall_at_10", "latency_ms_p50", "latency_ms_p95", "end_to_end_ms_p50", "end_to_end_ms_p95"):
        if key in first:
            result[key] = first[key]  # the first setting, flat (what earlier reports read)
    return result


# -- the worker subprocess -----------------------------------------------------------------------
QueryFn = Callable[[Any], Any]


def _hnsw_engines(engine: str, data: Any, config: dict[str, Any]) -> tuple[Any, dict[str, QueryFn]]:
    """(index, {"ef=E": query function one vector -> labels[<=10]}) for the HNSW engines."""
    import numpy as np

    n, d = data.shape
    m, threads, efs = int(config["m"]), int(config["threads"]), [int(e) for e in config["ef_search"]]
    if engine == "hnswlib":
        import hnswlib

        index = hnswlib.Index(space="ip", dim=d)
        index.init_index(max_elements=n, ef_construction=200, M=m)
        index.set_num_threads(threads)
        index.add_items(data, np.arange(n))
        index.set_num_threads(1)

        def hnswlib_at(ef: int) -> QueryFn:
            def query(q: Any) -> Any:
                index.set_ef(ef)
                return index.knn_query(q, k=10)[0][0]
            return query
        return index, {f"ef={ef}": hnswlib_at(ef) for ef in efs}
    if engine == "usearch":
        from usearch.index import Index

        uindex = Index(ndim=d, metric="cos", dtype="i8", connectivity=m, expansion_add=200,
                       expansion_search=efs[0])
        uindex.add(np.arange(n), data, threads=threads)

        def usearch_at(ef: int) -> QueryFn:
            def query(q: Any) -> Any:
                cast(Any, uindex).expansion_search = ef  # a setter mypy cannot see
                return uindex.search(q[0], 10).keys
            return query
        return uindex, {f"ef={ef}": usearch_at(ef) for ef in efs}
    import faiss

    faiss.omp_set_num_threads(threads)
    # faiss's stub types the second argument as a ScalarQuantizer object; the SWIG constructor
    # takes the quantizer type (ScalarQuantizer::QuantizerType, an int) as the C++ one does.
    hnsw_sq = cast("Callable[[int, int, int, int], faiss.IndexHNSWSQ]", faiss.IndexHNSWSQ)
    findex = hnsw_sq(d, faiss.ScalarQuantizer.QT_8bit, m, faiss.METRIC_INNER_PRODUCT)
    findex.hnsw.efConstruction = 200
    findex.train(data)
    findex.add(data)
    faiss.omp_set_num_threads(1)

    def faiss_at(ef: int) -> QueryFn:
        def query(q: Any) -> Any:
            findex.hnsw.efSearch = ef
            return findex.search(q, 10)[1][0]
        return query
    return findex, {f"ef={ef}": faiss_at(ef) for ef in efs}


def _settings(config: dict[str, Any]) -> Any:
    """The engine's settings, with ``--nlist`` when given."""
    from core.library.ann_index import IvfSettings

    if not config.get("nlist"):
        return IvfSettings()
    nlist = int(config["nlist"])
    return IvfSettings(min_lists=nlist, max_lists=nlist)


def _rhetorica(data: Any, config: dict[str, Any]) -> tuple[Any, dict[str, QueryFn]]:
    import faiss
    import numpy as np

    from core.library.ann_index import IvfSq8Index

    faiss.omp_set_num_threads(int(config["threads"]))
    n = len(data)
    settings = _settings(config)
    index = IvfSq8Index(int(data.shape[1]), settings, expected=n)
    ids = np.arange(n, dtype=np.int64)
    for start in range(0, n, BUILD_BATCH):
        index.add(ids[start: start + BUILD_BATCH], data[start: start + BUILD_BATCH])
    probes = [int(p) for p in config["nprobe"]] if config.get("nprobe") else [index.nprobe]

    def at(nprobe: int) -> QueryFn:
        def query(q: Any) -> Any:
            index.set_nprobe(nprobe)
            return index.search(q, 10)[0][0]
        return query
    if not index.nlist:  # still exact (a small n): one setting
        return index, {"exact (flat)": at(0)}
    return index, {f"nlist={index.nlist} nprobe={p}": at(p) for p in probes}


def _ivfpq_rerank(data: Any, config: dict[str, Any], folder: Path) -> tuple[Any, dict[str, QueryFn]]:
    """faiss IVF-PQ candidates, re-ranked exactly on memory-mapped int8 rows (per-row scale)."""
    import faiss
    import numpy as np

    faiss.omp_set_num_threads(int(config["threads"]))
    n, d = data.shape
    settings = _settings(config)
    nlist = settings.lists_for(n)
    bytes_per_vector = max(1, d // 8)
    while d % bytes_per_vector:
        bytes_per_vector -= 1
    index = faiss.IndexIVFPQ(faiss.IndexFlatIP(d), d, nlist, bytes_per_vector, 8, faiss.METRIC_INNER_PRODUCT)
    sample = min(n, max(settings.train_sample, 64 * nlist))
    index.cp.max_points_per_centroid = max(1, -(-sample // nlist))
    rng = np.random.default_rng(settings.seed)
    index.train(data if sample >= n else data[np.sort(rng.choice(n, size=sample, replace=False))])
    for start in range(0, n, 100_000):
        index.add(data[start: start + 100_000])
    scales = np.maximum(np.abs(data).max(axis=1), 1e-12) / 127.0
    rows_path = folder / "rows-int8.npy"
    rows = np.lib.format.open_memmap(rows_path, mode="w+", dtype=np.int8, shape=(n, d))
    for start in range(0, n, 100_000):
        block = data[start: start + 100_000]
        rows[start: start + 100_000] = np.round(block / scales[start: start + 100_000, None])
    rows.flush()
    del rows
    mapped = np.load(rows_path, mmap_mode="r")
    scales = scales.astype(np.float32)
    rerank = int(config["rerank"])
    probes = [int(p) for p in config["nprobe"]] if config.get("nprobe") else [settings.probes_for(nlist)]

    def at(nprobe: int) -> QueryFn:
        def query(q: Any) -> Any:
            index.nprobe = nprobe
            candidates = index.search(q, rerank)[1][0]
            candidates = np.sort(candidates[candidates >= 0])
            exact = (np.asarray(mapped[candidates], dtype=np.float32) @ q[0]) * scales[candidates]
            return candidates[np.argsort(-exact)[:10]]
        return query
    return (index, mapped), {f"nlist={nlist} pq={bytes_per_vector}B nprobe={p} rerank={rerank}": at(p)
                             for p in probes}


def _rhetorica_loaded(folder: Path, config: dict[str, Any]) -> tuple[Any, dict[str, QueryFn]]:
    """The index the ``rhetorica`` worker built and saved, as a library opens it: read from its
    file (its lists hold exactly their items, where lists grown by appending keep spare room)."""
    import faiss

    from core.library.ann_index import IvfSq8Index

    faiss.omp_set_num_threads(int(config["threads"]))
    index = IvfSq8Index.load(folder / SAVED)
    probes = [int(p) for p in config["nprobe"]] if config.get("nprobe") else [index.nprobe]

    def at(nprobe: int) -> QueryFn:
        def query(q: Any) -> Any:
            index.set_nprobe(nprobe)
            return index.search(q, 10)[0][0]
        return query
    if not index.nlist:
        return index, {"exact (flat)": at(0)}
    return index, {f"nlist={index.nlist} nprobe={p}": at(p) for p in probes}


def _pack(data: Any, config: dict[str, Any], folder: Path) -> tuple[Any, dict[str, QueryFn]]:
    """A phrase-corpus pack's search (``core.library.pack_index.PackSearch``): the rows stored as
    the pack stores them (int8 + a scale a row, memory-mapped), ``function.ann`` written for them,
    candidates re-ranked exactly on the rows."""
    import faiss
    import numpy as np

    from core.library.pack_format import quantise_rows
    from core.library.pack_index import write_pack_index

    faiss.omp_set_num_threads(int(config["threads"]))
    pack = folder / "pack"
    pack.mkdir(exist_ok=True)
    n, d = data.shape
    rows_file = pack / "function.npy"
    rows = np.lib.format.open_memmap(rows_file, mode="w+", dtype=np.int8, shape=(n, d))
    scales = np.zeros(n, dtype=np.float32)
    for start in range(0, n, 100_000):
        stop = min(n, start + 100_000)
        rows[start:stop], scales[start:stop] = quantise_rows(data[start:stop])
    rows.flush()
    del rows
    np.save(pack / "function-scale.npy", scales)
    write_pack_index(rows_file, np.load(rows_file, mmap_mode="r"), scales, exact_below=0)
    return _pack_search(rows_file, config)


def _pack_search(rows_file: Path, config: dict[str, Any]) -> tuple[Any, dict[str, QueryFn]]:
    """The pack's search over the files in ``rows_file``'s folder, as a pack opens them."""
    import numpy as np

    from core.library.pack_index import PackSearch

    search = PackSearch(rows_file, np.load(rows_file, mmap_mode="r"),
                        np.load(rows_file.parent / "function-scale.npy"))
    index = search.index
    probes = [int(p) for p in config["nprobe"]] if config.get("nprobe") else [index.nprobe if index else 0]

    def at(nprobe: int) -> QueryFn:
        def query(q: Any) -> Any:
            if search.index is not None:
                search.index.set_nprobe(nprobe)
            return search.search(q, 10)[0][0]
        return query
    name = f"nlist={index.nlist} " if index is not None and index.nlist else "exact "
    return search, {f"{name}nprobe={p} re-ranked": at(p) for p in probes}


def _exact(data: Any) -> tuple[Any, dict[str, QueryFn]]:
    from core.library.index import ExactIndex

    index = ExactIndex(int(data.shape[1]))
    import numpy as np

    index.add(np.arange(len(data)), data)
    return index, {"numpy": lambda q: index.search(q, 10)[0][0]}


def _build(engine: str, data: Any, config: dict[str, Any], folder: Path) -> tuple[Any, dict[str, QueryFn]]:
    if engine in ("hnswlib", "usearch", "faiss"):
        return _hnsw_engines(engine, data, config)
    if engine == "rhetorica":
        return _rhetorica(data, config)
    if engine == "ivfpq-rerank":
        return _ivfpq_rerank(data, config, folder)
    if engine == "exact":
        return _exact(data)
    if engine == "pack":
        return _pack(data, config, folder)
    raise SystemExit(f"unknown engine {engine!r}: use {', '.join(ENGINES)}")


def _import_engine(engine: str) -> None:
    """Import the engine's library before the baseline is taken, like the others."""
    if engine == "hnswlib":
        import hnswlib  # noqa: F401
    elif engine == "usearch":
        import usearch.index  # noqa: F401
    elif engine in ("faiss", "rhetorica", LOADED, "pack", PACK_LOADED, "ivfpq-rerank"):
        from core.library.ann_index import _faiss

        _faiss()  # OpenMP's idle threads sleep (see there), for every faiss engine alike


def _worker(engine: str, folder: Path, out: Path) -> None:
    import numpy as np

    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    _import_engine(engine)
    gc.collect()
    baseline = _rss_mb()
    queries = np.load(folder / "queries.npy")
    truth = np.load(folder / "truth.npy")
    started = time.perf_counter()
    if engine == LOADED:
        index, settings = _rhetorica_loaded(folder, config)
        n = len(index)
    elif engine == PACK_LOADED:
        index, settings = _pack_search(folder / "pack" / "function.npy", config)
        n = int(np.load(folder / "pack" / "function.npy", mmap_mode="r").shape[0])
    else:
        data = np.load(folder / "data.npy")
        started = time.perf_counter()
        index, settings = _build(engine, data, config, folder)
        n = len(data)
        del data
    build_seconds = time.perf_counter() - started
    gc.collect()
    inputs_mb = queries.nbytes / 2**20 + truth.nbytes / 2**20
    memory = _rss_mb() - baseline - inputs_mb
    measured = []
    for name, query in settings.items():
        latencies, hits = [], 0
        for i in range(len(queries)):
            t0 = time.perf_counter()
            labels = query(queries[i: i + 1])
            latencies.append((time.perf_counter() - t0) * 1000)
            hits += len(set(np.asarray(labels).tolist()) & set(truth[i].tolist()))
        measured.append({"setting": name, "recall_at_10": round(hits / (10 * len(queries)), 4),
                         "latencies_ms": latencies})
    after = _rss_mb() - baseline - inputs_mb
    if engine == "rhetorica":
        index.save(folder / SAVED)  # for the "rhetorica-loaded" worker: the index as a library opens it
    out.write_text(json.dumps({
        "build_seconds": round(build_seconds, 1), "memory_mb": round(memory, 1),
        "memory_mb_after_queries": round(after, 1),
        "memory_mb_per_million": round(max(memory, after) * 1e6 / n, 1),
        "process_rss_mb": round(_rss_mb(), 1), "settings": measured,
    }), encoding="utf-8")


if __name__ == "__main__":  # a worker subprocess
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))
    else:
        raise SystemExit("usage: python -m app.commands.lab.bench_index --worker ENGINE DIR OUT")
