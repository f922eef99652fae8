"""Quitting while a long draft is labelled: cancellation reaches inside the labelling (between chunks of
documents, and between the model's batches of one long document), ``shutdown`` cancels every live worker
before it waits, and a job that outlives its QObjects at exit emits nothing ("Signal source has been
deleted" tracebacks)."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("pytestqt")

from core.errors import Cancelled
from core.jobs import JobContext, Progress
from core.taxonomy.labels import RolePrediction
from tests.gui_helpers import model_bundle, wait_released

REPO = Path(__file__).resolve().parents[1]


def _headed(sections: list[int]) -> str:
    """A draft with one heading per entry of ``sections``, each over that many sentences."""
    return "\n\n".join(f"# Part {s}\n" + " ".join(f"Sentence {i} of part {s} is here." for i in range(n))
                       for s, n in enumerate(sections))


class _CancellingModel:
    """Records the documents of every call; cancels ``ctx`` during its first call (a Stop pressed while
    the model runs)."""

    model_id = "cancelling@1"

    def __init__(self, ctx: JobContext) -> None:
        self.ctx = ctx
        self.calls: list[list[tuple[list[str], object]]] = []

    def encode_documents(self, documents: Any, with_embeddings: bool = True,
                         with_function_vectors: bool = False, *, ctx: JobContext | None = None) -> Any:
        self.calls.append([(list(sentences), kind) for sentences, kind in documents])
        self.ctx.cancel()
        role = RolePrediction("method", {"method": 1.0})
        return [SimpleNamespace(roles=[role] * len(sentences), functions=None) for sentences, _ in documents]


def test_label_draft_checks_cancellation_and_reports_progress_between_chunks() -> None:
    from app.gui.panels.draft_labelling import label_draft

    progress: list[Progress] = []
    ctx = JobContext(progress.append)
    model = _CancellingModel(ctx)
    with pytest.raises(Cancelled):
        label_draft(ctx, _headed([20] * 10), model)  # type: ignore[arg-type]
    # cancelled during the first chunk: the model never sees the rest (it used to get all 10 at once)
    assert len(model.calls) == 1
    assert [len(s) for s, _ in model.calls[0]] == [20, 20, 20]  # whole documents, at most a chunk (64)
    assert [(p.done, p.total) for p in progress] == [(0, 200)]

    progress.clear()
    ctx = JobContext(progress.append)
    model = _CancellingModel(JobContext())  # never cancelled: every chunk runs, each counted
    labelled, functions = label_draft(ctx, _headed([20] * 10 + [100]), model)  # type: ignore[arg-type]
    assert len(labelled) == 300 and functions is None
    assert [[len(s) for s, _ in call] for call in model.calls] == [[20] * 3] * 3 + [[20], [100]]
    assert [p.done for p in progress] == [0, 60, 120, 180, 200, 300]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from models import load_model

    return load_model(model_bundle(tmp_path_factory))


def test_one_long_document_is_cancelled_between_the_models_batches(model: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A draft without headings is one document: the model itself checks between its batches."""
    from app.gui.panels.draft_labelling import label_draft

    ctx = JobContext()
    runs: list[int] = []
    lock = threading.Lock()
    real_run = model.run

    def counting_run(*args: Any, **kwargs: Any) -> Any:
        with lock:
            runs.append(1)
            if len(runs) == 2:
                ctx.cancel()  # Stop pressed while the second batch runs
        return real_run(*args, **kwargs)

    monkeypatch.setattr(model, "run", counting_run)
    n = max(200, 10 * model.sentence_batch)  # longer than a chunk (CHUNK_SENTENCES): 10 batches or more
    text = " ".join(f"Sentence {i} tells what we measured." for i in range(n))
    with pytest.raises(Cancelled):
        label_draft(ctx, text, model)
    # the batches under way when it was cancelled finish; no other starts
    assert 2 <= len(runs) <= 2 + model.workers


def test_labelling_in_chunks_gives_what_labelling_all_at_once_gives(model: Any) -> None:
    from app.gui.panels.draft_labelling import label_draft, pane_sentences

    text = "Two openers. Before any heading.\n\n" + _headed([3, 70, 5, 40, 30, 1, 9])
    labelled, functions = label_draft(JobContext(), text, model)
    documents: list[tuple[list[str], str | None]] = []
    last = None
    for _, _, kind, heading, sentence in pane_sentences(text):
        if heading != last or not documents:
            documents.append(([], kind))
            last = heading
        documents[-1][0].append(sentence)
    whole = model.encode_documents(documents, with_embeddings=False)
    assert [role for _, role in labelled] == [r for e in whole for r in e.roles]
    if functions is not None:
        assert functions == [f for e in whole for f in e.functions]


