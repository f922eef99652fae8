"""A panel's wait for the open paper's embedded analysis (``Session.embedded``), written once.

The Search, Alignment and Graphical-abstract panels and "Add this paper to my library" read the
session's embedded analysis instead of running the model on the open paper. When a panel's action
comes before it is ready, :meth:`AnalysisWait.request` returns None and the wait calls ``on_ready``
once it arrives (or ``on_failed`` with one line when the session's analysis fails or is cancelled,
or the paper is closed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from app.gui.session import Session

if TYPE_CHECKING:  # pragma: no cover
    from core.labelling.analysis import PaperAnalysis

WAITING = "Waiting for the paper's analysis…"


class AnalysisWait(QObject):
    """Calls ``on_ready()`` when the embedded analysis a panel asked for is there."""

    def __init__(self, session: Session, on_ready: Callable[[], object],
                 on_failed: Callable[[str], object] | None = None) -> None:
        super().__init__()
        self.session = session
        self.waiting = False
        self._on_ready = on_ready
        self._on_failed = on_failed
        session.analysisEmbedded.connect(self._embedded)
        session.failed.connect(self._failed)
        session.cancelled.connect(self._cancelled)
        session.documentClosed.connect(self._closed)

    def request(self) -> PaperAnalysis | None:
        """The embedded analysis now, or None (then ``on_ready`` follows when it arrives; the
        session's analysis is started again if it was stopped)."""
        self.waiting = False
        analysis = self.session.request_embedded()  # started again when it was stopped
        self.waiting = analysis is None
        return analysis

    def cancel(self) -> None:
        self.waiting = False

    def _closed(self) -> None:
        if self.waiting:
            self.waiting = False
            if self._on_failed is not None:
                self._on_failed("The paper was closed.")

    def _embedded(self, _analysis: object) -> None:
        if self.waiting:
            self.waiting = False
            self._on_ready()

    def _failed(self, stage: str, error: object) -> None:
        if self.waiting and stage in ("analysis", "model", "parse"):
            self.waiting = False
            if self._on_failed is not None:
                self._on_failed(f"The paper's analysis failed: {error}")

    def _cancelled(self, stage: str) -> None:
        if self.waiting:
            self.waiting = False
            if self._on_failed is not None:
                self._on_failed(f"The paper's {'reading' if stage == 'parse' else 'analysis'} was cancelled.")
