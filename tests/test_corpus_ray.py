"""``corpus build --engine ray`` on a real local Ray cluster: a head node and one worker node started
on this machine with ``ray start`` (temp folders, own ports), stopped at the end. The Ray engine's
pack is byte-identical to the local engine's for the same input (a few papers per source from
``../shared/data`` and two real PDFs; without the shared folder, as in CI, eight generated PDFs), and a
labelling worker killed mid-build is survived: its shards are done again, and the pack has every
sentence once. Skipped without Ray (the ``scale`` extra)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed (pip install 'rhetorica[scale]')")

pytestmark = [pytest.mark.slow]

PACK_FILES = ("papers.jsonl.gz", "sentences.jsonl.gz", "function.npy", "function-scale.npy")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalCluster:
    """``ray start --block`` head and worker processes, each in its own process group."""

    def __init__(self) -> None:
        # a short folder: Ray's unix sockets live under it (path length limit)
        self.temp = Path(tempfile.mkdtemp(prefix="rr", dir="/tmp"))
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        # a loopback-only test cluster: no auth token (a real cluster shares one: docs/scale.md)
        self.env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
        self.ray = str(Path(sys.executable).parent / "ray")
        self.head: subprocess.Popen[bytes] | None = None
        self.worker: subprocess.Popen[bytes] | None = None

    def start_head(self) -> None:
        self.head = self._start("--head", f"--port={self.port}", "--include-dashboard=false")

    def _start(self, *args: str) -> subprocess.Popen[bytes]:
        self.log = self.temp / f"start-{len(list(self.temp.glob('start-*')))}.log"
        with open(self.log, "wb") as log:
            process = subprocess.Popen(
                [self.ray, "start", *args, "--num-cpus=1", f"--temp-dir={self.temp}", "--block",
                 "--disable-usage-stats", f"--dashboard-agent-listen-port={_free_port()}",
                 f"--dashboard-agent-grpc-port={_free_port()}", f"--metrics-export-port={_free_port()}",
                 f"--runtime-env-agent-port={_free_port()}"],
                env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_started(process)
        return process

    def _wait_started(self, process: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
        """Until ``ray start`` says the node runs (it gives up by itself when the node does not start)."""
        deadline = time.monotonic() + timeout
        while b"Ray runtime started" not in self.log.read_bytes():
            if process.poll() is not None:
                tail = self.log.read_text(errors="replace").strip().splitlines()[-1:]
                raise RuntimeError(f"'ray start' exited with {process.returncode}: {tail}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"'ray start' has not started a node after {timeout} s")
            time.sleep(0.5)

    def start_worker(self) -> None:
        self.worker = self._start(f"--address={self.address}")

    def wait_for_nodes(self, count: int, timeout: float = 90.0) -> None:
        import ray

        ray.init(address=self.address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        deadline = time.monotonic() + timeout
        try:
            while sum(1 for node in ray.nodes() if node["Alive"]) < count:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the local Ray cluster has not {count} nodes after {timeout} s")
                time.sleep(0.5)
        finally:
            ray.shutdown()

    def worker_node_pids(self, title: str) -> list[int]:
        """Processes titled ``title`` (``ray::ShardLabeller``...) under the worker node."""
        assert self.worker is not None
        children: dict[int, list[int]] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                children.setdefault(ppid, []).append(int(entry.name))
        found, stack = [], [self.worker.pid]
        while stack:
            pid = stack.pop()
            try:
                raw = Path(f"/proc/{pid}/cmdline").read_bytes()
                cmdline = raw.replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                cmdline = ""
            if cmdline.startswith(title):
                found.append(pid)
            stack.extend(children.get(pid, []))
        return found

    def stop(self) -> None:
        for process in (self.worker, self.head):
            if process is None or process.poll() is not None:
                continue
            os.killpg(process.pid, signal.SIGTERM)  # the group this fixture started, nothing else
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        # Ray daemons that left the group: only those started under this cluster's temp folder
        marker = str(self.temp).encode()
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if marker in (entry / "cmdline").read_bytes():
                        os.kill(int(entry.name), signal.SIGKILL)
                except (OSError, ProcessLookupError):
                    pass
        shutil.rmtree(self.temp, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    patch = pytest.MonkeyPatch()
    patch.setenv("RAY_AUTH_MODE", "disabled")  # the driver (this process) as the nodes
    local = LocalCluster()
    try:
        local.start_head()
        local.start_worker()
        local.wait_for_nodes(2)
        yield local
    finally:
        local.stop()
        patch.undo()


@pytest.fixture(scope="module")
def corpus_input(tmp_path_factory):  # type: ignore[no-untyped-def]
    """Real sources and PDFs when the shared folder is there; else synthetic PDFs only (CI)."""
    from models.corpus_build import CorpusInput
    from tests.conftest import SHARED

    pdfs = [SHARED / "pdfs" / "bmc-datta2010.pdf", SHARED / "pdfs" / "naacl2018-N18-3011.pdf"]
    if (SHARED / "data").is_dir() and all(pdf.is_file() for pdf in pdfs):
        return CorpusInput(["csabstruct", "pubmedqa", "oa-stm"], 3, pdfs, "CC BY 4.0")
    folder = tmp_path_factory.mktemp("pdfs")
    made = [_varied_pdf(folder / f"paper-{number}.pdf", number) for number in range(8)]
    return CorpusInput([], 3, made, "CC0 1.0")


NOUNS = ("model", "sample", "network", "protein", "survey", "sensor", "corpus", "solver", "cohort",
         "enzyme", "detector", "compiler")
VERBS = ("improves", "predicts", "reduces", "explains", "measures", "stabilises", "compresses",
         "separates", "tracks", "ranks")
PLACES = ("under heavy load", "in cold climates", "across four sites", "after long training",
          "with noisy inputs", "in small villages", "at low doses", "during the night")


def _varied_pdf(path: Path, number: int) -> Path:
    """A five-section paper (one section a page) of sentences worded differently from every other
    paper's, so that no sentence is dropped as a repeat and the build has about twenty shards."""
    import random

    import pymupdf

    rng = random.Random(number)
    doc = pymupdf.open()
    headings = ("Abstract", "1 Introduction", "2 Method", "3 Results", "4 Conclusion")
    for index, heading in enumerate(headings):
        page = doc.new_page(width=612, height=792)
        if index == 0:
            page.insert_text((72, 70), f"A Generated Study of the {NOUNS[number % len(NOUNS)].title()}",
                             fontsize=18, fontname="hebo")
        page.insert_text((72, 110), heading, fontsize=12, fontname="hebo")
        words = [f"The {rng.choice(NOUNS)} {rng.choice(VERBS)} the {rng.choice(NOUNS)} "
                 f"{rng.choice(PLACES)} while the {rng.choice(NOUNS)} {rng.choice(VERBS)} "
                 f"the {rng.choice(NOUNS)} {rng.choice(PLACES)}." for _ in range(8)]
        page.insert_textbox(pymupdf.Rect(72, 120, 540, 720), " ".join(words), fontsize=10, fontname="helv")
    doc.save(path)
    return path


