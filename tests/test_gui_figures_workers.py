"""The Figures panel lets go of its thumbnail workers: one ``Worker`` used to stay alive for every paper
opened (its ``yielded`` slot held the worker itself, and Qt holds the slot)."""

from __future__ import annotations

import dataclasses
import gc
import weakref
from collections.abc import Iterator

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QObject, Signal

from app.gui.job_tracker import JobTracker
from app.gui.panels import figures
from app.gui.panels.figures import FiguresPanel
from app.gui.workers import Worker, live_workers
from core.document import Figure
from core.jobs import JobContext
from tests.paper_factory import make_paper


class RecordingTracker(JobTracker):
    """A job tracker that remembers, weakly, every worker it started."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[weakref.ref[Worker]] = []

    def start(self, worker: Worker, label: str, cancellable: bool = True) -> Worker:
        self.started.append(weakref.ref(worker))
        return super().start(worker, label, cancellable)


class FakeSession(QObject):
    """What the Figures panel uses of the session."""

    paperReady = Signal(object)
    failed = Signal(str, object)
    documentOpened = Signal(object)
    documentClosed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.tracker = RecordingTracker()
        self.paper = None


def quick_thumbnails(ctx: JobContext, path: str, found: list[Figure], zoom: float = 1.0
                     ) -> Iterator[tuple[int, bytes | None]]:
    for index in range(len(found)):
        yield index, None


def test_no_figures_worker_stays_alive_after_the_papers_are_done(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(figures, "render_thumbnails", quick_thumbnails)
    session = FakeSession()
    panel = FiguresPanel(session)  # type: ignore[arg-type]
    qtbot.addWidget(panel)
    paper = make_paper()
    second = dataclasses.replace(paper.figures[0], id="fig2")
    two = dataclasses.replace(paper, figures=[paper.figures[0], second])
    for n in range(5):
        session.paperReady.emit(two if n % 2 else paper)
        worker = session.tracker.started[-1]()
        assert worker is not None and worker.name == "figures"
        qtbot.waitUntil(lambda w=worker: w not in live_workers(), timeout=30_000)
        assert panel.thumbnails_done == len((two if n % 2 else paper).figures)
        del worker
    assert len(session.tracker.started) == 5 and panel.worker is None and not session.tracker.busy
    gc.collect()
    assert [ref() for ref in session.tracker.started] == [None] * 5
