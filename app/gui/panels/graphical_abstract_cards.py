"""The Graphical-abstract panel's cards: one per candidate figure, its thumbnail over its rank, label and
reason, laid out left to right and wrapped; thumbnails as tall as the panel's height allows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
)

from app.gui.panels.graphical_abstract_text import card_html, card_tooltip, relative_scores
from app.gui.widgets import MUTED, faint, soft_selection

if TYPE_CHECKING:  # pragma: no cover
    from core.figures.figure_rank import FigureRanking, RankedFigure

THUMB = QSize(320, 190)  # the largest thumbnail box of a card (smaller when the panel is low)
MIN_THUMB_HEIGHT = 120
TEXT_HEIGHT = 104  # rank, label and three lines of reason under the thumbnail (grows with the reasons)
MAX_TEXT_HEIGHT = 190  # the most a card's text may take (rank line and about ten lines of reason)
CARD = QSize(THUMB.width() + 16, THUMB.height() + TEXT_HEIGHT + 8)
FIGURE_ID = Qt.ItemDataRole.UserRole


@dataclass
class ShownRanking:
    """The listed ranking, its "Include tables" choice and the candidates' previews as they come."""

    ranking: FigureRanking
    include_tables: bool
    thumbnails: dict[str, bytes | None] = field(default_factory=dict)


class CardList(QListWidget):
    """The candidates' cards, thumbnails as tall as the panel's height allows (the text always shows);
    ``cards``: figure id → its card; ``figureSelected(id, by_user)``: the selection changed ("" = none)."""

    figureSelected = Signal(str, bool)

    def __init__(self) -> None:
        super().__init__()
        self.cards: dict[str, Card] = {}
        self._quiet = False  # a selection made by ``select``, not by the user
        self.itemSelectionChanged.connect(self._on_selection)
        self.setViewMode(QListView.ViewMode.IconMode)
        self.setFlow(QListView.Flow.LeftToRight)
        self.setWrapping(True)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setMovement(QListView.Movement.Static)
        self.setSpacing(4)
        self.setUniformItemSizes(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setStyleSheet("QListWidget::item { border: 1px solid transparent; border-radius: 4px; }"
                           f"QListWidget::item:selected {{ background: {soft_selection()}; "
                           "border-color: palette(highlight); }")

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_cards()

    def text_height(self) -> int:
        """The height the cards' texts need (the tallest of them), bounded by MAX_TEXT_HEIGHT."""
        cards = [self.itemWidget(self.item(row)) for row in range(self.count())]
        needed = [card.text.heightForWidth(THUMB.width()) for card in cards if isinstance(card, Card)]
        return max(TEXT_HEIGHT, min(MAX_TEXT_HEIGHT, max(needed, default=0) + 4))

    def fit_cards(self) -> None:
        text = self.text_height()
        room = self.viewport().height() - 2 * self.spacing() - text - 12
        height = max(MIN_THUMB_HEIGHT, min(THUMB.height(), room))
        resized = False
        for row in range(self.count()):
            item = self.item(row)
            card = self.itemWidget(item)
            if isinstance(card, Card):
                card.set_thumb_height(height)
                resized |= item.sizeHint().height() != height + text + 8
                item.setSizeHint(QSize(CARD.width(), height + text + 8))
        if resized:  # uniform item sizes are cached: lay the cards out again (a panel made lower)
            self.scheduleDelayedItemsLayout()

    def fill(self, ranking: FigureRanking, chosen: str) -> None:
        """One card per candidate, best first; ``chosen``: the remembered figure's id ("" = none)."""
        self.clear()
        self.cards.clear()
        relative = relative_scores(ranking)
        for ranked in ranking.figures:
            item = QListWidgetItem()
            item.setData(FIGURE_ID, ranked.figure_id)
            item.setToolTip(card_tooltip(ranked, ranking.weights_source, relative.get(ranked.figure_id, 1.0),
                                         len(ranking.figures)))
            item.setSizeHint(CARD)
            card = Card(ranked, ranked.figure_id == chosen)
            self.addItem(item)
            self.setItemWidget(item, card)
            self.cards[ranked.figure_id] = card
        self.fit_cards()

    def wanted_height(self, chrome: int) -> int:
        """The height that shows a row of cards, thumbnails and reasons without scrolling, plus ``chrome``."""
        text = self.text_height() if self.count() else MAX_TEXT_HEIGHT
        return THUMB.height() + text + 8 + 2 * self.spacing() + chrome

    def forget(self) -> None:
        self.cards.clear()
        self.clear()

    def mark_choice(self, ranking: FigureRanking, chosen: str) -> None:
        """Mark ``chosen`` as "Your choice" (and no other card)."""
        for ranked in ranking.figures:
            card = self.cards.get(ranked.figure_id)
            if card is not None:
                card.set_ranked(ranked, ranked.figure_id == chosen)

    def _on_selection(self) -> None:
        self.figureSelected.emit(self.selected_id(), not self._quiet)

    def select(self, figure_id: str) -> None:
        """Select ``figure_id``'s card (``figureSelected`` says it was not the user) and scroll to it."""
        item = next((self.item(row) for row in range(self.count())
                     if self.item(row).data(FIGURE_ID) == figure_id), None)
        if item is not None:
            self._quiet = True
            try:
                self.setCurrentItem(item)
            finally:
                self._quiet = False
            self.scrollToItem(item)

    def set_thumbnail(self, shown: ShownRanking, figure_id: str, png: bytes | None) -> None:
        shown.thumbnails[figure_id] = png
        card = self.cards.get(figure_id)
        if card is not None:
            card.set_thumbnail(png)

    def selected_id(self) -> str:
        items = self.selectedItems()
        return str(items[0].data(FIGURE_ID)) if items else ""


class Card(QFrame):
    """A candidate: its thumbnail and, under it, rank, label, score and reason."""

    def __init__(self, ranked: RankedFigure, chosen: bool) -> None:
        super().__init__()
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setStyleSheet("background: transparent;")
        self._png: bytes | None = None
        self.image = QLabel("rendering…")
        self.image.setFixedSize(THUMB)
        self.image.setAlignment(Qt.AlignmentFlag.AlignCenter)
        # a figure is drawn on white paper (in a dark palette too); the "rendering…" text is dark on it
        self.image.setStyleSheet(f"background: white; border: 1px solid {faint(share=0.25)}; color: {MUTED};")
        self.text = QLabel()
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setWordWrap(True)
        self.text.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.text.setFixedWidth(THUMB.width())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 4)
        layout.setSpacing(4)
        layout.addWidget(self.image)
        layout.addWidget(self.text, 1)
        self.set_ranked(ranked, chosen)

    def set_ranked(self, ranked: RankedFigure, chosen: bool) -> None:
        self.text.setText(card_html(ranked, chosen))

    def set_thumb_height(self, height: int) -> None:
        if height != self.image.height():
            self.image.setFixedSize(THUMB.width(), height)
            if self._png:
                self.set_thumbnail(self._png)

    def set_thumbnail(self, png: bytes | None) -> None:
        self._png = png
        pixmap = QPixmap()
        if png and pixmap.loadFromData(png, "PNG"):
            box = self.image.size() - QSize(4, 4)
            self.image.setPixmap(pixmap.scaled(box, Qt.AspectRatioMode.KeepAspectRatio,
                                               Qt.TransformationMode.SmoothTransformation))
        else:
            self.image.setText("(no preview)")
