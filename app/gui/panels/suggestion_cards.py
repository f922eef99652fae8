"""The Suggestions panel's rows: a card per suggestion (its highlighted sentence, source and similarity;
on the selected row also its template and buttons) and the list that holds them (Ctrl+C copies the
selected row's sentence; each row has a context menu)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QPoint, QSize, Qt, Signal
from PySide6.QtGui import QContextMenuEvent, QKeyEvent, QKeySequence, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.gui.panels.suggestion_text import highlighted_html, match_text, source_pdf, source_text
from app.gui.widgets import MUTED

if TYPE_CHECKING:  # pragma: no cover
    from core.phrasing.suggest import Suggestion


@dataclass(frozen=True)
class RowActions:
    """What a row's buttons and context-menu entries do."""

    copy_sentence: Callable[[], object]
    copy_template: Callable[[], object]
    insert_template: Callable[[], object]
    open_paper: Callable[[], object]


def row_menu(parent: QWidget, card: SuggestionCard | None, actions: RowActions) -> QMenu:
    """A row's context menu: its buttons' actions (those the row cannot do disabled)."""
    menu = QMenu(parent)
    has_template = card is not None and bool(card.item.template)
    menu.addAction("Copy sentence", actions.copy_sentence)
    menu.addAction("Copy template", actions.copy_template).setEnabled(has_template)
    menu.addSeparator()
    menu.addAction("Insert template", actions.insert_template).setEnabled(has_template)
    opener = menu.addAction("Open source paper", actions.open_paper)
    opener.setEnabled(card is not None and bool(source_pdf(card.item)))
    return menu


class SuggestionCard(QWidget):
    """One row: the highlighted sentence, its source and similarity; on the selected row also its
    template and its buttons (copy the sentence or the template, insert the template in the draft,
    open the source paper). The other rows stay short, so that several show at once."""

    def __init__(self, item: Suggestion) -> None:
        super().__init__()
        self.item = item
        self.sentence = QLabel(highlighted_html(item.text, item.spans))
        self.sentence.setTextFormat(Qt.TextFormat.RichText)
        self.sentence.setWordWrap(True)
        self.template = QLabel(item.template)
        self.template.setTextFormat(Qt.TextFormat.PlainText)
        self.template.setWordWrap(True)
        self.template.setStyleSheet(f"color: {MUTED}; font-style: italic;")
        self.template.setToolTip("The template: the formulaic wording kept, the content replaced by slots")
        self.source = QLabel(source_text(item))
        self.source.setTextFormat(Qt.TextFormat.PlainText)
        self.source.setWordWrap(True)
        self.source.setStyleSheet(f"color: {MUTED}; font-size: 9pt;")
        self.source.setToolTip(item.source.get("title", ""))
        self.match = QLabel(match_text(item))
        self.match.setTextFormat(Qt.TextFormat.PlainText)
        self.match.setWordWrap(True)  # wraps rather than being cut beside the buttons
        self.match.setStyleSheet(f"color: {MUTED}; font-size: 9pt;")
        self.copy_sentence = _small_button("Copy sentence", "Copy this sentence")
        self.copy_template = _small_button("Copy template", "Copy this sentence's template")
        self.copy_template.setEnabled(bool(item.template))
        self.insert_template = _small_button("Insert template", "Insert this template in the draft at its "
                                             "cursor")
        self.insert_template.setEnabled(bool(item.template))
        self.source_path = source_pdf(item)
        self.open_paper = _small_button("Open paper", "Open the paper this sentence comes from\n"
                                        + self.source_path)
        self.open_paper.setEnabled(bool(self.source_path))
        self.buttons = QWidget()
        buttons = QHBoxLayout(self.buttons)
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.setSpacing(2)
        buttons.addStretch(1)
        for button in (self.copy_sentence, self.copy_template, self.insert_template, self.open_paper):
            buttons.addWidget(button)
        if item.template:
            self.sentence.setToolTip(f"Template: {item.template}")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 4)
        layout.setSpacing(2)
        layout.addWidget(self.sentence)
        layout.addWidget(self.template)
        layout.addWidget(self.source)
        layout.addWidget(self.match)
        layout.addWidget(self.buttons)
        self.expanded = True
        self.set_expanded(False)

    def connect_buttons(self, actions: RowActions) -> None:
        for button, action in ((self.copy_sentence, actions.copy_sentence),
                               (self.copy_template, actions.copy_template),
                               (self.insert_template, actions.insert_template),
                               (self.open_paper, actions.open_paper)):
            button.clicked.connect(lambda _checked=False, act=action: act())

    def set_expanded(self, expanded: bool) -> None:
        """Show the template and the buttons (the selected row) or only the sentence, its source and
        similarity (the other rows)."""
        self.expanded = expanded
        self.template.setVisible(expanded and bool(self.item.template))
        self.buttons.setVisible(expanded)
        self.open_paper.setVisible(bool(self.source_path))  # library papers added from a PDF only


def _small_button(text: str, tip: str) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setAutoRaise(True)
    button.setStyleSheet("QToolButton { font-size: 9pt; padding: 1px 4px; color: #1f4e8c; }"
                         "QToolButton:disabled { color: #aaa; }")
    return button


class SuggestionList(QListWidget):
    """The rows; Ctrl+C copies the selected row's sentence (taken before the window's Copy)."""

    copyRequested = Signal()
    menuRequested = Signal(int, QPoint)  # row, global position

    def __init__(self) -> None:
        super().__init__()
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setStyleSheet("QListWidget { background: white; }"
                           "QListWidget::item { border-bottom: 1px solid #e6e6e6; }"
                           "QListWidget::item:selected { background: #e4eefc; }"
                           "QListWidget::item:hover:!selected { background: #f6f8fb; }")

    def event(self, event: QEvent) -> bool:
        if (event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent)
                and event.matches(QKeySequence.StandardKey.Copy) and self.currentRow() >= 0):
            event.accept()  # the key comes here instead of triggering the window's Copy action
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copyRequested.emit()
            event.accept()
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        item = self.itemAt(self.viewport().mapFromGlobal(event.globalPos()))
        if item is not None:
            self.setCurrentItem(item)
            self.menuRequested.emit(self.row(item), event.globalPos())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_rows()

    def fit_rows(self) -> None:
        """Give each row the height its wrapped text needs at the current width."""
        width = max(120, self.viewport().width())
        for row in range(self.count()):
            item = self.item(row)
            card = self.itemWidget(item)
            if card is not None:
                item.setSizeHint(QSize(width, card.heightForWidth(width)))

    def card(self, row: int) -> SuggestionCard | None:
        item = self.item(row)
        widget = self.itemWidget(item) if item is not None else None
        return widget if isinstance(widget, SuggestionCard) else None

    def suggestions(self) -> list[Suggestion]:
        """The suggestions listed now, in order."""
        cards = [self.card(row) for row in range(self.count())]
        return [card.item for card in cards if card is not None]

    def add_card(self, suggestion: Suggestion) -> SuggestionCard:
        card = SuggestionCard(suggestion)
        self.setItemWidget(QListWidgetItem(self), card)
        return card

    def expand(self, current: int) -> None:
        """The selected row shows its template and buttons; the others stay short."""
        for row in range(self.count()):
            card = self.card(row)
            if card is not None and card.expanded != (row == current):
                card.set_expanded(row == current)
        self.fit_rows()

    def copy_selected_item(self) -> str:
        """Copy the selected row's sentence (the window's Edit › Copy asks the focused widget)."""
        self.copyRequested.emit()
        return ""
