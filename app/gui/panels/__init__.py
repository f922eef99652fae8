"""Dock panels.  Each lives in its own module and registers itself (see :mod:`.registry`)."""

from __future__ import annotations

import importlib

from app.gui.panels.registry import PanelSpec, panel_specs, register_panel, unregister_panel

BUILTIN_PANEL_MODULES = (
    "app.gui.panels.outline",
    "app.gui.panels.inspector",
    "app.gui.panels.profile",
    "app.gui.panels.figures",
    "app.gui.panels.draft",
    "app.gui.panels.suggestions",
    "app.gui.panels.library",
    "app.gui.panels.alignment",
    "app.gui.panels.search",
    "app.gui.panels.graphical_abstract",
)


def load_builtin_panels() -> list[PanelSpec]:
    """Import the built-in panel modules (each registers itself) and return every spec."""
    for name in BUILTIN_PANEL_MODULES:
        importlib.import_module(name)
    return panel_specs()


def builtin_panel_ids() -> list[str]:
    """The id of every registered panel, in menu order (for ``rhetorica gui --show-panel``)."""
    return [spec.id for spec in load_builtin_panels()]


__all__ = ["PanelSpec", "builtin_panel_ids", "load_builtin_panels", "panel_specs", "register_panel",
           "unregister_panel"]
