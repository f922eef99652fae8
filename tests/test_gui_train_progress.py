"""Training on my corrections (hostile test I, problem 4 and small issue 9): the training child says which
step of three runs; its last step (export, parity checks, writing the bundle), which reports no fraction
of itself and took minutes with the bar at 92 % under "Epoch 4/4 … about 0 s left", is reported busy
with its sub-step named, and the dialog shows a moving bar then; the child switches off the tqdm bars
("Loading weights: 100%|███…") that its libraries would print on the GUI's terminal. No torch here: the
training function is a stand-in that reports as ``train_on_corrections`` does."""

from __future__ import annotations

import os
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QObject, QSettings, Signal

from app.gui.job_tracker import JobTracker
from app.gui.settings import AppSettings
from app.gui.train_dialog import ModelSwitch, TrainDialog
from app.gui.train_job import TrainingOutcome, TrainingRequest, train_in_child
from app.gui.train_progress import QUIET, TrainingSteps
from core.jobs import JobContext, Progress
from core.library.corrections import Correction
from tests.train_child_fakes import fake_outcome


def _like_train_on_corrections(ctx: JobContext) -> None:
    """The progress ``models.training.corrections.train_on_corrections`` reports, step by step."""
    ctx.progress(0, 1, "reading the standard training data")
    ctx.child(0.0, 0.3).progress(500, 1000, "encoding sentences")
    training = ctx.child(0.3, 0.8)
    training.progress(40, 100, "epoch 2/4: loss 1.0, about 28 s left")
    training.progress(100, 100, "epoch 4/4: loss 0.7568, about 0 s left")
    export = ctx.child(0.8, 1.0)
    export.progress(1, 5, "exporting ONNX (fp32)")
    export.progress(2, 5, "parity check of the fp32 graph")
    export.progress(3, 5, "reusing the sentence graphs of /models/default")


def test_the_steps_are_named_and_the_last_one_is_busy() -> None:
    seen: list[Progress] = []
    _like_train_on_corrections(TrainingSteps(JobContext(seen.append)))
    measured = [p for p in seen if p.total > 0]
    assert [p.done for p in measured] == sorted(p.done for p in measured)
    assert measured[0].message == "Step 1 of 3, reading and encoding the training sentences: reading the " \
                                  "standard training data"
    assert measured[-1].message.startswith("Step 2 of 3, training the role heads: epoch 4/4")
    last = [p for p in seen if p.total == 0]
    assert [p.message for p in last] == [
        "Step 3 of 3, checking and saving the new model: exporting ONNX (fp32)",
        "Step 3 of 3, checking and saving the new model: parity check of the fp32 graph",
        "Step 3 of 3, checking and saving the new model: reusing the sentence graphs of /models/default"]
    assert seen[-1].total == 0  # never left at a measured value after "about 0 s left"


@dataclass
class _Job:
    bundle: Path
    corrections: list[Correction]
    work: Path
    out: Path
    command: str
    threads: int


def test_the_child_entry_names_the_steps_and_silences_progress_bars(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in QUIET:
        monkeypatch.setenv(name, "0")  # (restored after the test: the entry sets them for its process)
    seen_env: dict[str, str] = {}

    def train_on_corrections(job: _Job, ctx: JobContext) -> TrainingOutcome:
        seen_env.update({name: os.environ.get(name, "") for name in QUIET})
        _like_train_on_corrections(ctx)
        job.out.mkdir(parents=True)
        return fake_outcome(True)

    fake = types.ModuleType("models.training.corrections")
    fake.CorrectionJob = _Job  # type: ignore[attr-defined]
    fake.train_on_corrections = train_on_corrections  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "models.training.corrections", fake)
    request = TrainingRequest(bundle=tmp_path / "bundle", corrections=[], out=tmp_path / "models" / "new",
                              work=tmp_path / "models" / "work")
    seen: list[Progress] = []
    outcome = train_in_child(JobContext(seen.append), request)
    assert outcome.accepted and request.out.is_dir()
    assert seen_env == QUIET
    assert seen[-1].total == 0 and seen[-1].message.startswith("Step 3 of 3")


class _Corrections(QObject):
    changed = Signal()

    def counts(self) -> Any:
        return types.SimpleNamespace(role=30, function=0)


def test_the_dialog_shows_a_moving_bar_for_a_step_without_a_measure(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    settings = AppSettings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    switch = ModelSwitch(settings, lambda _path: None, lambda: "")
    dialog = TrainDialog(_Corrections(), JobTracker(), switch, lambda: tmp_path)  # type: ignore[arg-type]
    qtbot.addWidget(dialog)
    dialog._on_progress(700, 1000, "Step 2 of 3, training the role heads: epoch 4/4, about 0 s left")
    assert (dialog.progress.minimum(), dialog.progress.maximum(), dialog.progress.value()) == (0, 1000, 700)
    words = "Step 3 of 3, checking and saving the new model: parity check of the fp32 graph"
    dialog._on_progress(0, 0, words)
    assert dialog.progress.maximum() == 0  # busy: a moving bar, not stuck at 70 % (nor back to 0)
    assert dialog.status.text() == words
    dialog._on_result(fake_outcome(True))
    assert (dialog.progress.maximum(), dialog.progress.value()) == (1000, 1000)
