"""The "Train on my corrections" job, run in a child process (issue 26; no Qt, no torch at import).

Training in a thread of the GUI process held the GIL for long stretches (the ONNX export alone stalled
the UI thread for 281 ms), so the GUI runs it through ``core.procjobs.run_in_process``: the dialog's
:class:`~app.gui.workers.Worker` thread only waits on the child's pipe and forwards its progress.

* :func:`run_training` is the worker's function (GUI process): it starts ``target`` (by default
  :func:`train_in_child`) in a fresh interpreter and returns its :class:`TrainingOutcome`. Cancelling
  the worker's context terminates the child (``core.procjobs``).
* :func:`train_in_child` runs in the child: ``models.training.corrections.train_on_corrections`` (torch
  is imported there only) writes the bundle into a staging folder under ``request.work``, and
  :func:`build_then_install` renames it to ``request.out`` only once it is complete, so a killed or
  failed child never leaves a partial bundle where the dialog (or the user) would take it for a model.
* :func:`discard_unfinished` removes what a cancelled or failed run left (its staging folder, and its
  ``out`` folder if the child was killed after the rename).

Only plain data crosses the process boundary: the :class:`TrainingRequest` and the torch-free
:class:`TrainingOutcome` (the GUI process never imports torch).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from core.jobs import JobContext
from core.library.corrections import Correction
from core.procjobs import run_in_process

TRAINING_TARGET = "app.gui.train_job:train_in_child"
COMMAND = "Rhetorica: Train on my corrections"
T = TypeVar("T")


@dataclass(frozen=True)
class TrainingRequest:
    bundle: Path  # the bundle to start from
    corrections: list[Correction]
    out: Path  # where the finished bundle goes (must not exist yet)
    work: Path  # the shared vector cache and the staging folder
    threads: int = 2


@dataclass(frozen=True)
class TrainingOutcome:
    """What the dialog shows of a ``CorrectionReport`` (the bundle itself is at ``request.out``)."""

    corrections: dict[str, int]
    before: dict[str, float]
    after: dict[str, float]
    accepted: bool
    reason: str
    seconds: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_report(cls, report: Any) -> TrainingOutcome:
        """From a ``models.training.corrections.CorrectionReport`` (or anything with its fields)."""
        return cls(corrections=dict(report.corrections), before=dict(report.before),
                   after=dict(report.after), accepted=bool(report.accepted), reason=str(report.reason),
                   seconds=dict(getattr(report, "seconds", {}) or {}))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrainingOutcome:
        return cls(corrections=dict(data["corrections"]), before=dict(data["before"]),
                   after=dict(data["after"]), accepted=bool(data["accepted"]), reason=str(data["reason"]),
                   seconds=dict(data.get("seconds", {})))


def staging_dir(request: TrainingRequest) -> Path:
    """Where the child writes the bundle until it is complete (beside the cache, not among the models)."""
    return request.work / f"{request.out.name}.partial"


def run_training(ctx: JobContext, request: TrainingRequest, target: str = TRAINING_TARGET) -> TrainingOutcome:
    """The GUI worker's function: run ``target(ctx, request)`` in a child process and wait for it."""
    value = run_in_process(ctx, target, request)
    if isinstance(value, TrainingOutcome):
        return value
    return TrainingOutcome.from_dict(value)


STALE_STAGING_SECONDS = 24 * 3600  # a staging folder untouched this long belongs to no running job


def remove_stale_staging(work: Path, now: float | None = None) -> list[Path]:
    """Remove the ``*.partial`` staging folders in ``work`` that a crashed or killed run left behind
    (untouched for a day: a run that is still going writes into its folder); returns them."""
    now = time.time() if now is None else now
    removed = []
    for folder in sorted(work.glob("*.partial")) if work.is_dir() else []:
        try:
            stale = folder.is_dir() and not folder.is_symlink() \
                and now - folder.stat().st_mtime > STALE_STAGING_SECONDS
        except OSError:
            continue
        if stale:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def build_then_install(request: TrainingRequest, build: Callable[[Path], T]) -> T:
    """``build(staging)`` writes the bundle into a fresh staging folder, which then becomes
    ``request.out`` in one rename (same file system: both are under the user's models folder).
    Staging folders that earlier runs left behind a day ago or more are removed first."""
    staging = staging_dir(request)
    remove_stale_staging(request.work)
    shutil.rmtree(staging, ignore_errors=True)
    staging.parent.mkdir(parents=True, exist_ok=True)
    value = build(staging)
    if staging.is_dir():
        os.replace(staging, request.out)
    return value


def train_in_child(ctx: JobContext, request: TrainingRequest) -> TrainingOutcome:
    """Runs in the child process: the real training job (torch), installed whole or not at all; its
    progress says which step of three runs (``train_progress.TrainingSteps``), and no tqdm bar of the
    libraries it loads reaches the GUI's terminal."""
    from app.gui.train_progress import TrainingSteps, quiet_progress_bars

    quiet_progress_bars()  # before torch and transformers are imported
    from models.training.corrections import CorrectionJob, train_on_corrections

    def build(staging: Path) -> Any:
        job = CorrectionJob(bundle=request.bundle, corrections=request.corrections, work=request.work,
                            out=staging, command=COMMAND, threads=request.threads)
        return train_on_corrections(job, TrainingSteps(ctx))

    return TrainingOutcome.from_report(build_then_install(request, build))


def discard_unfinished(request: TrainingRequest, keep: Callable[[Path], bool] = lambda _path: False) -> None:
    """Remove a cancelled or failed run's staging folder and its ``out`` folder (unless ``keep(out)``)."""
    shutil.rmtree(staging_dir(request), ignore_errors=True)
    if request.out.is_dir() and not keep(request.out):
        shutil.rmtree(request.out, ignore_errors=True)


def one_line(error: BaseException, limit: int = 300) -> str:
    """The error as one line for the dialog's status (the first non-empty line of its message)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[0] if lines else type(error).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"
