"""Loads the model bundle once, in the background, and hands the same instance to every user."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from app.gui.job_tracker import JobTracker
from app.gui.workers import Worker
from core.jobs import JobContext
from core.model_api import RoleModel


@dataclass(frozen=True)
class ModelOptions:
    path: str | None = None  # None: the bundled default (resources/models/default)
    device: str = "auto"
    threads: int | None = None


def _load(ctx: JobContext, options: ModelOptions) -> RoleModel:
    from models import load_model  # onnxruntime and tokenizers load here, off the UI thread

    ctx.progress(0, 1, "loading model")
    model = load_model(options.path or None, device=options.device, threads=options.threads or None)
    ctx.progress(1, 1, "model loaded")
    return model


class ModelHolder(QObject):
    """State machine: idle → loading → ready | failed; ``request()`` starts loading once."""

    loading = Signal()
    ready = Signal(object)
    failed = Signal(object)

    def __init__(self, tracker: JobTracker, options: ModelOptions | None = None) -> None:
        super().__init__()
        self._tracker = tracker
        self.options = options or ModelOptions()
        self.model: RoleModel | None = None
        self.error: Exception | None = None
        self._worker: Worker | None = None

    @property
    def state(self) -> str:
        if self.model is not None:
            return "ready"
        if self._worker is not None:
            return "loading"
        return "failed" if self.error is not None else "idle"

    def configure(self, options: ModelOptions) -> bool:
        """Use new options; drops the loaded model when they differ.  Returns True if changed."""
        if options == self.options:
            return False
        self.options = options
        self.model = None
        self.error = None
        if self._worker is not None:
            self._worker.cancel()
            self._worker = None
        return True

    def request(self) -> RoleModel | None:
        """The model if loaded; otherwise start loading (once) and return None."""
        if self.model is not None:
            return self.model
        if self._worker is None and self.error is None:
            worker = Worker(_load, self.options, name="load model")
            worker.result.connect(lambda m, w=worker: self._on_result(w, m))
            worker.error.connect(lambda e, w=worker: self._on_error(w, e))
            worker.cancelled.connect(lambda w=worker: self._on_cancelled(w))
            self._worker = worker
            self.loading.emit()
            self._tracker.start(worker, "Loading model", cancellable=False)
        return None

    def retry(self) -> None:
        self.error = None
        self.request()

    def _on_result(self, worker: Worker, model: RoleModel) -> None:
        if worker is not self._worker:
            return
        self._worker = None
        self.model = model
        self.ready.emit(model)

    def _on_error(self, worker: Worker, error: Exception) -> None:
        if worker is not self._worker:
            return
        self._worker = None
        self.error = error
        self.failed.emit(error)

    def _on_cancelled(self, worker: Worker) -> None:
        if worker is self._worker:
            self._worker = None
