"""Kill -9 at random points while Rhetorica writes, then check that nothing was lost.

Three scenarios, each ``--runs`` times (default 100):

* ``draft``: a child saves successive versions of a draft with ``core.drafts.DraftStore`` (the GUI's
  autosave); after the kill the draft must parse and be the last completed save or the one being
  written (never torn, empty or older).
* ``library``: a child runs ``Library.add_pdfs`` (what ``rhetorica library add`` does) on a few
  generated PDFs with the tiny test bundle; after the kill the database must pass
  ``PRAGMA integrity_check``, every paper must have all its sentences, and each view's index must
  hold exactly the database's sentence ids, or ``Library.rebuild`` must make it so (counted).
* ``checkpoint``: a child saves successive checkpoints with ``models.training.checkpoint.save_checkpoint``
  on a tiny net; after the kill ``best.pt`` must load, be the last completed save or the one being
  written, and a resumed run (load, one optimiser step, save) must work.

The heavy imports happen once here; each run forks a child (so a run costs milliseconds, not an
interpreter start), waits until it is writing, sleeps a random time within the measured length of
its work, and SIGKILLs it. ``--cli N`` also runs N library kills on the real ``rhetorica library add``
command in a fresh interpreter. Run from the repository root:

    python tests/faults/kill_loop.py --runs 100
    python tests/faults/kill_loop.py --runs 5 --scenarios draft,checkpoint --seed 1

Exit status 0 when every run kept its invariants, 1 otherwise. POSIX only (fork, SIGKILL).
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import multiprocessing as mp
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@dataclass
class Tally:
    """What happened over one scenario's runs."""

    name: str
    runs: int = 0
    failures: list[str] = field(default_factory=list)
    repaired: int = 0  # library: runs whose indexes had to be rebuilt to match the database
    older: int = 0  # runs that found the previous version (the kill came mid-save)
    leftover_tmp: int = 0  # runs that left a temporary file behind
    child_errors: int = 0  # children that died of an exception before the kill
    seconds: float = 0.0

    def row(self) -> str:
        return (f"{self.name:11} {self.runs:5d} {len(self.failures):8d} {self.repaired:9d} "
                f"{self.older:9d} {self.leftover_tmp:9d} {self.seconds:8.1f}")


# -- shared counters between parent and child (fork inherits them) ---------------------------
class Counters:
    """``started``: the version the child is writing; ``done``: the last version it finished."""

    def __init__(self) -> None:
        self._array = mp.RawArray(ctypes.c_longlong, 2)

    @property
    def started(self) -> int:
        return int(self._array[0])

    @property
    def done(self) -> int:
        return int(self._array[1])

    def start(self, version: int) -> None:
        self._array[0] = version

    def finish(self, version: int) -> None:
        self._array[1] = version

    def reset(self) -> None:
        self._array[0] = self._array[1] = 0


def fork_and_kill(work: Callable[[], None], ready: Callable[[], bool], delay: float,
                  timeout: float = 60.0) -> tuple[bool, int]:
    """Fork a child running ``work``; once ``ready()`` sleep ``delay`` s and SIGKILL it. Returns
    (killed while still running, exit status)."""
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            work()
        except BaseException as error:
            print(f"child error: {type(error).__name__}: {error}", file=sys.stderr)
            code = 3
        os._exit(code)
    deadline = time.monotonic() + timeout
    while not ready() and time.monotonic() < deadline:
        finished, status = os.waitpid(pid, os.WNOHANG)
        if finished:
            return False, status
        time.sleep(0.001)
    time.sleep(delay)
    finished, status = os.waitpid(pid, os.WNOHANG)
    if finished:
        return False, status
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return True, status


def tmp_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


# -- draft ------------------------------------------------------------------------------------
def draft_body(variant: int) -> str:
    """~200 KB of draft text ending in its checksum line."""
    body = "".join(f"Sentence {k} of variant {variant}: we propose a method and it works.\n"
                   for k in range(3000))
    return f"{body}sha256 {hashlib.sha256(body.encode()).hexdigest()}\n"


