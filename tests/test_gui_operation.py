"""app.gui.operation.PanelOperation: the panels' job lifecycle written once — stale results dropped,
cancel, cancel-and-restart, deferral while hidden, waiting for the model and the paper's analysis, and
errors shown in one line — on a real session (tiny bundle), offscreen."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.gui.operation import (
    ANALYSIS,
    CANCELLED,
    LOADING_MODEL,
    MODEL,
    NO_PAPER,
    AnalysisUnavailable,
    Late,
    ModelUnavailable,
    PanelOperation,
)
from app.gui.session import Session
from core.errors import Cancelled, RhetoricaError
from core.jobs import JobContext
from tests.gui_helpers import no_shipped_model
from tests.paper_factory import make_paper

TIMEOUT_MS = 120_000


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_path_factory.mktemp("operation") / "bundle", functions=True)


def _session(model: Path | str) -> Session:
    from app.gui.job_tracker import JobTracker
    from app.gui.model_holder import ModelHolder, ModelOptions
    from app.gui.palette import RolePalette

    tracker = JobTracker()
    return Session(tracker, ModelHolder(tracker, ModelOptions(path=str(model), device="cpu", threads=1)),
                   RolePalette())


class _Panel(QWidget):
    def __init__(self, session: Session) -> None:
        super().__init__()
        self.op = PanelOperation(self, session, error_prefix="Sum failed")
        QVBoxLayout(self).addWidget(self.op.line)


@pytest.fixture
def make(qtbot, monkeypatch, tmp_path) -> Iterator:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    sessions: list[Session] = []

    def build(model: Path | str, shown: bool = True) -> _Panel:
        session = _session(model)
        sessions.append(session)
        panel = _Panel(session)
        qtbot.addWidget(panel)
        if shown:
            panel.show()
            qtbot.waitExposed(panel)
        return panel

    yield build
    from app.gui.workers import thread_pool

    for session in sessions:
        session.tracker.cancel_all()
    thread_pool().waitForDone(20_000)


def _gated(gate: threading.Event, seen: list[str]):  # type: ignore[no-untyped-def]
    def job(ctx: JobContext, name: str) -> str:
        seen.append(f"start {name}")
        while not gate.wait(0.01):
            ctx.check()
        seen.append(f"end {name}")
        return name

    return job


def test_a_newer_run_supersedes_the_older_whose_result_is_dropped(qtbot, make, bundle) -> None:  # type: ignore[no-untyped-def]
    panel = make(bundle)
    op = panel.op
    never, gate, seen, done = threading.Event(), threading.Event(), [], []
    op.run(_gated(never, seen), "first", needs_model=False, on_done=done.append, status="Summing…")
    qtbot.waitUntil(lambda: seen == ["start first"], timeout=10_000)
    assert op.busy and op.line.cancel_button.isVisibleTo(panel) and op.line.text() == "Summing…"
    op.run(_gated(gate, seen), "second", needs_model=False, on_done=done.append)
    assert op.waiting_for == "stop"  # the first was cancelled; the second waits for it to stop
    gate.set()
    qtbot.waitUntil(lambda: done == ["second"], timeout=10_000)
    assert seen == ["start first", "start second", "end second"]  # the first stopped at its next check
    qtbot.waitUntil(lambda: not op.busy, timeout=10_000)
    assert not op.line.cancel_button.isVisibleTo(panel) and done == ["second"]


def test_a_result_arriving_after_invalidate_is_not_shown(qtbot, make, bundle) -> None:  # type: ignore[no-untyped-def]
    panel = make(bundle)
    op = panel.op
    release, done = threading.Event(), []

    def job(ctx: JobContext) -> int:
        release.wait(10)  # never checks: finishes even though it is cancelled
        return 42

    op.run(job, needs_model=False, on_done=done.append)
    worker = op.worker
    assert worker is not None
    with qtbot.waitSignal(worker.finished, timeout=10_000):  # connected before the job can end
        op.invalidate()  # a job not yet started stops at once: its finished signal must not be missed
        release.set()
    assert done == [] and not op.busy


def test_cancel_stops_the_job_and_says_so(qtbot, make, bundle) -> None:  # type: ignore[no-untyped-def]
    panel = make(bundle)
    op = panel.op
    stopped, done, gate = threading.Event(), [], threading.Event()

    def job(ctx: JobContext) -> str:
        try:
            while True:
                ctx.progress(1, 4, "counting")
                ctx.check()
                gate.wait(0.01)
        except Cancelled:
            stopped.set()
            raise

    op.run(job, needs_model=False, on_done=done.append)
    qtbot.waitUntil(lambda: op.line.text() == "Counting…", timeout=10_000)
    assert op.line.progress.isVisibleTo(panel) and op.line.progress.maximum() == 4
    with qtbot.waitSignal(op.busyChanged, timeout=10_000) as idle:
        op.line.cancel_button.click()
    assert idle.args == [False] and stopped.is_set() and done == []
    assert op.line.text() == CANCELLED
    assert not op.line.cancel_button.isVisibleTo(panel) and not op.line.progress.isVisibleTo(panel)


def test_a_run_asked_while_hidden_waits_until_shown(qtbot, make, bundle) -> None:  # type: ignore[no-untyped-def]
    panel = make(bundle, shown=False)
    op = panel.op
    calls: list[int] = []
    op.run(lambda ctx: calls.append(1) or 1, needs_model=False, defer_hidden=True, on_done=calls.append)
    qtbot.wait(200)
    assert calls == [] and op.deferred and not op.busy and op.worker is None
    panel.show()
    qtbot.waitUntil(lambda: calls == [1, 1], timeout=10_000)
    assert not op.deferred
    # without defer_hidden, a hidden panel's job runs at once
    panel.hide()
    op.run(lambda ctx: 7, needs_model=False, on_done=calls.append)
    qtbot.waitUntil(lambda: calls[-1] == 7, timeout=10_000)


def test_waits_for_the_model_then_hands_it_to_the_job(qtbot, make, bundle) -> None:  # type: ignore[no-untyped-def]
    panel = make(bundle)
    op = panel.op
    got: list[object] = []
    op.run(lambda ctx, model, tag: (model.model_id, tag), MODEL, Late(lambda ready: "late"),
           on_done=got.append)
    assert op.waiting_for == "model" and op.busy and op.line.text() == LOADING_MODEL
    qtbot.waitUntil(lambda: bool(got), timeout=TIMEOUT_MS)
    model = panel.op.session.models.model
    assert model is not None and got == [(model.model_id, "late")] and op.ready.model is model


def test_waits_for_the_papers_embedded_analysis(qtbot, make, bundle) -> None:  # type: ignore[no-untyped-def]
    panel = make(bundle)
    op = panel.op
    session = op.session
    session.paper = make_paper()
    got: list[object] = []
    op.run(lambda ctx, analysis: analysis, ANALYSIS, needs_analysis=True, on_done=got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=TIMEOUT_MS)
    analysis = got[0]
    assert analysis is session.embedded and analysis.embedded  # type: ignore[attr-defined]


def test_no_model_reaches_on_error_in_one_line(qtbot, make, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    no_shipped_model(monkeypatch, tmp_path)
    panel = make(tmp_path / "no-such-bundle")
    op = panel.op
    errors: list[Exception] = []
    ran: list[int] = []
    op.run(lambda ctx: ran.append(1), on_error=errors.append)
    qtbot.waitUntil(lambda: bool(errors), timeout=TIMEOUT_MS)
    assert isinstance(errors[0], ModelUnavailable) and ran == [] and not op.busy
    assert op.line.text().startswith("No model:") and "\n" not in op.line.text()
    # once the model has failed, the next run fails at once, without a job
    op.run(lambda ctx: ran.append(1), on_error=errors.append)
    assert len(errors) == 2 and ran == []


def test_an_analysis_that_cannot_come_reaches_on_error(qtbot, make, bundle) -> None:  # type: ignore[no-untyped-def]
    panel = make(bundle)
    op = panel.op
    session = op.session
    session.paper = make_paper()
    errors: list[Exception] = []
    op.run(lambda ctx, analysis: analysis, ANALYSIS, needs_analysis=True, on_error=errors.append)
    assert op.waiting_for == "model"
    session.close()  # the paper goes away while the job waits (for the model, then its analysis)
    qtbot.waitUntil(lambda: bool(errors), timeout=TIMEOUT_MS)
    assert isinstance(errors[0], AnalysisUnavailable) and str(errors[0]) == NO_PAPER
    assert not op.busy


def test_a_job_error_is_one_line_in_the_status(qtbot, make, bundle) -> None:  # type: ignore[no-untyped-def]
    panel = make(bundle)
    op = panel.op
    errors: list[Exception] = []

    def job(ctx: JobContext) -> None:
        raise RhetoricaError("the library\nis locked " + "x" * 400)

    op.run(job, needs_model=False, on_error=errors.append)
    qtbot.waitUntil(lambda: bool(errors), timeout=10_000)
    text = op.line.text()
    assert text.startswith("Sum failed: the library is locked") and "\n" not in text
    assert len(text) <= 200 and text.endswith("…")


def test_a_job_that_outlives_its_panel_touches_no_deleted_widget(qtbot, make, bundle) -> None:  # type: ignore[no-untyped-def]
    """The window closed while a job ran: its result arrives after Qt deleted the panel and its status
    line, and is dropped instead of raising "Internal C++ object already deleted" in the event loop."""
    import shiboken6

    session = _session(bundle)
    panel = _Panel(session)  # not handed to qtbot: the test deletes it
    op = panel.op
    release, done = threading.Event(), []

    def job(ctx: JobContext) -> int:
        release.wait(10)  # never checks: finishes after the panel is gone
        return 7

    op.run(job, needs_model=False, on_done=done.append)
    worker = op.worker
    assert worker is not None
    line = op.line
    shiboken6.delete(panel)  # what closing the window does to its docks' widgets
    assert not shiboken6.isValid(line)
    with qtbot.waitSignal(worker.finished, timeout=10_000):
        release.set()
    assert done == []
