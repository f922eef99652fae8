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
        from PySide6.QtCore import QTimer

        for timer in window.findChildren(QTimer):  # a debounce (the draft's labelling, its save) must
            timer.stop()  # not fire in the next test and start a job there
        thread_pool().waitForDone(20_000)
        from PySide6.QtWidgets import QApplication

        QApplication.processEvents()  # deliver the jobs' last queued signals while the window still exists


def wait_released(qtbot, worker, timeout: int = TIMEOUT_MS) -> None:  # type: ignore[no-untyped-def]
    """Wait until a worker that is already running has finished and its signals have been delivered.

    ``qtbot.waitSignal(worker.finished)`` entered after ``start()`` can miss a short job: a signal
    emitted on the pool thread before the connection exists is never seen.  The UI thread lets go of a
    worker (``live_workers``) only after its ``finished`` slots ran, so this cannot miss it."""
    from app.gui.workers import live_workers

    qtbot.waitUntil(lambda: all(w is not worker for w in live_workers()), timeout=timeout)


def function_bundle(tmp_factory: pytest.TempPathFactory, name: str) -> Path:
    """The tiny test bundle with a function head whose every best function is shown (threshold 0)."""
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_factory.mktemp(name) / "bundle", functions=True, function_threshold=0.0)


def own_user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user folder of the test's own (``tmp_path/home``) whose phrase corpus is only one the test puts
    there (never the shipped pack) and whose library is ``tmp_path/my-library`` (returned)."""
    import core.paths

    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(core.paths, "library_dir", lambda: tmp_path / "my-library")
    monkeypatch.setattr(core.paths, "corpus_dir", lambda: tmp_path / "home" / "corpus")
    return tmp_path / "my-library"


def show_panel(qtbot, panel_class: type, model: Path | str, size: tuple[int, int],  # type: ignore[no-untyped-def]
               paper: object | None = None, wait_ms: int = 20_000) -> Iterator:
    """One panel on a session of its own (model loaded on one thread; ``paper`` as the open paper),
    shown; its jobs are cancelled and waited for afterwards."""
    from app.gui.job_tracker import JobTracker
    from app.gui.model_holder import ModelHolder, ModelOptions
    from app.gui.palette import RolePalette
    from app.gui.session import Session
    from app.gui.workers import thread_pool

    tracker = JobTracker()
    session = Session(tracker, ModelHolder(tracker, ModelOptions(path=str(model), device="cpu", threads=1)),
                      RolePalette())
    if paper is not None:
        session.paper = paper
    panel = panel_class(session)
    qtbot.addWidget(panel)
    panel.resize(*size)
    panel.show()
    qtbot.waitExposed(panel)
    try:
        yield panel
    finally:
        tracker.cancel_all()
        thread_pool().waitForDone(wait_ms)


def no_shipped_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Make the shipped model missing too, so a missing chosen bundle leaves the app with no model
    at all (the model holder otherwise falls back to the shipped one)."""
    import models.bundle

    monkeypatch.setattr(models.bundle, "default_bundle_path", lambda: tmp_path / "no-shipped-bundle")


DRAFT_A = "# Introduction\n\nWe study how authors write.\n"
DRAFT_B = "# Results\n\nThe yield rose by 12%.\n"


def two_draft_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """``a.md`` and ``b.md`` (DRAFT_A, DRAFT_B) in ``tmp_path``, with a user folder of the test's own."""
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    a.write_text(DRAFT_A, encoding="utf-8")
    b.write_text(DRAFT_B, encoding="utf-8")
    return a, b
