"""A layout that wraps: its items left to right, onto as many rows as the width needs (Qt's flow layout
example). A panel's row of controls in it never makes its dock (and so the window) wider than its widest
item: at a narrow width the controls take two or three rows instead of running under the next panel.

:func:`control_group` keeps controls that belong together (a label and its box, the export buttons) on one
row; the rows are made of such groups."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QHBoxLayout, QLayout, QLayoutItem, QSizePolicy, QWidget


class FlowLayout(QLayout):
    """Items left to right, wrapped onto the next row when the width runs out; its height follows its
    width (``heightForWidth``), its least width is its widest item's."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 4) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self.setSpacing(spacing)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), place=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._arrange(rect, place=True)

    def sizeHint(self) -> QSize:
        """All the items on one row."""
        shown = self._shown()
        margins = self.contentsMargins()
        width = sum(i.sizeHint().width() for i in shown) + self.spacing() * max(0, len(shown) - 1)
        height = max((i.sizeHint().height() for i in shown), default=0)
        return QSize(width + margins.left() + margins.right(), height + margins.top() + margins.bottom())

    def minimumSize(self) -> QSize:
        """As wide as the widest item (the rows wrap down to it), as high as one row: the layout above
        gives the rows their height for the width (``heightForWidth``) from its stretching part; a dock's
        least height counting them would make the window taller than a low screen."""
        margins = self.contentsMargins()
        size = QSize()
        for item in self._shown():
            size = size.expandedTo(item.minimumSize())
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    def _shown(self) -> list[QLayoutItem]:
        return [item for item in self._items if not item.isEmpty()]

    def _arrange(self, rect: QRect, place: bool) -> int:
        """Lay the items out in ``rect`` (only measure unless ``place``); returns the height they take."""
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        x, y, row_height = area.x(), area.y(), 0
        rows: list[list[tuple[QLayoutItem, int]]] = [[]]
        for item in self._shown():
            width = item.sizeHint().width()
            width = max(min(width, area.width()) if area.width() > 0 else width, item.minimumSize().width())
            if rows[-1] and x + width > area.right() + 1:
                x, y, row_height = area.x(), y + row_height + self.spacing(), 0
                rows.append([])
            rows[-1].append((item, width))
            row_height = max(row_height, item.sizeHint().height())
            x += width + self.spacing()
        if place:
            self._place(rows, area)
        return y + row_height - rect.y() + margins.bottom()

    def _place(self, rows: list[list[tuple[QLayoutItem, int]]], area: QRect) -> None:
        y = area.y()
        for row in rows:
            height = max((item.sizeHint().height() for item, _w in row), default=0)
            x = area.x()
            for item, width in row:
                item_height = min(height, item.maximumSize().height())
                top = y + (height - item_height) // 2
                item.setGeometry(QRect(QPoint(x, top), QSize(width, item_height)))
                x += width + self.spacing()
            y += height + self.spacing()


def control_group(*parts: QWidget | int) -> QWidget:
    """``parts`` (widgets; an int is that much space) on one row that a :class:`FlowLayout` keeps
    together."""
    group = QWidget()
    row = QHBoxLayout(group)
    row.setContentsMargins(0, 0, 0, 0)
    row.setSpacing(4)
    for part in parts:
        if isinstance(part, int):
            row.addSpacing(part)
        else:
            row.addWidget(part)
    group.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
    return group


def flow_row(owner: QWidget, *groups: QWidget,
             margins: tuple[int, int, int, int] = (6, 4, 6, 0)) -> FlowLayout:
    """``owner``'s layout: ``groups`` left to right, wrapped as its width needs; ``owner`` takes the
    height its rows need."""
    flow = FlowLayout(owner)
    flow.setContentsMargins(*margins)
    for group in groups:
        flow.addWidget(group)
    policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
    policy.setHeightForWidth(True)
    owner.setSizePolicy(policy)
    return flow
