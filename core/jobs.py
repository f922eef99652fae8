"""One mechanism for all long work: progress reporting and cancellation.

Long-running functions in ``core`` and ``models`` (parsing, encoding, indexing,
training) take an optional :class:`JobContext`.  They call
``ctx.progress(done, total, message)`` as they go and ``ctx.check()`` at safe
points; ``check()`` raises :class:`core.errors.Cancelled` once ``ctx.cancel()``
has been called (from any thread).  The GUI wraps a function and a context in a
background worker (``app.gui.workers``); the CLI uses a context that prints.
Functions never touch the UI themselves.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from core.errors import Cancelled


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    message: str = ""

    @property
    def fraction(self) -> float:
        return 0.0 if self.total <= 0 else min(1.0, self.done / self.total)


ProgressCallback = Callable[[Progress], None]


class JobContext:
    """Progress sink plus a thread-safe cancel flag."""

    def __init__(self, on_progress: ProgressCallback | None = None) -> None:
        self._on_progress = on_progress
        self._cancelled = threading.Event()

    def progress(self, done: int, total: int, message: str = "") -> None:
        self.check()
        if self._on_progress is not None:
            self._on_progress(Progress(done, total, message))

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` if cancellation was requested."""
        if self._cancelled.is_set():
            raise Cancelled()

    def child(self, start: float, end: float) -> JobContext:
        """A context whose progress maps into [start, end] of this one (for sub-steps)."""
        parent = self

        def forward(p: Progress) -> None:
            if parent._on_progress is not None:
                scaled = start + (end - start) * p.fraction
                parent._on_progress(Progress(int(scaled * 1000), 1000, p.message))

        sub = JobContext(forward)
        sub._cancelled = self._cancelled  # share the flag
        return sub


def ensure_context(ctx: JobContext | None) -> JobContext:
    """The given context, or a fresh silent one."""
    return ctx if ctx is not None else JobContext()
