"""``rhetorica bench corpus``: time from a fresh start to the first phrasing suggestions, as a user
meets it, with the default phrase corpus (issue 28.4: under 10 s).

Each run is a fresh process with an empty user data folder (``RHETORICA_HOME``, a temporary folder),
timed from just before it is spawned:

- ``cli``: ``rhetorica suggest QUERY --source corpus`` until it exits with its suggestions printed;
- ``gui``: a window (offscreen) whose Suggestions panel is shown with QUERY, until it lists
  suggestions (``app.gui.first_suggestions``); with ``--grow`` the background growth of the phrase
  corpus starts as on a real first start and runs meanwhile.

``--grown DIR`` puts a grown phrase corpus (``rhetorica corpus grow``'s output,
``$RHETORICA_HOME/corpus``) in each run's user folder (a symbolic link): a later start, once the
corpus has grown.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from app.commands._options import bounded_int, input_folder, output_file, plain_help, text_arg, write_output

QUERY = "We propose a new method for segmenting cells in microscopy images."


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "corpus", help="Fresh start to first phrasing suggestions (CLI and GUI), with the default corpus.",
        description=plain_help(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--query", type=text_arg, default=QUERY)
    parser.add_argument("--runs", type=bounded_int(1, 100), default=3)
    parser.add_argument("--what", choices=("cli", "gui", "both"), default="both")
    parser.add_argument("--grow", action="store_true",
                        help="GUI runs: grow the phrase corpus in the background meanwhile (first start)")
    parser.add_argument("--grown", type=input_folder, default=None, metavar="DIR",
                        help="a grown phrase corpus to place in each run's user folder")
    parser.add_argument("--timeout", type=bounded_int(1, 3600), default=180)
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT")
    parser.set_defaults(func=run)


def _home(grown: Path | None) -> tempfile.TemporaryDirectory[str]:
    home = tempfile.TemporaryDirectory(prefix="rhetorica-bench-corpus-")
    if grown is not None:
        (Path(home.name) / "corpus").symlink_to(Path(grown).resolve(), target_is_directory=True)
    return home


def _cli_run(args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    command = [sys.executable, "-m", "app", "suggest", args.query, "--source", "corpus", "--json"]
    start = time.time()
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.timeout)
    seconds = time.time() - start
    if proc.returncode != 0:
        raise RuntimeError(f"rhetorica suggest failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
    rows = len(json.loads(proc.stdout).get("suggestions", []))
    return {"seconds": round(seconds, 2), "suggestions": rows}


def _gui_run(args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    command = [sys.executable, "-m", "app.gui.first_suggestions", args.query, "--timeout",
               str(args.timeout), *(["--grow"] if args.grow else [])]
    start = time.time()
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.timeout + 30)
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        if key == "RHETORICA_SUGGESTIONS":
            shown, rows, sentences, growing = value.split()
            return {"seconds": round(float(shown) - start, 2), "suggestions": int(rows),
                    "corpus_sentences": int(sentences), "growing_meanwhile": growing == "1",
                    "process_seconds": round(time.time() - start, 2)}
        if key == "RHETORICA_ERROR":
            raise RuntimeError(f"the GUI reported: {value}")
    raise RuntimeError(f"the GUI listed no suggestions (exit {proc.returncode}): "
                       f"{proc.stderr.strip()[-300:]}")


def _corpus_sentences(home: Path) -> int:
    from core.paths import resources_dir

    for folder in (home / "corpus", resources_dir() / "corpus"):
        try:
            return int(json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["sentences"])
        except (OSError, ValueError, KeyError):
            continue
    return 0


def run(args: argparse.Namespace) -> int:
    kinds = ["cli", "gui"] if args.what == "both" else [args.what]
    report: dict[str, Any] = {"query": args.query, "runs": args.runs, "grow": args.grow,
                              "grown": str(args.grown) if args.grown else None,
                              "cpus": os.cpu_count(), "load_average_1min": [round(os.getloadavg()[0], 2)]}
    for kind in kinds:
        runs = []
        for _ in range(args.runs):
            with _home(args.grown) as home:
                env = {**os.environ, "RHETORICA_HOME": home, "QT_QPA_PLATFORM": "offscreen"}
                result = (_cli_run if kind == "cli" else _gui_run)(args, env)
                result.setdefault("corpus_sentences", _corpus_sentences(Path(home)))
                runs.append(result)
        seconds = [r["seconds"] for r in runs]
        report[kind] = {"median_seconds": round(statistics.median(seconds), 2), "max_seconds": max(seconds),
                        "runs": runs}
        print(f"{kind}: fresh start to first suggestions: median {statistics.median(seconds):.2f} s, "
              f"max {max(seconds):.2f} s over {len(runs)} runs ({runs[0]['corpus_sentences']:,} corpus "
              f"sentences)", flush=True)
    report["load_average_1min"].append(round(os.getloadavg()[0], 2))
    print(json.dumps(report, indent=2))
    if args.json is not None:
        write_output(args.json, json.dumps(report, indent=2) + "\n")
    return 0
