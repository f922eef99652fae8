"""``rhetorica bench gemm``: the CPU's matrix-multiply throughput per engine, i.e. the ceiling of
``bench encode``'s speed-up.

A MiniLM-L6 layer is six matrix multiplies over its ``rows`` tokens (query, key, value and attention
output 384→384, feed-forward 384→1536 and 1536→384); they are about 98 % of its arithmetic on
sentence-length inputs.  We time that set of six, with biases, for each engine the encoder
benchmark compares: torch fp32 (``F.linear``), onnxruntime fp32 ``MatMul``, onnxruntime int8 as the
bundle runs it (``quantize_dynamic`` per-channel → ``DynamicQuantizeMatMul``: activations quantised
on the fly) and onnxruntime ``MatMulInteger`` on already-quantised uint8 inputs (int8 arithmetic
alone: the most any int8 scheme can reach on this CPU).  The int8 / torch ratios bound the whole
encoder's speed-up, which also spends time in attention, softmax, GELU, LayerNorm and padding.
Needs the ``train`` extra (torch, onnx).
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app.commands._options import MAX_THREADS, bounded_int, output_file, write_output

if TYPE_CHECKING:  # pragma: no cover
    import onnx

HIDDEN, FFN = 384, 1536
LAYER_SHAPES = ((HIDDEN, HIDDEN),) * 4 + ((HIDDEN, FFN), (FFN, HIDDEN))  # (in, out) of each matmul
ISA_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_int8")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gemm",
        help="Matrix-multiply GFLOP/s of torch fp32 and onnxruntime fp32/int8: the ceiling of "
        "`bench encode`'s speed-up on this CPU.",
        description="Time one MiniLM-L6 layer's six matrix multiplies (with biases) on random data for "
        "torch fp32, onnxruntime fp32, onnxruntime int8 dynamic (as the bundle runs it) and "
        "onnxruntime MatMulInteger on pre-quantised inputs (int8 arithmetic alone). Needs torch and onnx.",
    )
    parser.add_argument("--rows", type=bounded_int(1, 1_000_000), default=1024,
                        help="tokens per multiply (default 1024 ≈ a batch of 32 sentences of 32 tokens)")
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2,
                        help="threads for every engine (default 2)")
    parser.add_argument("--repeats", type=bounded_int(1, 100_000), default=50,
                        help="timed layer passes per engine (default 50)")
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT",
                        help="also write the figures here")
    parser.set_defaults(func=run)


def cpu_flags() -> list[str]:
    """The ISA extensions in ``ISA_FLAGS`` that /proc/cpuinfo lists (empty where it is absent)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return []
    for line in text.splitlines():
        if line.startswith("flags"):
            present = set(line.split(":", 1)[1].split())
            return [flag for flag in ISA_FLAGS if flag in present]
    return []


def _time_layer(calls: Sequence[Callable[[], object]], repeats: int) -> float:
    """Best-of-3 mean seconds for one pass over ``calls`` (each a zero-argument callable)."""
    for call in calls:
        call()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeats):
            for call in calls:
                call()
        best = min(best, (time.perf_counter() - start) / repeats)
    return best


