"""Alignment (hostile test I, problem 4 and small issue 7): the job's progress is one forward scale over
its steps, said in its own words (the parser's closing "done" is never shown while the job still runs);
a cancelled comparison clears the earlier one, as a failed comparison does, whichever way it is
cancelled (the panel's Cancel, or Esc / the status bar's Cancel)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytestqt")

from app.gui.operation import CANCELLED
from app.gui.panels import alignment as alignment_module
from app.gui.panels.alignment import AlignmentPanel
from app.gui.panels.alignment_job import align_job
from core.jobs import JobContext, Progress
from tests.gui_helpers import function_bundle, show_panel
from tests.paper_factory import make_paper

TIMEOUT_MS = 180_000
DRAFT = ("# Abstract\nPrevious work has studied this problem. Our goal is to improve accuracy.\n"
         "We propose a new method for parsing scientific text. Results show that it works well.\n")


class _Found:
    side = "side b"
    paper = "paper b"
    analysis = "analysis b"


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading, analysing and aligning replaced by stand-ins that report as the real ones do."""
    import app.gui.pdf_jobs
    import core.alignment.align_sides as align_sides

    def parse_cached(ctx: JobContext, path: str, cache: object) -> tuple[Any, str, bool]:
        ctx.progress(1, 4, "reading page 1 of 2")
        ctx.progress(4, 4, "done")  # the parser's last word (the cache is written after it)
        return make_paper(), "sha", False

    def pdf_side(paper: object, model: object, *, ctx: JobContext, **_: object) -> _Found:
        ctx.progress(0, 1, "analysing the second text")
        ctx.progress(20, 40, "Labelled Introduction")
        return _Found()

    def align(a: object, b: object, *, function_weight: float, ctx: JobContext) -> tuple[object, object]:
        ctx.progress(0, 1, "aligning")
        ctx.progress(1, 1, "12 aligned pairs")
        return a, b

    monkeypatch.setattr(app.gui.pdf_jobs, "parse_cached", parse_cached)
    monkeypatch.setattr(align_sides, "pdf_side", pdf_side)
    monkeypatch.setattr(align_sides, "align_sides", align)


def test_the_job_says_done_only_at_the_end_and_its_bar_moves_forward(stand_ins: None) -> None:
    seen: list[Progress] = []
    outcome = align_job(JobContext(seen.append), make_paper(), ("pdf", "/papers/second.pdf"),
                        model=object(), side_a="side a")  # type: ignore[arg-type]
    assert outcome.alignment == ("side a", "side b") and outcome.paper_b == "paper b"
    assert [p.message for p in seen if p.message] and all(p.total == seen[0].total for p in seen)
    done = [p.done for p in seen]
    assert done == sorted(done) and done[-1] == seen[-1].total  # forward only; full at the very end
    words = [p.message for p in seen]
    assert set(words) == {"reading second.pdf", "analysing second.pdf", "aligning"}
    assert words.index("reading second.pdf") < words.index("analysing second.pdf") < words.index("aligning")
    assert not any(p.fraction >= 1.0 for p in seen if p.message != "aligning")


def test_a_draft_is_analysed_then_aligned(stand_ins: None, monkeypatch: pytest.MonkeyPatch) -> None:
    import core.alignment.align_sides as align_sides

    def draft_side(text: str, model: object, ctx: JobContext) -> str:
        ctx.progress(3, 6, "Labelled Method")
        return "draft side"

    monkeypatch.setattr(align_sides, "draft_text_side", draft_side)
    seen: list[Progress] = []
    outcome = align_job(JobContext(seen.append), make_paper(), ("draft", DRAFT), model=object(),  # type: ignore[arg-type]
                        side_a="side a")  # type: ignore[arg-type]
    assert outcome.alignment == ("side a", "draft side") and outcome.paper_b is None
    assert {p.message for p in seen} == {"analysing the draft", "aligning"}
    assert [p.done for p in seen] == sorted(p.done for p in seen)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return function_bundle(tmp_path_factory, "align-cancel")


def _panel(qtbot, bundle: Path) -> Iterator[AlignmentPanel]:  # type: ignore[no-untyped-def]
    yield from show_panel(qtbot, AlignmentPanel, bundle, (900, 600), paper=make_paper())


def _aligned(qtbot, panel: AlignmentPanel) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(panel.alignmentShown, timeout=TIMEOUT_MS):
        assert panel.compare_with_draft(DRAFT)
    qtbot.waitUntil(lambda: not panel.busy, timeout=TIMEOUT_MS)
    assert panel.alignment is not None and panel.results.isVisibleTo(panel)


@pytest.mark.parametrize("how", ["panel", "escape"])
def test_a_cancelled_comparison_clears_the_earlier_one(qtbot, bundle, monkeypatch, tmp_path,  # type: ignore[no-untyped-def]
                                                       how: str) -> None:
    second = tmp_path / "second.pdf"
    second.write_bytes(b"%PDF-1.4\n%%EOF\n")  # never read: the stand-in job only waits for the cancel
    real_job = alignment_module.align_job
    running = threading.Event()

    def slow_job(ctx: JobContext, *args: object, **kwargs: object) -> None:
        running.set()
        while True:  # until cancelled
            ctx.check()
            threading.Event().wait(0.01)

    for panel in _panel(qtbot, bundle):
        _aligned(qtbot, panel)
        monkeypatch.setattr(alignment_module, "align_job", slow_job)
        assert panel.compare_with_pdf(str(second))
        qtbot.waitUntil(running.is_set, timeout=TIMEOUT_MS)
        if how == "panel":
            panel.cancel_button.click()
        else:  # Esc, the status bar's Cancel
            panel.session.tracker.cancel_all()
        qtbot.waitUntil(lambda p=panel: not p.busy and not p.session.tracker.busy, timeout=TIMEOUT_MS)
        assert panel.status.text() == CANCELLED
        assert panel.alignment is None and not panel.results.isVisibleTo(panel)
        assert panel.table.rowCount() == 0
        assert panel.summary.text() == ("The comparison with second.pdf was cancelled: compare again to "
                                        "see it.")
        monkeypatch.setattr(alignment_module, "align_job", real_job)
        _aligned(qtbot, panel)  # and a new comparison is listed again
