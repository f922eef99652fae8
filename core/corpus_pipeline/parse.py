"""The parse stage: PDFs -> papers, in child processes (pymupdf is not thread-safe, and a PDF that
crashes it takes only its child down), with a bounded number in flight so memory stays flat however
many PDFs there are. ``library add`` and the local corpus engine use it; the Ray engine runs
:func:`parse_pdf_to_dict` as Ray tasks instead."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import RhetoricaError

if TYPE_CHECKING:  # pragma: no cover
    from core.document import Paper

CRASHED = "the PDF reader crashed on this file"


def parse_pdf_to_dict(path: str) -> dict[str, Any] | str:
    """Parse one PDF (in a worker process): the paper as a dict, or the one-line reason it failed."""
    from core.pdf import parse_pdf

    try:
        return parse_pdf(path).to_dict()
    except (RhetoricaError, OSError) as error:
        return str(error)


def unpack(result: dict[str, Any] | str) -> Paper | str:
    from core.document import Paper

    return result if isinstance(result, str) else Paper.from_dict(result)


def parse_pdfs(paths: Iterable[Path], workers: int, *,
               ordered: bool = False) -> Iterator[tuple[Path, Paper | str]]:
    """(path, parsed paper or reason) for each path: in the order they finish, or in the order
    given (``ordered``: what a reproducible corpus needs). ``workers`` child processes, at most
    ``2 × workers`` parsed papers waiting; 0: here, one by one, in order. ``paths`` is read lazily."""
    if workers <= 0:
        for path in paths:
            yield path, unpack(parse_pdf_to_dict(str(path)))
        return
    if ordered:
        yield from _parse_ordered(iter(paths), workers)
    else:
        yield from _parse_as_finished(list(paths), workers)


def _pool(workers: int) -> Any:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"))


def _parse_as_finished(paths: list[Path], workers: int) -> Iterator[tuple[Path, Paper | str]]:
    if not paths:
        return
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    pending: dict[Future[dict[str, Any] | str], Path] = {}
    queue = list(reversed(paths))
    broken: list[Path] = []
    with _pool(workers) as pool:
        while (queue or pending) and not broken:
            while queue and len(pending) < 2 * workers:
                path = queue.pop()
                pending[pool.submit(parse_pdf_to_dict, str(path))] = path
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                path = pending.pop(future)
                try:
                    result = future.result()
                except BrokenProcessPool:  # a worker died (a PDF crashed MuPDF): find which one below
                    broken = [path, *pending.values()]
                    break
                yield path, unpack(result)
    if broken:
        if len(broken) == 1 and not queue:
            yield broken[0], CRASHED
            return
        for path in broken:  # one at a time, each in its own process: only the culprit fails
            yield from parse_alone(path)
        yield from _parse_as_finished(list(reversed(queue)), workers)


def _parse_ordered(paths: Iterator[Path], workers: int) -> Iterator[tuple[Path, Paper | str]]:
    from concurrent.futures.process import BrokenProcessPool

    window: deque[tuple[Path, Future[dict[str, Any] | str]]] = deque()
    broken: list[Path] = []
    with _pool(workers) as pool:
        while True:
            for path in paths:
                window.append((path, pool.submit(parse_pdf_to_dict, str(path))))
                if len(window) >= 2 * workers:
                    break
            if not window:
                return
            path, future = window.popleft()
            try:
                result = future.result()
            except BrokenProcessPool:
                broken = [path, *(p for p, _ in window)]
                break
            yield path, unpack(result)
    for path in broken:  # in order, each alone: only the culprit fails
        yield from parse_alone(path)
    yield from _parse_ordered(paths, workers)


def parse_alone(path: Path) -> Iterator[tuple[Path, Paper | str]]:
    """Parse one PDF in its own process; a crash there is that file's."""
    from concurrent.futures.process import BrokenProcessPool

    with _pool(1) as pool:
        try:
            yield path, unpack(pool.submit(parse_pdf_to_dict, str(path)).result())
        except BrokenProcessPool:
            yield path, CRASHED
