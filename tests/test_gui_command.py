"""`rhetorica gui --screenshot` and the cold-start measurement, run as real subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from core.paths import sample_paper_path
from tests.gui_helpers import model_bundle


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return model_bundle(tmp_path_factory)


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "RHETORICA_HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}


def test_screenshot_command(tmp_path: Path, bundle: Path) -> None:
    from PySide6.QtGui import QImage

    out = tmp_path / "shot.png"
    draft = tmp_path / "draft.txt"
    draft.write_text("We propose a new method. Results show that it works well.", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "app", "gui", str(sample_paper_path()), "--model", str(bundle),
         "--screenshot", str(out), "--draft", str(draft), "--select", "3", "--size", "1200x800"],
        env=_env(tmp_path / "home"), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "screenshot saved" in proc.stdout and "timed out" not in proc.stdout
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1200, 800)


def test_bad_size_is_a_one_line_error(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "app", "gui", "--size", "big"], env=_env(tmp_path),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.startswith("rhetorica: error: --size")


def test_cold_start_probe(tmp_path: Path) -> None:
    from app.gui.bench import cold_start

    (run,) = cold_start(1, env=_env(tmp_path), pdf=str(sample_paper_path()))
    # Both marks come back, in order (the window is painted before the PDF's first page); how
    # fast is `rhetorica bench gui`'s business (docs/benchmarks.md), not a unit test's.
    assert set(run) == {"window_s", "first_page_s"}
    assert 0 < run["window_s"] <= run["first_page_s"]