def parse_draft(text: str) -> int:
    """The version of a saved draft; ValueError when it is torn or empty."""
    lines = text.split("\n")
    if len(lines) < 3 or not lines[0].startswith("version ") or not lines[-2].startswith("sha256 "):
        raise ValueError(f"torn or empty draft ({len(text)} chars)")
    body = "".join(line + "\n" for line in lines[1:-2])
    if hashlib.sha256(body.encode()).hexdigest() != lines[-2].split()[1]:
        raise ValueError("draft checksum mismatch")
    return int(lines[0].split()[1])


def run_draft(runs: int, rng: random.Random, work_dir: Path) -> Tally:
    from core.drafts import DraftStore

    tally = Tally("draft")
    counters = Counters()
    bodies = [draft_body(v) for v in range(3)]  # reused round-robin: successive saves differ
    root = work_dir / "drafts"

    def text_of(version: int) -> str:
        return f"version {version}\n" + bodies[version % len(bodies)]

    def loop() -> None:
        store = DraftStore(root)
        version = counters.done
        while True:
            version += 1
            counters.start(version)
            store.save(text_of(version))
            counters.finish(version)

    # calibrate: how long one save takes
    started = time.perf_counter()
    for v in range(1, 6):
        DraftStore(root).save(text_of(v))
    per_save = (time.perf_counter() - started) / 5
    shutil.rmtree(root)
    t0 = time.perf_counter()
    for _ in range(runs):
        shutil.rmtree(root, ignore_errors=True)
        counters.reset()
        killed, status = fork_and_kill(loop, lambda: counters.done >= 1, rng.uniform(0, 4 * per_save))
        tally.runs += 1
        if not killed:
            tally.child_errors += 1
            tally.failures.append(f"child exited early (status {status})")
            continue
        done, begun = counters.done, counters.started
        try:
            version = parse_draft(DraftStore(root).load())
        except ValueError as error:
            tally.failures.append(f"run {tally.runs}: {error}")
            continue
        if version not in (done, begun):
            tally.failures.append(f"run {tally.runs}: draft is version {version}, last saved {done}")
        elif version < begun:
            tally.older += 1
        if tmp_files(root):
            tally.leftover_tmp += 1
        DraftStore(root).save(text_of(begun + 1))  # the next autosave works after the crash
    tally.seconds = time.perf_counter() - t0
    return tally


# -- library ----------------------------------------------------------------------------------
def make_pdfs(folder: Path, count: int) -> list[Path]:
    """``count`` small generated PDFs with distinct text (so none is a duplicate)."""
    import pymupdf

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for n in range(count):
        doc = pymupdf.open()
        page = doc.new_page(width=612, height=792)
        page.insert_text((72, 80), f"Generated Paper Number {n}", fontsize=20, fontname="hebo")
        page.insert_text((72, 130), "Abstract", fontsize=12, fontname="hebo")
        text = " ".join(f"We propose method {n}.{k} and results show that it works well." for k in range(12))
        page.insert_textbox((72, 140, 540, 400), text, fontsize=10, fontname="helv")
        page.insert_text((72, 430), "1 Introduction", fontsize=12, fontname="hebo")
        more = " ".join(f"Previous work {n}.{k} has studied this problem in detail." for k in range(15))
        page.insert_textbox((72, 440, 540, 740), more, fontsize=10, fontname="helv")
        path = folder / f"paper{n}.pdf"
        doc.save(path)
        paths.append(path)
    return paths


