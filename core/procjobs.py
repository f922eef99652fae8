"""Run a job function in a child process, with progress, streamed items and cancellation (no Qt).

Why: pymupdf (MuPDF) is not thread-safe.  The GUI renders pages with pymupdf on its UI thread, so
parsing a PDF or rendering figure crops in a *thread* at the same time can crash the process.
Running them in a child process keeps every pymupdf call of the GUI process on one thread, and a
PDF that crashes MuPDF only takes the child down.

``run_in_process(ctx, "module:function", *args)`` starts a fresh interpreter (``spawn``), calls
``function(child_ctx, *args)`` there and returns its result.  ``child_ctx.progress`` is forwarded
to ``ctx``; ``ctx.cancel()`` terminates the child and raises :class:`core.errors.Cancelled`.  If the
function returns a generator, ``iter_in_process`` yields its items as they arrive.  Arguments,
items and results must be picklable (plain data: dicts, lists, strings, bytes).  Exceptions come
back as the same ``core.errors`` type with the same message.
"""

from __future__ import annotations

import importlib
import inspect
import multiprocessing as mp
import traceback
from collections.abc import Iterator
from typing import Any

from core import errors
from core.errors import Cancelled, RhetoricaError
from core.jobs import JobContext, Progress, ensure_context

POLL_SECONDS = 0.05


class BackgroundProcessError(RhetoricaError):
    """The child process died or failed with an unexpected error."""


def _resolve(target: str) -> Any:
    module_name, _, name = target.partition(":")
    return getattr(importlib.import_module(module_name), name)


def _encode_error(error: BaseException) -> tuple[str, tuple[Any, ...], str]:
    if isinstance(error, errors.DocumentError):
        return type(error).__name__, (error.path, error.reason), str(error)
    return type(error).__name__, tuple(str(a) for a in error.args), str(error)


def _decode_error(name: str, args: tuple[Any, ...], message: str) -> Exception:
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, errors.DocumentError) and len(args) == 2:
        return cls(*args)
    if isinstance(cls, type) and issubclass(cls, RhetoricaError):
        try:
            return cls(*args) if args else cls()
        except TypeError:
            return cls(message)
    return BackgroundProcessError(f"{name}: {message}")


def _child_main(conn: Any, target: str, args: tuple[Any, ...]) -> None:  # runs in the child
    from core.pyfix import immortalize_singletons

    immortalize_singletons()  # pymupdf 1.28.2 text extraction drops references to None on 3.11
    def send_progress(p: Progress) -> None:
        conn.send(("progress", p.done, p.total, p.message))

    try:
        fn = _resolve(target)
        value = fn(JobContext(send_progress), *args)
        if inspect.isgenerator(value):
            for item in value:
                conn.send(("item", item))
            value = None
        conn.send(("result", value))
    except BaseException as error:  # report everything, including KeyboardInterrupt
        name, err_args, message = _encode_error(error)
        conn.send(("error", name, err_args, message, traceback.format_exc(limit=8)))
    finally:
        conn.close()


def iter_in_process(ctx: JobContext | None, target: str, *args: Any) -> Iterator[tuple[str, Any]]:
    """Yield ``("item", x)`` for each item the child yields, then ``("result", value)``."""
    ctx = ensure_context(ctx)
    ctx.check()
    spawn = mp.get_context("spawn")
    parent_conn, child_conn = spawn.Pipe(duplex=False)
    process = spawn.Process(target=_child_main, args=(child_conn, target, args), daemon=True,
                            name=f"rhetorica:{target}")
    process.start()
    child_conn.close()
    try:
        while True:
            if ctx.cancelled:
                raise Cancelled()
            if not parent_conn.poll(POLL_SECONDS):
                if not process.is_alive() and not parent_conn.poll(0):
                    raise BackgroundProcessError(
                        f"the background process for {target.split(':')[-1]} stopped unexpectedly "
                        f"(exit code {process.exitcode})")
                continue
            try:
                message = parent_conn.recv()
            except EOFError:
                process.join(1)
                raise BackgroundProcessError(
                    f"the background process for {target.split(':')[-1]} crashed "
                    f"(exit code {process.exitcode})") from None
            kind = message[0]
            if kind == "progress":
                ctx.progress(message[1], message[2], message[3])
            elif kind == "item":
                yield "item", message[1]
            elif kind == "result":
                yield "result", message[1]
                return
            elif kind == "error":
                raise _decode_error(message[1], tuple(message[2]), message[3])
    finally:
        parent_conn.close()
        if process.is_alive():
            process.terminate()
        process.join(2)
        if process.is_alive():  # pragma: no cover - terminate ignored
            process.kill()
            process.join(1)


def run_in_process(ctx: JobContext | None, target: str, *args: Any) -> Any:
    """Run ``target`` (``"module:function"``) in a child process and return its result."""
    result = None
    for kind, value in iter_in_process(ctx, target, *args):
        if kind == "result":
            result = value
    return result
