"""The Library panel's list: one row per paper (title, kind, sentence count, date added), sortable,
filtered by a text box, several rows selectable; the paper id and its PDF's path ride on the title cell."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTreeView

from app.gui.panels.library_text import added_text

if TYPE_CHECKING:  # pragma: no cover
    from core.library.store import PaperRecord

COLUMNS = ("Title", "Kind", "Sentences", "Added")
SORT_ROLE = Qt.ItemDataRole.UserRole
ID_ROLE = Qt.ItemDataRole.UserRole + 1
PATH_ROLE = Qt.ItemDataRole.UserRole + 2
KINDS = {"pdf": "PDF", "jsonl": "abstracts"}


class _Item(QStandardItem):
    """A read-only cell that sorts by its ``SORT_ROLE`` value."""

    def __init__(self, text: str, key: object) -> None:
        super().__init__(text)
        self.setEditable(False)
        self.setData(key, SORT_ROLE)


def paper_row(paper: PaperRecord) -> list[QStandardItem]:
    """The cells of one paper: its title (or file name, or id) with its id, PDF path and a tooltip; its
    kind; its sentence count; the date it was added."""
    source = Path(paper.source) if paper.kind == "pdf" and paper.source else None
    title = _Item(paper.title or (source.name if source else paper.paper_id), (paper.title or "").casefold())
    title.setData(paper.paper_id, ID_ROLE)
    title.setData(str(source) if source else "", PATH_ROLE)
    tip = [paper.title or "untitled", f"id {paper.paper_id[:16]}",
           f"source: {paper.source}" if paper.source else "", f"model: {paper.model_id}", paper.note]
    title.setToolTip("\n".join(t for t in tip if t))
    kind = _Item(KINDS.get(paper.kind, paper.kind), paper.kind)
    count = _Item(f"{paper.sentence_count:,}", paper.sentence_count)
    count.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return [title, kind, count, _Item(added_text(paper.added), paper.added)]


class LibraryTable(QTreeView):
    """The papers, newest first; ``filter_text`` keeps the rows whose title or kind contains it."""

    def __init__(self) -> None:
        super().__init__()
        self.items = QStandardItemModel(0, len(COLUMNS), self)
        self.items.setHorizontalHeaderLabels(list(COLUMNS))
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.items)
        self.proxy.setSortRole(SORT_ROLE)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setModel(self.proxy)
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.setSortingEnabled(True)
        self.sortByColumn(3, Qt.SortOrder.DescendingOrder)  # newest first
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)

    def fill(self, papers: Sequence[PaperRecord]) -> None:
        """List ``papers`` (sorted as the header says), keeping the selection of papers still there."""
        selected = set(self.selected_ids())
        self.items.removeRows(0, self.items.rowCount())
        for paper in papers:
            self.items.appendRow(paper_row(paper))
        self.proxy.sort(self.proxy.sortColumn(), self.proxy.sortOrder())
        if selected:
            self.select_ids(selected)

    def filter_text(self, text: str) -> None:
        self.proxy.setFilterFixedString(text.strip())

    def rows(self) -> list[tuple[str, str, int, str]]:
        """The rows as shown (filtered and sorted): (title, kind, sentences, paper id)."""
        out = []
        for row in range(self.proxy.rowCount()):
            title = self.proxy.index(row, 0)
            out.append((str(title.data()), str(self.proxy.index(row, 1).data()),
                        int(self.proxy.index(row, 2).data(SORT_ROLE)), str(title.data(ID_ROLE))))
        return out

    def selected_ids(self) -> list[str]:
        rows = sorted({index.row() for index in self.selectionModel().selectedRows()})
        return [str(self.proxy.index(row, 0).data(ID_ROLE)) for row in rows]

    def select_ids(self, paper_ids: set[str] | Sequence[str]) -> None:
        wanted = set(paper_ids)
        selection = self.selectionModel()
        selection.clearSelection()
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            if index.data(ID_ROLE) in wanted:
                selection.setCurrentIndex(index, QItemSelectionModel.SelectionFlag.NoUpdate)
                selection.select(index, flags)

    def select_row_at(self, index: QModelIndex) -> None:
        """Select the row under a right-click unless it is part of the selection already."""
        if index.isValid() and not self.selectionModel().isRowSelected(index.row(), QModelIndex()):
            self.select_ids([str(self.proxy.index(index.row(), 0).data(ID_ROLE))])

    def selected_path(self) -> str:
        """The PDF of the one selected paper, when it is still there ("" otherwise)."""
        rows = self.selectionModel().selectedRows()
        if len(rows) != 1:
            return ""
        path = str(self.proxy.index(rows[0].row(), 0).data(PATH_ROLE) or "")
        return path if path and Path(path).is_file() else ""
