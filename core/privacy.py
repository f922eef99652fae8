"""Private by construction: nothing Rhetorica runs may send anything anywhere.

onnxruntime's official builds (1.29 on) send usage telemetry to Microsoft on Linux and macOS too: a
lookup of ``mobile.events.data.microsoft.com`` from its native code was caught by the network test
(docs/reliability.md, "Privacy"). ``ORT_DISABLE_TELEMETRY=1``, set before onnxruntime starts, turns it
off completely (no uploader, no device id, no offline cache). The ``models`` and ``app`` packages call
:func:`disable_runtime_telemetry` when they are imported, before anything imports onnxruntime; child
processes inherit the variable.
"""

from __future__ import annotations

import os

TELEMETRY_SWITCHES = {"ORT_DISABLE_TELEMETRY": "1"}


def disable_runtime_telemetry() -> None:
    """Set the switches that turn off third-party runtime telemetry (always: a user cannot opt in)."""
    os.environ.update(TELEMETRY_SWITCHES)
