"""The dock panels of the main window, built from the panel registry and nothing else.

Each registered :class:`~app.gui.panels.PanelSpec` becomes one dock: its placement, initial size,
shortcut, whether it starts in front of its tab group, remembers its visibility, or shows itself
when a sentence is selected all come from the spec, so adding a panel is one module with one
``register_panel`` call (plus its name in ``BUILTIN_PANEL_MODULES``): no change here or in the
window, and no panel knows about another.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

from app.gui.panels import PanelSpec, load_builtin_panels
from app.gui.session import Session
from app.gui.settings import AppSettings


@runtime_checkable
class NeedsHeight(Protocol):
    """A panel that needs a least height to be of use (the graphical abstract's thumbnails and reasons)."""

    def wanted_height(self) -> int: ...


@runtime_checkable
class Flushable(Protocol):
    """A panel holding user text that must be saved before the window closes (the draft)."""

    def flush(self) -> None: ...


def _visible_flag(spec: PanelSpec) -> str:
    return f"{spec.id}_visible"


class PanelDocks:
    """Builds one dock per registered panel and keeps the few promises a spec can ask for."""

    def __init__(self, window: QMainWindow, session: Session, settings: AppSettings) -> None:
        self._window = window
        self._session = session
        self._settings = settings
        self.specs: list[PanelSpec] = []
        self.panels: dict[str, QWidget] = {}
        self.docks: dict[str, QDockWidget] = {}

    def build(self) -> None:
        """Create, place, tabify and size the docks of every registered panel."""
        window = self._window
        window.setDockNestingEnabled(True)
        self.specs = load_builtin_panels()
        for spec in self.specs:
            widget = spec.factory(self._session)
            dock = QDockWidget(spec.title, window)
            dock.setObjectName(f"dock-{spec.id}")
            dock.setWidget(widget)
            window.addDockWidget(spec.area, dock)
            if spec.tab_with and spec.tab_with in self.docks:
                window.tabifyDockWidget(self.docks[spec.tab_with], dock)
            toggle = dock.toggleViewAction()
            if spec.shortcut:
                toggle.setShortcut(QKeySequence(spec.shortcut))
            toggle.setText(f"{spec.title} panel")
            window.addAction(toggle)
            dock.setVisible(self._settings.flag(_visible_flag(spec), spec.visible) if spec.remember_visible
                            else spec.visible)
            self.panels[spec.id] = widget
            self.docks[spec.id] = dock
            if isinstance(widget, NeedsHeight):
                dock.visibilityChanged.connect(lambda shown, d=dock: shown and QTimer.singleShot(
                    0, lambda: self.grow(d)))
        for spec in self.specs:
            if spec.in_front:
                self.docks[spec.id].raise_()
        self._size()

    def _size(self) -> None:
        """Initial sizes: each width on its own, the heights of one area shared out together."""
        for spec in self.specs:
            if spec.width:
                self._window.resizeDocks([self.docks[spec.id]], [spec.width], Qt.Orientation.Horizontal)
        areas: dict[Qt.DockWidgetArea, list[PanelSpec]] = {}
        for spec in self.specs:
            if spec.height:
                areas.setdefault(spec.area, []).append(spec)
        for specs in areas.values():
            self._window.resizeDocks([self.docks[s.id] for s in specs], [s.height for s in specs],
                                     Qt.Orientation.Vertical)

    def grow(self, dock: QDockWidget) -> bool:
        """Give a shown dock whose panel wants a least height (:class:`NeedsHeight`) that height when it is
        lower, bounded by two thirds of the window; a dock the user made taller keeps its height (and
        the window's saved state remembers it)."""
        widget = dock.widget()
        if not isinstance(widget, NeedsHeight) or not dock.isVisible() or dock.isFloating():
            return False
        area = self._window.dockWidgetArea(dock)
        if area not in (Qt.DockWidgetArea.TopDockWidgetArea, Qt.DockWidgetArea.BottomDockWidgetArea):
            return False
        wanted = min(widget.wanted_height(), self._window.height() * 2 // 3)
        if dock.height() >= wanted:
            return False
        self._window.resizeDocks([dock], [wanted], Qt.Orientation.Vertical)
        return True

    def toggle_actions(self) -> list[QAction]:
        """Each dock's show/hide action, in registry order (for the View › Panels menu)."""
        return [dock.toggleViewAction() for dock in self.docks.values()]

    def reveal_for_selection(self) -> None:
        """Show the panels that asked to appear when a sentence is selected."""
        for spec in self.specs:
            dock = self.docks[spec.id]
            if spec.show_on_selection and not dock.isVisible():
                dock.show()

    def save(self) -> None:
        """Remember the visibility the specs asked for and flush panels that hold user text."""
        for spec in self.specs:
            if spec.remember_visible:
                self._settings.set_flag(_visible_flag(spec), self.docks[spec.id].isVisible())
        for widget in self.panels.values():
            if isinstance(widget, Flushable):
                widget.flush()
