"""Functions run in child processes by tests/test_procjobs.py (importable by name)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

from core.errors import NotAPdfError
from core.jobs import JobContext


def count(ctx: JobContext, n: int) -> int:
    for i in range(n):
        ctx.progress(i + 1, n, f"step {i + 1}")
    return n * 10


def fail(ctx: JobContext, path: str) -> None:
    raise NotAPdfError(path, "not a PDF file")


def squares(ctx: JobContext, n: int) -> Iterator[int]:
    for i in range(n):
        yield i * i


def sleep_then_mark(ctx: JobContext, marker: str) -> None:
    """Reports its process id, sleeps a minute, then writes ``marker``: a cancelled run never does."""
    ctx.progress(0, 1, str(os.getpid()))
    time.sleep(60)
    Path(marker).write_text("finished", encoding="utf-8")