def test_shutdown_cancels_every_live_worker_before_it_waits(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Not only the status bar's cancellable jobs: a job started outside the tracker, and one the status
    bar offers no Cancel for (the model load), are cancelled too, and shutdown reports they finished."""
    from app.gui.app import shutdown
    from app.gui.job_tracker import JobTracker
    from app.gui.workers import Worker

    def until_cancelled(ctx: JobContext) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ctx.check()
            time.sleep(0.005)

    loose = Worker(until_cancelled, name="loose").start()
    tracker = JobTracker()
    uncancellable = tracker.start(Worker(until_cancelled, name="model load"), "Loading", cancellable=False)
    try:
        assert shutdown(None, timeout_ms=20_000) is True
        assert loose.is_cancelled and uncancellable.is_cancelled
        assert loose.is_finished and uncancellable.is_finished
    finally:  # (never left running for the next test)
        loose.cancel()
        uncancellable.cancel()
        wait_released(qtbot, loose)
        wait_released(qtbot, uncancellable)


def test_a_job_that_outlives_its_qobjects_emits_nothing(qtbot, capfd, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """At exit Qt deletes the worker and the keeper while a job may still run; the job then finishes
    without a "Signal source has been deleted" traceback (it printed three)."""
    import shiboken6

    from app.gui import workers

    gc_was_enabled = gc.isenabled()
    monkeypatch.setattr(workers, "_KEEPER", None)  # a keeper of this test's own, to delete
    go = threading.Event()

    def job(ctx: JobContext) -> str:
        go.wait(30)
        ctx.progress(1, 1, "done")
        return "late"

    worker = workers.Worker(job, name="outliving").start()
    keeper = workers._KEEPER
    assert keeper is not None
    qtbot.waitUntil(lambda: worker.started_at > 0)
    shiboken6.delete(worker)  # as Qt's teardown does when the process exits
    shiboken6.delete(keeper)
    go.set()
    try:
        assert workers.thread_pool().waitForDone(20_000)
        err = capfd.readouterr().err
        assert "Signal source has been deleted" not in err and "Traceback" not in err
    finally:  # the deleted keeper can no longer release the worker nor restore automatic collection
        for key, live in list(workers._LIVE.items()):
            if live is worker:
                del workers._LIVE[key]
        if gc_was_enabled:
            gc.enable()


QUIT_WHILE_LABELLING = r'''
import time
from types import SimpleNamespace

import models
from core.taxonomy.labels import RolePrediction


class SlowModel:
    """Labels one sentence per 3 ms batch; checks cancellation between batches when given ``ctx`` (as
    models.encoder.EncoderModel does): 3,000 sentences take longer than shutdown waits."""

    model_id = "slow@1"
    provider = "CPUExecutionProvider"
    embedding_dim = 4

    def encode_documents(self, documents, with_embeddings=True, with_function_vectors=False, *, ctx=None):
        out = []
        for sentences, _ in documents:
            for _ in sentences:
                if ctx is not None:
                    ctx.check()
                time.sleep(0.003)
            out.append(SimpleNamespace(roles=[RolePrediction("method", {"method": 1.0})] * len(sentences),
                                       functions=None))
        return out


models.load_model = lambda *args, **kwargs: SlowModel()

from app.gui.app import application, shutdown
from app.gui.main_window import MainWindow
from app.gui.workers import live_workers

app = application()
window = MainWindow()
window.resize(1300, 900)
window.show()
draft = window.panels["draft"]
window.docks["draft"].show()
draft.set_text(" ".join(f"Sentence {i} describes the method of experiment {i % 7}." for i in range(3000)))
draft.label_now()
deadline = time.monotonic() + 60
labelling = None
while labelling is None and time.monotonic() < deadline:
    app.processEvents()
    labelling = next((w for w in live_workers() if w.name == "Labelling the draft" and w.started_at), None)
    time.sleep(0.01)
assert labelling is not None, "the draft's labelling never started"
time.sleep(0.5)  # well into the labelling
window.close()
print(f"STOPPED {shutdown(window)} FINISHED {labelling.is_finished}", flush=True)
'''


def test_quitting_while_a_long_draft_is_labelled_stops_it_without_tracebacks(tmp_path: Path) -> None:
    """The hostile tester's report, in a real process: it used to take seconds to stop after Cancel,
    outlive ``shutdown`` and print "Signal source has been deleted" tracebacks at exit."""
    import os

    env = {**os.environ, "RHETORICA_HOME": str(tmp_path / "home"), "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-c", QUIT_WHILE_LABELLING], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "STOPPED True FINISHED True" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "Signal source has been deleted" not in proc.stderr, \
        proc.stderr[-3000:]
