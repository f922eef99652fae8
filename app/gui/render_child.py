"""The page-render server's child side (no Qt): renders pages with pymupdf in its own process.

pymupdf holds the GIL while it rasterises (50–150 ms per page on a busy 2-core machine), so
rendering in the GUI process — on the UI thread or any other thread — stalls the event loop.  This
process renders instead and sends raw RGB rows back; the GUI only wraps them in a QImage.

One process serves every page view of the application (the main view and the side-by-side
Alignment window's two sides): each view's document is open under its own token, until the view
sends ``close`` (at most ``MAX_OPEN_DOCS`` stay open; the oldest goes first).

Protocol (``multiprocessing`` connections, one each way):
requests  ``("open", token, path)``, ``("close", token)``, ``("render", token, page, scale)``, ``("quit",)``;
replies   ``("ready",)``, ``("page", token, page, scale, width, height, stride, bytes)``,
          ``("error", token, page, message)``.
"""

from __future__ import annotations

from typing import Any

MAX_SCALE = 5.0
MAX_OPEN_DOCS = 6  # tokens kept open at once (views that never said "close" do not pile up)


def serve(requests: Any, replies: Any) -> None:  # runs in the child process
    from core.pyfix import immortalize_singletons

    immortalize_singletons()
    import pymupdf

    docs: dict[int, Any] = {}
    replies.send(("ready",))
    while True:
        try:
            message = requests.recv()
        except (EOFError, OSError):
            break
        kind = message[0]
        if kind == "quit":
            break
        if kind == "open":
            _, token, path = message
            while len(docs) >= MAX_OPEN_DOCS:
                docs.pop(next(iter(docs))).close()  # the oldest
            try:
                docs[token] = pymupdf.open(path)
            except Exception as error:
                replies.send(("error", token, -1, str(error)))
        elif kind == "close":
            old = docs.pop(message[1], None)
            if old is not None:
                old.close()
        elif kind == "render":
            _, token, page, scale = message
            doc = docs.get(token)
            if doc is None:
                continue  # a document closed since: drop the request
            try:
                zoom = max(0.1, min(MAX_SCALE, float(scale)))
                pix = doc[page].get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
                data = bytes(pix.samples)
                replies.send(("page", token, page, scale, pix.width, pix.height, pix.stride, data))
            except Exception as error:
                replies.send(("error", token, page, str(error)))
    for doc in docs.values():
        doc.close()
