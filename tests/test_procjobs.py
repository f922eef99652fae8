"""core.procjobs: job functions in a child process keep progress, results, errors and cancel."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from core.errors import Cancelled, NotAPdfError
from core.jobs import JobContext, Progress
from core.procjobs import iter_in_process, run_in_process


def test_result_and_progress() -> None:
    seen = []
    assert run_in_process(JobContext(seen.append), "tests.procjob_helpers:count", 3) == 30
    assert [(p.done, p.total) for p in seen] == [(1, 3), (2, 3), (3, 3)]


def test_typed_error_comes_back() -> None:
    with pytest.raises(NotAPdfError) as info:
        run_in_process(None, "tests.procjob_helpers:fail", "/x/y.txt")
    assert str(info.value) == "/x/y.txt: not a PDF file"
    assert info.value.reason == "not a PDF file"


def test_generator_items_stream() -> None:
    items = [v for kind, v in iter_in_process(None, "tests.procjob_helpers:squares", 4) if kind == "item"]
    assert items == [0, 1, 4, 9]


def test_cancel_terminates_the_child(tmp_path: Path) -> None:
    started = threading.Event()
    reported: list[str] = []

    def on_progress(progress: Progress) -> None:
        reported.append(progress.message)
        started.set()

    ctx = JobContext(on_progress)
    threading.Thread(target=lambda: (started.wait(30), ctx.cancel()), daemon=True).start()
    marker = tmp_path / "finished"
    with pytest.raises(Cancelled):
        run_in_process(ctx, "tests.procjob_helpers:sleep_then_mark", str(marker))
    # The child was stopped, not waited for: it never finished its work and no longer exists.
    assert not marker.exists()
    with pytest.raises(ProcessLookupError):
        os.kill(int(reported[0]), 0)