def check_library(folder: Path) -> tuple[list[str], bool]:
    """(problems that rebuilding cannot fix, whether the indexes were out of step with the database).

    Looks at the files directly first (as a crash left them), then opens the library the way the
    app does and, when the indexes were out of step, checks that ``Library.rebuild`` fixed them."""
    from core.library.ann_index import load_index
    from core.library.index import IndexError_
    from core.library.library import INDEX_FILES, Library
    from core.library.store import DATABASE_NAME

    problems: list[str] = []
    db_path = folder / DATABASE_NAME
    if not db_path.exists():
        return [], False  # killed before the database was created: nothing to lose
    db = sqlite3.connect(str(db_path))
    try:
        check = [row[0] for row in db.execute("PRAGMA integrity_check")]
        if check != ["ok"]:
            return [f"integrity_check: {check[:3]}"], False
        if db.execute("PRAGMA foreign_key_check").fetchall():
            problems.append("foreign_key_check failed")
        torn = db.execute("SELECT p.paper_id FROM papers p LEFT JOIN sentences s ON s.paper = p.id "
                          "GROUP BY p.id HAVING COUNT(s.id) != p.sentence_count").fetchall()
        if torn:
            problems.append(f"{len(torn)} paper(s) with missing sentences")
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        ids = {view: {r[0] for r in db.execute(
            f"SELECT id FROM sentences WHERE {'content' if view == 'content' else 'function_vector'} "
            "IS NOT NULL")} for view in INDEX_FILES}
        dims = {}
        for view in INDEX_FILES:
            column = "content" if view == "content" else "function_vector"
            row = db.execute(f"SELECT length({column}) FROM sentences WHERE {column} IS NOT NULL "
                             "LIMIT 1").fetchone()
            dims[view] = None if row is None else row[0] // 4
    except sqlite3.DatabaseError as error:
        return [f"database unreadable: {error}"], False
    finally:
        db.close()
    stale = False
    for view, path in INDEX_FILES.items():
        if dims[view] is None:
            continue
        expected = ids[view]
        if meta.get(f"index.{view}.count") != str(len(expected)) or not (folder / path).is_file():
            stale = True
            continue
        try:
            index = load_index(folder / path, dims[view])
        except IndexError_:
            stale = True
            continue
        if set(index.ids().tolist()) != expected:
            problems.append(f"{view} index says it is in step but holds other ids")
    with Library(folder) as library:  # opening rebuilds stale indexes; rebuild() is the CLI's fix
        if stale:
            library.rebuild()
        for view in INDEX_FILES:
            if dims[view] is None:
                continue
            index = library.index(view)
            got = set(index.ids().tolist()) if index is not None else set()
            if got != ids[view] or library.store.get_meta(f"index.{view}.count") != str(len(ids[view])):
                problems.append(f"{view} index does not match the database after rebuild")
    return problems, stale


def run_library(runs: int, rng: random.Random, work_dir: Path, cli: int = 0) -> Tally:
    from core.library.library import Library
    from models import load_model
    from tests.tiny_bundle import make_tiny_bundle

    tally = Tally("library")
    bundle = make_tiny_bundle(work_dir / "bundle", functions=True)
    pdfs = make_pdfs(work_dir / "pdfs", 4)
    seed_lib = work_dir / "seed-lib"  # a library that already holds one paper
    model = load_model(bundle, device="cpu", threads=1)
    with Library(seed_lib) as library:
        library.add_pdfs(pdfs[:1], model, workers=0)
    del model
    counters = Counters()
    folder = work_dir / "lib"

    def add() -> None:
        child_model = load_model(bundle, device="cpu", threads=1)
        with Library(folder) as library:
            counters.finish(1)  # ready: the kill may come from here on
            library.add_pdfs(pdfs, child_model, workers=0)
            counters.start(1)
        time.sleep(60)

    shutil.copytree(seed_lib, folder)
    started = time.perf_counter()
    model = load_model(bundle, device="cpu", threads=1)
    with Library(folder) as library:
        library.add_pdfs(pdfs, model, workers=0)
    span = time.perf_counter() - started
    print(f"library: one add of {len(pdfs)} PDFs takes {span:.2f} s; kills fall in [0, {1.1 * span:.2f}] s",
          file=sys.stderr)
    t0 = time.perf_counter()
    for _ in range(runs):
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(seed_lib, folder)
        counters.reset()
        killed, status = fork_and_kill(add, lambda: counters.done >= 1, rng.uniform(0, 1.1 * span))
        tally.runs += 1
        if not killed:
            tally.child_errors += 1
            tally.failures.append(f"child exited early (status {status})")
            continue
        _library_verdict(tally, folder, model, pdfs)
    for _ in range(cli):
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(seed_lib, folder)
        command = [sys.executable, "-m", "app", "library", "add", *map(str, pdfs), "--library", str(folder),
                   "--model", str(bundle), "--threads", "1", "--workers", "0", "--quiet"]
        child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5, 6.0))  # interpreter start + imports take most of this
        child.send_signal(signal.SIGKILL)
        child.wait()
        tally.runs += 1
        _library_verdict(tally, folder, model, pdfs)
    tally.seconds = time.perf_counter() - t0
    return tally


