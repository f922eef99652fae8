"""The corpus pipeline on Ray (``rhetorica corpus build --engine ray``): Ray tasks and actors.

- parse: each PDF is a Ray task (:func:`core.corpus_pipeline.parse.parse_pdf_to_dict`, pymupdf in a
  Ray worker process), at most ``2 × workers`` in flight, taken back in input order;
- labels and vectors: ``workers`` :class:`ShardLabeller` actors (one CPU each), each loading the
  model bundle ONCE and labelling whole shards; a shard is written by the actor into the work
  folder (storage every node reaches), so only a small summary travels back;
- the sequential stages (sentences, shard cutting, merge) stay in the driver
  (:func:`core.corpus_pipeline.driver.run_pipeline`), which is why the pack is byte-identical to the
  local engine's.

A lost worker (its process killed, its node gone): the actor is restarted by Ray (the model loaded
again) and every shard that was in flight on it is submitted again by the driver, up to
:data:`SHARD_ATTEMPTS` times; shard files are written atomically under their id, so a shard done
twice is still one shard. Ray is imported only when this engine runs (the ``scale`` extra).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from core.corpus_pipeline.shards import ShardStore, ShardSummary
from core.corpus_pipeline.stages import ShardSpec, label_shard
from core.errors import RhetoricaError

RAY_MISSING = ("--engine ray needs Ray, which is not installed: pip install 'rhetorica[scale]' "
               "(or pip install 'ray==2.60.0')")
SHARD_ATTEMPTS = 4


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RhetoricaError(RAY_MISSING) from None
    return ray


class ShardLabeller:
    """A Ray actor: the model, loaded once; labels shards and writes them to the shared store."""

    def __init__(self, bundle: str | None, threads: int, work: str) -> None:
        from models.encoder import load_model

        self.model = load_model(bundle, device="cpu", threads=threads)
        self.store = ShardStore(work)

    def pid(self) -> int:
        return os.getpid()

    def label(self, spec: ShardSpec, key: str) -> ShardSummary:
        return self.store.write(label_shard(self.model, spec, key))


class RayEngine:
    """:class:`core.corpus_pipeline.driver.ShardEngine` on a pool of :class:`ShardLabeller` actors."""

    def __init__(self, ray: Any, workers: int, bundle: str | None, threads: int, work: Path) -> None:
        self.ray = ray
        remote = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=0)(ShardLabeller)
        self.actors = [remote.remote(bundle, threads, str(work)) for _ in range(workers)]
        self.capacity = 2 * workers
        self._load = [0] * workers
        self._pending: dict[Any, tuple[ShardSpec, str, int, int]] = {}  # ref -> (spec, key, actor, attempt)
        self.retried = 0

    def _send(self, spec: ShardSpec, key: str, attempt: int) -> None:
        actor = min(range(len(self.actors)), key=lambda i: self._load[i])
        self._load[actor] += 1
        self._pending[self.actors[actor].label.remote(spec, key)] = (spec, key, actor, attempt)

    def submit(self, spec: ShardSpec, key: str) -> None:
        self._send(spec, key, 1)

    def collect(self) -> list[ShardSummary]:
        from ray.exceptions import RayActorError, WorkerCrashedError

        ready, _ = self.ray.wait(list(self._pending), num_returns=1)
        finished = []
        for ref in ready:
            spec, key, actor, attempt = self._pending.pop(ref)
            self._load[actor] -= 1
            try:
                finished.append(self.ray.get(ref))
            except (RayActorError, WorkerCrashedError) as error:  # the worker was lost: do it again
                if attempt >= SHARD_ATTEMPTS:
                    raise RhetoricaError(f"shard {spec.shard_id} failed {attempt} times on Ray (last: "
                                         f"{type(error).__name__}); the finished shards are kept: "
                                         "run the build again") from None
                self.retried += 1
                self._send(spec, key, attempt + 1)
        return finished

    def in_flight(self) -> int:
        return len(self._pending)


def ray_parse(ray: Any, paths: list[Path], window: int) -> Any:
    """(path, parsed paper or reason) for each PDF, in input order, each parsed by a Ray task (no
    CPU reserved: the actors hold the CPUs; at most ``window`` in flight)."""
    from collections import deque

    from core.corpus_pipeline.parse import parse_pdf_to_dict, unpack

    task = ray.remote(num_cpus=0, max_retries=3)(parse_pdf_to_dict)
    pending: deque[tuple[Path, Any]] = deque()
    queue = iter(paths)
    while True:
        for path in queue:
            pending.append((path, task.remote(str(path))))
            if len(pending) >= window:
                break
        if not pending:
            return
        path, ref = pending.popleft()
        yield path, unpack(ray.get(ref))


def local_cpus(workers: int | None) -> int:
    """The CPUs a local Ray offers: ``workers`` when the machine has that many cores, else its cores
    (so that too many workers are refused in one line), by default cores - 1."""
    cores = os.cpu_count() or 2
    return min(workers, cores) if workers else max(1, cores - 1)


def connect(address: str | None, workers: int | None) -> tuple[Any, int]:
    """Ray, initialised (a cluster at ``address``, or a local one of ``workers`` CPUs), and the
    number of labelling actors to run (``workers``, or every CPU of the cluster)."""
    ray = import_ray()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # offline: nothing is reported anywhere
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                               "configure_logging": True, "logging_level": "ERROR"}
    try:
        if address:
            ray.init(address=address, **options)
        else:
            # Ray runs its workers at nice +15 by default; a local Ray's labelling gets this process's
            # priority instead, as the local engine has (a cluster's nodes set it at 'ray start')
            os.environ.setdefault("RAY_worker_niceness", "0")
            # a local Ray offers this machine's cores, not --workers: more workers than cores is
            # refused below (each holds a model: --workers 4096 would need hundreds of GB)
            ray.init(num_cpus=local_cpus(workers), **options)
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise RhetoricaError(f"cannot reach the Ray cluster at {address or 'a local Ray'}: "
                             f"{' '.join(str(error).split())[:300]}") from None
    cpus = int(ray.cluster_resources().get("CPU", 0))
    count = workers or cpus
    if count < 1 or count > cpus:
        ray.shutdown()
        raise RhetoricaError(f"the Ray cluster at {address or 'localhost'} offers {cpus} CPU(s): "
                             f"--workers {count} labelling workers cannot all start")
    return ray, count
