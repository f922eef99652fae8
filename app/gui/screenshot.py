"""``rhetorica gui --screenshot``: wait until the window has settled, save it as a PNG, and quit.

The window has settled when the open request reached its final state (labelled, an error shown, or
no model), the draft typed in (``--draft``) is labelled, and no job but loading the model runs (a
comparison asked for with ``--compare`` included). A panel shown with ``--show-panel`` that shows
results only when asked (:class:`~app.gui.panels.registry.Searches`) is asked once the paper is
shown. With ``--side-by-side`` the side-by-side window is saved too, beside the main one
(``OUT-side-by-side.png``).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QWidget

from app.gui.main_window import MainWindow
from app.gui.panels.draft import DraftPanel
from app.gui.panels.registry import Searches
from app.gui.widgets import one_line

SETTLE_MS = 400  # after the last job: overlays and panels paint
PAGES_SETTLE_MS = 1500  # the side-by-side window renders its pages after it opens


@dataclass
class ScreenshotPlan:
    """What to show before the window is saved."""

    out: Path
    panels: list[str] = field(default_factory=list)  # shown and raised once the paper is shown
    draft_text: str | None = None  # typed into the draft pane; its labels are waited for
    select_number: int | None = None  # the sentence to select, counted from 1 as the window shows it
    compare: str | None = None  # a second PDF to align the open paper with
    side_by_side: bool = False  # also open (and save) the alignment's side-by-side window
    opening: bool = True  # a paper is being opened (else the empty state is the final state)
    timeout_s: float = 180.0


def side_by_side_path(out: Path) -> Path:
    return out.with_name(f"{out.stem}-side-by-side{out.suffix or '.png'}")


class Screenshot:
    """Drives one window to the state a :class:`ScreenshotPlan` asks for, then saves it; ``error`` is
    the one-line reason when the plan could not be carried out (the window then closes unsaved);
    ``paper_error`` the reason the paper could not be opened or read (the window, showing it, is saved;
    the command still fails, so a script can tell)."""

    def __init__(self, window: MainWindow, plan: ScreenshotPlan) -> None:
        self.window = window
        self.plan = plan
        self.error = ""
        self.paper_error = ""
        self._paper_done = False
        self._draft_done = plan.draft_text is None
        self._done = False
        self._started = time.monotonic()

    def start(self) -> None:
        window, plan = self.window, self.plan
        window.settled.connect(self._on_settled)
        window.session.failed.connect(self._on_paper_failed)
        if not plan.opening:
            QTimer.singleShot(SETTLE_MS, self._on_settled)
        if plan.draft_text is not None:
            draft = window.panels["draft"]
            if not isinstance(draft, DraftPanel):  # the panel registry builds it
                raise TypeError(f"the draft panel is a {type(draft).__name__}, not a DraftPanel")
            window.dock_panels.show_panel("draft")
            draft.labelled.connect(self._on_draft_labelled)
            draft.set_text(plan.draft_text)
        QTimer.singleShot(int(plan.timeout_s * 1000) + 1000, self._maybe_shoot)

    def _on_paper_failed(self, stage: str, error: object) -> None:
        if stage in ("open", "parse") and not self.paper_error:
            self.paper_error = one_line(f"the paper could not be {'opened' if stage == 'open' else 'read'}: "
                                        f"{error}", 400)

    def _on_draft_labelled(self, _count: int) -> None:
        self._draft_done = True
        QTimer.singleShot(SETTLE_MS, self._maybe_shoot)

    def _on_settled(self) -> None:
        if self._paper_done:
            return
        self._paper_done = True
        window, plan = self.window, self.plan
        for panel in plan.panels:  # in front of their tab groups, grown to their content, with results
            window.dock_panels.show_panel(panel)
            widget = window.panels[panel]
            if isinstance(widget, Searches) and window.session.paper is not None:
                widget.search()
        paper = window.session.paper
        if plan.select_number is not None and paper is not None:
            if not 1 <= plan.select_number <= len(paper.sentences):
                self._fail(f"--select {plan.select_number}: this paper has {len(paper.sentences)} sentences "
                           "(counted from 1)")
                return
            window.session.jump_to_sentence(plan.select_number - 1)
        if plan.compare is not None and paper is not None:
            window.compare_with(plan.compare, side_by_side=plan.side_by_side)
        QTimer.singleShot(SETTLE_MS, self._maybe_shoot)

    def _waiting(self) -> bool:
        if not (self._paper_done and self._draft_done):
            return True
        if any(label != "Loading model" for label in self.window.tracker.labels()):
            return True
        return self.plan.side_by_side and self.plan.compare is not None and self._pages_window() is None

    def _pages_window(self) -> QWidget | None:
        pages = self.window.side_by_side_window
        return pages if isinstance(pages, QWidget) else None

    def _maybe_shoot(self) -> None:
        if self._done:
            return
        timed_out = time.monotonic() - self._started > self.plan.timeout_s
        if not timed_out and self._waiting():
            QTimer.singleShot(100, self._maybe_shoot)
            return
        self._done = True
        pages = self._pages_window()
        QTimer.singleShot(PAGES_SETTLE_MS if pages is not None else 0, lambda: self._shoot(timed_out))

    def _shoot(self, timed_out: bool) -> None:
        QApplication.processEvents()
        out = self.plan.out
        out.parent.mkdir(parents=True, exist_ok=True)
        self.window.grab().save(str(out))
        note = "  (timed out waiting)" if timed_out else ""
        print(f"screenshot saved: {out}{note}")
        pages = self._pages_window()
        if pages is not None:
            pages_out = side_by_side_path(out)
            pages.grab().save(str(pages_out))
            print(f"screenshot saved: {pages_out}{note}")
        if self.paper_error:
            print(f"rhetorica: error: {self.paper_error} (the screenshot shows it)", file=sys.stderr)
        QTimer.singleShot(0, self.window.close)

    def _fail(self, message: str) -> None:
        self._done = True
        self.error = message
        print(f"rhetorica: error: {message}", file=sys.stderr)
        QTimer.singleShot(0, self.window.close)
