"""The PySide6 desktop application (the only package that imports Qt).

Layout (napari-style: ``core`` is the model, this package adapts it for views):

- :mod:`app.gui.workers` — the one background-job mechanism (wraps a ``JobContext`` callable).
- :mod:`app.gui.session` — the open paper, its parse/analysis state and the model, as Qt signals.
- :mod:`app.gui.page_view` — the page view, composed of :mod:`~app.gui.page_layout` (pages, zoom,
  navigation), :mod:`~app.gui.page_rendering` (lazy rendering, pixmap cache),
  :mod:`~app.gui.sentence_overlays` (role overlays) and :mod:`~app.gui.text_selection`.
- :mod:`app.gui.panels` — dock panels, each its own module, added through a registry.
- :mod:`app.gui.main_window` — menus, toolbar, status bar, banners, empty state.
"""
