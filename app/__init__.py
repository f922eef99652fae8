"""Rhetorica's faces: the ``rhetorica`` command line and the PySide6 GUI (``app.gui``)."""

from core.privacy import disable_runtime_telemetry

disable_runtime_telemetry()  # before any command imports onnxruntime (core/privacy.py)
