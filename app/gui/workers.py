"""One mechanism for background work in the GUI (napari ``thread_worker``-like).

A :class:`Worker` wraps a callable ``fn(ctx, *args, **kwargs)`` whose first argument is a
:class:`core.jobs.JobContext`.  ``start()`` runs it on a ``QThreadPool``; the worker emits
``started``, ``progress(done, total, message)``, ``yielded(value)`` (when ``fn`` is a generator),
``result(value)``, ``error(exception)``, ``cancelled()`` and always ``finished()`` last.
``cancel()`` calls ``ctx.cancel()``; the function stops at its next ``ctx.check()``/``progress``.

Connect to the signals *before* ``start()``: they are emitted from the pool thread and
delivered on the UI thread (queued), so slots may touch widgets.  The function itself must
never touch Qt widgets.

Qt objects die on the UI thread (issue 23).  A Python object that owns a Qt object must lose its
last reference on the UI thread, or Qt destroys it on a pool thread, which can crash the process.
Two things made that happen here, both now prevented:

- every ``Worker`` (a ``QObject``) was in a reference cycle with itself (``worker.ctx`` held the
  bound method ``worker._on_progress``), so only the cyclic garbage collector could free it, and the
  collector runs in whichever thread happens to allocate — often the page-render reply reader;
- any other garbage cycle holding Qt objects (a closed window's widgets, its ``RenderClient``,
  ``QPixmap`` caches, …) could likewise be collected on a pool thread.

So a worker holds itself only weakly (the context forwards progress through a weak reference), the
pool thread drops every reference it has *before* it tells the UI thread, through a relay object that
lives on the UI thread, that the job is over; the UI thread then drops the worker from ``_LIVE``
(usually its last reference).  And while any pool thread may run Python code, automatic garbage
collection is switched off and the UI thread collects instead (:class:`_UiThreadCollector`, a timer
that follows the ``gc`` thresholds), so cyclic garbage is only ever destroyed on the UI thread.

Quitting: :func:`cancel_live_workers` and :func:`wait_for_workers` (``app.gui.app.shutdown``). A job
that still runs when the process exits finds its worker and the keeper deleted by Qt's teardown; it
then emits nothing (:func:`_emit`), where it used to print "Signal source has been deleted".
"""

from __future__ import annotations

import gc
import inspect
import itertools
import logging
import time
import traceback
import weakref
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QRunnable, QThreadPool, QTimer, Signal, SignalInstance

import app.gui.qtfix  # noqa: F401  (refcount guard for PySide6 6.12 / pymupdf 1.28 on Python 3.11)
from core.errors import Cancelled
from core.jobs import JobContext, Progress

log = logging.getLogger(__name__)

_POOL: QThreadPool | None = None
_POOLS: list[QThreadPool] = []  # every pool a worker was started on (normally just the one above)
_LIVE: dict[int, Worker] = {}  # key -> worker: holds a worker from start() until its thread let go
_KEYS = itertools.count(1)
_KEEPER: _UiThreadKeeper | None = None


def thread_pool() -> QThreadPool:
    """The pool every worker runs on (a few threads: parse, model load, analysis, figures, draft)."""
    global _POOL
    if _POOL is None:
        _POOL = QThreadPool()
        _POOL.setMaxThreadCount(6)  # one is the page-render reply reader
    return _POOL


def _emit(source: QObject, signal: SignalInstance, *args: Any) -> None:
    """``signal.emit(*args)`` from a pool thread, unless ``source`` (the signal's QObject) is gone: Qt
    deletes every QObject when the process exits, and a job that outlived that has nobody to tell."""
    try:
        signal.emit(*args)
    except RuntimeError:  # "Signal source has been deleted"
        if shiboken6.isValid(source):
            raise


class _UiThreadCollector(QObject):
    """Garbage collection on the UI thread while pool threads run Python code.

    CPython collects cyclic garbage in whichever thread allocates past ``gc.get_threshold()``; with
    Qt objects in that garbage, they would be destroyed on that thread.  While engaged, automatic
    collection is off and a timer on the UI thread collects the generations whose counts passed their
    thresholds (as CPython would).  It disengages once no worker is live and every pool thread is idle.
    """

    INTERVAL_MS = 100
    #: at most one full collection per this many seconds (stands in for CPython's rule that a full
    #: collection waits until the survivors since the last one are a quarter of the old objects)
    FULL_EVERY_S = 10.0

    def __init__(self) -> None:
        super().__init__()
        self._restore: bool | None = None  # gc.isenabled() before we engaged; None: not engaged
        self._last_full = time.monotonic()
        self._timer = QTimer(self)
        self._timer.setInterval(self.INTERVAL_MS)
        self._timer.timeout.connect(self.tick)

    @property
    def engaged(self) -> bool:
        return self._restore is not None

    def engage(self) -> None:
        if self._restore is None:
            self._restore = gc.isenabled()
            gc.disable()
        if not self._timer.isActive():
            self._timer.start()

    def tick(self) -> None:
        self.collect()
        if not _LIVE and all(pool.activeThreadCount() == 0 for pool in _POOLS):
            self._timer.stop()
            if self._restore:
                gc.enable()
            self._restore = None

    def collect(self) -> int:
        """Collect the generations that are due (UI thread); the number of objects found unreachable."""
        t0, t1, t2 = gc.get_threshold()
        c0, c1, c2 = gc.get_count()
        if t0 <= 0 or c0 <= t0:
            return 0
        generation = 0
        if c1 > t1:
            generation = 1
            now = time.monotonic()
            if c2 > t2 and now - self._last_full >= self.FULL_EVERY_S:
                generation = 2
                self._last_full = now
        return gc.collect(generation)


