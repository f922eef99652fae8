"""A lambda connected to a session signal does nothing once its widget is deleted (app.gui.widgets)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")


def test_a_guarded_slot_stops_when_its_widget_is_deleted(qtbot) -> None:  # type: ignore[no-untyped-def]
    import shiboken6
    from PySide6.QtCore import QObject, Signal
    from PySide6.QtWidgets import QLabel

    from app.gui.widgets import while_alive

    class Source(QObject):
        ready = Signal(object)

    source, label, seen = Source(), QLabel(), []
    source.ready.connect(while_alive(label, lambda value: (seen.append(value), label.setText(str(value)))))
    source.ready.emit(1)
    shiboken6.delete(label)
    source.ready.emit(2)  # unguarded, label.setText would raise "Internal C++ object … already deleted"
    assert seen == [1]
