"""The dock panels of the main window, built from the panel registry and nothing else.

Each registered :class:`~app.gui.panels.PanelSpec` becomes one dock: its placement, initial size,
shortcut, whether it starts in front of its tab group, remembers its visibility, or shows itself
when a sentence is selected all come from the spec, so adding a panel is one module with one
``register_panel`` call (plus its name in ``BUILTIN_PANEL_MODULES``): no change here or in the
window, and no panel knows about another.

A panel's shortcut (or its View › Panels entry) that shows it also brings it in front of its tab group and
gives it the keyboard (:func:`focus_target`: its focus proxy, else its main input); pressed for a panel
hidden behind another tab, it brings that panel to the front instead of hiding it.

The docks also keep the window usable: a panel shown opens tall enough to show its content (the
spec's ``min_height`` or the panel's :class:`NeedsHeight`) while the page keeps its share of the height
however many panels are open under it (:mod:`app.gui.dock_share`), a panel beside the page never makes its
column wide because of a long combo-box entry, and a remembered layout is
sanitised on start (:meth:`PanelDocks.sanitise`): panels remembered from several sessions do not pile
up, and a floating dock left off screen or at an absurd size comes back to its place.

No panel makes the window wider than its screen: a combo box's long entry is elided (:func:`_relax_width`),
and the panels' rows of controls wrap (:mod:`app.gui.flow_layout`). Tab skips the panels hidden behind
another tab (:mod:`app.gui.hidden_tabs`). The choices made in the panels and the roles hidden in the
legend are remembered from one session to the next (:mod:`app.gui.panel_choices`).
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QRect, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QDockWidget,
    QLayout,
    QLineEdit,
    QMainWindow,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from app.gui.dock_share import UnderPageShare, tab_bar_height
from app.gui.hidden_tabs import SkipHiddenTabs
from app.gui.panel_choices import restore_choices, restore_hidden_roles, save_choices, save_hidden_roles
from app.gui.panels import PanelSpec, load_builtin_panels
from app.gui.panels.registry import Flushable, NeedsHeight
from app.gui.session import Session
from app.gui.settings import AppSettings

__all__ = ["Flushable", "NeedsHeight", "PanelDocks"]

SIDE_AREAS = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea)
COMBO_MIN_WIDTH = 80  # a combo box in a panel: at least this wide, its entries elided
COMBO_CHARS = 16  # ... and it asks for room for this many characters at most
MAX_SIDE_SHARE = 2 / 3  # a dock beside the page grown to show its content: at most this share of the height
DEFAULT_UNDER_HEIGHT = 260  # a panel under the page whose spec gives no height opens this tall
MIN_FLOAT_SIDE = 120  # a floating dock smaller than this (or larger than its screen) is re-docked


def _visible_flag(spec: PanelSpec) -> str:
    return f"{spec.id}_visible"


def _relax_width(widget: QWidget) -> None:
    """Let a panel be narrower than its combo boxes' longest entries: each asks for room for at most
    ``COMBO_CHARS`` characters, keeps at least ``COMBO_MIN_WIDTH`` and elides the rest (the popup still
    shows every entry in full); the panel's layouts measure again."""
    for combo in widget.findChildren(QComboBox):
        if combo.minimumSizeHint().width() > COMBO_MIN_WIDTH and combo.minimumWidth() == 0:
            longest = max((len(combo.itemText(i)) for i in range(combo.count())), default=0)
            combo.setMinimumContentsLength(max(4, min(COMBO_CHARS, longest)))
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumWidth(COMBO_MIN_WIDTH)
    for child in widget.findChildren(QWidget):  # (a layout measured before keeps its old sizes)
        child.updateGeometry()
    for layout in widget.findChildren(QLayout):
        layout.invalidate()
    widget.updateGeometry()


def _title_height(dock: QDockWidget) -> int:
    """The height of a laid-out dock above its panel (its title bar)."""
    widget = dock.widget()
    return max(0, dock.height() - widget.height()) if widget is not None else 0


