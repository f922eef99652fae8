"""One panel's background operation, written once (in the spirit of Anki's ``QueryOp`` and napari's
``thread_worker``): the job lifecycle every panel used to write itself.

A :class:`PanelOperation` belongs to one panel. ``run(fn, *args, ...)`` asks for ``fn(ctx, *args)`` to
run in a :class:`~app.gui.workers.Worker` (started through the session's job tracker, so the window's
status bar and Esc see it too) and takes care of:

- **stale results**: every ``run``/``cancel``/``invalidate`` starts a new generation; what an older job
  reports (result, yielded value, error, progress) is dropped, never shown;
- **cancel-and-restart**: a ``run`` while a job runs cancels it and starts the new job once the old one
  has stopped (two jobs of one panel never run at once);
- **waiting for the model** (``needs_model``, the default) and for the open paper's embedded analysis
  (``needs_analysis``): the job starts when they arrive; a model that cannot load, or an analysis that
  fails, reaches ``on_error`` as :class:`ModelUnavailable` / :class:`AnalysisUnavailable`;
- **deferring while hidden** (``defer_hidden=True``): asked while the panel is hidden, the job starts
  when the panel is next shown;
- **one status line** (:class:`~app.gui.status_line.StatusLine`): the status text, the job's progress
  (message and bar), one line for an error, "Cancelled.", and the Cancel button while busy.

Arguments known only when the job starts are passed as :class:`Late` values: :data:`MODEL` (the loaded
model), :data:`ANALYSIS` (the session's embedded analysis) or ``Late(lambda ready: ...)``.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtWidgets import QWidget

from app.gui.analysis_wait import WAITING, AnalysisWait
from app.gui.session import Session
from app.gui.status_line import StatusLine
from app.gui.widgets import one_line
from app.gui.workers import Worker
from core.errors import RhetoricaError

if TYPE_CHECKING:  # pragma: no cover
    from core.labelling.analysis import PaperAnalysis
    from core.model_api import RoleModel

LOADING_MODEL = "Loading the model…"
CANCELLED = "Cancelled."
NO_PAPER = "No paper is open."


class ModelUnavailable(RhetoricaError):
    """The model could not be loaded (``cause``: the loader's error)."""

    def __init__(self, cause: object) -> None:
        super().__init__(f"No model: {cause}")
        self.cause = cause


class AnalysisUnavailable(RhetoricaError):
    """The open paper's embedded analysis failed, was cancelled, or the paper closed."""


@dataclass(frozen=True)
class Ready:
    """What a job may need that is known only when it starts."""

    model: RoleModel | None = None
    analysis: PaperAnalysis | None = None


@dataclass(frozen=True)
class Late:
    """An argument of ``run`` computed when the job starts: ``value(ready)``."""

    value: Callable[[Ready], Any]


MODEL = Late(lambda ready: ready.model)
ANALYSIS = Late(lambda ready: ready.analysis)


def _resolve(value: Any, ready: Ready) -> Any:
    return value.value(ready) if isinstance(value, Late) else value


@dataclass
class _Request:
    """A job asked for and not started yet."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]
    label: str
    status: str
    needs_model: bool
    needs_analysis: bool
    defer_hidden: bool
    on_done: Callable[[Any], object] | None
    on_yield: Callable[[Any], object] | None
    on_error: Callable[[Exception], object] | None
    on_cancelled: Callable[[], object] | None
    on_progress: Callable[[int, int, str], object] | None


class PanelOperation(QObject):
    """A panel's background job: generations, cancel-and-restart, waits, deferral, the status line."""

    busyChanged = Signal(bool)  # the operation became busy (True) or idle (False)
    cancelled = Signal()  # the job asked for was cancelled (by ``cancel``, the line's Cancel, or Esc)

    def __init__(self, panel: QWidget, session: Session, line: StatusLine | None = None,
                 error_prefix: str = "Failed") -> None:
        super().__init__(panel)
        self.panel = panel
        self.session = session
        self.line = line or StatusLine()
        self.error_prefix = error_prefix
        self.generation = 0
        self.ready = Ready()  # what the running (or last started) job was given
        self.started_at = 0.0
        self._worker: Worker | None = None
        self._request: _Request | None = None
        self._waiting = ""  # "" | "model" | "analysis" | "stop" | "hidden"
        self._busy = False
        self._analysis = AnalysisWait(session, self._on_analysis_ready, self._on_analysis_failed)
        session.models.ready.connect(self._on_model_ready)
        session.models.failed.connect(self._on_model_failed)
        self.line.cancelRequested.connect(self.cancel)
        panel.installEventFilter(self)

    # -- state ------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """A job runs, or one waits for the model, the paper's analysis or the previous job to stop."""
        return self._worker is not None or self._waiting in ("model", "analysis", "stop")

    @property
    def waiting_for(self) -> str:
        """What the asked job waits for: "" (nothing, or it runs), "model", "analysis", "stop", "hidden"."""
        return self._waiting

    @property
    def deferred(self) -> bool:
        """A job waits for the panel to be shown."""
        return self._waiting == "hidden"

    @property
    def worker(self) -> Worker | None:
        return self._worker

    def elapsed(self) -> float:
        """Seconds since the current job started."""
        return time.monotonic() - self.started_at

    def set_status(self, text: str) -> None:
        self.line.set_text(text)

    # -- control ----------------------------------------------------------------------------
    def run(self, fn: Callable[..., Any], *args: Any, label: str = "", status: str = "Working…",
            needs_model: bool = True, needs_analysis: bool = False, defer_hidden: bool = False,
            on_done: Callable[[Any], object] | None = None, on_yield: Callable[[Any], object] | None = None,
            on_error: Callable[[Exception], object] | None = None,
            on_cancelled: Callable[[], object] | None = None,
            on_progress: Callable[[int, int, str], object] | None = None, **kwargs: Any) -> None:
        """Ask for ``fn(ctx, *args, **kwargs)`` in the background (any older job is superseded).
        ``label``: the job tracker's name for it (default: the function's name); ``status``: the status
        line while it runs."""
        self.generation += 1
        self._request = _Request(fn, args, kwargs, label, status,
                                 needs_model, needs_analysis, defer_hidden, on_done, on_yield, on_error,
                                 on_cancelled, on_progress)
        self._analysis.cancel()
        if self._worker is not None:
            self._worker.cancel()
            self._wait("stop", status)
            return
        self._advance()

    def cancel(self) -> None:
        """Stop the running job and forget any asked one; its result, if any, is dropped."""
        was_busy = self.busy or self.deferred
        self.invalidate()
        if was_busy:
            self.set_status(CANCELLED)
            self.cancelled.emit()

    def invalidate(self) -> None:
        """Drop the running job's result (it is cancelled) and forget any asked job, silently."""
        self.generation += 1
        self._request = None
        self._analysis.cancel()
        if self._worker is not None:
            self._worker.cancel()
        self._waiting = ""
        self._set_busy(self._worker is not None)

    # -- the steps before a job starts --------------------------------------------------------
    def _wait(self, what: str, status: str = "") -> None:
        self._waiting = what
        if status:
            self.set_status(status)
        self._set_busy(self.busy)

    def _advance(self) -> None:
        request = self._request
        if request is None or self._worker is not None:
            return
        if request.defer_hidden and not self.panel.isVisible():
            self._wait("hidden")
            return
        model = None
        if request.needs_model or request.needs_analysis:
            models = self.session.models
            model = models.request()
            if model is None:
                if models.state == "failed":
                    self._fail(request, ModelUnavailable(models.error))
                else:
                    self._wait("model", LOADING_MODEL)
                return
        analysis = None
        if request.needs_analysis:
            if self.session.paper is None:
                self._fail(request, AnalysisUnavailable(NO_PAPER))
                return
            analysis = self._analysis.request()
            if analysis is None:
                self._wait("analysis", WAITING)
                return
        self._start(request, Ready(model, analysis))

    def _start(self, request: _Request, ready: Ready) -> None:
        self._request = None
        self._waiting = ""
        self.ready = ready
        args = [_resolve(a, ready) for a in request.args]
        kwargs = {k: _resolve(v, ready) for k, v in request.kwargs.items()}
        worker = Worker(request.fn, *args, name=request.label, **kwargs)
        generation = self.generation
        worker.progress.connect(lambda d, t, m, g=generation, r=request: self._on_progress(g, r, d, t, m))
        worker.yielded.connect(lambda v, g=generation, r=request: self._deliver(g, r.on_yield, v))
        worker.result.connect(lambda v, g=generation, r=request: self._on_result(g, r, v))
        worker.error.connect(lambda e, g=generation, r=request: self._on_error(g, r, e))
        worker.cancelled.connect(lambda g=generation, r=request: self._on_cancelled(g, r))
        ref = weakref.ref(worker)  # Qt holds this slot as long as the worker lives: not the worker itself
        worker.finished.connect(lambda w=ref: self._on_finished(w()))
        self._worker = worker
        self.started_at = time.monotonic()
        self.set_status(request.status)
        self._set_busy(True)
        self.session.tracker.start(worker, request.label or worker.name)

    def _fail(self, request: _Request, error: Exception) -> None:
        self._request = None
        self._waiting = ""
        self._set_busy(self.busy)
        self._report_error(request, error)

    def _report_error(self, request: _Request, error: Exception) -> None:
        text = str(error) if isinstance(error, (ModelUnavailable, AnalysisUnavailable)) \
            else f"{self.error_prefix}: {error}"
        self.set_status(one_line(text))
        if request.on_error is not None:
            request.on_error(error)

    def _set_busy(self, busy: bool) -> None:
        self.line.set_busy(self, busy)
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)

    # -- what arrives -------------------------------------------------------------------------
    def _on_model_ready(self, _model: object) -> None:
        if self._waiting == "model":
            self._advance()

    def _on_model_failed(self, error: object) -> None:
        if self._waiting == "model" and self._request is not None:
            self._fail(self._request, ModelUnavailable(error))

    def _on_analysis_ready(self) -> None:
        if self._waiting == "analysis":
            self._advance()

    def _on_analysis_failed(self, message: str) -> None:
        if self._waiting == "analysis" and self._request is not None:
            self._fail(self._request, AnalysisUnavailable(message))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.panel and event.type() == QEvent.Type.Show and self._waiting == "hidden":
            self._advance()
        return False

    # -- the worker's signals (UI thread) -------------------------------------------------------
    def _current(self, generation: int) -> bool:
        """The job of ``generation`` is still the one to show, and its panel still exists (a job
        that outlives a closed window must not touch the widgets Qt has already deleted)."""
        return generation == self.generation and shiboken6.isValid(self) and shiboken6.isValid(self.line)

    def _deliver(self, generation: int, callback: Callable[[Any], object] | None, value: Any) -> None:
        if self._current(generation) and callback is not None:
            callback(value)

    def _on_progress(self, generation: int, request: _Request, done: int, total: int, message: str) -> None:
        if not self._current(generation):
            return
        self.line.set_progress(done, total)
        if request.on_progress is not None:
            request.on_progress(done, total, message)
        elif message:
            self.set_status(f"{message[:1].upper()}{message[1:]}…")

    def _on_result(self, generation: int, request: _Request, value: Any) -> None:
        if self._current(generation):
            self.line.hide_progress()
            self.set_status("")
            if request.on_done is not None:
                request.on_done(value)

    def _on_error(self, generation: int, request: _Request, error: Exception) -> None:
        if self._current(generation):
            self.line.hide_progress()
            self._report_error(request, error)

    def _on_cancelled(self, generation: int, request: _Request) -> None:
        if self._current(generation) and self._request is None:
            self.set_status(CANCELLED)
            if request.on_cancelled is not None:
                request.on_cancelled()
            self.cancelled.emit()

    def _on_finished(self, worker: Worker | None) -> None:
        if worker is None or worker is not self._worker or not self._current(self.generation):
            return
        self._worker = None
        if self._waiting == "stop":
            self._waiting = ""
            self._advance()
        self._set_busy(self.busy)
