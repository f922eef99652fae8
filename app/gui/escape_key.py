"""Esc is the window's "Cancel running jobs", except where the focused widget has a meaning of its own
for the key: a text box being typed in (the draft, a filter or search box, an editable box or spin box),
or a widget that says so with the dynamic property ``ESC_IS_LOCAL`` (set on it or on a parent, e.g. a
panel whose Esc closes something of its own). There the key stays with the widget and the window's jobs
go on: typing in the draft and pressing Esc never stops the paper's analysis.

:func:`guard_escape` installs the check on the window and its docks (a floating dock is a window of its
own, where the key's ``ShortcutOverride`` stops): accepting that event hands the key press to the
focused widget instead of the shortcut."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

ESC_IS_LOCAL = "escIsLocal"  # a widget (or parent) with this property true keeps Esc for itself


def _typed_in(widget: QWidget) -> bool:
    """A text box the author types in (a read-only text is not)."""
    if isinstance(widget, (QLineEdit, QPlainTextEdit, QTextEdit)):
        return not widget.isReadOnly()
    if isinstance(widget, QAbstractSpinBox):
        return not widget.isReadOnly()
    return isinstance(widget, QComboBox) and widget.isEditable()


def esc_is_local(widget: QWidget | None) -> bool:
    """True when Esc pressed with ``widget`` focused belongs to it, not to the window's Cancel."""
    if widget is None:
        return False
    if _typed_in(widget):
        return True
    while widget is not None:
        if widget.property(ESC_IS_LOCAL):
            return True
        widget = widget.parentWidget()
    return False


def is_plain_escape(event: QEvent) -> bool:
    return (isinstance(event, QKeyEvent) and event.key() == Qt.Key.Key_Escape
            and event.modifiers() in (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier))


class EscapeGuard(QObject):
    """Keeps Esc with a focused widget that has a meaning for it (:func:`esc_is_local`)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and is_plain_escape(event) \
                and esc_is_local(QApplication.focusWidget()):
            event.accept()  # the key press goes to the focused widget; the shortcut does not fire
            return True
        return False


def guard_escape(window: QWidget, others: Iterable[QWidget] = ()) -> EscapeGuard:
    """Install one :class:`EscapeGuard` (owned by ``window``) on ``window`` and ``others`` (its docks)."""
    guard = EscapeGuard(window)
    for widget in (window, *others):
        widget.installEventFilter(guard)
    return guard
