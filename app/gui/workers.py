"""One mechanism for background work in the GUI (napari ``thread_worker``-like).

A :class:`Worker` wraps a callable ``fn(ctx, *args, **kwargs)`` whose first argument is a
:class:`core.jobs.JobContext`.  ``start()`` runs it on a ``QThreadPool``; the worker emits
``started``, ``progress(done, total, message)``, ``yielded(value)`` (when ``fn`` is a generator),
``result(value)``, ``error(exception)``, ``cancelled()`` and always ``finished()`` last.
``cancel()`` calls ``ctx.cancel()``; the function stops at its next ``ctx.check()``/``progress``.

Connect to the signals *before* ``start()``: they are emitted from the pool thread and
delivered on the UI thread (queued), so slots may touch widgets.  The function itself must
never touch Qt widgets.
"""

from __future__ import annotations

import inspect
import logging
import time
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

import app.gui.qtfix  # noqa: F401  (refcount guard for PySide6 6.12 / pymupdf 1.28 on Python 3.11)
from core.errors import Cancelled
from core.jobs import JobContext, Progress

log = logging.getLogger(__name__)

_POOL: QThreadPool | None = None
_LIVE: set[Worker] = set()  # keep Python wrappers alive while their job runs


def thread_pool() -> QThreadPool:
    """The pool every worker runs on (a few threads: parse, model load, analysis, figures, draft)."""
    global _POOL
    if _POOL is None:
        _POOL = QThreadPool()
        _POOL.setMaxThreadCount(6)  # one is the page-render reply reader
    return _POOL


class _Runnable(QRunnable):
    def __init__(self, worker: Worker) -> None:
        super().__init__()
        self._worker = worker

    def run(self) -> None:
        self._worker._run()


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
        self._fn = fn
        self._args = args
        self._kwargs = kwargs
        self._last_progress = 0.0
        self.ctx = JobContext(self._on_progress)
        self.is_running = False
        self.is_finished = False
        self.started_at = 0.0

    # -- control (UI thread) -------------------------------------------------------------
    def start(self, pool: QThreadPool | None = None) -> Worker:
        _LIVE.add(self)
        self.finished.connect(self._release)
        self.is_running = True
        (pool or thread_pool()).start(_Runnable(self))
        return self

    def cancel(self) -> None:
        self.ctx.cancel()

    @property
    def is_cancelled(self) -> bool:
        return self.ctx.cancelled

    def _release(self) -> None:
        _LIVE.discard(self)

    # -- pool thread ---------------------------------------------------------------------
    def _on_progress(self, p: Progress) -> None:
        now = time.monotonic()
        if p.done < p.total and now - self._last_progress < self.PROGRESS_INTERVAL:
            return
        self._last_progress = now
        self.progress.emit(int(p.done), int(p.total), str(p.message))

    def _run(self) -> None:
        self.started_at = time.monotonic()
        self.started.emit()
        try:
            self.ctx.check()
            value = self._fn(self.ctx, *self._args, **self._kwargs)
            if inspect.isgenerator(value):
                last = None
                for item in value:
                    self.ctx.check()
                    self.yielded.emit(item)
                    last = item
                value = last
            self.ctx.check()
        except Cancelled:
            self.cancelled.emit()
        except Exception as exc:  # reported to the UI, never raised into Qt
            log.debug("worker %s failed:\n%s", self.name, traceback.format_exc())
            self.error.emit(exc)
        else:
            self.result.emit(value)
        finally:
            self.is_running = False
            self.is_finished = True
            self.finished.emit()


def live_workers() -> list[Worker]:
    """Workers started and not yet finished (for tests and shutdown)."""
    return list(_LIVE)
