"""First-run phrase-corpus growth (hostile test I, problem 4): the bar and the words have one total.
``grow_corpus`` reports "763 of 262,984 sentences labelled" on a scale of 262,984 + 5 % (the join's
share); the GUI shows the labelling as done of the words' total and the join, which counts no
sentences, as busy with the step named, and the status bar then shows a moving bar (a report with a
total of 0 makes the job tracker say so)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QStatusBar

import app.gui.corpus_growth_job as growth_job
from app.gui.job_tracker import JobTracker
from app.gui.status import JobStatus
from app.gui.workers import Worker, thread_pool
from core.jobs import JobContext, Progress

SENTENCES = 262_984


def _like_grow_corpus(model: Any, model_sha256: str, ctx: JobContext) -> str:
    """What ``core.library.corpus_growth._grow`` reports: the labelling on a scale that holds the join."""
    scale = SENTENCES + SENTENCES // 20
    for now in (763, 100_000, SENTENCES):
        ctx.progress(now, scale, f"growing the phrase corpus: {now:,} of {SENTENCES:,} sentences labelled")
    for part in (0, 3, 6):
        ctx.progress(SENTENCES + part * (SENTENCES // 20) // 6, scale,
                     f"joining the phrase corpus ({part * 1000} sentences)")
    return "grown"


@pytest.fixture
def extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A shipped extra text of SENTENCES sentences (its manifest; the papers are never read here) and a
    bundle whose model file is hashed; loading the model and the growth proper are stand-ins."""
    import core.paths
    import models.encoder
    from core.library import corpus_extra, corpus_growth

    resources = tmp_path / "resources"
    folder = resources / "corpus-extra"
    folder.mkdir(parents=True)
    (folder / corpus_extra.EXTRA_PAPERS).write_bytes(b"")
    (folder / corpus_extra.MANIFEST).write_text(json.dumps(
        {"format": corpus_extra.EXTRA_FORMAT, "version": corpus_extra.EXTRA_VERSION,
         "sentences": SENTENCES, "papers": 1000}), encoding="utf-8")
    monkeypatch.setattr(core.paths, "resources_dir", lambda: resources)
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(growth_job, "growth_needed", lambda bundle_dir, sha=None: True)
    monkeypatch.setattr(models.encoder, "load_model", lambda *args, **kwargs: object())
    monkeypatch.setattr(corpus_growth, "grow_corpus", _like_grow_corpus)
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "model.onnx").write_bytes(b"model")
    return bundle


def test_the_labelling_is_shown_on_the_total_its_words_say(extra: Path) -> None:
    seen: list[Progress] = []
    assert growth_job.grow_in_background(JobContext(seen.append), extra) == "grown"
    labelling = [p for p in seen if "labelled" in p.message]
    joining = [p for p in seen if "joining" in p.message]
    assert labelling and joining
    for p in labelling[:-1]:
        assert p.total == SENTENCES and f"{p.done:,} of {p.total:,} sentences labelled" in p.message
    assert [p.done for p in labelling[:-1]] == [763, 100_000]
    assert all(p.total == 0 for p in [labelling[-1], *joining])  # then busy, the step named


def test_a_report_without_a_total_makes_the_status_bar_busy(qtbot) -> None:  # type: ignore[no-untyped-def]
    bar = QStatusBar()
    qtbot.addWidget(bar)
    tracker = JobTracker()
    status = JobStatus(bar, tracker)
    go_on, end = threading.Event(), threading.Event()

    def job(ctx: JobContext) -> None:
        ctx.progress(40, 100, "labelling")
        go_on.wait(30)
        ctx.progress(0, 0, "joining the phrase corpus")
        end.wait(30)

    tracker.start(Worker(job, name="growth"), "Growing the phrase corpus")
    try:
        qtbot.waitUntil(lambda: status.progress.maximum() == 100 and status.progress.value() == 40)
        go_on.set()
        qtbot.waitUntil(lambda: "joining" in status.label.text())
        assert status.progress.maximum() == 0 and status.progress.isVisibleTo(bar)  # a moving bar
        assert status.label.text() == "Growing the phrase corpus: joining the phrase corpus"
    finally:
        go_on.set()
        end.set()
        thread_pool().waitForDone(30_000)
