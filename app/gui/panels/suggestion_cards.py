"""The Suggestions panel's rows: a card per suggestion (its highlighted sentence, source and similarity;
on the selected row also its template and buttons) and the list that holds them (Ctrl+C copies the
selected row's sentence; each row has a context menu). Cards cost the UI thread (widgets, style sheets):
a new result refills the cards already listed and makes the missing ones a few at a time
(:meth:`SuggestionList.show_items`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QPoint, QSize, Qt, QTimer, Signal
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
from app.gui.widgets import accent, faint, list_style, muted

if TYPE_CHECKING:  # pragma: no cover
    from core.phrasing.suggest import Suggestion


BUILT_AT_ONCE = 2  # a new result's rows whose cards are made at once (the others: one per event-loop turn)
UNBUILT_HEIGHT = 56  # a row's height until its card is made


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
        self.sentence = QLabel()
        self.sentence.setTextFormat(Qt.TextFormat.RichText)
        self.sentence.setWordWrap(True)
        self.template = QLabel()
        self.template.setTextFormat(Qt.TextFormat.PlainText)
        self.template.setWordWrap(True)
        self.template.setStyleSheet(f"color: {muted()}; font-style: italic;")
        self.template.setToolTip("The template: the formulaic wording kept, the content replaced by slots")
        self.source = QLabel()
        self.source.setTextFormat(Qt.TextFormat.PlainText)
        self.source.setWordWrap(True)
        self.source.setStyleSheet(f"color: {muted()}; font-size: 9pt;")
        self.match = QLabel()
        self.match.setTextFormat(Qt.TextFormat.PlainText)
        self.match.setWordWrap(True)  # wraps rather than being cut beside the buttons
        self.match.setStyleSheet(f"color: {muted()}; font-size: 9pt;")
        self.copy_sentence = _small_button("Copy sentence", "Copy this sentence")
        self.copy_template = _small_button("Copy template", "Copy this sentence's template")
        self.insert_template = _small_button("Insert template", "Insert this template in the draft at its "
                                             "cursor")
        self.open_paper = _small_button("Open paper", "")
        self.buttons = QWidget()
        buttons = QHBoxLayout(self.buttons)
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.setSpacing(2)
        buttons.addStretch(1)
        for button in (self.copy_sentence, self.copy_template, self.insert_template, self.open_paper):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 4)
        layout.setSpacing(2)
        for widget in (self.sentence, self.template, self.source, self.match, self.buttons):
            layout.addWidget(widget)
        self.expanded = False
        self.set_item(item)

    def set_item(self, item: Suggestion) -> None:
        """Show ``item`` (a card is made once and refilled for the next result's row: making one costs
        the UI thread far more than refilling it)."""
        self.item = item
        self.sentence.setText(highlighted_html(item.text, item.spans))
        self.sentence.setToolTip(f"Template: {item.template}" if item.template else "")
        self.template.setText(item.template)
        self.source.setText(source_text(item))
        self.source.setToolTip(item.source.get("title", ""))
        self.match.setText(match_text(item))
        self.copy_template.setEnabled(bool(item.template))
        self.insert_template.setEnabled(bool(item.template))
        self.source_path = source_pdf(item)
        self.open_paper.setToolTip("Open the paper this sentence comes from\n" + self.source_path)
        self.open_paper.setEnabled(bool(self.source_path))
        self.set_expanded(self.expanded)  # (the selected row stays the expanded one)

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
    button.setStyleSheet(f"QToolButton {{ font-size: 9pt; padding: 1px 4px; color: {accent()}; }}"
                         f"QToolButton:disabled {{ color: {muted(share=0.4)}; }}")
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
        # the palette's colours, background and text alike (a white background under a dark palette's
        # near-white text could not be read)
        self.setStyleSheet(list_style(base=True)
                           + f"QListWidget::item:hover:!selected {{ background: {faint(share=0.04)}; }}")
        self._actions: Callable[[int], RowActions] | None = None
        self._builder = QTimer(self)  # makes the cards of a new result's later rows, one per tick
        self._builder.setInterval(0)
        self._builder.timeout.connect(self._build_next)

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
        for row in range(self.count()):
            self._fit(row)

    def _fit(self, row: int) -> None:
        item, width = self.item(row), max(120, self.viewport().width())
        card = self.itemWidget(item)
        item.setSizeHint(QSize(width, card.heightForWidth(width) if card is not None else UNBUILT_HEIGHT))

    def card(self, row: int, build: bool = True) -> SuggestionCard | None:
        """Row ``row``'s card (made now if it is not yet and ``build``)."""
        item = self.item(row)
        widget = self.itemWidget(item) if item is not None else None
        if isinstance(widget, SuggestionCard):
            return widget
        return self._build(row) if build and item is not None else None

    def suggestions(self) -> list[Suggestion]:
        """The suggestions listed now, in order."""
        return [self.item(row).data(Qt.ItemDataRole.UserRole) for row in range(self.count())]

    def show_items(self, suggestions: Sequence[Suggestion], actions: Callable[[int], RowActions]) -> None:
        """List ``suggestions`` (``actions(row)``: what a row's buttons do). Making a card is what costs
        the UI thread (its widgets and style sheets): the rows already there keep their cards, refilled;
        of the new rows, the first ``BUILT_AT_ONCE`` get theirs now and the others one per turn of the
        event loop (or when asked for: ``card``); rows left over go with their cards."""
        self._actions = actions
        for row, suggestion in enumerate(suggestions):
            item = self.item(row) or QListWidgetItem(self)
            item.setData(Qt.ItemDataRole.UserRole, suggestion)
            card = self.card(row, build=False)
            if card is not None:
                card.set_item(suggestion)
            elif row < BUILT_AT_ONCE:
                self._build(row)
        while self.count() > len(suggestions):
            self.takeItem(self.count() - 1)
        if any(self.card(row, build=False) is None for row in range(self.count())):
            self._builder.start()

    def _build(self, row: int) -> SuggestionCard | None:
        item = self.item(row)
        suggestion = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        if suggestion is None or self._actions is None:
            return None
        card = SuggestionCard(suggestion)
        card.connect_buttons(self._actions(row))
        card.set_expanded(row == self.currentRow())
        self.setItemWidget(item, card)
        self._fit(row)
        return card

    def _build_next(self) -> None:
        """The next row without a card gets one (the builder's tick); it stops once all have one."""
        row = next((r for r in range(self.count()) if self.card(r, build=False) is None), None)
        if row is None:
            self._builder.stop()
        else:
            self._build(row)

    def clear(self) -> None:
        self._builder.stop()
        super().clear()

    def expand(self, current: int) -> None:
        """The selected row shows its template and buttons; the others stay short."""
        for row in range(self.count()):
            card = self.card(row, build=row == current)
            if card is not None and card.expanded != (row == current):
                card.set_expanded(row == current)
        self.fit_rows()

    def copy_selected_item(self) -> str:
        """Copy the selected row's sentence (the window's Edit › Copy asks the focused widget)."""
        self.copyRequested.emit()
        return ""
