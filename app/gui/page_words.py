"""Each page's words, extracted once per page and kept until the document changes.

A rubber-band selection used to take the text of its rectangle from the PDF on every release
(``get_textbox``: 150–300 ms a dense page, so 1–2 s over a few pages, on the UI thread).  Now each
page's words are extracted once (``pdf_pages.page_words``: 5–10 ms a page) and a selection only
filters them.  :meth:`PageWords.prefetch` extracts pages ahead, one per event-loop turn (the view asks
for the pages on screen when a drag starts), so the release usually finds them all cached.
"""

from __future__ import annotations

import pymupdf
from PySide6.QtCore import QObject, QTimer

from app.gui.pdf_pages import Word, page_words, words_text


class PageWords(QObject):
    """The words of one document's pages, by page index (extracted on first use, or ahead)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._doc: pymupdf.Document | None = None
        self._words: dict[int, list[Word]] = {}
        self._ahead: list[int] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._extract_next)
        self.extractions = 0  # pages extracted (for tests)

    def set_document(self, doc: pymupdf.Document | None) -> None:
        """Words of ``doc`` from now on (None: no document); what was cached is forgotten."""
        self._doc = doc
        self._words.clear()
        self._ahead.clear()
        self._timer.stop()

    def is_cached(self, index: int) -> bool:
        return index in self._words

    def words(self, index: int) -> list[Word]:
        """Page ``index``'s words ([] without a document)."""
        found = self._words.get(index)
        if found is None:
            if self._doc is None or not (0 <= index < self._doc.page_count):
                return []
            found = self._words[index] = page_words(self._doc, index)
            self.extractions += 1
        return found

    def text_in(self, index: int, rect: tuple[float, float, float, float]) -> str:
        """The text of page ``index`` inside ``rect`` (points, top-left origin)."""
        return words_text(self.words(index), rect)

    def prefetch(self, indexes: list[int]) -> None:
        """Extract the pages ``indexes`` not yet cached, one per event-loop turn."""
        self._ahead = [i for i in indexes if i not in self._words]
        if self._ahead and not self._timer.isActive():
            self._timer.start()

    def _extract_next(self) -> None:
        while self._ahead:
            index = self._ahead.pop(0)
            if index not in self._words:
                self.words(index)
                break
        if self._ahead:
            self._timer.start()
