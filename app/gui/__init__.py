"""The PySide6 desktop application (the only package that imports Qt).

Layout (napari-style: ``core`` is the model, this package adapts it for views):

- :mod:`app.gui.workers` — the one background-job mechanism (wraps a ``JobContext`` callable).
- :mod:`app.gui.session` — the open paper, its parse/analysis state and the model, as Qt signals.
- :mod:`app.gui.page_view` — rendered pages, zoom, text selection, role overlays.
- :mod:`app.gui.panels` — dock panels, each its own module, added through a registry.
- :mod:`app.gui.main_window` — menus, toolbar, status bar, banners, empty state.
"""
