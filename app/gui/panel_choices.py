"""The choices made in panels, remembered from one session to the next: a panel marks the controls whose
value is a choice (:func:`remember`: Outline's "Show", the Suggestions filters, the Search facet and
count, ...) and :class:`~app.gui.docks.PanelDocks` saves them with the window's settings when it closes
and puts them back when the panels are made; the legend's hidden roles too.

A value that is no longer one of the control's (a function taken out of the taxonomy, a number out of
range, junk in a damaged settings file) leaves the control at its default."""

from __future__ import annotations

import json
import math
from typing import TypeVar

from PySide6.QtWidgets import QAbstractButton, QComboBox, QDoubleSpinBox, QSpinBox, QWidget

from app.gui.palette import RolePalette
from app.gui.settings import AppSettings
from core.taxonomy.labels import ROLES

REMEMBER = "rememberAs"  # the dynamic property holding a control's key
HIDDEN_ROLES = "overlay/hidden_roles"
Control = TypeVar("Control", bound=QWidget)


def remember(control: Control, key: str) -> Control:
    """Mark ``control`` (a combo box, a spin box or a check box) as a choice remembered under ``key``."""
    control.setProperty(REMEMBER, key)
    return control


def _key(panel_id: str, control: QWidget) -> str:
    return f"panels/{panel_id}/{control.property(REMEMBER)}"


def _controls(panel: QWidget) -> list[QWidget]:
    return [w for w in panel.findChildren(QWidget) if w.property(REMEMBER)]


def _value_of(control: QWidget) -> object:
    if isinstance(control, QComboBox):
        return control.currentText()
    if isinstance(control, (QSpinBox, QDoubleSpinBox)):
        return control.value()
    if isinstance(control, QAbstractButton):
        return control.isChecked()
    return None


def save_choices(settings: AppSettings, panel_id: str, panel: QWidget) -> None:
    """Store the values of ``panel``'s remembered controls."""
    for control in _controls(panel):
        value = _value_of(control)
        if value is not None:
            settings.q.setValue(_key(panel_id, control), value)


def _number(value: object) -> float | None:
    try:
        number = float(str(value).strip())
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _restore(control: QWidget, value: object) -> None:
    """Give ``control`` the stored ``value`` when it is one of its values (else leave it as it is)."""
    if isinstance(control, QComboBox):
        index = control.findText(value) if isinstance(value, str) else -1
        if index >= 0:
            control.setCurrentIndex(index)
    elif isinstance(control, (QSpinBox, QDoubleSpinBox)):
        number = _number(value)
        if number is not None and control.minimum() <= number <= control.maximum():
            if isinstance(control, QSpinBox):
                if number.is_integer():
                    control.setValue(int(number))
            else:
                control.setValue(number)
    elif isinstance(control, QAbstractButton) and control.isCheckable():
        text = str(value).lower() if isinstance(value, (str, bool)) else ""
        if text in ("true", "false"):
            control.setChecked(text == "true")


def restore_choices(settings: AppSettings, panel_id: str, panel: QWidget) -> None:
    """Put back the values stored for ``panel``'s remembered controls."""
    for control in _controls(panel):
        value = settings.q.value(_key(panel_id, control))
        if value is not None:
            _restore(control, value)


def save_hidden_roles(settings: AppSettings, palette: RolePalette) -> None:
    """Store the roles hidden in the legend."""
    settings.q.setValue(HIDDEN_ROLES, json.dumps([r for r in ROLES if not palette.is_visible(r)]))


def restore_hidden_roles(settings: AppSettings, palette: RolePalette) -> None:
    """Hide the roles stored as hidden (a damaged value hides none)."""
    try:
        hidden = json.loads(str(settings.q.value(HIDDEN_ROLES, "[]") or "[]"))
    except ValueError:
        return
    if isinstance(hidden, list):
        for role in ROLES:
            palette.set_visible(role, role not in hidden)
