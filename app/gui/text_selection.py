"""Text selection on the pages: a rubber band dragged over the view selects the text under it.

A press that moves ``DRAG_THRESHOLD`` pixels becomes a rubber band; on release the text inside the
band is taken from each page's words (:class:`~app.gui.page_words.PageWords`: extracted once per page,
the pages on screen ahead of the release), shown as a dashed rectangle, announced with
``textSelected`` and copied on request.  A press that does not move is a click, handed back to the
caller (it selects a sentence, not text).
"""

from __future__ import annotations

import pymupdf
from PySide6.QtCore import QObject, QPoint, QRect, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsView, QRubberBand

from app.gui.page_layout import PageLayout
from app.gui.page_words import PageWords
from app.gui.pdf_pages import text_in_rect

__all__ = ["DRAG_THRESHOLD", "TextSelection", "text_in_rect"]

DRAG_THRESHOLD = 5  # pixels before a press becomes a rubber-band selection


class TextSelection(QObject):
    """The selected text of ``view``'s pages (laid out by ``layout``) and the gesture that makes it."""

    textSelected = Signal(str)  # the new selection; "" when it is cleared

    def __init__(self, view: QGraphicsView, layout: PageLayout) -> None:
        super().__init__(view)
        self._view = view
        self._layout = layout
        self._doc: pymupdf.Document | None = None
        self.words = PageWords(self)
        self._press_pos: QPoint | None = None
        self._rubber: QRubberBand | None = None
        self._item: QGraphicsRectItem | None = None
        self.selected_text = ""

    def set_document(self, doc: pymupdf.Document | None) -> None:
        self._doc = doc
        self.words.set_document(doc)

    def clear(self) -> None:
        """Forget the document and the selection, silently (the owner clears the scene)."""
        self._item = None
        self.selected_text = ""
        self._doc = None
        self.words.set_document(None)

    # -- the mouse gesture ---------------------------------------------------------------
    @property
    def pressed(self) -> bool:
        """True between a left press on the view and its release."""
        return self._press_pos is not None

    def press(self, pos: QPoint) -> None:
        self._press_pos = pos
        if self._doc is not None:  # a drag may follow: have the words of the pages on screen ready
            self.words.prefetch(self._layout.visible_pages(margin=0))

    def drag(self, pos: QPoint) -> None:
        """Follow the mouse at ``pos`` (viewport pixels): past the threshold, show the rubber band."""
        if self._press_pos is None:
            return
        if self._rubber is None and (pos - self._press_pos).manhattanLength() >= DRAG_THRESHOLD:
            self._rubber = QRubberBand(QRubberBand.Shape.Rectangle, self._view.viewport())
            self._rubber.show()
        if self._rubber is not None:
            self._rubber.setGeometry(QRect(self._press_pos, pos).normalized())

    def release(self) -> QPoint | None:
        """End the gesture: select the text under the band, or return the press position of a click."""
        press, self._press_pos = self._press_pos, None
        if self._rubber is None:
            return press
        rect = self._rubber.geometry()
        self._rubber.hide()
        self._rubber.deleteLater()
        self._rubber = None
        self.select_text_in(self._view.mapToScene(rect).boundingRect())
        return None

    # -- the selection -------------------------------------------------------------------
    def select_text_in(self, scene_rect: QRectF) -> str:
        """Select (and return) the text inside ``scene_rect`` across the pages it touches."""
        self.clear_selection()
        if self._doc is None:
            return ""
        parts = []
        for i in range(self._layout.page_count):
            page_rect = self._layout.page_rect_in_scene(i)
            hit = page_rect.intersected(scene_rect)
            if hit.isEmpty():
                continue
            local = hit.translated(-page_rect.topLeft())
            text = self.words.text_in(i, (local.left(), local.top(), local.right(), local.bottom()))
            if text:
                parts.append(text)
        self.selected_text = "\n".join(parts)
        if self.selected_text:
            item = QGraphicsRectItem(scene_rect)
            pen = QPen(QColor("#0072B2"), 0, Qt.PenStyle.DashLine)
            pen.setCosmetic(True)
            item.setPen(pen)
            item.setBrush(QColor(0, 114, 178, 40))
            item.setZValue(2)
            self._view.scene().addItem(item)
            self._item = item
        self.textSelected.emit(self.selected_text)
        return self.selected_text

    def clear_selection(self) -> None:
        """Remove the selection rectangle; ``textSelected("")`` if there was text."""
        if self._item is not None:
            self._view.scene().removeItem(self._item)
            self._item = None
        if self.selected_text:
            self.selected_text = ""
            self.textSelected.emit("")

    def copy(self, fallback: str = "") -> str:
        """Put the selected text (else ``fallback``) on the clipboard; returns what was copied."""
        text = self.selected_text or fallback
        if text:
            QGuiApplication.clipboard().setText(text)
        return text
