"""Honest progress for jobs made of steps: one scale that only moves forward, words chosen by the job
(worker threads: no Qt here).

Core functions report on their own scales. ``Library.add_pdfs`` says "paper 3 of 25" on the scale of
papers and lets each paper's labelling say "Labelled Acknowledgments" on the scale of that paper's
sentences (through ``ctx.child``); a PDF's parser ends with "done" although the alignment job that
asked for it has only begun. Passed on as they come, the bar jumps back and forth and the status says
"done" in the middle of a job. So a job wraps its context:

* :class:`Forward`: the job's one scale (``SCALE`` units), never going back;
* :class:`Part`: a context whose progress (and its children's) fills one part [start, end] of a whole
  and is handed to a function; cancelling is its parent's;
* :class:`Steps`: a job in named steps, each with its share of the scale (by weight), each reported
  under the job's own words (not the step's inner messages);
* :class:`PaperSteps`: ``Library.add_pdfs`` as "paper 7 of 25 (name.pdf)", the paper's labelling
  filling that paper's share of the bar.

A report with a total of 0 means "busy, no measure": :class:`~app.gui.job_tracker.JobTracker` then has
the status bar show a moving bar (a step that reports no fraction, such as a parity check).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from core.jobs import JobContext, Progress

SCALE = 1000
ADDING = "adding "  # how ``Library.add_pdfs`` starts a paper: "adding name.pdf"


class Forward:
    """The whole job on one scale of ``scale`` units that only moves forward."""

    def __init__(self, ctx: JobContext, scale: int = SCALE) -> None:
        self.ctx = ctx
        self.scale = max(1, scale)
        self.value = 0

    def report(self, fraction: float, message: str) -> None:
        """``fraction`` of the whole is done (never less than already said), said as ``message``."""
        self.value = max(self.value, min(self.scale, round(max(0.0, fraction) * self.scale)))
        self.ctx.progress(self.value, self.scale, message)


class Wrapping(JobContext):
    """A context that wraps ``parent``: its own progress, its parent's cancelling."""

    def __init__(self, parent: JobContext) -> None:
        super().__init__()
        self.parent = parent

    def check(self) -> None:
        self.parent.check()

    def cancel(self) -> None:
        self.parent.cancel()

    @property
    def cancelled(self) -> bool:
        return self.parent.cancelled


class Part(Wrapping):
    """A context for [``start``, ``end``] of a whole: each report (its own or a ``child``'s) reaches
    ``show(fraction of the whole, message)``; ``check``/``cancel`` are ``parent``'s."""

    def __init__(self, parent: JobContext, show: Callable[[float, str], None],
                 start: float = 0.0, end: float = 1.0) -> None:
        super().__init__(parent)
        self.show = show
        self.start, self.end = start, end

    def progress(self, done: int, total: int, message: str = "") -> None:
        self.check()
        self.show(self.start + (self.end - self.start) * Progress(done, total).fraction, message)

    def child(self, start: float, end: float) -> JobContext:
        width = self.end - self.start
        return Part(self.parent, self.show, self.start + width * start, self.start + width * end)


class Steps:
    """A job in steps: ``plan`` is ``[(key, weight), ...]`` in order; ``step(key, words)`` is the context
    for that step, whose progress fills its share of one :class:`Forward` scale, always said as
    ``words`` (a step's inner messages, such as a parser's "done", are not the job's)."""

    def __init__(self, ctx: JobContext, plan: Sequence[tuple[str, float]]) -> None:
        self.ctx = ctx
        self.forward = Forward(ctx)
        total = sum(weight for _, weight in plan) or 1.0
        self.bounds: dict[str, tuple[float, float]] = {}
        at = 0.0
        for key, weight in plan:
            self.bounds[key] = (at / total, (at + weight) / total)
            at += weight

    def step(self, key: str, words: str) -> JobContext:
        """The context of step ``key`` (said now, at the step's start, as ``words``)."""
        here = self.forward.value / self.forward.scale
        start, end = self.bounds.get(key, (here, here))
        self.forward.report(start, words)
        return Part(self.ctx, lambda fraction, _message: self.forward.report(fraction, words), start, end)


def paper_words(number: int, papers: int, name: str) -> str:
    """"paper 7 of 25 (name.pdf)"."""
    return f"paper {number} of {papers} ({name})" if name else f"paper {number} of {papers}"


class PaperSteps(Wrapping):
    """The context given to ``Library.add_pdfs`` (``papers`` PDFs to add): its own reports ("adding
    name.pdf" as paper ``done`` of ``total`` starts) and its per-paper children (the paper's labelling,
    a part of the whole) fill one scale of papers (``per_paper`` units each) that only moves forward,
    said as "paper 7 of 25 (name.pdf)"."""

    def __init__(self, ctx: JobContext, papers: int, per_paper: int = 100) -> None:
        super().__init__(ctx)
        self.forward = Forward(ctx, max(1, papers) * per_paper)
        self.words = ""

    def progress(self, done: int, total: int, message: str = "") -> None:
        self.check()
        if message.startswith(ADDING) and 0 < done <= total:  # paper ``done`` starts (counted from 1)
            self.words = paper_words(done, total, message[len(ADDING):])
            self.forward.report((done - 1) / total, self.words)
        else:  # the end ("added 8 of 25"), or a report of its own
            self.forward.report(Progress(done, total).fraction, message or self.words)

    def child(self, start: float, end: float) -> JobContext:
        return Part(self, lambda fraction, _message: self.forward.report(fraction, self.words), start, end)
