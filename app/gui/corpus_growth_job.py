"""The default phrase corpus grows in the background on first use (issue 28.4;
``core.library.corpus_growth``): once the model has loaded, if the shipped extra text has not been
labelled yet, a background worker labels it (its own copy of the model on one thread, at a lower
priority, so suggestions and analyses keep the other core) and joins it with the shipped pack in the
user data folder. Suggestions use the shipped pack meanwhile; the next search after the join uses
the grown corpus (``core.paths.corpus_dir`` prefers it, and the Suggestions panel reopens a pack
whose manifest changed). The job shows in the status bar with its progress and Cancel; cancelled or
interrupted by quitting, it resumes at the next start where it stopped.

The window creates one :class:`CorpusGrowth` and calls :meth:`CorpusGrowth.start_when_ready`.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.gui.job_progress import Part, Wrapping
from app.gui.job_tracker import JobTracker
from app.gui.model_holder import ModelHolder
from app.gui.workers import Worker
from core.jobs import JobContext

LABEL = "Growing the phrase corpus"
NICE = 10  # the growth thread's (and its ONNX threads') scheduling priority: below the UI's work


def grow_in_background(ctx: JobContext, bundle_dir: Path) -> Any:
    """The worker's job: lower this thread's priority, check that this model should grow the corpus
    (hashing the model file here, not on the UI thread), then load a one-thread copy of the model (its
    ONNX threads inherit the priority) and grow the corpus (``core.library.corpus_growth``). None
    when there is nothing to grow."""
    from core.library.corpus_growth import grow_corpus
    from core.library.pack import file_sha256
    from models.encoder import load_model

    # Linux: nice is per thread, and threads started from this one inherit it (elsewhere: normal)
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
    model_sha256 = file_sha256(bundle_dir / "model.onnx")
    if not growth_needed(bundle_dir, model_sha256):
        return None
    ctx.check()
    model = load_model(bundle_dir, device="cpu", threads=1)
    return grow_corpus(model, model_sha256, GrowthProgress(ctx, extra_sentences()))


def extra_sentences() -> int:
    """How many sentences of extra text the growth labels (its manifest's count; 0 when unreadable)."""
    from core.errors import RhetoricaError
    from core.library.corpus_extra import read_extra_manifest
    from core.library.corpus_growth import GrowthPaths

    try:
        return int(read_extra_manifest(GrowthPaths.default().extra).get("sentences", 0))
    except (RhetoricaError, TypeError, ValueError):
        return 0


class GrowthProgress(Wrapping):
    """The growth's progress on one total. ``grow_corpus`` reports its labelling as "763 of 262,984
    sentences labelled" on a scale that also holds the join's share (262,984 + 5 %), so the bar and the
    words had two totals: here the labelling is shown as done of ``sentences`` (the words' total), and
    the join that follows, which counts no sentences, as busy (total 0) with the step named."""

    def __init__(self, ctx: JobContext, sentences: int) -> None:
        super().__init__(ctx)
        self.sentences = sentences

    def progress(self, done: int, total: int, message: str = "") -> None:
        self.check()
        if total > 0 and done < self.sentences:
            self.parent.progress(done, self.sentences, message)
        else:  # the join (or a count this cannot place): busy, said
            self.parent.progress(0, 0, message)

    def child(self, start: float, end: float) -> JobContext:
        return Part(self, lambda fraction, message: self.progress(round(fraction * self.sentences),
                                                                  self.sentences, message), start, end)


def may_need_growth() -> bool:
    """The cheap first look (manifests only, fit for the UI thread): has the corpus not grown yet,
    or grown for another release? :func:`growth_needed` then decides in the worker."""
    from core.library.corpus_growth import growth_status

    return growth_status().state in ("needed", "stale")


def growth_needed(bundle_dir: Path | None, model_sha256: str | None = None) -> bool:
    """True when the corpus should grow with the model in ``bundle_dir`` (whose ``model.onnx`` hashes
    to ``model_sha256``, computed when not given): the extra text is there, the corpus has not grown
    (or grew for another release, which is then set aside), and the model is the one the shipped pack
    was labelled with."""
    import json

    from core.library.corpus_growth import GrowthPaths, growth_status, retire_stale_growth
    from core.library.pack import MANIFEST, file_sha256

    if bundle_dir is None or not (bundle_dir / "model.onnx").is_file():
        return False
    paths = GrowthPaths.default()
    state = growth_status(paths).state
    if state == "stale":
        retire_stale_growth(paths)
        state = growth_status(paths).state
    if state != "needed":
        return False
    try:
        built_with = json.loads((paths.base / MANIFEST).read_text(encoding="utf-8")).get("model_sha256", "")
    except (OSError, ValueError):
        return False
    return bool(built_with) and built_with == (model_sha256 or file_sha256(bundle_dir / "model.onnx"))


class CorpusGrowth(QObject):
    """Starts the growth once per session, when the model is ready and the corpus needs it."""

    grown = Signal(int)  # sentences in the grown corpus
    failed = Signal(str)  # one line

    def __init__(self, tracker: JobTracker, models: ModelHolder,
                 notify: Callable[[str], None] | None = None) -> None:
        super().__init__()
        self.tracker = tracker
        self.models = models
        self.notify = notify or (lambda _line: None)
        self.worker: Worker | None = None
        self._asked = False

    def start_when_ready(self) -> None:
        """Grow once the model has loaded (now, if it has)."""
        if self._asked:
            return
        self._asked = True
        if self.models.model is not None:
            self._start(self.models.model)
        else:
            self.models.ready.connect(self._start)

    def _start(self, model: Any) -> None:
        if self.worker is not None:
            return
        folder = getattr(model, "bundle_dir", None)
        bundle_dir = Path(folder) if folder else None
        if bundle_dir is None or not may_need_growth():
            return
        worker = Worker(grow_in_background, bundle_dir, name="corpus-growth")
        worker.result.connect(self._on_result)
        worker.error.connect(lambda error: self.failed.emit(f"the phrase corpus did not grow: {error}"))
        worker.cancelled.connect(lambda: self.notify("Phrase corpus: growing paused; it resumes at the "
                                                     "next start"))
        self.worker = worker
        self.tracker.start(worker, LABEL)

    def _on_result(self, result: Any) -> None:
        if result is None:  # another model, or grown meanwhile: nothing to do
            return
        sentences = int(result.manifest.get("sentences", 0))
        self.notify(f"Phrase corpus grown: {sentences:,} sentences")
        self.grown.emit(sentences)
