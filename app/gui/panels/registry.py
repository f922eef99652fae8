"""The panel registry: dock panels declare themselves here instead of being wired into the window.

A panel module calls :func:`register_panel` with a :class:`PanelSpec` at import time; the main
window builds one dock per registered spec (in ``order``), adds its toggle action to the View menu
(with the spec's shortcut) and hands the factory the shared :class:`~app.gui.session.Session`.
Later features (phrasing suggestions, two-paper alignment, graphical abstract, training) add a
module and a ``register_panel`` call; nothing in the main window changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.session import Session

Area = Qt.DockWidgetArea


@dataclass(frozen=True)
class PanelSpec:
    id: str  # stable object name (saved window state uses it)
    title: str
    factory: Callable[[Session], QWidget]
    area: Area = Area.RightDockWidgetArea
    order: int = 100
    shortcut: str = ""  # toggles the panel
    visible: bool = True  # shown on first start
    description: str = ""
    tab_with: str = ""  # id of a panel to tabify with
    in_front: bool = False  # the visible tab when tabified with others
    width: int = 0  # initial width in pixels (left/right areas); 0 = Qt's choice
    height: int = 0  # initial height in pixels, shared out among the area's panels that set one
    remember_visible: bool = False  # shown or hidden as the user left it (overrides ``visible``)
    show_on_selection: bool = False  # shown when the user selects a sentence


_REGISTRY: dict[str, PanelSpec] = {}


def register_panel(spec: PanelSpec) -> PanelSpec:
    """Add (or replace) a panel; returns the spec so it can be used as a module constant."""
    _REGISTRY[spec.id] = spec
    return spec


def unregister_panel(panel_id: str) -> None:
    _REGISTRY.pop(panel_id, None)


def panel_specs() -> list[PanelSpec]:
    return sorted(_REGISTRY.values(), key=lambda s: (s.order, s.id))
