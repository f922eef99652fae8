"""The open paper and everything derived from it, as Qt signals (the GUI's document model).

Opening a PDF goes in stages so the window never waits:

1. ``open(path)`` opens the file for display on the UI thread (milliseconds) and emits
   ``documentOpened`` — the page view shows the first page at once;
2. a worker parses it (or loads the parsed paper from the cache) → ``paperReady``;
3. once the model is loaded (once, in the background, shared) a worker labels every sentence
   (or loads the analysis from the cache) → ``analysisReady`` (the overlays need nothing more);
4. the same worker then finishes the paper's ONE embedded analysis (``core.labelling.embedded_analysis``: both
   views of every sentence and of the title and caption sentences, from the runs that labelled it)
   and caches it with its vectors → ``analysisEmbedded``. The Search, Alignment and Graphical-abstract
   panels and "Add this paper to my library" read :attr:`Session.embedded`; none runs the model on
   the open paper again. A damaged cache entry is computed again and ``noted`` says so in one line.

Errors at any stage come out of ``failed(stage, error)``; the window shows them inline.
Panels observe these signals; they ask for navigation with ``jump_to_*``/``select_sentence``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QObject, Signal

from app.gui.job_tracker import JobTracker
from app.gui.model_holder import ModelHolder
from app.gui.palette import RolePalette
from app.gui.pdf_pages import open_for_view, page_sizes
from app.gui.workers import Worker
from core.cache import AnalysisCache
from core.document import Paper
from core.errors import CorruptPdfError, RhetoricaError
from core.jobs import JobContext
from core.model_api import RoleModel
from core.taxonomy.labels import FunctionPrediction, RolePrediction

if TYPE_CHECKING:  # pragma: no cover
    import pymupdf

    from core.labelling.analysis import PaperAnalysis

log = logging.getLogger(__name__)

LABELLING = "Labelling rhetorical roles"  # the analysis job's label in the status bar, then:
EMBEDDING = "Preparing the paper for suggestions and search"  # once the roles are shown


@dataclass
class OpenDocument:
    path: str
    doc: pymupdf.Document  # used by the UI thread for rendering
    page_sizes: list[tuple[float, float]] = field(default_factory=list)
    sha256: str = ""


def _parse_job(ctx: JobContext, path: str, cache: AnalysisCache | None) -> tuple[Paper, str, bool]:
    from app.gui.pdf_jobs import parse_cached

    return parse_cached(ctx, path, cache)


def _analysis_job(ctx: JobContext, paper: Paper, model: RoleModel, sha: str,
                  cache: AnalysisCache | None) -> Iterator[tuple[str, object, bool]]:
    """Yield ``("labelled", PaperAnalysis, from cache)`` as soon as the roles are known, then
    ``("embedded", PaperAnalysis, from cache)`` with both views (and ``("note", text, False)`` for a
    damaged cache entry). A whole cached entry gives ``embedded`` alone."""
    from core.labelling.embedded_analysis import cached_analysis, start_embedded_analysis, store_analysis

    found, note = cached_analysis(paper, model.model_id, cache, sha, need_vectors=False)
    if note:
        yield "note", note, False
    if found is not None and found.embedded:
        yield "embedded", found, True
        return
    if found is not None:  # labels cached without vectors (e.g. by `rhetorica analyze`): show them now
        yield "labelled", found, True
    labelled = start_embedded_analysis(paper, model, ctx)
    if found is None:
        labels = dataclasses.replace(labelled.analysis, function_vectors=None)  # embed() fills the original
        store_analysis(paper, labels, cache, sha)  # the labels are kept even if the paper closes now
        yield "labelled", labels, False
    analysis = labelled.embed(ctx)
    store_analysis(paper, analysis, cache, sha)
    yield "embedded", analysis, False


class Session(QObject):
    documentOpened = Signal(object)  # OpenDocument
    documentClosed = Signal()
    paperReady = Signal(object)  # Paper
    analysisReady = Signal(object)  # PaperAnalysis (the roles: what the overlays need)
    analysisEmbedded = Signal(object)  # PaperAnalysis with both views: what the panels and the library read
    noted = Signal(str)  # one line worth telling the user (a damaged cache entry computed again)
    failed = Signal(str, object)  # stage ("open" | "parse" | "model" | "analysis"), exception
    sentenceSelected = Signal(int)  # -1: none
    jumpRequested = Signal(int, object)  # page, (x0, y0, x1, y1) in points or None
    # stage stopped by the user: "parse", "analysis" (before the roles were known) or "embedding" (the
    # roles are shown; what the panels read, :attr:`embedded`, was being made)
    cancelled = Signal(str)

    def __init__(self, tracker: JobTracker, models: ModelHolder, palette: RolePalette,
                 cache: AnalysisCache | None = None) -> None:
        super().__init__()
        self.tracker = tracker
        self.models = models
        self.palette = palette
        self.cache = cache
        self.document: OpenDocument | None = None
        self.paper: Paper | None = None
        self.analysis: PaperAnalysis | None = None
        self.selected = -1
        self.from_cache: dict[str, bool] = {}
        self.notes: list[str] = []  # what ``noted`` said, newest last
        self.vectors_from_cache: bool | None = None  # where the embedded analysis came from (None: not yet)
        self._generation = 0
        self._jobs: list[Worker] = []
        self._analysis_worker: Worker | None = None
        models.ready.connect(lambda _m: self._maybe_analyze())
        models.failed.connect(self._on_model_failed)

    # -- opening and closing ------------------------------------------------------------
    @property
    def path(self) -> str | None:
        return self.document.path if self.document else None

    def open(self, path: str | Path) -> bool:
        """Show ``path`` now and start parsing it; False (and ``failed``) if it cannot be shown."""
        self.close()
        path = str(Path(path).expanduser())
        try:
            doc = open_for_view(path)
            sizes = page_sizes(doc)
        except RhetoricaError as error:
            self.failed.emit("open", error)
            return False
        except Exception as error:  # pragma: no cover - defensive: never crash on a bad file
            self.failed.emit("open", CorruptPdfError(path, f"cannot be opened ({error})"))
            return False
        self.document = OpenDocument(path=path, doc=doc, page_sizes=sizes)
        self.documentOpened.emit(self.document)
        generation = self._generation
        worker = Worker(_parse_job, path, self.cache, name="parse")
        worker.result.connect(lambda r, g=generation: self._on_parsed(g, r))
        worker.error.connect(lambda e, g=generation: self._on_failed(g, "parse", e))
        worker.cancelled.connect(lambda g=generation: self._on_cancelled(g, "parse"))
        self._jobs.append(worker)
        self.tracker.start(worker, "Reading the paper")
        self.models.request()
        return True

    def close(self) -> None:
        self._generation += 1
        for worker in self._jobs:
            worker.cancel()
        self._jobs.clear()
        self._analysis_worker = None
        had = self.document is not None
        if self.document is not None:
            with contextlib.suppress(Exception):
                self.document.doc.close()
        self.document = None
        self.paper = None
        self.analysis = None
        self.selected = -1
        self.from_cache = {}
        self.vectors_from_cache = None
        if had:
            self.documentClosed.emit()

    def reanalyze(self) -> None:
        """Drop the analysis (e.g. the model changed) and label the paper again."""
        if self._analysis_worker is not None:
            self._analysis_worker.cancel()
            self._analysis_worker = None
        self.analysis = None
        if self.paper is not None:
            self.models.request()
            self._maybe_analyze()

    # -- stages -------------------------------------------------------------------------
    def _on_parsed(self, generation: int, result: tuple[Paper, str, bool]) -> None:
        if generation != self._generation or self.document is None:
            return
        paper, sha, cached = result
        self.paper = paper
        self.document.sha256 = sha
        self.from_cache["paper"] = cached
        self.paperReady.emit(paper)
        if self.models.error is not None:
            self.failed.emit("model", self.models.error)
        self._maybe_analyze()

    def request_embedded(self) -> PaperAnalysis | None:
        """The open paper's embedded analysis, or None after making sure it is under way (labels
        already shown without vectors, or a stopped analysis, are made again; ``analysisEmbedded``
        follows). A paper handed to the session without a document (``session.paper = paper``) is
        analysed too, uncached."""
        if self.embedded is not None:
            return self.embedded
        if self.paper is not None and self._analysis_worker is None and self.models.request() is not None:
            self.analysis = None
            self._maybe_analyze(without_document=self.document is None)
        return None

    def _maybe_analyze(self, without_document: bool = False, keep_labels: bool = False) -> None:
        """Start the analysis job unless one runs or is not needed; ``keep_labels``: the labels shown
        stay (the job makes the embedded analysis they lack, after an "embedding" cancel)."""
        model = self.models.model
        if (self.paper is None or (self.document is None and not without_document) or model is None
                or (self.analysis is not None and not keep_labels) or self._analysis_worker is not None):
            return
        self.vectors_from_cache = None
        generation = self._generation
        document = self.document
        sha, cache = (document.sha256, self.cache) if document is not None else (self.paper.sha256, None)
        worker = Worker(_analysis_job, self.paper, model, sha, cache, name="analyse")
        worker.yielded.connect(lambda r, g=generation: self._on_analyzed(g, r))
        worker.error.connect(lambda e, g=generation: self._on_failed(g, "analysis", e))
        worker.cancelled.connect(lambda g=generation: self._on_cancelled(g, "analysis"))
        ref = weakref.ref(worker)  # not the worker itself: Qt holds this slot as long as the worker lives
        worker.finished.connect(lambda r=ref: self._analysis_done(r()))
        self._analysis_worker = worker
        self._jobs.append(worker)
        self.tracker.start(worker, LABELLING)

    def _analysis_done(self, worker: Worker | None) -> None:
        if worker is not None and self._analysis_worker is worker:
            self._analysis_worker = None

    def _on_analyzed(self, generation: int, result: tuple[str, object, bool]) -> None:
        if generation != self._generation:
            return
        stage, value, cached = result
        if stage == "note":
            log.warning("%s", value)
            self.notes.append(str(value))
            self.noted.emit(str(value))
            return
        analysis = cast("PaperAnalysis", value)
        labelled_now = self.analysis is None
        self.analysis = analysis
        if stage == "labelled" and self._analysis_worker is not None:
            self.tracker.relabel(self._analysis_worker, EMBEDDING)
        if labelled_now:
            self.from_cache["analysis"] = cached
            self.analysisReady.emit(analysis)
        if stage == "embedded":
            self.vectors_from_cache = cached
            self.analysisEmbedded.emit(analysis)

    @property
    def embedded(self) -> PaperAnalysis | None:
        """The open paper's embedded analysis (roles, functions, both views of every sentence, the
        title and caption sentences' content view), or None until it is ready: what the panels and
        the library read instead of running the model on the paper again."""
        analysis = self.analysis
        return analysis if analysis is not None and analysis.embedded else None

    @property
    def embedding(self) -> bool:
        """True while the open paper's analysis is being made (labels or vectors still to come)."""
        return self._analysis_worker is not None

    def _on_failed(self, generation: int, stage: str, error: Exception) -> None:
        if generation == self._generation:
            self.failed.emit(stage, error)

    def _on_cancelled(self, generation: int, stage: str) -> None:
        if generation == self._generation:
            self.cancelled.emit("embedding" if stage == "analysis" and self.analysis is not None else stage)

    def resume(self) -> None:
        """Start again what the user cancelled (parsing: reopen; labelling or embedding: analyse again,
        the labels from the cache when it has them)."""
        if self.document is not None and self.paper is None:
            self.open(self.document.path)
        elif self.paper is not None and self.embedded is None and self.analysis is not None:
            # the roles stay shown while the rest is made
            self._maybe_analyze(without_document=self.document is None, keep_labels=True)
        elif self.paper is not None and self.embedded is None:
            self.reanalyze()

    def _on_model_failed(self, error: Exception) -> None:
        if self.paper is not None:
            self.failed.emit("model", error)

    # -- selection and navigation -------------------------------------------------------
    def select_sentence(self, index: int) -> None:
        if self.paper is None or not (-1 <= index < len(self.paper.sentences)):
            return
        self.selected = index
        self.sentenceSelected.emit(index)

    def jump_to_sentence(self, index: int) -> None:
        if self.paper is None or not (0 <= index < len(self.paper.sentences)):
            return
        sentence = self.paper.sentences[index]
        if sentence.rects:
            first = sentence.rects[0]
            self.jumpRequested.emit(first.page, (first.x0, first.y0, first.x1, first.y1))
        elif sentence.pages:
            self.jumpRequested.emit(sentence.pages[0], None)
        self.select_sentence(index)

    def jump_to(self, page: int, bbox: tuple[float, float, float, float] | None = None) -> None:
        self.jumpRequested.emit(page, bbox)

    def role_of(self, index: int) -> RolePrediction | None:
        """The RolePrediction of sentence ``index``, or None before the analysis arrives."""
        if self.analysis is None or not (0 <= index < len(self.analysis.roles)):
            return None
        return self.analysis.roles[index]

    def function_of(self, index: int) -> FunctionPrediction | None:
        """The FunctionPrediction of sentence ``index``; None before the analysis arrives or when
        the model has no function head."""
        functions = self.analysis.functions if self.analysis is not None else None
        if functions is None or not (0 <= index < len(functions)):
            return None
        return functions[index]
