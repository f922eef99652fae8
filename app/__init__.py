"""Rhetorica's faces: the ``rhetorica`` command line and the PySide6 GUI (``app.gui``)."""
