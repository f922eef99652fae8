"""Run GUI tests that use background workers again and again under CPU load, looking for crashes.

Issue 23: a GUI test run once died with "Fatal Python error: Segmentation fault" while Python was
collecting garbage on a worker thread.  This harness makes that situation likely: busy-loop processes
load every core (the OS then preempts the GUI and pool threads at arbitrary points), and the pytest
child runs with low garbage-collection thresholds, so automatic collections happen often and in
whichever thread allocates (the page-render reply reader, the parse and analysis workers).

A run *crashes* when pytest dies of a signal or prints "Fatal Python error"; test failures are
reported separately (a slow machine can time a test out without anything crashing).

    python -m tests.gui_stress --repetitions 30 --load 2           # the long form (see test_gui_stress.py)
    python -m tests.gui_stress -n 3 tests/test_gui.py::test_drop_a_pdf_opens_it
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: the GUI test files whose tests start workers (windows: parse, model load, analysis, page renders)
DEFAULT_TESTS: tuple[str, ...] = ("tests/test_gui_workers.py", "tests/test_gui.py")
#: gc thresholds for the pytest child: young collections every 100 net allocations (default 700);
#: full collections still follow CPython's 25 % rule, so the run stays about as fast as normal
DEFAULT_THRESHOLDS: tuple[int, int, int] = (100, 5, 5)
FATAL = "Fatal Python error"
OFF_MAIN = "gc runs off the main thread:"


@dataclass
class StressRun:
    index: int
    returncode: int
    seconds: float
    output: str

    @property
    def crashed(self) -> bool:
        return self.returncode < 0 or self.returncode in (134, 139) or FATAL in self.output

    @property
    def off_main_collections(self) -> str:
        """How many garbage collections started on a thread other than the UI thread ("?" if unknown)."""
        for line in self.output.splitlines():
            if line.startswith(OFF_MAIN):
                return line[len(OFF_MAIN):].strip()
        return "?"

    @property
    def summary(self) -> str:
        lines = [line for line in self.output.strip().splitlines()
                 if line.strip() and not line.startswith(OFF_MAIN)]
        fatal = [line[line.index(FATAL):] for line in lines if FATAL in line]
        return fatal[0] if fatal else lines[-1] if lines else "(no output)"


@contextlib.contextmanager
def cpu_load(processes: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``processes`` busy-loop child processes for the duration of the block (ended by their pid)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for _ in range(max(0, processes))]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def child_command(tests: Sequence[str], thresholds: Sequence[int] = DEFAULT_THRESHOLDS,
                  pytest_args: Sequence[str] = ()) -> list[str]:
    """The pytest child: faulthandler on (a crash prints every thread's stack), low gc thresholds."""
    return [sys.executable, "-X", "faulthandler", "-m", "tests.gui_stress", "--child",
            "--thresholds", ",".join(str(t) for t in thresholds), "--",
            "-q", "-p", "no:cacheprovider", *pytest_args, *tests]


def run_once(index: int, tests: Sequence[str], thresholds: Sequence[int] = DEFAULT_THRESHOLDS,
             timeout_s: float = 900.0, pytest_args: Sequence[str] = ()) -> StressRun:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONFAULTHANDLER="1")
    start = time.monotonic()
    try:
        proc = subprocess.run(child_command(tests, thresholds, pytest_args), cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=timeout_s)
        rc, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        def text(b: bytes | str | None) -> str:
            return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")
        rc, out = 124, text(exc.stdout) + text(exc.stderr) + f"\n(timed out after {timeout_s:.0f} s)"
    return StressRun(index, rc, time.monotonic() - start, out)


def stress(repetitions: int, tests: Sequence[str] = DEFAULT_TESTS, load: int | None = None,
           thresholds: Sequence[int] = DEFAULT_THRESHOLDS, timeout_s: float = 900.0,
           log_dir: Path | None = None, verbose: bool = True,
           pytest_args: Sequence[str] = ()) -> list[StressRun]:
    """Run ``tests`` ``repetitions`` times under ``load`` busy processes (default: one per core)."""
    if load is None:
        load = os.cpu_count() or 2
    runs: list[StressRun] = []
    with cpu_load(load):
        for i in range(repetitions):
            run = run_once(i, tests, thresholds, timeout_s, pytest_args)
            runs.append(run)
            if log_dir is not None:
                log_dir.mkdir(parents=True, exist_ok=True)
                (log_dir / f"run-{i:03d}.log").write_text(run.output, encoding="utf-8")
            if verbose:
                state = "CRASH" if run.crashed else ("ok" if run.returncode == 0 else f"rc={run.returncode}")
                print(f"run {i + 1}/{repetitions}: {state} in {run.seconds:.0f} s — {run.summary}; "
                      f"{OFF_MAIN} {run.off_main_collections}", flush=True)
    return runs


def _child(thresholds: str, pytest_args: list[str]) -> int:
    import gc
    import threading

    gc.set_threshold(*(int(t) for t in thresholds.split(",")))
    main = threading.get_ident()
    off_main = [0, 0]  # collections started on another thread: all, full ones

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and threading.get_ident() != main:
            off_main[0] += 1
            off_main[1] += info.get("generation") == 2

    gc.callbacks.append(count)
    import pytest

    rc = int(pytest.main(pytest_args))
    gc.callbacks.remove(count)
    print(f"{OFF_MAIN} {off_main[0]} (full: {off_main[1]})", flush=True)
    return rc


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tests", nargs="*", help=f"pytest node ids (default: {' '.join(DEFAULT_TESTS)})")
    parser.add_argument("-n", "--repetitions", type=int, default=30)
    parser.add_argument("--load", type=int, default=None, help="busy-loop processes (default: one per core)")
    parser.add_argument("--thresholds", default=",".join(str(t) for t in DEFAULT_THRESHOLDS),
                        help="gc.set_threshold for the pytest child, e.g. 100,5,5")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--logs", type=Path, default=None, help="write each run's output here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args(argv)
    if args.child:
        return _child(args.thresholds, [a for a in [*rest, *args.tests] if a != "--"])
    thresholds = [int(t) for t in args.thresholds.split(",")]
    runs = stress(args.repetitions, args.tests or DEFAULT_TESTS, args.load, thresholds, args.timeout,
                  args.logs)
    crashes = [r for r in runs if r.crashed]
    failures = [r for r in runs if not r.crashed and r.returncode != 0]
    off_main = sum(int(r.off_main_collections.split()[0]) for r in runs if r.off_main_collections != "?")
    print(f"{len(runs)} runs: {len(crashes)} crashed, {len(failures)} failed without crashing, "
          f"{len(runs) - len(crashes) - len(failures)} passed; {OFF_MAIN} {off_main} in all")
    for run in crashes[:3]:
        print(f"--- run {run.index + 1} (rc {run.returncode}) ---\n{run.output[-6000:]}")
    return 1 if crashes else 0


if __name__ == "__main__":
    raise SystemExit(main())