def _layer_graph(rows: int, integer: bool) -> onnx.ModelProto:
    """One graph holding the layer's six multiplies side by side (inputs ``x0..x5``): one session,
    so no idle thread pool of another session spins while this one works."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, inputs, outputs, init = [], [], [], []
    for i, (k, n) in enumerate(LAYER_SHAPES):
        if integer:
            init.append(numpy_helper.from_array(rng.integers(-127, 128, (k, n)).astype(np.int8), f"w{i}"))
            nodes.append(helper.make_node("MatMulInteger", [f"x{i}", f"w{i}"], [f"y{i}"]))
            inputs.append(helper.make_tensor_value_info(f"x{i}", TensorProto.UINT8, [rows, k]))
            outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.INT32, [rows, n]))
        else:
            weight = (rng.standard_normal((k, n)) * 0.05).astype(np.float32)
            init += [numpy_helper.from_array(weight, f"w{i}"),
                     numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), f"b{i}")]
            nodes += [helper.make_node("MatMul", [f"x{i}", f"w{i}"], [f"m{i}"]),
                      helper.make_node("Add", [f"m{i}", f"b{i}"], [f"y{i}"])]
            inputs.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [rows, k]))
            outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [rows, n]))
    graph = helper.make_graph(nodes, "layer", inputs, outputs, init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _ort_calls(rows: int, threads: int, kind: str, folder: Path) -> list[Callable[[], object]]:
    import numpy as np
    import onnx
    import onnxruntime as ort

    from models.training.quantize import quantize_int8

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    integer = kind == "int8-arithmetic"
    path = folder / f"{kind}.onnx"
    onnx.save(_layer_graph(rows, integer), str(path))
    if kind == "int8-dynamic":
        logging.disable(logging.WARNING)  # onnxruntime's "consider pre-processing" hint
        try:
            quantize_int8(path, path.with_suffix(".q.onnx"))
        finally:
            logging.disable(logging.NOTSET)
        path = path.with_suffix(".q.onnx")
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    feed = {f"x{i}": (rng.integers(0, 256, (rows, k)).astype(np.uint8) if integer
                      else rng.standard_normal((rows, k)).astype(np.float32))
            for i, (k, _) in enumerate(LAYER_SHAPES)}
    return [lambda: session.run(None, feed)]


def _torch_calls(rows: int, threads: int) -> list[Callable[[], None]]:
    from models.training.bench_reference import torch_linear_calls

    return torch_linear_calls(rows, threads, LAYER_SHAPES)


def run(args: argparse.Namespace) -> int:
    import os

    flops = sum(2 * args.rows * k * n for k, n in LAYER_SHAPES)
    results: dict = {"command": " ".join(["rhetorica", *sys.argv[1:]]), "rows": args.rows,
                     "threads": args.threads, "repeats": args.repeats, "cpu_flags": cpu_flags(),
                     "cpu_count": os.cpu_count(), "layer_gflop": round(flops / 1e9, 4),
                     "load_average_before": [round(x, 2) for x in os.getloadavg()], "engines": {}}
    print(f"bench gemm: one MiniLM-L6 layer's 6 matmuls over {args.rows} tokens ({flops / 1e9:.2f} GFLOP), "
          f"{args.threads} threads; CPU flags: {', '.join(results['cpu_flags']) or 'unknown'}", flush=True)
    with tempfile.TemporaryDirectory(prefix="rhetorica-gemm-") as tmp:
        # onnxruntime first: torch's OpenMP threads keep spinning for a while after its last call.
        engines: dict[str, Callable[[], Sequence[Callable[[], object]]]] = {
            kind: functools.partial(_ort_calls, args.rows, args.threads, kind, Path(tmp))
            for kind in ("onnx-fp32", "int8-dynamic", "int8-arithmetic")}
        engines["torch-fp32"] = functools.partial(_torch_calls, args.rows, args.threads)
        for name, make in engines.items():
            seconds = _time_layer(make(), args.repeats)
            results["engines"][name] = {"ms_per_layer": round(seconds * 1e3, 3),
                                        "gflops": round(flops / seconds / 1e9, 1)}
            print(f"  {name:16s} {seconds * 1e3:7.2f} ms/layer  {flops / seconds / 1e9:6.1f} GFLOP/s",
                  flush=True)
    torch_gflops = results["engines"]["torch-fp32"]["gflops"]
    for name in ("onnx-fp32", "int8-dynamic", "int8-arithmetic"):
        ratio = results["engines"][name]["gflops"] / torch_gflops
        results[f"{name}_vs_torch_fp32"] = round(ratio, 2)
        print(f"{name} / torch fp32: {ratio:.2f}x")
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print("int8-dynamic / torch fp32 bounds `bench encode`'s speed-up from above: the rest of the encoder "
          "(attention, softmax, GELU, LayerNorm, padding) gains less from int8.")
    if args.json:
        write_output(args.json, json.dumps(results, indent=2))
    return 0
