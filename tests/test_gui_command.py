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


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_screenshot_never_touches_the_users_draft_or_layout(tmp_path: Path, bundle: Path) -> None:
    """The reported bug: ``--screenshot --draft FILE`` overwrote the saved draft and window layout."""
    home = tmp_path / "home"
    (home / "drafts").mkdir(parents=True)
    (home / "drafts" / "current.txt").write_text("My own unfinished introduction.", encoding="utf-8")
    (home / "settings.ini").write_text(
        "[flags]\nlibrary_visible=true\n\n[view]\nzoom=1.5\n\n[window]\npanels_shown=\"[\\\"library\\\"]\"\n",
        encoding="utf-8")
    before = _snapshot(home)
    draft = tmp_path / "draft.txt"
    draft.write_text("We propose a new method. Results show that it works well.", encoding="utf-8")
    out = tmp_path / "shot.png"
    proc = subprocess.run(
        [sys.executable, "-m", "app", "gui", str(sample_paper_path()), "--model", str(bundle),
         "--screenshot", str(out), "--draft", str(draft), "--show-panel", "suggestions",
         "--size", "1300x850"],
        env=_env(home), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert out.is_file()
    assert _snapshot(home) == before  # not one byte of the user's folder changed, nothing added


def test_compare_opens_the_alignment_and_its_side_by_side_window(tmp_path: Path, bundle: Path) -> None:
    from PySide6.QtGui import QImage

    out = tmp_path / "aligned.png"
    proc = subprocess.run(
        [sys.executable, "-m", "app", "gui", str(sample_paper_path()), "--model", str(bundle),
         "--compare", str(sample_paper_path()), "--side-by-side", "--screenshot", str(out),
         "--size", "1300x850"],
        env=_env(tmp_path / "home"), capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-2000:]
    pages = tmp_path / "aligned-side-by-side.png"
    assert f"screenshot saved: {out}" in proc.stdout and f"screenshot saved: {pages}" in proc.stdout
    assert "timed out" not in proc.stdout
    assert not QImage(str(out)).isNull() and not QImage(str(pages)).isNull()


def test_help_lists_every_registered_panel_and_show_panel_takes_each(tmp_path: Path) -> None:
    from app.cli import build_parser
    from app.gui.panels import load_builtin_panels

    ids = [spec.id for spec in load_builtin_panels()]
    assert len(ids) >= 10
    proc = subprocess.run([sys.executable, "-m", "app", "gui", "--help"], env=_env(tmp_path),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    listed = " ".join(proc.stdout.split())  # argparse wraps the list
    assert all(panel in listed for panel in ids), listed
    parser = build_parser()
    args = parser.parse_args(["gui", *(a for panel in ids for a in ("--show-panel", panel))])
    assert args.show_panel == ids


@pytest.mark.parametrize("argv, message", [
    (["--show-panel", "sidebar"], "no panel 'sidebar'"),
    (["--select", "0", "x.pdf"], "out of range"),  # counted from 1, as the window counts
    (["--compare", "{sample}"], "--compare B.pdf needs a paper"),
    (["{sample}", "--side-by-side"], "--side-by-side shows an alignment"),
    (["{sample}", "--compare", "no-such.pdf"], "no such file"),
])
def test_bad_gui_flags_are_one_line_errors(tmp_path: Path, argv: list[str], message: str) -> None:
    argv = [a.replace("{sample}", str(sample_paper_path())) for a in argv]
    proc = subprocess.run([sys.executable, "-m", "app", "gui", *argv], env=_env(tmp_path),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.startswith("rhetorica: error:"), proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1 and not proc.stdout


def test_select_past_the_last_sentence_is_refused_and_nothing_is_saved(tmp_path: Path, bundle: Path) -> None:
    out = tmp_path / "shot.png"
    proc = subprocess.run(
        [sys.executable, "-m", "app", "gui", str(sample_paper_path()), "--model", str(bundle),
         "--select", "100000", "--screenshot", str(out)],
        env=_env(tmp_path / "home"), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and not out.exists()
    assert "rhetorica: error: --select 100000: this paper has" in proc.stderr


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