def _library_verdict(tally: Tally, folder: Path, model: Any, pdfs: list[Path]) -> None:
    from core.library.library import Library

    problems, stale = check_library(folder)
    tally.repaired += stale
    if tmp_files(folder):
        tally.leftover_tmp += 1
    if not problems:  # the add can be run again and completes the library
        with Library(folder) as library:
            library.add_pdfs(pdfs, model, workers=0)
            if library.stats().papers != len(pdfs):
                problems.append(f"re-running the add gave {library.stats().papers} papers")
        more, _ = check_library(folder)
        problems += more
    tally.failures += [f"run {tally.runs}: {p}" for p in problems]


# -- checkpoint -------------------------------------------------------------------------------
def tiny_base(folder: Path) -> Path:
    """A tiny BERT saved like a base model folder (what ``load_encoder`` reads)."""
    from transformers import BertConfig, BertModel

    if not (folder / "config.json").is_file():
        config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                            intermediate_size=64, max_position_embeddings=64)
        BertModel(config).save_pretrained(str(folder))
        from tests.tiny_bundle import build_tokenizer

        build_tokenizer(folder / "tokenizer.json")
    return folder


def run_checkpoint(runs: int, rng: random.Random, work_dir: Path) -> Tally:
    import torch

    from models.training.checkpoint import build_net, load_checkpoint, save_checkpoint
    from models.training.net import HeadConfig

    torch.set_num_threads(1)
    tally = Tally("checkpoint")
    base = tiny_base(work_dir / "base")
    net, base_dir = build_net(base, HeadConfig(dim=16, layers=1, heads=2, ffn=32))
    marker = net.head.classifier.bias  # holds the step number, so a load shows which save it was
    counters = Counters()
    out = work_dir / "run"
    path = out / "best.pt"

    def save(step: int) -> None:
        with torch.no_grad():
            marker.fill_(float(step))
        save_checkpoint(path, net, base_dir, {"step": step})

    def loop() -> None:
        step = 0
        while True:
            step += 1
            counters.start(step)
            save(step)
            counters.finish(step)

    started = time.perf_counter()
    for step in range(1, 6):
        save(step)
    per_save = (time.perf_counter() - started) / 5
    t0 = time.perf_counter()
    for _ in range(runs):
        shutil.rmtree(out, ignore_errors=True)
        counters.reset()
        killed, status = fork_and_kill(loop, lambda: counters.done >= 1, rng.uniform(0, 4 * per_save))
        tally.runs += 1
        if not killed:
            tally.child_errors += 1
            tally.failures.append(f"child exited early (status {status})")
            continue
        done, begun = counters.done, counters.started
        if tmp_files(out):
            tally.leftover_tmp += 1
        try:
            loaded, _, meta = load_checkpoint(path)
        except Exception as error:
            tally.failures.append(f"run {tally.runs}: {type(error).__name__}: {error}")
            continue
        step = int(meta.get("step", -1))
        weights_step = float(loaded.head.classifier.bias[0].detach())
        if step not in (done, begun) or weights_step != step:
            tally.failures.append(f"run {tally.runs}: checkpoint step {step} (weights {weights_step}), "
                                  f"last saved {done}")
            continue
        if step < begun:
            tally.older += 1
        try:  # resume: one optimiser step from the loaded weights, then save over the stale temp file
            optimiser = torch.optim.SGD([p for p in loaded.parameters() if p.requires_grad], lr=0.1)
            loss = sum((p.float() ** 2).sum() for p in loaded.head.parameters())
            loss.backward()
            optimiser.step()
            save_checkpoint(path, loaded, base_dir, {"step": step + 1})
            if int(load_checkpoint(path)[2]["step"]) != step + 1 or tmp_files(out):
                raise RuntimeError("the resumed save did not replace the checkpoint cleanly")
        except Exception as error:
            tally.failures.append(f"run {tally.runs}: resume failed: {type(error).__name__}: {error}")
    tally.seconds = time.perf_counter() - t0
    return tally


