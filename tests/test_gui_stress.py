"""Issue 23: Qt objects must never be destroyed on a worker thread (a segfault seen once under load).

Always on (about 15 s in all): finished workers die on the UI thread; cyclic garbage holding Qt objects
(a bare QObject, then a closed window's render client and reader) is collected on the UI thread while
workers run; and the GUI test that once crashed, run in a fresh process under CPU load with frequent
garbage collection, passes.

The long form (``RHETORICA_STRESS=1``; ``RHETORICA_STRESS_REPS``, default 30; ``RHETORICA_STRESS_LOAD``
busy processes, default one per core) runs the GUI test files that use workers again and again under
load; see :mod:`tests.gui_stress`, also a command: ``python -m tests.gui_stress -n 30 --load 2``.
"""

from __future__ import annotations

import gc
import os
import threading
import time
import weakref

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QObject

from app.gui.job_tracker import JobTracker
from app.gui.workers import Worker, live_workers, thread_pool
from core.jobs import JobContext
from tests.gui_stress import run_once, stress

MAIN = threading.get_ident()


def _where(deaths: dict[str, str], name: str):  # type: ignore[no-untyped-def]
    def record() -> None:
        deaths[name] = "ui" if threading.get_ident() == MAIN else f"thread {threading.get_ident()}"
    return record


def _start_workers(tracker: JobTracker, deaths: dict[str, str]) -> None:
    """Workers of every kind; the test keeps no reference to any of them (only the finalizers)."""
    gate = threading.Event()

    def plain(ctx: JobContext, n: int) -> int:
        for i in range(n):
            ctx.progress(i, n, "step")
        return n

    def items(ctx: JobContext):  # type: ignore[no-untyped-def]
        yield from range(50)

    def failing(ctx: JobContext) -> None:
        raise ValueError("expected")

    def waiting(ctx: JobContext) -> None:
        gate.wait(10)
        ctx.check()

    made = {"plain": Worker(plain, 200), "generator": Worker(items), "error": Worker(failing),
            "cancelled": Worker(waiting), "tracked": Worker(plain, 10)}
    made["error"].error.connect(lambda e: None)
    for name, worker in made.items():
        weakref.finalize(worker, _where(deaths, name))
        if name == "tracked":
            tracker.start(worker, "tracked")
        else:
            worker.start()
    made["cancelled"].cancel()
    gate.set()


