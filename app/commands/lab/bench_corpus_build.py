"""``rhetorica bench corpus-build``: sentences/s of the corpus pipeline, local engine against Ray with
1, 2, ... workers on the same input, and whether every run gave the same pack (docs/scale.md)."""

from __future__ import annotations

import argparse

from app.commands._options import MAX_THREADS, as_text, bounded_int, output_file, text_arg
from app.commands.lab.corpus import ray_address


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "corpus-build", help="Corpus building speed: local engine vs Ray with 1, 2, ... workers.",
        description="Build the same pack with the local engine and with the Ray engine at each worker "
        "count (a local Ray of that many CPUs, or --address), each from scratch into a temporary folder; "
        "report sentences/s per run and whether the packs are byte-identical (JSON on stdout).")
    parser.add_argument("--source", action="append", default=None,
                        help="phrase source (repeatable; default csabstruct and pubmedqa)")
    parser.add_argument("--max-papers", type=bounded_int(1, 10_000_000), default=150,
                        help="papers per source (default 150)")
    parser.add_argument("--workers", type=text_arg, default="1,2",
                        help="Ray worker counts to run, comma-separated (default 1,2)")
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=1,
                        help="onnxruntime threads per model, local and per Ray worker (default 1)")
    parser.add_argument("--address", type=ray_address, default=None, metavar="HOST:PORT",
                        help="a running Ray cluster (default: a local Ray per run)")
    parser.add_argument("--shard-sections", type=bounded_int(1, 100_000), default=64,
                        help="sections per shard, all runs (default 64, as corpus build)")
    parser.add_argument("--no-ray", action="store_true", help="the local engine only")
    parser.add_argument("--model", default=None, help="model bundle (default: the shipped one)")
    parser.add_argument("--json", type=as_text(output_file), metavar="OUT", help="also write the JSON here")
    parser.set_defaults(func=run)


def _counts(text: str) -> list[int]:
    from core.errors import RhetoricaError

    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        counts = []
    if not counts or any(not 1 <= c <= 4096 for c in counts):
        raise RhetoricaError(f"--workers {text!r}: give worker counts such as 1,2")
    return counts


def run(args: argparse.Namespace) -> int:
    import json
    import os
    import tempfile
    import time
    from pathlib import Path

    from app.commands._options import write_output
    from models.corpus_build import CorpusInput, EngineOptions, build_corpus

    counts = [] if args.no_ray else _counts(args.workers)
    if counts:
        from models.corpus_ray import import_ray

        import_ray()
    spec = CorpusInput(args.source or ["csabstruct", "pubmedqa"], args.max_papers)
    runs = []
    with tempfile.TemporaryDirectory(prefix="rhetorica-bench-corpus-") as tmp:
        plans = [("local", None), *(("ray", n) for n in counts)]
        for number, (engine, workers) in enumerate(plans):
            out = Path(tmp) / f"pack-{number}"
            started = time.perf_counter()
            report = build_corpus(spec, args.model, out, {}, EngineOptions(
                engine, args.address if engine == "ray" else None, workers if engine == "ray" else 1,
                args.threads, Path(tmp) / f"work-{number}", sections_per_shard=args.shard_sections))
            wall = time.perf_counter() - started
            sentences = int(report.record["sentences"])
            runs.append({"engine": engine, "workers": report.workers, "threads_per_worker": args.threads,
                         "sentences": sentences, "shards": report.shards,
                         "pipeline_seconds": round(report.seconds, 2), "wall_seconds": round(wall, 2),
                         "sentences_per_second": round(sentences / max(report.seconds, 1e-9), 1),
                         "sentences_per_second_wall": round(sentences / max(wall, 1e-9), 1),
                         "driver_seconds": round(report.driver_seconds, 3),
                         "merge_seconds": round(report.merge_seconds, 3),
                         "files": {name: (out / name).read_bytes() for name in
                                   ("papers.jsonl.gz", "sentences.jsonl.gz", "function.npy",
                                    "function-scale.npy")}})
    reference = runs[0]["files"]
    for row in runs:
        row["same_pack_as_local"] = row.pop("files") == reference
    local = runs[0]["sentences_per_second"]
    for row in runs:
        row["speedup_vs_local"] = round(row["sentences_per_second"] / max(local, 1e-9), 2)
    load = os.getloadavg()
    result = {"input": {"sources": spec.sources, "papers_per_source": spec.max_papers,
                        "shard_sections": args.shard_sections},
              "cpu_count": os.cpu_count(), "load_average_1_5_15": [round(x, 2) for x in load],
              "address": args.address, "runs": runs}
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        write_output(args.json, text + "\n")
    return 0 if all(row["same_pack_as_local"] for row in runs) else 1
