"""app.gui.workers: the one background-job mechanism (signals, generators, cancel) and the probe."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("pytestqt")

from app.gui.latency import LatencyProbe, percentile
from app.gui.workers import Worker, thread_pool
from core.errors import NotAPdfError
from core.jobs import JobContext


def test_result_progress_and_ui_thread_delivery(qtbot) -> None:  # type: ignore[no-untyped-def]
    main = threading.get_ident()
    seen: dict[str, object] = {"progress": []}

    def job(ctx: JobContext, n: int) -> int:
        seen["job_thread"] = threading.get_ident()
        for i in range(n):
            ctx.progress(i + 1, n, "step")
        return n * 2

    worker = Worker(job, 5)
    worker.progress.connect(lambda d, t, m: seen["progress"].append((d, t)))  # type: ignore[union-attr]
    worker.result.connect(lambda v: seen.update(result=v, slot_thread=threading.get_ident()))
    with qtbot.waitSignal(worker.finished, timeout=10_000):
        worker.start()
    assert seen["result"] == 10
    assert seen["job_thread"] != main and seen["slot_thread"] == main
    assert (5, 5) in seen["progress"]  # type: ignore[operator]
    assert worker.is_finished


def test_error_is_reported_not_raised(qtbot) -> None:  # type: ignore[no-untyped-def]
    def job(ctx: JobContext) -> None:
        raise NotAPdfError("x.txt", "not a PDF file")

    worker = Worker(job)
    with qtbot.waitSignal(worker.error, timeout=10_000) as blocker:
        worker.start()
    assert isinstance(blocker.args[0], NotAPdfError)


def test_generator_yields_then_cancel(qtbot) -> None:  # type: ignore[no-untyped-def]
    gate = threading.Event()
    got: list[int] = []

    def job(ctx: JobContext):  # type: ignore[no-untyped-def]
        for i in range(1000):
            yield i
            if i == 2:
                gate.wait(10)

    worker = Worker(job)

    def on_item(value: int) -> None:
        got.append(value)
        if value == 2:
            worker.cancel()
            gate.set()

    worker.yielded.connect(on_item)
    with qtbot.waitSignal(worker.cancelled, timeout=10_000):
        worker.start()
    qtbot.waitUntil(lambda: worker.is_finished, timeout=10_000)
    assert got[:3] == [0, 1, 2] and len(got) < 1000


def test_latency_probe_records_gaps(qtbot) -> None:  # type: ignore[no-untyped-def]
    probe = LatencyProbe(10)
    probe.start()
    qtbot.wait(150)
    stats = probe.stop()
    assert stats.samples >= 3
    assert stats.max_ms >= stats.p99_ms >= stats.mean_ms > 0
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 100) == 5.0
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 50) == 3.0
    assert percentile([], 99) == 0.0


def test_pool_has_threads() -> None:
    assert thread_pool().maxThreadCount() >= 4
