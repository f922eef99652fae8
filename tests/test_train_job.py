"""The "Train on my corrections" job in a child process (issue 26): the outcome and progress come back,
an error comes back as one line, a cancel kills the child and leaves no bundle, and the real training
function refuses too few corrections from inside its child process. Stand-ins: tests/train_child_fakes.py."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from app.gui.train_job import (
    TrainingOutcome,
    TrainingRequest,
    discard_unfinished,
    one_line,
    run_training,
    staging_dir,
)
from core.errors import Cancelled
from core.jobs import JobContext, Progress
from core.library.corrections import Correction
from core.procjobs import BackgroundProcessError


def corrections(n: int) -> list[Correction]:
    return [Correction(doc_id="ab" * 32, text=f"Sentence {i}.", field="role", corrected="method")
            for i in range(n)]


@pytest.fixture
def request_(tmp_path: Path) -> TrainingRequest:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "manifest.json").write_text("{}", encoding="utf-8")
    return TrainingRequest(bundle=bundle, corrections=corrections(20), out=tmp_path / "models" / "new",
                           work=tmp_path / "models" / "work")


def test_the_outcome_and_progress_come_back_and_the_bundle_is_installed(request_: TrainingRequest) -> None:
    seen: list[Progress] = []
    outcome = run_training(JobContext(seen.append), request_, "tests.train_child_fakes:accepted")
    assert isinstance(outcome, TrainingOutcome) and outcome.accepted
    assert outcome.after["CSAbstruct dev"] == 80.2
    assert [p.done for p in seen] == [0, 1, 2]
    assert int(seen[0].message.split(" in process ")[1].split(",")[0]) != os.getpid()  # run in a child
    assert (request_.out / "manifest.json").is_file() and not staging_dir(request_).exists()


def test_an_error_comes_back_as_one_line_and_nothing_is_installed(request_: TrainingRequest) -> None:
    with pytest.raises(BackgroundProcessError) as caught:
        run_training(JobContext(), request_, "tests.train_child_fakes:crash")
    assert one_line(caught.value) == "RuntimeError: out of memory in the export"
    assert not request_.out.exists() and staging_dir(request_).is_dir()  # the staging copy stays…
    discard_unfinished(request_)
    assert not staging_dir(request_).exists()  # …until the dialog discards it


def test_cancel_kills_the_child_and_leaves_no_bundle(request_: TrainingRequest) -> None:
    pids: list[int] = []

    def on_progress(p: Progress) -> None:
        if not pids:
            pids.append(int(p.message.split(" in process ")[1].split(",")[0]))
            threading.Timer(0.2, ctx.cancel).start()

    ctx = JobContext(on_progress)
    with pytest.raises(Cancelled):
        run_training(ctx, request_, "tests.train_child_fakes:slow")
    with pytest.raises(ProcessLookupError):
        os.kill(pids[0], 0)  # gone (and reaped) before run_training returns
    assert not request_.out.exists()
    discard_unfinished(request_)
    assert not staging_dir(request_).exists() and not request_.out.exists()


def test_discard_keeps_a_bundle_in_use(request_: TrainingRequest) -> None:
    request_.out.mkdir(parents=True)
    discard_unfinished(request_, keep=lambda out: out == request_.out)
    assert request_.out.is_dir()
    discard_unfinished(request_)
    assert not request_.out.exists()


def test_one_line() -> None:
    assert one_line(ValueError("")) == "ValueError"
    assert one_line(ValueError("\n  first  \nsecond")) == "first"
    assert len(one_line(ValueError("x" * 1000))) == 300


def test_the_real_job_refuses_too_few_corrections_in_its_child(request_: TrainingRequest) -> None:
    pytest.importorskip("torch")
    few = TrainingRequest(bundle=request_.bundle, corrections=corrections(3), out=request_.out,
                          work=request_.work)
    with pytest.raises(BackgroundProcessError) as caught:
        run_training(JobContext(), few)  # app.gui.train_job:train_in_child, torch imported in the child
    assert one_line(caught.value).startswith("TooFewCorrections: 3 role corrections so far")
    assert not few.out.exists()


def test_staging_folders_a_crashed_run_left_a_day_ago_are_removed(tmp_path: Path) -> None:
    import time

    from app.gui.train_job import STALE_STAGING_SECONDS, remove_stale_staging

    work = tmp_path / "work"
    old, fresh, other = work / "bundle-1.partial", work / "bundle-2.partial", work / "cache"
    for folder in (old, fresh, other):
        folder.mkdir(parents=True)
        (folder / "model.onnx").write_bytes(b"x")
    day_ago = time.time() - STALE_STAGING_SECONDS - 60
    os.utime(old, (day_ago, day_ago))
    os.utime(other, (day_ago, day_ago))
    assert remove_stale_staging(work) == [old]
    assert not old.exists() and fresh.is_dir() and other.is_dir()  # a running job's folder stays, and others
    assert remove_stale_staging(tmp_path / "missing") == []
