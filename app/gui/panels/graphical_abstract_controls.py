"""The Graphical-abstract panel's controls: "Suggest", "Include tables", "Use as graphical abstract",
"Export PNG…" (a row that wraps in a narrow panel; "Include tables" remembered), and the "Suggest graphical
abstract" action the window puts in its File menu and toolbar."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QCheckBox, QWidget

from app.gui.flow_layout import control_group, flow_row
from app.gui.panel_choices import remember
from app.gui.panels.graphical_abstract_export import EXPORT_DPI
from app.gui.widgets import tool_button

SHORTCUT = "Ctrl+Shift+G"


class GraphicalAbstractControls(QWidget):
    def __init__(self) -> None:
        super().__init__()
        self.suggest_button = tool_button("Suggest", f"Rank this paper's figures as graphical-abstract "
                                                     f"candidates ({SHORTCUT})")
        self.include_tables = remember(QCheckBox("Include tables"), "include_tables")
        self.include_tables.setToolTip("Rank the tables too (only figures are candidates otherwise)")
        self.use_button = tool_button("Use as graphical abstract", "Remember the selected figure as this "
                                      "paper's graphical abstract (or double-click it)")
        self.export_button = tool_button("Export PNG…", f"Save the chosen figure as a {EXPORT_DPI} dpi PNG "
                                         "with its caption (and the caption as .txt)")
        self.set_choice_actions(False, False)
        flow_row(self, control_group(self.suggest_button, 8, self.include_tables),
                 self.use_button, self.export_button)
        self.act_suggest = QAction("Suggest &graphical abstract", self)
        self.act_suggest.setStatusTip("Rank this paper's figures as graphical-abstract candidates")
        self.act_suggest.setToolTip(f"Suggest a graphical abstract ({SHORTCUT} shows the panel)")
        self.act_suggest.setIconText("Graphical abstract")

    def set_choice_actions(self, use: bool, export: bool) -> None:
        """Enable "Use as graphical abstract" (a card is selected) and "Export PNG…" (one can be written)."""
        self.use_button.setEnabled(use)
        self.export_button.setEnabled(export)
