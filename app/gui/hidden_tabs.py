"""Tab and Shift+Tab skip what the user cannot see: the widgets of a panel behind another tab of its
group (Qt keeps such a dock "visible", moved out of the window) and the tab bars Qt keeps out of the window.

Qt's focus chain runs through them, so the keyboard focus vanished into the Figures list behind the
Rhetorical profile. :class:`SkipHiddenTabs` follows the application's focus changes: once the layout has
settled (a panel brought to the front and focused at once is in the window by then), a focus that went
to a widget out of the window moves on along the chain, in the direction the user was going, to the
next widget on screen that takes the Tab key."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMainWindow, QWidget

MAX_HOPS = 500  # widgets tried along the focus chain (it is a ring through the whole window)


def out_of_window(window: QMainWindow, widget: QWidget) -> bool:
    """True when ``widget`` lies in a part of ``window`` placed out of it (a dock behind another tab, an
    unused tab bar): its ancestor that is a direct child of the window is outside the window's rect."""
    part: QWidget | None = widget
    while part is not None and part.parentWidget() is not window:
        part = part.parentWidget()
    if part is None or part.isWindow():  # another window, or a floating dock: its own
        return False
    return not window.rect().intersects(part.geometry())


def _takes_tab(widget: QWidget) -> bool:
    return (widget.isVisible() and widget.isEnabled()
            and bool(widget.focusPolicy().value & Qt.FocusPolicy.TabFocus.value))


class SkipHiddenTabs(QObject):
    """Moves the keyboard focus on from a widget of ``window`` that is out of the window."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self._window = window
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_focus_changed)

    def _on_focus_changed(self, _old: QWidget | None, now: QWidget | None) -> None:
        if now is not None and now.window() is self._window:
            backwards = bool(QGuiApplication.keyboardModifiers() & Qt.KeyboardModifier.ShiftModifier)
            QTimer.singleShot(0, self, lambda: self.move_on(now, backwards))

    def move_on(self, widget: QWidget, backwards: bool = False) -> QWidget | None:
        """When ``widget`` still has the focus and is out of the window, give the focus to the next widget
        on screen along the chain (the previous with ``backwards``); returns it (None: nothing moved)."""
        window = self._window
        if QApplication.focusWidget() is not widget or not out_of_window(window, widget):
            return None
        step = QWidget.previousInFocusChain if backwards else QWidget.nextInFocusChain
        candidate = step(widget)
        for _ in range(MAX_HOPS):
            if candidate is None or candidate is widget:
                return None
            if candidate.window() is window and _takes_tab(candidate) \
                    and not out_of_window(window, candidate):
                reason = Qt.FocusReason.BacktabFocusReason if backwards else Qt.FocusReason.TabFocusReason
                candidate.setFocus(reason)
                return candidate
            candidate = step(candidate)
        return None
