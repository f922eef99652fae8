"""Guard against C extensions that drop references to ``None``/``True``/``False`` (Python < 3.12).

Measured here (Python 3.11.7): PySide6 6.12.0 returns ``None`` from every void method and ``True``
from ``Signal.emit``/``disconnect`` without a new reference, and pymupdf 1.28.2's
``Page.get_text("text")``/``get_textbox`` do the same with ``None`` (fixed upstream in PyMuPDF PR
#5043).  Each call lowers the singleton's refcount by one; after ~10,000 calls the interpreter
aborts with "Fatal Python error: none_dealloc: deallocating None".  Python 3.12 made these objects
immortal (PEP 683) so the bug is invisible there.

:func:`immortalize_singletons` does what 3.12 does: it raises the three refcounts by 2**40 so a
leak can never reach zero.  Call it once at start-up, before threads start (the GUI and its child
processes do; long batch jobs that call pymupdf's text extraction many times should too).
"""

from __future__ import annotations

import ctypes
import sys

_BOOST = 1 << 40
_done = False


def immortalize_singletons() -> bool:
    """Make None/True/False effectively immortal on Python < 3.12; True if it changed anything."""
    global _done
    if _done or sys.version_info >= (3, 12) or not hasattr(sys, "getrefcount"):
        return False
    for obj in (None, True, False):
        ctypes.c_ssize_t.from_address(id(obj)).value += _BOOST
    _done = True
    return True