class _UiThreadKeeper(_UiThreadCollector):
    """Lives on the UI thread for the whole process: releases finished workers there."""

    done = Signal(int)  # emitted by a pool thread once it holds no reference to worker ``key``

    def __init__(self) -> None:
        super().__init__()
        self.done.connect(self._release)  # queued: the keeper lives on the UI thread

    def _release(self, key: int) -> None:
        worker = _LIVE.pop(key, None)
        if worker is not None:
            worker._forget_job()
        del worker  # usually the last reference: the QObject is destroyed here, on the UI thread
        self.tick()


def _keeper() -> _UiThreadKeeper:
    global _KEEPER
    if _KEEPER is None:
        keeper = _UiThreadKeeper()
        app = QCoreApplication.instance()
        if app is not None and keeper.thread() is not app.thread():
            keeper.moveToThread(app.thread())
        _KEEPER = keeper
    return _KEEPER


class _Runnable(QRunnable):
    def __init__(self, worker: Worker, key: int) -> None:
        super().__init__()
        self._worker: Worker | None = worker
        self._key = key
        self._keeper = _keeper()

    def run(self) -> None:
        worker, self._worker = self._worker, None
        try:
            if worker is not None:
                worker._run()
        finally:
            # This thread must not hold the worker when the UI thread lets go of it: drop our
            # reference first, then tell the UI thread (which may drop the last one) that we are done.
            del worker
            _emit(self._keeper, self._keeper.done, self._key)


def _forward_progress(ref: weakref.ref[Worker]) -> Callable[[Progress], None]:
    def forward(p: Progress) -> None:
        worker = ref()
        if worker is not None:
            worker._on_progress(p)

    return forward


class Worker(QObject):
    """A callable taking a ``JobContext`` run in the background, reporting through signals."""

    started = Signal()
    progress = Signal(int, int, str)
    yielded = Signal(object)
    result = Signal(object)
    error = Signal(object)
    cancelled = Signal()
    finished = Signal()

    #: minimum seconds between two forwarded progress signals (keeps the UI event queue light)
    PROGRESS_INTERVAL = 0.05

    def __init__(self, fn: Callable[..., Any], *args: Any, name: str = "", **kwargs: Any) -> None:
        super().__init__()
        self.name = name or getattr(fn, "__name__", "job")
        self._fn: Callable[..., Any] | None = fn
        self._args = args
        self._kwargs = kwargs
        self._last_progress = 0.0
        # weakly: ``self.ctx`` holding ``self._on_progress`` made every worker a reference cycle
        self.ctx = JobContext(_forward_progress(weakref.ref(self)))
        self.is_running = False
        self.is_finished = False
        self.started_at = 0.0

    # -- control (UI thread) -------------------------------------------------------------
    def start(self, pool: QThreadPool | None = None) -> Worker:
        pool = pool or thread_pool()
        if pool not in _POOLS:
            _POOLS.append(pool)
        key = next(_KEYS)
        _LIVE[key] = self
        keeper = _keeper()
        keeper.engage()
        self.is_running = True
        pool.start(_Runnable(self, key))
        return self

    def cancel(self) -> None:
        self.ctx.cancel()

    @property
    def is_cancelled(self) -> bool:
        return self.ctx.cancelled

    def _forget_job(self) -> None:
        """Drop the job's function and arguments (UI thread, once the job is over)."""
        self._fn = None
        self._args = ()
        self._kwargs = {}

    # -- pool thread ---------------------------------------------------------------------
    def _on_progress(self, p: Progress) -> None:
        now = time.monotonic()
        if p.done < p.total and now - self._last_progress < self.PROGRESS_INTERVAL:
            return
        self._last_progress = now
        _emit(self, self.progress, int(p.done), int(p.total), str(p.message))

    def _run(self) -> None:
        self.started_at = time.monotonic()
        _emit(self, self.started)
        try:
            self.ctx.check()
            if self._fn is None:
                raise RuntimeError(f"worker {self.name!r} was already run")
            value = self._fn(self.ctx, *self._args, **self._kwargs)
            if inspect.isgenerator(value):
                last = None
                for item in value:
                    self.ctx.check()
                    _emit(self, self.yielded, item)
                    last = item
                value = last
            self.ctx.check()
        except Cancelled:
            _emit(self, self.cancelled)
        except Exception as exc:  # reported to the UI, never raised into Qt
            log.debug("worker %s failed:\n%s", self.name, traceback.format_exc())
            # the traceback's first frame is this one: the error handed to the UI would hold the worker
            if exc.__traceback__ is not None and exc.__traceback__.tb_frame is inspect.currentframe():
                exc.__traceback__ = exc.__traceback__.tb_next
            _emit(self, self.error, exc)
        else:
            _emit(self, self.result, value)
        finally:
            self.is_running = False
            self.is_finished = True
            _emit(self, self.finished)


def live_workers() -> list[Worker]:
    """Workers started and not yet finished (for tests and shutdown)."""
    return list(_LIVE.values())


def cancel_live_workers() -> int:
    """Cancel every live worker, whether or not the status bar offers to (quitting); how many."""
    workers = live_workers()
    for worker in workers:
        worker.cancel()
    return len(workers)


def wait_for_workers(timeout_ms: int) -> bool:
    """Wait up to ``timeout_ms`` in all for every pool a worker ran on; True when all are idle."""
    deadline = time.monotonic() + timeout_ms / 1000
    done = True
    for pool in _POOLS or [thread_pool()]:
        left = max(0, int((deadline - time.monotonic()) * 1000))
        done = pool.waitForDone(left) and done
    return done
