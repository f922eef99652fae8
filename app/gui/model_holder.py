"""Loads the model bundle once, in the background, and hands the same instance to every user.

When the user's chosen bundle (settings ``model_path`` or ``--model``) cannot be used — missing,
altered or incompatible files — the holder loads the shipped default instead and says so in one
line (:attr:`ModelHolder.notice`, signal ``noticed``): a bad bundle never leaves the app without
a model while the shipped one works.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.gui.job_tracker import JobTracker
from app.gui.workers import Worker
from core.errors import ModelError
from core.jobs import JobContext
from core.model_api import RoleModel


@dataclass(frozen=True)
class ModelOptions:
    path: str | None = None  # None: the bundled default (resources/models/default)
    device: str = "auto"
    threads: int | None = None


@dataclass(frozen=True)
class _Loaded:
    model: RoleModel
    notice: str = ""  # one line when the chosen bundle was replaced by the shipped default


def shipped_bundle() -> Path:
    """The shipped default bundle (looked up at each load, so tests can point it elsewhere by
    patching ``models.bundle.default_bundle_path``)."""
    import models.bundle

    return models.bundle.default_bundle_path()


def _same_path(path: str, other: Path) -> bool:
    try:
        return Path(path).resolve() == other.resolve()
    except OSError:
        return False


def fallback_notice(path: str, error: Exception) -> str:
    """The one-line notice shown when the chosen bundle is replaced by the shipped one."""
    reason = " ".join(str(error).split()) or type(error).__name__
    return f"Your model at {path} could not be used ({reason}); using the shipped model."


def _load(ctx: JobContext, options: ModelOptions) -> _Loaded:
    from models import load_model  # onnxruntime and tokenizers load here, off the UI thread

    threads = options.threads or None
    shipped = shipped_bundle()
    ctx.progress(0, 1, "loading model")
    if not options.path or _same_path(options.path, shipped):
        model = load_model(shipped, device=options.device, threads=threads)
        ctx.progress(1, 1, "model loaded")
        return _Loaded(model)
    try:
        model = load_model(options.path, device=options.device, threads=threads)
    except ModelError as error:  # missing, altered or incompatible bundle: try the shipped one
        chosen_error = error
    else:
        ctx.progress(1, 1, "model loaded")
        return _Loaded(model)
    ctx.check()
    ctx.progress(0, 1, "loading the shipped model")
    try:
        model = load_model(shipped, device=options.device, threads=threads)
    except ModelError as error:
        raise ModelError(f"{chosen_error}; the shipped model could not be used either ({error})") from None
    ctx.progress(1, 1, "model loaded")
    return _Loaded(model, fallback_notice(options.path, chosen_error))


class ModelHolder(QObject):
    """State machine: idle → loading → ready | failed; ``request()`` starts loading once."""

    loading = Signal()
    ready = Signal(object)
    failed = Signal(object)
    noticed = Signal(str)  # one line: the chosen bundle was refused and the shipped one is used

    def __init__(self, tracker: JobTracker, options: ModelOptions | None = None) -> None:
        super().__init__()
        self._tracker = tracker
        self.options = options or ModelOptions()
        self.model: RoleModel | None = None
        self.error: Exception | None = None
        self.notice: str = ""  # set when the loaded model is the shipped fallback
        self._worker: Worker | None = None

    @property
    def state(self) -> str:
        if self.model is not None:
            return "ready"
        if self._worker is not None:
            return "loading"
        return "failed" if self.error is not None else "idle"

    @property
    def using_fallback(self) -> bool:
        """True when the loaded model is the shipped default standing in for the chosen one."""
        return self.model is not None and bool(self.notice)

    def configure(self, options: ModelOptions) -> bool:
        """Use new options; drops the loaded model when they differ.  Returns True if changed."""
        if options == self.options:
            return False
        self.options = options
        self.model = None
        self.error = None
        self.notice = ""
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

    def _on_result(self, worker: Worker, loaded: _Loaded) -> None:
        if worker is not self._worker:
            return
        self._worker = None
        self.model = loaded.model
        self.notice = loaded.notice
        if loaded.notice:
            self.noticed.emit(loaded.notice)
        self.ready.emit(loaded.model)

    def _on_error(self, worker: Worker, error: Exception) -> None:
        if worker is not self._worker:
            return
        self._worker = None
        self.error = error
        self.failed.emit(error)

    def _on_cancelled(self, worker: Worker) -> None:
        if worker is self._worker:
            self._worker = None
