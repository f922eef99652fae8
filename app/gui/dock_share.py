"""How much of the window's height the docks under (or over) the page may take, so the page keeps a
readable share however many panels are open there.

Panels under the page share one tab group (the draft, the library, the graphical abstract...), and that
group has one height. The rules (:class:`UnderPageShare`, used by :class:`~app.gui.docks.PanelDocks`):

- a panel under the page grows to show its content up to ``MAX_UNDER_SHARE`` of the window's height,
  its tab bar included; a panel that says how tall its content is (a spec's ``min_height``, or
  :class:`NeedsHeight`, as the graphical abstract's row of thumbnails and reasons) up to
  ``MAX_NEEDY_UNDER_SHARE``. The page keeps the rest, less the menu, tool and status bars;
- a panel opened into a tab group taller than its share brings the group down to that share (a tab
  merely clicked changes nothing);
- a window made lower keeps its docks' share of the height, not their height in pixels;
- the share the user gives the docks by dragging the page's edge is theirs: above the cap, it becomes
  the cap (and the saved layout remembers the heights, as before)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabBar

UNDER_AREAS = (Qt.DockWidgetArea.BottomDockWidgetArea, Qt.DockWidgetArea.TopDockWidgetArea)
MAX_UNDER_SHARE = 0.40  # docks under (or over) the page, tab bar included: at most this share of the height
MAX_NEEDY_UNDER_SHARE = 0.48  # ... or this, for a panel whose content needs it (one row of GA cards)
TAB_BAR_GAP = 8  # a tab group's bar lies within this many pixels of its docks


def tab_bar_height(window: QMainWindow, dock: QDockWidget) -> int:
    """The height of the tab bar of ``dock``'s tab group (0 when the dock is not tabbed, or the bar is
    not laid out yet): the bar right below (or above) the dock and across it."""
    if dock.isFloating() or not window.tabifiedDockWidgets(dock):
        return 0
    span = dock.geometry()
    for bar in window.findChildren(QTabBar):
        if bar.parent() is not window or not bar.isVisible():
            continue
        rect = bar.geometry()
        across = rect.left() < span.right() and span.left() < rect.right()
        below = -2 <= rect.top() - span.bottom() <= TAB_BAR_GAP
        above = -2 <= span.top() - rect.bottom() <= TAB_BAR_GAP
        if across and (below or above):
            return rect.height()
    return 0


def under_page_docks(window: QMainWindow) -> list[QDockWidget]:
    """The docks on screen under or over the page (shown, docked, in front of their tab groups)."""
    return [d for d in window.findChildren(QDockWidget) if d.parent() is window and d.isVisible()
            and not d.isFloating() and window.dockWidgetArea(d) in UNDER_AREAS
            and not d.visibleRegion().isEmpty()]


def under_extent(window: QMainWindow, dock: QDockWidget) -> int:
    """The height ``dock`` takes from the page: its own and its tab bar's."""
    return dock.height() + tab_bar_height(window, dock)


def under_page_share(window: QMainWindow, height: int | None = None) -> float:
    """The share of the window's height (or of ``height``) the docks under and over the page take."""
    total = height if height is not None else window.height()
    if total <= 0:
        return 0.0
    by_area: dict[Qt.DockWidgetArea, int] = {}
    for dock in under_page_docks(window):
        area = window.dockWidgetArea(dock)
        by_area[area] = max(by_area.get(area, 0), under_extent(window, dock))
    return sum(by_area.values()) / total


class UnderPageShare(QObject):
    """The share of the window's height the docks under the page may take (see the module's rules),
    kept when a panel opens there (:meth:`cap`, :meth:`fit_opened`) and when the window is made lower
    (Qt keeps a dock's height in pixels and would take the whole difference from the page).

    ``chosen``: the share the user gave the docks under the page by dragging the separator, when it is
    above the cap (then it is the cap), else None."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self._window = window
        self._pressed: float | None = None  # the share when a mouse button went down on the window
        self.chosen: float | None = None
        window.installEventFilter(self)

    def limit(self, needy: bool) -> float:
        """The share a panel under the page may take (``needy``: its content says how tall it is)."""
        return max(MAX_NEEDY_UNDER_SHARE if needy else MAX_UNDER_SHARE, self.chosen or 0.0)

    def cap(self, dock: QDockWidget, wanted: int, needy: bool) -> int:
        """``wanted`` (the dock's own height, below its tab bar) bounded by the share it may take."""
        share = self.limit(needy)
        return min(wanted, int(self._window.height() * share) - tab_bar_height(self._window, dock))

    def fit_opened(self, dock: QDockWidget, needy: bool) -> bool:
        """A panel just opened under the page into a tab group taller than its share: the group comes
        down to that share (True when it did)."""
        window = self._window
        if not dock.isVisible() or dock.isFloating() or window.dockWidgetArea(dock) not in UNDER_AREAS:
            return False
        layout = window.layout()
        if layout is not None:  # sizes asked for earlier in this turn (another panel's) applied first
            layout.activate()
        limit = int(window.height() * self.limit(needy))
        if under_extent(window, dock) <= limit + 1:
            return False
        window.resizeDocks([dock], [limit], Qt.Orientation.Vertical)  # a tab group's size: bar included
        return True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is not self._window:
            return False
        kind = event.type()
        if kind == QEvent.Type.Resize and isinstance(event, QResizeEvent):
            # the layout has not applied the new size yet: the docks still have their old heights
            old, new = event.oldSize().height(), event.size().height()
            if 0 < new < old:
                share = max(MAX_UNDER_SHARE, under_page_share(self._window, old))
                QTimer.singleShot(0, lambda s=share: self.keep_share(s))
        elif kind == QEvent.Type.MouseButtonPress:  # on the window itself: a separator between docks
            self._pressed = under_page_share(self._window)
        elif kind == QEvent.Type.MouseButtonRelease and self._pressed is not None:
            share = under_page_share(self._window)
            if abs(share - self._pressed) > 0.005:  # the user moved the page's edge
                self.chosen = share if share > MAX_UNDER_SHARE else None
            self._pressed = None
        return False

    def keep_share(self, share: float) -> None:
        """Lower the docks under (and over) the page that take more than ``share`` of the height."""
        window = self._window
        limit = int(window.height() * share)
        over = [d for d in under_page_docks(window) if under_extent(window, d) > limit + 1]
        if over:
            # (a tabbed dock's size given to ``resizeDocks`` is its tab group's: tab bar included)
            heights = [max(d.minimumSizeHint().height() + tab_bar_height(window, d), limit) for d in over]
            window.resizeDocks(over, heights, Qt.Orientation.Vertical)