def _focus_rank(widget: QWidget) -> int:
    """0 for a text box one can type in (not a spin box's or a combo box's own), 1 for a list or a table,
    2 for anything else."""
    if isinstance(widget, (QLineEdit, QPlainTextEdit, QTextEdit)) and not widget.isReadOnly() \
            and not isinstance(widget.parentWidget(), (QAbstractSpinBox, QComboBox)):
        return 0
    return 1 if isinstance(widget, QAbstractItemView) else 2


def focus_target(panel: QWidget) -> QWidget | None:
    """Where the keyboard goes when ``panel`` is brought up by its shortcut: its focus proxy when it has a
    usable one, else (in tab order, of its shown and enabled widgets that take the keyboard) its first
    text box (the draft's editor, a filter box), else its first list or table, else its first widget
    (a button, a combo box); None when nothing in it takes the keyboard."""
    proxy = panel.focusProxy()
    if proxy is not None and proxy.isVisible() and proxy.isEnabled():
        return proxy
    found: list[QWidget] = []
    widget = panel.nextInFocusChain()
    while widget is not None and widget is not panel:  # the focus chain is a ring through the window
        if panel.isAncestorOf(widget) and widget.isVisible() and widget.isEnabled() \
                and widget.focusPolicy().value & Qt.FocusPolicy.TabFocus.value:
            found.append(widget)
        widget = widget.nextInFocusChain()
    return min(found, key=_focus_rank, default=None)  # min keeps the first of equal rank


def on_some_screen(rect: QRect, least: int = MIN_FLOAT_SIDE) -> bool:
    """True when ``rect`` (global coordinates) is of a sane size and its title bar is on a screen."""
    if rect.width() < least or rect.height() < least:
        return False
    title = QRect(rect.left(), rect.top(), rect.width(), min(rect.height(), 30))
    for screen in QGuiApplication.screens():
        area = screen.availableGeometry()
        if rect.width() <= area.width() * 1.05 and rect.height() <= area.height() * 1.05 \
                and area.intersects(title):
            return True
    return False