def test_finished_workers_are_released_on_the_ui_thread(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A Worker is a QObject: it must be freed by the UI thread, never by a collection on another thread
    (they used to be reference cycles that only the garbage collector freed, on any thread)."""
    tracker = JobTracker()
    deaths: dict[str, str] = {}
    _start_workers(tracker, deaths)
    qtbot.waitUntil(lambda: not live_workers() and thread_pool().activeThreadCount() == 0, timeout=20_000)
    # what a worker thread's garbage collection would find now must not include a worker
    collector = threading.Thread(target=gc.collect)
    collector.start()
    collector.join()
    deadline = time.monotonic() + 5
    while len(deaths) < 5 and time.monotonic() < deadline:
        qtbot.wait(20)
    assert deaths == dict.fromkeys(("plain", "generator", "error", "cancelled", "tracked"), "ui")
    assert not tracker.busy


class _Cycle:
    """Garbage the way a closed window leaves it: a cycle that owns a Qt object."""

    def __init__(self, deaths: dict[str, str], name: str) -> None:
        self.me = self
        self.qt = QObject()
        weakref.finalize(self.qt, _where(deaths, name))


def test_garbage_holding_qt_objects_is_collected_on_the_ui_thread(qtbot) -> None:  # type: ignore[no-untyped-def]
    """While workers run, automatic collection waits for the UI thread (a worker that allocates would
    otherwise collect the cycle, and destroy its QObject, on the pool thread)."""
    enabled_before = gc.isenabled()
    deaths: dict[str, str] = {}
    made = threading.Event()
    seen: dict[str, object] = {}

    def allocate(ctx: JobContext) -> int:
        made.wait(10)
        seen["gc_enabled_in_worker"] = gc.isenabled()
        keep = [[i] for i in range(100_000)]  # a hundred young collections' worth of containers
        deadline = time.monotonic() + 10
        while len(deaths) < 20 and time.monotonic() < deadline:  # kept until the cycles are gone
            time.sleep(0.01)
        return len(keep)

    worker = Worker(allocate)
    worker.start()
    for i in range(20):
        _Cycle(deaths, f"cycle {i}")
    made.set()
    qtbot.waitUntil(lambda: worker.is_finished and len(deaths) == 20, timeout=20_000)
    assert seen["gc_enabled_in_worker"] is False
    assert set(deaths.values()) == {"ui"}, deaths
    qtbot.waitUntil(lambda: not live_workers() and gc.isenabled() == enabled_before, timeout=10_000)


def test_a_closed_windows_qt_objects_die_on_the_ui_thread(qtbot, tmp_path_factory,  # type: ignore[no-untyped-def]
                                                         tmp_path, monkeypatch) -> None:
    """The real case: a closed window's render client and its reply-reader worker are cyclic garbage;
    a worker that allocates must not be the thread that collects them."""
    from app.gui.main_window import MainWindow
    from core.paths import sample_paper_path
    from tests.gui_helpers import model_bundle

    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    deaths: dict[str, str] = {}
    thresholds = gc.get_threshold()
    gc.set_threshold(100, 2, 2)  # full collections as soon as CPython allows them
    try:
        window = MainWindow(model_path=str(model_bundle(tmp_path_factory)))
        window.show()
        weakref.finalize(window.renderer, _where(deaths, "RenderClient"))
        if window.renderer._reader is not None:
            weakref.finalize(window.renderer._reader, _where(deaths, "reader Worker"))
        with qtbot.waitSignal(window.firstPageShown, timeout=60_000):
            window.open_path(sample_paper_path())
        window.close()
        thread_pool().waitForDone(20_000)
        qtbot.wait(10)
        window.deleteLater()
        del window

        def churn(ctx: JobContext) -> None:  # allocates well past every threshold, for a while
            end = time.monotonic() + 1.0
            while time.monotonic() < end and len(deaths) < 2:
                keep = [[i] for i in range(5_000)]
                del keep

        worker = Worker(churn)
        with qtbot.waitSignal(worker.finished, timeout=20_000):
            worker.start()
    finally:
        gc.set_threshold(*thresholds)
    gc.collect()  # here, on the UI thread, if the worker did not
    assert set(deaths.values()) == {"ui"}, deaths


def test_gui_tests_survive_cpu_load_short() -> None:
    """Quick form: the test that once crashed, in a fresh process under load, collecting often."""
    from tests.gui_stress import cpu_load

    with cpu_load(1):
        run = run_once(0, ["tests/test_gui.py::test_drop_a_pdf_opens_it"], timeout_s=300)
    assert not run.crashed, run.output[-6000:]
    assert run.returncode == 0, run.output[-6000:]


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("RHETORICA_STRESS") != "1",
                    reason="long stress run: set RHETORICA_STRESS=1")
def test_gui_tests_survive_cpu_load_long() -> None:
    repetitions = int(os.environ.get("RHETORICA_STRESS_REPS", "30"))
    load = int(os.environ["RHETORICA_STRESS_LOAD"]) if os.environ.get("RHETORICA_STRESS_LOAD") else None
    runs = stress(repetitions, load=load, verbose=False)
    crashed = [r for r in runs if r.crashed]
    failed = [r for r in runs if r.returncode != 0]
    report = f"{len(crashed)} of {len(runs)} runs crashed, {len(failed)} failed"
    assert not crashed, report + "\n" + crashed[0].output[-6000:]
    assert not failed, report + "\n" + failed[0].output[-6000:]
