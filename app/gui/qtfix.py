"""Process-wide guard for the GUI: see :mod:`core.pyfix` (PySide6 6.12.0 and pymupdf 1.28.2 drop
references to None/True/False on Python 3.11, which aborts the process after ~10k Qt calls).

Imported by ``app.gui.workers`` and ``app.gui.palette``, i.e. before any widget exists.
"""

from __future__ import annotations

from core.pyfix import immortalize_singletons

immortalize_singletons()
