"""The draft pane's status line and the note it keeps (``draft``).

A line said while a labelling round is due or running (an open's "Opened a.md (Markdown): 12
sentences", a bad file, a failed autosave) is the round's note: it stays in sight while the round runs
("Opened a.md …: 12 sentences — labelling…") and comes before its summary, which would otherwise replace
it; said at any other time, it replaces an older note. A note belongs to the text it was said about: an
edit that replaces at least half of that text (a new text set, a paste over all of it) drops it, so that
it never comes back with the summary of another text, while typing and smaller edits keep it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtGui import QTextDocument

from app.gui.panels.draft_text import capitalised, labelled_summary
from app.gui.status_line import StatusLine

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.panels.draft_files import DraftFiles
    from app.gui.panels.draft_labelling import LabelledDraft


class DraftStatus:
    """``line``: the pane's status line; ``labelling()``: a round is due or running; ``document``: the
    editor's text."""

    def __init__(self, line: StatusLine, labelling: Callable[[], bool], document: QTextDocument) -> None:
        self.line, self._labelling, self._document = line, labelling, document
        self.note = ""  # what was said while a round was due, shown before its summary
        document.contentsChange.connect(self._drop_if_replaced)

    def say(self, message: str) -> None:
        """One line in the status, kept as the note while a round is due or running."""
        self.line.set_text(capitalised(message))
        self.note = self.line.text() if self._labelling() else ""

    def opened(self, message: str, warnings: list[str]) -> None:
        """What an open said (``warnings`` in the tooltip): the note of the round the new text starts."""
        self.say(message)
        self.note = self.line.text()
        self.line.setToolTip("\n".join(warnings))

    def _drop_if_replaced(self, _position: int, removed: int, added: int) -> None:
        before = self._document.characterCount() - added + removed
        if removed and 2 * removed >= before:
            self.note = ""

    def with_note(self, doing: str) -> str:
        """"Opened a.md …: 12 sentences — labelling…" (``doing`` alone without a note)."""
        return f"{self.note} — {doing}" if self.note else capitalised(doing)

    def progress(self, _done: int, _total: int, message: str) -> None:
        """A round's progress, after the note."""
        self.line.set_text(self.with_note(f"{message}…" if message else "labelling…"))

    def summary(self, labelled: LabelledDraft | None) -> None:
        """A round ended: its summary after the note (None: nothing to sum up: the note alone), once."""
        self.line.set_text(self.note if labelled is None else labelled_summary(labelled, self.note))
        self.note = ""


def stop_tip(files: DraftFiles, labelling: bool) -> str:
    """What the pane's Stop button stops: the file being read, the labelling, or both."""
    reading = files.reading or ("the draft file" if files.op.busy else "")
    stops = " and ".join(filter(None, [reading and f"reading {reading}", "labelling" if labelling else ""]))
    return f"Stop {stops or 'labelling'}"
