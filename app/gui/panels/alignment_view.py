"""The Alignment panel's results: the gap list (most important first) over the aligned pairs (A sentence |
similarity | B sentence, tinted by the pair's role) with role and function filters, in a splitter."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.gui.palette import RolePalette
from app.gui.panels.alignment_text import (
    CELL_CHARS,
    function_choices,
    gap_target,
    gap_tooltip,
    gaps_basis,
    pair_texts,
    pair_tooltip,
)
from app.gui.widgets import clip, muted_color, soft_selection
from core.taxonomy.labels import ROLES

if TYPE_CHECKING:  # pragma: no cover
    from core.alignment.align import AlignedPair, Alignment


def _boxed(*parts: QWidget | QHBoxLayout) -> QWidget:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(1)
    for part in parts:
        if isinstance(part, QHBoxLayout):
            layout.addLayout(part)
        else:
            layout.addWidget(part)
    return box


def _combo(tip: str, everything: str) -> QComboBox:
    combo = QComboBox()
    combo.setToolTip(tip)
    combo.addItem(everything, None)
    return combo


class AlignmentResults(QSplitter):
    """Gaps over pairs. ``pairSelected(row)``: the user selected a pair's row; ``gapActivated(row item)``:
    a gap was clicked; ``filtered(shown, total)``: a role or function filter is on."""

    pairSelected = Signal(int)
    gapActivated = Signal(object)
    filtered = Signal(int, int)

    def __init__(self) -> None:
        super().__init__(Qt.Orientation.Vertical)
        self.alignment: Alignment | None = None
        self._selecting = False  # a selection made here, not by the user
        self.gap_list = QListWidget()
        self.gap_list.setWordWrap(True)
        self.gap_list.setToolTip("What one text does that the other does not; click to go to the open paper")
        self.gap_list.itemClicked.connect(self.gapActivated.emit)
        self.gap_list.itemActivated.connect(self.gapActivated.emit)
        self.gaps_title = QLabel("<b>Gaps</b>")
        self.gaps_title.setStyleSheet("padding: 0 6px;")
        self.role = _combo("Only pairs with this shared role", "All roles")
        for role in ROLES:
            self.role.addItem(role, role)
        self.function = _combo("Only pairs with this shared function", "All functions")
        self.role.currentIndexChanged.connect(lambda _i: self.apply_filters())
        self.function.currentIndexChanged.connect(lambda _i: self.apply_filters())
        filters = QHBoxLayout()
        filters.setContentsMargins(6, 0, 6, 0)
        filters.addWidget(QLabel("<b>Aligned pairs</b>"))
        filters.addStretch(1)
        filters.addWidget(QLabel("Role"))
        filters.addWidget(self.role, 1)
        filters.addWidget(QLabel("Function"))
        filters.addWidget(self.function, 2)
        self.table = self._pair_table()
        self.addWidget(_boxed(self.gaps_title, self.gap_list))
        self.addWidget(_boxed(filters, self.table))
        self.setStretchFactor(0, 2)  # the gaps get 2/5 of the room: their top ones show beside the pairs
        self.setStretchFactor(1, 3)

    def _pair_table(self) -> QTableWidget:
        table = QTableWidget(0, 3)
        table.setHorizontalHeaderLabels(["A: this paper", "similarity", "B"])
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setWordWrap(True)
        table.verticalHeader().hide()
        table.setStyleSheet(f"QTableWidget::item:selected {{ background: {soft_selection()}; "
                            "color: palette(text); }")
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        table.itemSelectionChanged.connect(self._on_row_selected)
        return table

    # -- filling ------------------------------------------------------------------------------
    def show_alignment(self, alignment: Alignment, palette: RolePalette) -> None:
        """List ``alignment``'s gaps and pairs (filters kept when they still apply)."""
        self.alignment = alignment
        self.gap_list.clear()
        self._fill_gaps(alignment)
        self._fill_functions(alignment)
        self._fill_table(alignment, palette)
        self.apply_filters()

    def clear(self) -> None:
        self.alignment = None
        self.table.setRowCount(0)
        self.gap_list.clear()

    def _fill_gaps(self, alignment: Alignment) -> None:
        """The most important gaps first (``GapReport.top``), the rest after a "more" row; what was
        not judged (a side whose headings were not recognised) in the title's tooltip."""
        report = alignment.gaps
        rest = report.more()
        for item in [*report.top(), *rest]:
            if rest and item is rest[0]:
                divider = QListWidgetItem(f"{len(rest)} more, less important:")
                divider.setFlags(Qt.ItemFlag.NoItemFlags)
                self.gap_list.addItem(divider)
            row = QListWidgetItem(item.text)
            row.setData(Qt.ItemDataRole.UserRole, item)
            row.setToolTip(gap_tooltip(gap_target(alignment, item)))
            self.gap_list.addItem(row)
        if not report.items:
            self.gap_list.addItem("No gaps: both do the same things per section.")
        self.gaps_title.setText(f"<b>Gaps</b> ({len(report.items)}){gaps_basis(alignment)}")
        self.gaps_title.setToolTip("\n".join([report.note, *(f"Not judged: {c}" for c in report.caveats)]))

    def _fill_functions(self, alignment: Alignment) -> None:
        kept = self.function.currentData()
        self.function.blockSignals(True)
        self.function.clear()
        self.function.addItem("All functions", None)
        for name, function in function_choices(alignment):
            self.function.addItem(name, function)
        self.function.setCurrentIndex(max(0, self.function.findData(kept)))
        self.function.blockSignals(False)

    def _fill_table(self, alignment: Alignment, palette: RolePalette) -> None:
        self.table.setRowCount(0)
        self.table.setRowCount(len(alignment.pairs))
        for row, pair in enumerate(alignment.pairs):
            a_text, b_text = pair_texts(alignment, pair)
            tip = pair_tooltip(pair)
            fill = QBrush(palette.fill(pair.role, 0.28)) if pair.role else QBrush()
            for column, text in enumerate((a_text, f"{pair.shown_score:.2f}", b_text)):
                cell = QTableWidgetItem(clip(text, CELL_CHARS) if column != 1 else text)
                cell.setData(Qt.ItemDataRole.UserRole, pair)
                cell.setToolTip(f"{tip}\n\n{text if column != 1 else ''}".strip())
                if pair.role:
                    cell.setBackground(fill)
                if column == 1:
                    cell.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                    cell.setForeground(QBrush(muted_color()))
                self.table.setItem(row, column, cell)
        self.table.resizeRowsToContents()

    # -- filters and selection ----------------------------------------------------------------
    def apply_filters(self) -> None:
        """Hide the pairs the role and function filters leave out."""
        if self.alignment is None:
            return
        role, function = self.role.currentData(), self.function.currentData()
        for row, pair in enumerate(self.alignment.pairs):
            hidden = ((role is not None and pair.role != role)
                      or (function is not None and pair.function != function))
            self.table.setRowHidden(row, hidden)
        if role is not None or function is not None:
            self.filtered.emit(len(self.visible_pairs()), len(self.alignment.pairs))

    def visible_pairs(self) -> list[AlignedPair]:
        """The pairs listed and not filtered out, in order."""
        if self.alignment is None:
            return []
        return [p for row, p in enumerate(self.alignment.pairs) if not self.table.isRowHidden(row)]

    def _on_row_selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows and self.alignment is not None and not self._selecting:
            self.pairSelected.emit(rows[0].row())

    def select_pair_of(self, a_index: int) -> None:
        """Select (without ``pairSelected``) the shown pair holding A's sentence ``a_index``, if any."""
        if self.alignment is None:
            return
        for row, pair in enumerate(self.alignment.pairs):
            if a_index in pair.a_indices and not self.table.isRowHidden(row):
                self._selecting = True
                try:
                    self.table.selectRow(row)
                finally:
                    self._selecting = False
                item = self.table.item(row, 0)
                if item is not None:
                    self.table.scrollToItem(item)
                return
