"""``rhetorica bench analyze``: a paper end to end in a cold process (parse + every model output)."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.commands._options import bounded_int, input_file, output_file, write_output


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from app.commands._options import add_model_options

    parser = subparsers.add_parser(
        "analyze",
        help="Time 'rhetorica analyze PDF --json OUT' in fresh processes (cold start to JSON written).",
        description="Run 'rhetorica analyze PDF --json OUT --quiet' N times, each in a new Python process "
        "(imports, model load, parse, roles and functions of every sentence, JSON written), and report "
        "the wall time (median and best) with the in-process breakdown of the last run.",
    )
    parser.add_argument("pdf", type=input_file, nargs="?", default=None,
                        help="the paper (default: the bundled 13-page sample paper)")
    add_model_options(parser)
    parser.add_argument("--runs", type=bounded_int(1, 10_000), default=5, help="cold runs (default 5)")
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT",
                        help="also write the figures here")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    import os
    import statistics
    import subprocess
    import sys
    import tempfile
    import time

    from core.errors import RhetoricaError
    from core.paths import sample_paper_path

    pdf = args.pdf or sample_paper_path()
    if not pdf.is_file():
        raise RhetoricaError(f"{pdf}: no such file")
    walls: list[float] = []
    with tempfile.TemporaryDirectory(prefix="rhetorica-bench-") as tmp:
        out = Path(tmp) / "analysis.json"
        command = [sys.executable, "-m", "app", "analyze", str(pdf), "--json", str(out), "--quiet",
                   "--no-cache"]  # every run parses and labels: the cache would answer runs 2..N
        if args.model is not None:
            command += ["--model", str(args.model)]
        if args.threads is not None:
            command += ["--threads", str(args.threads)]
        command += ["--device", args.device]
        for number in range(max(1, args.runs)):
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy())
            walls.append(time.perf_counter() - started)
            if done.returncode != 0:
                raise RhetoricaError(f"run {number + 1} failed: {done.stderr.strip().splitlines()[-1:]}")
        payload = json.loads(out.read_text(encoding="utf-8"))
    analysis = payload["analysis"]
    sentences = len(payload["paper"]["sentences"])
    results = {
        "pdf": str(pdf), "pages": len(payload["paper"]["page_sizes"]), "sentences": sentences,
        "model_id": analysis["model_id"], "threads": args.threads, "runs": len(walls),
        "wall_seconds_median": round(statistics.median(walls), 3), "wall_seconds_best": round(min(walls), 3),
        "last_run_timings": analysis.get("timings", {}), "functions": "functions" in analysis,
        "command": " ".join(["rhetorica", "bench", "analyze", *([str(args.pdf)] if args.pdf else []),
                             *(["--model", str(args.model)] if args.model else []),
                             "--threads", str(args.threads), "--runs", str(args.runs)]),
    }
    if args.json is not None:
        write_output(args.json, json.dumps(results, indent=2) + "\n")
    timings = results["last_run_timings"]
    print(f"{pdf.name}: {results['pages']} pages, {sentences} sentences; model {results['model_id']}; "
          f"{args.threads} threads")
    print(f"  cold process end to end: median {results['wall_seconds_median']:.2f} s, best "
          f"{results['wall_seconds_best']:.2f} s over {len(walls)} runs")
    print("  last run inside the process: " + ", ".join(f"{k} {v:.2f} s" for k, v in timings.items()))
    return 0