SECTIONS = 2  # small shards: several per worker, so a killed worker has some in flight


@pytest.fixture(scope="module")
def local_pack(tmp_path_factory, corpus_input) -> Path:  # type: ignore[no-untyped-def]
    from models.corpus_build import EngineOptions, build_corpus

    out = tmp_path_factory.mktemp("local") / "pack"
    build_corpus(corpus_input, None, out, {}, EngineOptions("local", threads=1, workers=1,
                                                        sections_per_shard=SECTIONS))
    return out


def _same(a: Path, b: Path) -> None:
    import json

    for name in PACK_FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert json.loads((a / "manifest.json").read_text()) == json.loads((b / "manifest.json").read_text())


def test_ray_engine_builds_the_local_engines_pack(cluster: LocalCluster, local_pack: Path,  # type: ignore[no-untyped-def]
                                                  tmp_path: Path, corpus_input) -> None:
    from models.corpus_build import EngineOptions, build_corpus

    report = build_corpus(corpus_input, None, tmp_path / "pack", {},
                          EngineOptions("ray", cluster.address, workers=2, threads=1,
                                        work=tmp_path / "work", keep_shards=True,
                                        sections_per_shard=SECTIONS))
    assert report.engine == "ray" and report.workers == 2
    assert report.shards >= 3  # shards to share between the two workers
    assert report.skipped_pdfs == []
    assert report.record["sources"]["pdf"]["papers"] >= 2  # the PDFs went through the parse tasks (a
    # synthetic PDF whose every sentence is a repeat adds no paper; _same compares the counts)
    _same(local_pack, tmp_path / "pack")
    assert len(list((tmp_path / "work").glob("shard-*.json"))) == report.shards
    again = build_corpus(corpus_input, None, tmp_path / "again", {},  # resumable: every shard is reused
                         EngineOptions("ray", cluster.address, workers=2, threads=1, work=tmp_path / "work",
                                       sections_per_shard=SECTIONS))
    assert again.shards_reused == again.shards == report.shards and again.sentences_labelled == 0
    _same(local_pack, tmp_path / "again")
    assert not (tmp_path / "work").exists()


def test_a_worker_killed_mid_build_is_survived(cluster: LocalCluster, local_pack: Path,  # type: ignore[no-untyped-def]
                                               tmp_path: Path, corpus_input) -> None:
    import threading

    from models.corpus_build import EngineOptions, build_corpus

    killed: list[int] = []
    stop = threading.Event()

    def kill_a_busy_labeller() -> None:  # SIGKILL the worker node's labeller while it labels a shard
        while not stop.is_set() and not killed:
            for pid in cluster.worker_node_pids("ray::ShardLabeller.label"):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                break
            time.sleep(0.02)

    watcher = threading.Thread(target=kill_a_busy_labeller, daemon=True)
    watcher.start()
    try:
        options = EngineOptions("ray", cluster.address, workers=2, threads=1, work=tmp_path / "work",
                                keep_shards=True, sections_per_shard=SECTIONS)
        report = build_corpus(corpus_input, None, tmp_path / "pack", {}, options)
    finally:
        stop.set()
        watcher.join()
    assert killed, "no labelling worker ran on the worker node"
    assert report.shards_retried >= 1  # the shard it was labelling was done again
    _same(local_pack, tmp_path / "pack")  # nothing lost, nothing twice
    assert sorted(p.name for p in (tmp_path / "work").glob("shard-*.json")) == [
        f"shard-{i:08d}.json" for i in range(report.shards)]