def _unsafe_writes() -> None:
    """Replace the atomic saves with in-place writes (to show the checks catch torn files)."""
    import io

    import torch

    import core.drafts
    import models.training.checkpoint as checkpoint

    def in_place_text(path: Path, text: str, what: str | None = None) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            for start in range(0, len(text), 4096):
                handle.write(text[start:start + 4096])
                handle.flush()

    def in_place_bytes(path: Path, data: bytes, what: str | None = None, tmp_name: str | None = None) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as handle:
            for start in range(0, len(data), 4096):
                handle.write(data[start:start + 4096])
                handle.flush()

    core.drafts.atomic_write_with_text = in_place_text  # type: ignore[assignment]
    checkpoint.atomic_write_bytes = in_place_bytes  # type: ignore[assignment]
    _ = (io, torch)


SCENARIOS = {"draft": run_draft, "library": run_library, "checkpoint": run_checkpoint}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="kills per scenario (default 100)")
    parser.add_argument("--scenarios", default="draft,library,checkpoint")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cli", type=int, default=0,
                        help="library: also kill this many real 'rhetorica library add' processes")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--unsafe", action="store_true",
                        help="negative control: draft and checkpoint saves write in place (not atomically), "
                             "which this harness must catch")
    args = parser.parse_args(argv)
    for name, value in (("OMP_NUM_THREADS", "1"), ("TRANSFORMERS_VERBOSITY", "error"),
                        ("HF_HUB_DISABLE_PROGRESS_BARS", "1"), ("TQDM_DISABLE", "1")):
        os.environ.setdefault(name, value)
    rng = random.Random(args.seed)
    if args.unsafe:
        _unsafe_writes()
    work = Path(tempfile.mkdtemp(prefix="rhetorica-kill-"))
    tallies = []
    try:
        for name in args.scenarios.split(","):
            scenario_dir = work / name
            scenario_dir.mkdir()
            if name == "library":
                tally = run_library(args.runs, rng, scenario_dir, args.cli)
            else:
                tally = SCENARIOS[name](args.runs, rng, scenario_dir)
            tallies.append(tally)
            print(f"{name}: {tally.runs} runs, {len(tally.failures)} failures, {tally.seconds:.1f} s",
                  file=sys.stderr, flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{'scenario':11} {'runs':>5} {'failures':>8} {'rebuilds':>9} {'previous':>9} "
          f"{'stale tmp':>9} {'seconds':>8}")
    for tally in tallies:
        print(tally.row())
    for tally in tallies:
        for failure in tally.failures[:10]:
            print(f"  {tally.name}: {failure}")
    return 1 if any(t.failures for t in tallies) else 0


if __name__ == "__main__":
    sys.exit(main())
