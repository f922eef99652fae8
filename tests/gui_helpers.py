"""Helpers for GUI tests: an isolated user folder, a model bundle, a window that cleans up."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.paths import resources_dir

TIMEOUT_MS = 240_000  # labelling a paper on a busy 2-core machine


def model_bundle(tmp_factory: pytest.TempPathFactory) -> Path:
    """``$RHETORICA_TEST_BUNDLE``, else the shipped model when it is there, else the tiny test bundle."""
    override = os.environ.get("RHETORICA_TEST_BUNDLE")
    if override:
        return Path(override)
    shipped = resources_dir() / "models" / "default"
    if (shipped / "manifest.json").is_file():
        return shipped
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_factory.mktemp("gui-model") / "bundle")


def open_window(qtbot, model: Path | str | None, **kwargs) -> Iterator:  # type: ignore[no-untyped-def]
    from app.gui.main_window import MainWindow
    from app.gui.workers import thread_pool

    window = MainWindow(model_path=str(model) if model else None, **kwargs)
    qtbot.addWidget(window)
    window.resize(1300, 900)
    window.show()
    qtbot.waitExposed(window)
    try:
        yield window
    finally:
        window.close()
        thread_pool().waitForDone(20_000)
        from PySide6.QtWidgets import QApplication

        QApplication.processEvents()  # deliver the jobs' last queued signals while the window still exists
