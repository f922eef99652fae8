"""Moving through a paper's sentences: next/previous, next of a role, copy one sentence.

The logic behind the Edit menu's navigation actions (Ctrl+[ / Ctrl+], F3 / Shift+F3, Ctrl+1…6),
kept out of the window: it needs only the session (paper, analysis, selection), the role
palette (a hidden role is shown again when the user jumps to it) and somewhere to say things.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QGuiApplication

from app.gui.palette import RolePalette
from app.gui.session import Session


class SentenceNavigator:
    """Selects sentences for the navigation actions; every method returns the index it chose."""

    def __init__(self, session: Session, palette: RolePalette, notify: Callable[[str], None]) -> None:
        self._session = session
        self._palette = palette
        self._notify = notify

    def step(self, step: int) -> int:
        """Select the next/previous sentence (the first one when none is selected); -1 if none."""
        paper = self._session.paper
        if paper is None or not paper.sentences:
            return -1
        current = self._session.selected
        index = 0 if current < 0 else max(0, min(len(paper.sentences) - 1, current + step))
        self._session.jump_to_sentence(index)
        return index

    def find_role(self, role: str | None, step: int = 1) -> int:
        """Select the next (step=1) or previous sentence with ``role`` (None: the selected one's),
        wrapping around; -1 (and a message) when there is none."""
        paper, analysis = self._session.paper, self._session.analysis
        if paper is None or analysis is None or not paper.sentences:
            return -1
        current = self._session.selected
        if role is None:
            if current < 0:
                return -1
            role = analysis.roles[current].label
        n = len(paper.sentences)
        start = current if current >= 0 else (-1 if step > 0 else n)
        for k in range(1, n + 1):
            i = (start + step * k) % n
            if analysis.roles[i].label == role:
                if not self._palette.is_visible(role):
                    self._palette.set_visible(role, True)
                self._session.jump_to_sentence(i)
                return i
        self._notify(f"No {role} sentence in this paper")
        return -1

    def copy_sentence(self, index: int) -> str:
        """Put sentence ``index``'s text on the clipboard and return it ("" when out of range)."""
        paper = self._session.paper
        if paper is None or not (0 <= index < len(paper.sentences)):
            return ""
        text = paper.sentences[index].text
        QGuiApplication.clipboard().setText(text)
        return text
