"""Stand-ins for the training run, executed in a real child process by the dialog's tests
(``TrainDialog.training_target``) and tests/test_train_job.py: they install the bundle the way the real
job does (``build_then_install``), report progress and return a ``TrainingOutcome``; no torch."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from app.gui.train_job import TrainingOutcome, TrainingRequest, build_then_install
from core.jobs import JobContext


def fake_outcome(accepted: bool) -> TrainingOutcome:
    before = {"held-out corrections": 40.0, "CSAbstruct dev": 80.0, "gold papers dev (body sections)": 70.0}
    after = {"held-out corrections": 75.0, "CSAbstruct dev": 80.2 if accepted else 76.0,
             "gold papers dev (body sections)": 70.1}
    reason = "not worse on the dev sets" if accepted else "worse on CSAbstruct dev (80.0 -> 76.0)"
    return TrainingOutcome(corrections={"role": 20, "function": 0, "trained_on": 15, "held_out": 5},
                           before=before, after=after, accepted=accepted, reason=reason)


def _run(ctx: JobContext, request: TrainingRequest, accepted: bool, steps: int,
         pause: float) -> TrainingOutcome:
    def build(staging: Path) -> TrainingOutcome:
        assert len(request.corrections) >= 20
        shutil.copytree(request.bundle, staging)  # the "new" bundle (loads like the old one)
        for step in range(steps):
            ctx.progress(step, steps, f"training step {step} in process {os.getpid()}, about 3 s left")
            time.sleep(pause)
        return fake_outcome(accepted)

    return build_then_install(request, build)


def accepted(ctx: JobContext, request: TrainingRequest) -> TrainingOutcome:
    return _run(ctx, request, True, 3, 0.01)


def rejected(ctx: JobContext, request: TrainingRequest) -> TrainingOutcome:
    return _run(ctx, request, False, 3, 0.01)


def slow(ctx: JobContext, request: TrainingRequest) -> TrainingOutcome:
    """Two minutes of "training" after the staging copy: only a cancel ends it early."""
    return _run(ctx, request, True, 2400, 0.05)


def crash(ctx: JobContext, request: TrainingRequest) -> TrainingOutcome:
    def build(staging: Path) -> TrainingOutcome:
        shutil.copytree(request.bundle, staging)
        raise RuntimeError("out of memory in the export\n  while tracing the body head\n  (details)")

    return build_then_install(request, build)