class PanelDocks:
    """Builds one dock per registered panel and keeps the few promises a spec can ask for."""

    def __init__(self, window: QMainWindow, session: Session, settings: AppSettings) -> None:
        self._window = window
        self._session = session
        self._settings = settings
        self.specs: list[PanelSpec] = []
        self.panels: dict[str, QWidget] = {}
        self.docks: dict[str, QDockWidget] = {}
        self._shown_order: list[str] = settings.panels_shown_order  # least recently shown first
        self._behind: set[str] = set()  # panels shown but behind another tab of their group
        self._share = UnderPageShare(window)  # a window made lower keeps the page's share of the height
        self._skip = SkipHiddenTabs(window)  # Tab does not land in a panel behind another tab

    def build(self) -> None:
        """Create, place, tabify and size the docks of every registered panel."""
        window = self._window
        window.setDockNestingEnabled(True)
        # the right column runs the window's full height: a panel under the page (the draft, the
        # graphical abstract) never squeezes the inspector and the suggestions beside it
        window.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.specs = load_builtin_panels()
        restore_hidden_roles(self._settings, self._session.palette)
        for spec in self.specs:
            widget = spec.factory(self._session)
            restore_choices(self._settings, spec.id, widget)
            dock = QDockWidget(spec.title, window)
            dock.setObjectName(f"dock-{spec.id}")
            dock.setWidget(widget)
            _relax_width(widget)  # no combo box's long entry makes a panel (and the window) wide
            window.addDockWidget(spec.area, dock)
            if spec.tab_with and spec.tab_with in self.docks:
                window.tabifyDockWidget(self.docks[spec.tab_with], dock)
            toggle = dock.toggleViewAction()
            if spec.shortcut:
                toggle.setShortcut(QKeySequence(spec.shortcut))
            toggle.setText(f"{spec.title} panel")
            toggle.triggered.connect(lambda on, i=spec.id: self._on_toggled(i, on))
            window.addAction(toggle)
            dock.setVisible(self._settings.flag(_visible_flag(spec), spec.visible) if spec.remember_visible
                            else spec.visible)
            self.panels[spec.id] = widget
            self.docks[spec.id] = dock
            dock.visibilityChanged.connect(partial(self._on_visibility, spec))
        for spec in self.specs:
            if spec.in_front:
                self.docks[spec.id].raise_()

    def spec(self, panel_id: str) -> PanelSpec:
        return next(s for s in self.specs if s.id == panel_id)

    def apply_initial_sizes(self) -> None:
        """The specs' sizes (for a window with no remembered layout; call it once the window is laid
        out: sizes given before are lost to the docks' size hints): each width on its own, the heights
        of one area shared out together, then each shown dock grown to show its content."""
        for spec in self.specs:
            if spec.width:
                self._window.resizeDocks([self.docks[spec.id]], [spec.width], Qt.Orientation.Horizontal)
        areas: dict[Qt.DockWidgetArea, list[PanelSpec]] = {}
        for spec in self.specs:  # of a tab group, only the tab in front has a say
            if spec.height and self._in_front(self.docks[spec.id]):
                areas.setdefault(spec.area, []).append(spec)
        for area, specs in areas.items():
            docks = [self.docks[s.id] for s in specs]
            heights = [self.wanted_height(d) for d in docks]
            if area in SIDE_AREAS and len(docks) > 1:  # the column's height is fixed: the last gives way
                column = sum(d.height() for d in docks)
                heights[-1] = max(docks[-1].minimumSizeHint().height(), column - sum(heights[:-1]))
            self._window.resizeDocks(docks, heights, Qt.Orientation.Vertical)
        for dock in self.docks.values():
            self.grow(dock)

    def _in_front(self, dock: QDockWidget) -> bool:
        """Shown, and not a tab behind another (a hidden window counts its docks by "not hidden")."""
        if dock.isHidden():
            return False
        if not self._window.isVisible():
            return True
        return not dock.visibleRegion().isEmpty()

    def _on_toggled(self, panel_id: str, shown: bool) -> None:
        """A panel's shortcut or View-menu entry was used: a panel shown comes to the front with the
        keyboard in it. Qt's toggle has just hidden a panel that was behind another tab: it is shown
        again and brought to the front (the user asked to see it)."""
        dock = self.docks[panel_id]
        if not shown and panel_id in self._behind:
            dock.show()
            shown = True
        if shown:  # once it is laid out in its tab group
            QTimer.singleShot(0, lambda: self._share.fit_opened(dock, self._needy(dock)))
            QTimer.singleShot(0, partial(self.focus_panel, panel_id))

    def focus_panel(self, panel_id: str) -> QWidget | None:
        """Bring ``panel_id``'s dock in front of its tab group and give the keyboard to its
        :func:`focus_target`; returns that widget (None: nothing in the panel takes the keyboard)."""
        dock = self.docks[panel_id]
        dock.raise_()
        if dock.isFloating():
            dock.activateWindow()
        target = focus_target(self.panels[panel_id])
        if target is not None:
            target.setFocus(Qt.FocusReason.ShortcutFocusReason)
        return target

    def _on_visibility(self, spec: PanelSpec, shown: bool) -> None:
        if not self.docks[spec.id].isHidden():  # in front, or put behind another tab (not closed)
            (self._behind.discard if shown else self._behind.add)(spec.id)
        if shown:
            self._on_shown(spec)

    def _on_shown(self, spec: PanelSpec) -> None:
        if spec.id in self._shown_order:
            self._shown_order.remove(spec.id)
        self._shown_order.append(spec.id)
        if spec.height or spec.min_height or isinstance(self.panels[spec.id], NeedsHeight):
            QTimer.singleShot(0, partial(self._grow_in_front, self.docks[spec.id]))

    def _settle(self) -> None:
        """Apply the sizes and tab changes asked for earlier in this turn of the event loop."""
        layout = self._window.layout()
        if layout is not None:
            layout.activate()

    def _grow_in_front(self, dock: QDockWidget) -> None:
        """:meth:`grow`, unless another panel of its tab group was brought to the front meanwhile."""
        self._settle()
        if self._in_front(dock):
            self.grow(dock)

    def wanted_height(self, dock: QDockWidget) -> int:
        """The height that shows ``dock``'s content, whichever is most of: the spec's ``height`` (the
        panel's, under the dock's title bar; beside the page at least the panel's size hint, under it
        ``DEFAULT_UNDER_HEIGHT`` when the spec says nothing), its ``min_height``, and what the panel
        asks for (:class:`NeedsHeight`)."""
        widget = dock.widget()
        spec = next((s for s in self.specs if self.docks.get(s.id) is dock), None)
        asked = widget.wanted_height() if isinstance(widget, NeedsHeight) else 0
        if spec is None or widget is None:
            return asked
        height = spec.height
        if self._window.dockWidgetArea(dock) in SIDE_AREAS:  # at least what its layout needs at once
            height = max(height, widget.sizeHint().height())
        elif not (height or spec.min_height or asked):  # under the page, a panel that says nothing
            height = DEFAULT_UNDER_HEIGHT
        return max(height + _title_height(dock) if height else 0, spec.min_height, asked)

    def grow(self, dock: QDockWidget) -> bool:
        """Give a shown dock the height that shows its content (:meth:`wanted_height`) when it is lower,
        bounded by two thirds of the window's height beside the page and, under it, by the share of
        the page's :class:`~app.gui.dock_share.UnderPageShare` (tab bar included: the page keeps a readable
        height however many panels share the tab group); a dock the user made taller keeps its height
        (and the window's saved state remembers it). Beside the page the dock takes the height from the
        docks above and below it in its column; under the page, from the page."""
        if not dock.isVisible() or dock.isFloating():
            return False
        beside = self._window.dockWidgetArea(dock) in SIDE_AREAS
        wanted = self._bounded_height(dock, beside)
        if wanted <= 0 or dock.height() >= wanted:
            return False
        self._resize_in_column(dock, wanted + tab_bar_height(self._window, dock), beside)
        # a tab bar laid out only now takes its height from the dock: top it up once the layout has run
        QTimer.singleShot(0, partial(self._top_up, dock, beside))
        return True

    def _bounded_height(self, dock: QDockWidget, beside: bool) -> int:
        wanted = self.wanted_height(dock)
        if beside:
            return min(wanted, int(self._window.height() * MAX_SIDE_SHARE))
        return self._share.cap(dock, wanted, self._needy(dock))

    def _needy(self, dock: QDockWidget) -> bool:
        """True when ``dock``'s panel says how tall its content is (the spec's ``min_height``, or
        :class:`NeedsHeight`)."""
        spec = next((s for s in self.specs if self.docks.get(s.id) is dock), None)
        return isinstance(dock.widget(), NeedsHeight) or (spec is not None and spec.min_height > 0)

    def _top_up(self, dock: QDockWidget, beside: bool) -> None:
        self._settle()  # sizes asked for in the same turn (two panels shown at once) applied now
        if not self._in_front(dock):  # another panel of its tab group came to the front meanwhile
            return
        wanted = self._bounded_height(dock, beside)
        if dock.height() < wanted - 2:
            self._resize_in_column(dock, wanted + tab_bar_height(self._window, dock), beside)

    def _resize_in_column(self, dock: QDockWidget, height: int, beside: bool) -> None:
        mates = self._column_mates(dock) if beside else []
        if not mates:
            self._window.resizeDocks([dock], [height], Qt.Orientation.Vertical)
            return
        # the column's height is fixed: the docks above and below give up the difference, in proportion,
        # but none below the height that shows its own content (nor below its least height)
        floors = [max(m.minimumSizeHint().height(), min(m.height(), self.wanted_height(m))) for m in mates]
        height = min(height, dock.height() + sum(m.height() - f for m, f in zip(mates, floors, strict=True)))
        if height <= dock.height():
            return
        spare = sum(m.height() for m in mates) - (height - dock.height())
        total = sum(m.height() for m in mates) or 1
        sizes = [max(f, m.height() * spare // total) for m, f in zip(mates, floors, strict=True)]
        self._window.resizeDocks([dock, *mates], [height, *sizes], Qt.Orientation.Vertical)

    def _column_mates(self, dock: QDockWidget) -> list[QDockWidget]:
        """The other docks on screen in ``dock``'s column (same area, overlapping it across; not the
        tabs behind it)."""
        area = self._window.dockWidgetArea(dock)
        behind = set(self._window.tabifiedDockWidgets(dock))
        span = dock.geometry()
        return [d for d in self.docks.values() if d is not dock and d not in behind and d.isVisible()
                and not d.isFloating() and self._window.dockWidgetArea(d) == area
                and not d.visibleRegion().isEmpty()
                and d.geometry().left() < span.right() and span.left() < d.geometry().right()]

    def show_panel(self, panel_id: str) -> QDockWidget:
        """Show ``panel_id``'s dock, then (on the next turn of the event loop, once the window is shown
        and its tab bars laid out: a tab raised before that stays behind) put it in front of its tab
        group at a height that shows its content."""
        dock = self.docks[panel_id]
        dock.show()

        def to_front() -> None:
            dock.raise_()
            self._share.fit_opened(dock, self._needy(dock))  # into a tab group taller than its share
            self.grow(dock)

        QTimer.singleShot(0, to_front)
        return dock

    def toggle_actions(self) -> list[QAction]:
        """Each dock's show/hide action, in registry order (for the View › Panels menu)."""
        return [dock.toggleViewAction() for dock in self.docks.values()]

    def reveal_for_selection(self) -> None:
        """Show the panels that asked to appear when a sentence is selected."""
        for spec in self.specs:
            dock = self.docks[spec.id]
            if spec.show_on_selection and not dock.isVisible():
                dock.show()

    # -- a remembered layout -----------------------------------------------------------------
    def sanitise(self) -> list[str]:
        """Make a restored layout usable; returns the ids of the panels it hid or re-docked.

        - A floating dock whose title bar is on no screen, or whose size is absurd (under
          ``MIN_FLOAT_SIDE`` or over its screen), goes back to its area.
        - Of the panels remembered as shown (``remember_visible``), at most one per dock area comes
          back: the one shown last; the others stay in View › Panels. Panels the spec shows anyway
          (``visible``) are not counted.
        """
        changed = [spec.id for spec in self.specs if self._redock_if_lost(spec)]
        remembered: dict[Qt.DockWidgetArea, list[PanelSpec]] = {}
        for spec in self.specs:
            dock = self.docks[spec.id]  # before the window is shown: "not hidden", not "visible"
            if spec.remember_visible and not spec.visible and not dock.isHidden() and not dock.isFloating():
                remembered.setdefault(self._window.dockWidgetArea(dock), []).append(spec)
        for specs in remembered.values():
            if len(specs) < 2:
                continue
            latest = max(specs, key=lambda s: self._recency(s.id))
            for spec in specs:
                if spec is not latest:
                    self.docks[spec.id].hide()
                    changed.append(spec.id)
        return changed

    def _recency(self, panel_id: str) -> int:
        return self._shown_order.index(panel_id) if panel_id in self._shown_order else -1

    def _redock_if_lost(self, spec: PanelSpec) -> bool:
        dock = self.docks[spec.id]
        if not dock.isFloating() or on_some_screen(dock.frameGeometry()):
            return False
        dock.setFloating(False)
        self._window.addDockWidget(spec.area, dock)
        return True

    def save(self) -> None:
        """Remember the visibility the specs asked for, which panels were shown last, the choices made in
        the panels and the legend (:mod:`app.gui.panel_choices`), and flush panels that hold user text."""
        for spec in self.specs:
            if spec.remember_visible:
                self._settings.set_flag(_visible_flag(spec), self.docks[spec.id].isVisible())
        self._settings.panels_shown_order = self._shown_order
        for panel_id, widget in self.panels.items():
            save_choices(self._settings, panel_id, widget)
        save_hidden_roles(self._settings, self._session.palette)
        for widget in self.panels.values():
            if isinstance(widget, Flushable):
                widget.flush()
