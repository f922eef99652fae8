"""Shared pytest helpers.  Append carefully: every engineer uses this file."""

from __future__ import annotations

import os
from pathlib import Path

# Qt tests run without a display (pytest-qt); set before anything imports Qt.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from core.paths import shared_dir

SHARED = shared_dir()


def shared_path(*parts: str) -> Path:
    """A path under ``/work/shared`` (``../shared``); skips the test when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {path} (set RHETORICA_SHARED)")
    return path


@pytest.fixture
def shared() -> Path:
    """The shared data folder; the test is skipped when it is absent."""
    return shared_path()


requires_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared data folder absent: {SHARED}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``@pytest.mark.shared`` are skipped cleanly when the shared folder is absent."""
    if SHARED.is_dir():
        return
    skip = pytest.mark.skip(reason=f"shared data folder absent: {SHARED} (set RHETORICA_SHARED)")
    for item in items:
        if "shared" in item.keywords:
            item.add_marker(skip)
