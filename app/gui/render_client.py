"""GUI side of the page-render server (see :mod:`app.gui.render_child`).

One child process for the whole application, started with the window and shared by every page
view (:func:`shared_client`: the side-by-side Alignment window renders through it too, each view's
document under its own token).  Requests go out from the UI thread; a
:class:`~app.gui.workers.Worker` waits for replies and hands each page to the UI thread
(``yielded``), which wraps the bytes in a ``QImage``; the reader thread itself holds only plain data
(the connection, the process handle, reply tuples), and the reader ``Worker`` is released on the UI
thread (see :mod:`app.gui.workers` on why Qt objects must not die on a pool thread).  If the server
cannot start or dies, ``available`` turns False and the page view falls back to rendering in short
steps on the UI thread.
"""

from __future__ import annotations

import multiprocessing as mp
import weakref
from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage

from app.gui.workers import Worker, thread_pool
from core.jobs import JobContext


def _read_replies(ctx: JobContext, conn: Any, process: Any) -> Iterator[tuple]:
    while not ctx.cancelled:
        try:
            if not conn.poll(0.1):
                if not process.is_alive():
                    return
                continue
            yield conn.recv()
        except (EOFError, OSError):
            return


_SHARED: weakref.ref[RenderClient] | None = None


def shared_client() -> RenderClient | None:
    """The application's render process (the client started last), while it is up; None: none is, and
    pages render on the UI thread."""
    client = _SHARED() if _SHARED is not None else None
    return client if client is not None and client.available else None


class RenderClient(QObject):
    pageRendered = Signal(int, int, float, QImage)  # token, page, scale, image
    pageFailed = Signal(int, int, str)
    ready = Signal()
    stopped = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.available = False
        self.is_ready = False
        self._process: Any = None
        self._requests: Any = None
        self._reader: Worker | None = None

    def start(self) -> bool:
        try:
            spawn = mp.get_context("spawn")
            req_read, req_write = spawn.Pipe(duplex=False)
            rep_read, rep_write = spawn.Pipe(duplex=False)
            from app.gui.render_child import serve

            process = spawn.Process(target=serve, args=(req_read, rep_write), daemon=True,
                                    name="rhetorica-render")
            process.start()
        except Exception:  # no subprocesses here (sandbox, frozen app without freeze_support)
            self.available = False
            return False
        req_read.close()
        rep_write.close()
        self._process = process
        self._requests = req_write
        self.available = True
        reader = Worker(_read_replies, rep_read, process, name="render replies")
        reader.yielded.connect(self._on_reply)
        reader.finished.connect(self._on_stopped)
        self._reader = reader
        reader.start(thread_pool())
        global _SHARED
        _SHARED = weakref.ref(self)
        return True

    def _send(self, message: tuple) -> bool:
        if not self.available or self._requests is None:
            return False
        try:
            self._requests.send(message)
            return True
        except (OSError, ValueError):
            self.available = False
            return False

    def open(self, token: int, path: str) -> bool:
        return self._send(("open", token, path))

    def close(self, token: int) -> bool:
        """The view that opened ``token`` is done with it: the process closes that document."""
        return self._send(("close", token))

    def render(self, token: int, page: int, scale: float) -> bool:
        return self._send(("render", token, page, scale))

    def _on_reply(self, message: tuple) -> None:
        kind = message[0]
        if kind == "ready":
            self.is_ready = True
            self.ready.emit()
        elif kind == "page":
            _, token, page, scale, width, height, stride, data = message
            image = QImage(data, width, height, stride, QImage.Format.Format_RGB888).copy()
            self.pageRendered.emit(token, page, scale, image)
        elif kind == "error":
            self.pageFailed.emit(message[1], message[2], message[3])

    def _on_stopped(self) -> None:
        self._reader = None  # its thread is done with it: released here, on the UI thread
        self.available = False
        self.is_ready = False
        self.stopped.emit()

    def stop(self) -> None:
        self._send(("quit",))
        self.available = False
        if self._reader is not None:
            self._reader.cancel()
        if self._process is not None:
            self._process.join(1.0)
            if self._process.is_alive():
                self._process.terminate()
                self._process.join(1.0)
        if self._requests is not None:
            self._requests.close()
            self._requests = None
