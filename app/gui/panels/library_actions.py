"""The Library panel's actions (its toolbar, the rows' context menu, the File menu's copies) and its
top row: the toolbar and the filter box."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QMenu, QToolBar, QWidget

from app.gui.zotero_import import zotero_action

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.panels.library import LibraryPanel


def action(owner: QWidget, text: str, slot: Callable[[], object], tip: str) -> QAction:
    """An action with a tooltip and status tip that calls ``slot()``."""
    made = QAction(text, owner)
    made.setToolTip(tip)
    made.setStatusTip(tip)
    made.triggered.connect(lambda _checked=False: slot())
    return made


def access_key(text: str, letter: str) -> str:
    """``text`` with ``&`` before its first ``letter`` (either case); unchanged without one, or with a key."""
    at = text.lower().find(letter.lower())
    return text if "&" in text or at < 0 else f"{text[:at]}&{text[at:]}"


class LibraryTop(QWidget):
    """The panel's actions, and its top row: the toolbar (add files, add folder, add from Zotero, add this
    paper | remove) and the filter box."""

    def __init__(self, panel: LibraryPanel) -> None:
        super().__init__()
        self.add_files = action(panel, "Add &files…", panel.add_files_dialog,
                                "Add PDF files of papers to your library")
        self.add_folder = action(panel, "Add f&older…", panel.add_folder_dialog,
                                 "Add every PDF in a folder (and its subfolders)")
        self.add_zotero = zotero_action(panel)  # app/gui/zotero_import.py: Zotero's PDFs, incrementally
        self.add_zotero.setText(access_key(self.add_zotero.text(), "Z"))
        # File › Add to library ▸ (the same actions: enabled and disabled with the toolbar's)
        self.add_menu = QMenu("Add to li&brary", panel)
        self.add_menu.addActions([self.add_files, self.add_folder, self.add_zotero])
        self.add_current = action(panel, "Add this paper", panel.add_current_paper,
                                  "Add the open paper to your library")
        self.remove = action(panel, "Remove", panel.remove_selected,
                             "Remove the selected papers from your library (Delete)")
        self.remove.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.remove.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.open = action(panel, "Open", panel.open_selected, "Open the paper's PDF")
        # The File menu's copy of "Add this paper" (its own text; enabled with the panel's one).
        self.add_current_menu = action(panel, "Add this paper to my &library", panel.add_current_paper,
                                       "Add the open paper to your library (its sentences then appear as "
                                       "suggestions)")
        self.toolbar = QToolBar()
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.toolbar.setStyleSheet("QToolBar { border: none; spacing: 2px; padding: 1px 2px; }")
        self.toolbar.addActions([self.add_files, self.add_folder, self.add_zotero, self.add_current])
        self.toolbar.addSeparator()
        self.toolbar.addAction(self.remove)
        for act in self.toolbar.actions():  # Tab reaches them (a toolbar's buttons are not focusable)
            button = self.toolbar.widgetForAction(act)
            if button is not None:
                button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter papers")
        self.filter.setToolTip("Show only the papers whose title or kind contains this text")
        self.filter.setClearButtonEnabled(True)
        self.filter.setMaximumWidth(240)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 6, 0)
        row.addWidget(self.toolbar, 1)
        row.addWidget(self.filter)
