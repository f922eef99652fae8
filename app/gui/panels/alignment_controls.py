"""The Alignment panel's top row: "Compare with PDF…", "Compare with draft", "Side by side" (and its
Ctrl+Shift+B shortcut), the function weight (remembered), and the export buttons. It only says what was
asked. The row wraps (:mod:`app.gui.flow_layout`): a narrow panel shows its groups on two or three rows."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDoubleSpinBox, QLabel, QToolButton, QWidget

from app.gui.flow_layout import control_group, flow_row
from app.gui.panel_choices import remember
from app.gui.panels.alignment_text import EXPORTS
from app.gui.widgets import tool_button

SIDE_BY_SIDE_SHORTCUT = "Ctrl+Shift+B"


class AlignmentControls(QWidget):
    comparePdf = Signal()
    compareDraft = Signal()
    sideBySide = Signal()
    exportAs = Signal(str)  # "json", "md" or "html"

    def __init__(self, function_weight: float) -> None:
        super().__init__()
        self.compare_pdf = tool_button("Compare with PDF…", "Align the open paper with a second PDF")
        self.compare_pdf.clicked.connect(self.comparePdf)
        self.compare_draft = tool_button("Compare with draft", "Align the open paper with the Draft pane's "
                                         "text")
        self.compare_draft.clicked.connect(self.compareDraft)
        self.compare_draft.setEnabled(False)
        self.side_by_side = tool_button("Side by side", "Show both texts next to each other, scrolling in "
                                        "step, with links between aligned sentences "
                                        f"({SIDE_BY_SIDE_SHORTCUT})")
        self.side_by_side.clicked.connect(self.sideBySide)
        self.weight = QDoubleSpinBox()
        self.weight.setRange(0.0, 1.0)
        self.weight.setSingleStep(0.1)
        self.weight.setDecimals(2)
        self.weight.setValue(function_weight)
        self.weight.setToolTip("Weight of what sentences do (function view) against what they are about "
                               "(content view); changing it aligns the same two texts again")
        remember(self.weight, "function_weight")
        self.export_buttons: dict[str, QToolButton] = {}
        for fmt, (name, _filter) in EXPORTS.items():
            button = tool_button(name, f"Save the alignment as {name}")
            button.clicked.connect(lambda _c=False, f=fmt: self.exportAs.emit(f))
            self.export_buttons[fmt] = button
        json_button, *other_exports = self.export_buttons.values()
        flow_row(self, self.compare_pdf, self.compare_draft, self.side_by_side,
                 control_group(QLabel("Function weight"), self.weight),
                 control_group(QLabel("Export"), json_button), *other_exports)

    def set_results_shown(self, shown: bool) -> None:
        """Exports and "Side by side" are there only while an alignment is listed."""
        for button in self.export_buttons.values():
            button.setEnabled(shown)
        self.side_by_side.setEnabled(shown)
