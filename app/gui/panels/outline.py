"""Outline panel: the paper's sections with their role mix as small stacked bars, or, switched to
functions, each section's most frequent communicative function (tooltip: the top three and the
section's move checklist). The section names keep most of a narrow panel's width."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, Qt
from PySide6.QtGui import QPainter, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QHeaderView,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.session import Session
from app.gui.widgets import hint_label, paint_role_mix, view_mode_row, while_alive
from core.document import Paper, Section
from core.taxonomy.labels import NO_FUNCTION, ROLES, FunctionPrediction

MIX_SHARE, MIX_MIN, MIX_MAX = 0.3, 28, 90  # the mix column: this share of the width, within these pixels
COUNTS_ROLE = Qt.ItemDataRole.UserRole + 1
SECTION_ROLE = Qt.ItemDataRole.UserRole


class _MixDelegate(QStyledItemDelegate):
    def __init__(self, session: Session, parent: QWidget) -> None:
        super().__init__(parent)
        self._session = session

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        style = option.widget.style() if option.widget else QApplication.style()
        style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, option.widget)
        counts = index.data(COUNTS_ROLE)
        if counts is None:
            super().paint(painter, option, index)  # functions mode: the item's text
            return
        rect = QRectF(option.rect).adjusted(4, 5, -4, -5)
        paint_role_mix(painter, rect, counts, self._session.palette)


def _tree_items(tree: QTreeWidget) -> Iterator[QTreeWidgetItem]:
    """Every item of ``tree``, depth first from the last top-level item."""
    stack = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    while stack:
        item = stack.pop()
        if item is None:  # not for an index below the count; the stubs allow it
            continue
        yield item
        stack.extend(item.child(i) for i in range(item.childCount()))


class OutlineTree(QTreeWidget):
    """Sections, their role mix (or function) and sentence count. The section names take the room: the
    mix column is a share of the width (``MIX_SHARE``, between ``MIX_MIN`` and ``MIX_MAX`` pixels), the
    count as wide as its numbers; a name that does not fit is elided (no sideways scrolling)."""

    def __init__(self) -> None:
        super().__init__()
        self.setColumnCount(3)
        self.setHeaderLabels(["Section", "Roles", "n"])
        self.setRootIsDecorated(True)
        self.setUniformRowHeights(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(8)
        header.resizeSection(1, MIX_MAX)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        share = int(self.viewport().width() * MIX_SHARE)
        self.header().resizeSection(1, max(MIX_MIN, min(MIX_MAX, share)))


class OutlinePanel(QWidget):
    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.tree = OutlineTree()
        self.tree.setItemDelegateForColumn(1, _MixDelegate(session, self.tree))
        self.tree.itemActivated.connect(self._on_activated)
        self.tree.itemClicked.connect(self._on_activated)
        top, self.mode = view_mode_row("Show each section's role mix, or its most frequent "
                                       "communicative function")
        self.mode.currentTextChanged.connect(lambda _m: self._refresh_counts())
        self.stack = QStackedWidget()
        self.empty = hint_label("Open a paper to see its sections.")
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.tree)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.stack)
        session.paperReady.connect(self._on_paper)
        session.analysisReady.connect(while_alive(self, lambda _a: self._refresh_counts()))
        session.documentClosed.connect(self._clear)
        session.documentOpened.connect(while_alive(self, lambda _d: self._clear("Reading the paper…")))
        session.palette.changed.connect(self.tree.viewport().update)
        session.failed.connect(self._on_failed)
        session.sentenceSelected.connect(self._follow_selection)
        if session.paper is not None:
            self._on_paper(session.paper)

    def _clear(self, message: str = "Open a paper to see its sections.") -> None:
        self.tree.clear()
        self.empty.setText(message)
        self.stack.setCurrentWidget(self.empty)

    def _follow_selection(self, index: int) -> None:
        """Highlight the section of the selected sentence (without jumping anywhere)."""
        paper = self.session.paper
        if paper is None or not (0 <= index < len(paper.sentences)):
            return
        wanted = paper.sentences[index].section_index
        for item in _tree_items(self.tree):
            if item.data(0, SECTION_ROLE) == wanted:
                self.tree.blockSignals(True)
                self.tree.setCurrentItem(item)
                self.tree.blockSignals(False)
                self.tree.scrollToItem(item)
                return

    def _on_failed(self, stage: str, _error: object) -> None:
        if stage == "parse":
            self._clear("No sections: the paper could not be read.")
        elif stage == "open" and self.session.document is None:
            self._clear()

    def _on_paper(self, paper: Paper) -> None:
        self.tree.clear()
        if not paper.sections:
            self._clear("No sections were found in this paper.")
            return
        stack: list[tuple[int, QTreeWidgetItem]] = []
        for i, section in enumerate(paper.sections):
            title = " ".join(p for p in (section.number, section.heading) if p) or section.kind.value
            item = QTreeWidgetItem([title, "", str(section.sentence_count)])
            item.setData(0, SECTION_ROLE, i)
            item.setToolTip(0, f"{title}\n{section.kind.value} · page {section.page + 1} · "
                               f"{section.sentence_count} sentences")
            while stack and stack[-1][0] >= section.level:
                stack.pop()
            if stack:
                stack[-1][1].addChild(item)
            else:
                self.tree.addTopLevelItem(item)
            stack.append((section.level, item))
        self.tree.expandAll()
        self.stack.setCurrentWidget(self.tree)
        self._refresh_counts()

    def _refresh_counts(self) -> None:
        paper, analysis = self.session.paper, self.session.analysis
        if paper is None:
            return
        functions = analysis.functions if analysis is not None else None
        by_function = self.mode.currentText() == "functions"
        self.tree.setHeaderLabels(["Section", "Function" if by_function else "Roles", "n"])
        for item in _tree_items(self.tree):
            section = paper.sections[item.data(0, SECTION_ROLE)]
            if analysis is None:
                item.setData(1, COUNTS_ROLE, None)
                item.setText(1, "")
                continue
            if by_function:
                item.setData(1, COUNTS_ROLE, None)
                text, tip = _function_summary(section, functions)
                item.setText(1, text)
                item.setToolTip(1, tip)
                continue
            item.setText(1, "")
            labels = Counter(analysis.roles[j].label for j in
                             range(section.first_sentence, section.first_sentence + section.sentence_count))
            item.setData(1, COUNTS_ROLE, {r: labels.get(r, 0) for r in ROLES})
            mix = ", ".join(f"{r} {labels[r]}" for r in ROLES if labels.get(r))
            item.setToolTip(1, mix or "no sentences")
        self.tree.viewport().update()

    def _on_activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        paper = self.session.paper
        if paper is None:
            return
        section = paper.sections[item.data(0, SECTION_ROLE)]
        if section.sentence_count:
            self.session.jump_to_sentence(section.first_sentence)
        else:
            self.session.jump_to(section.page, None)


def _function_summary(section: Section, functions: list[FunctionPrediction] | None) -> tuple[str, str]:
    """(the section's most frequent function name, tooltip with the top three and its moves)."""
    from core.taxonomy.functions import default_taxonomy
    from core.taxonomy.moves import check_moves, describe_checks

    if functions is None:
        return "—", "This model has no function head"
    first, count = section.first_sentence, section.sentence_count
    found = [functions[j].label for j in range(first, first + count)]
    top = Counter(f for f in found if f != NO_FUNCTION).most_common(3)
    name = default_taxonomy().name_of
    kind = section.kind.value
    lines = [f"{name(f)} ×{n}" for f, n in top] or ["no function found"]
    moves = describe_checks(check_moves(found, kind), kind)
    return (name(top[0][0]) if top else "—"), "\n".join([*lines, *([moves] if moves else [])])


SPEC = register_panel(PanelSpec(
    id="outline", title="Outline", factory=OutlinePanel, area=Qt.DockWidgetArea.LeftDockWidgetArea,
    order=10, shortcut="Ctrl+Shift+O", description="Sections and their role mix or functions", width=300))
