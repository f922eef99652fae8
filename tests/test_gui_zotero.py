"""Library › "Add from Zotero…" (issue 27.3): the sync runs as one of the Library panel's jobs (progress bar,
Cancel, the job tracker), summarises in one line with one detail line per item without a readable PDF,
adds nothing the second time, stops on Cancel, and says what is wrong with a bad database in one line."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("hnswlib")

from PySide6.QtCore import Qt

from app.gui import zotero_import
from app.gui.panels.library import LibraryPanel
from tests.gui_helpers import own_user_folder, show_panel
from tests.tiny_bundle import make_tiny_bundle
from tests.zotero_fixture import Fixture

TIMEOUT_MS = 180_000  # PDFs are parsed in a child process on a busy 2-core machine


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bundle(tmp_path_factory.mktemp("zotero-gui") / "bundle")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return own_user_folder(tmp_path, monkeypatch)


def _panel(qtbot, bundle: Path):  # type: ignore[no-untyped-def]
    yield from show_panel(qtbot, LibraryPanel, bundle, (900, 320), wait_ms=30_000)


def _wait_idle(qtbot, panel: LibraryPanel) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: not panel.busy and not panel.session.tracker.busy, timeout=TIMEOUT_MS)


def _choose(monkeypatch: pytest.MonkeyPatch, chosen: list[str]) -> None:
    monkeypatch.setattr(zotero_import.QFileDialog, "getExistingDirectory",
                        staticmethod(lambda *a, **k: chosen[0]))


def test_add_from_zotero_adds_then_adds_nothing(qtbot, bundle, folder, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    zotero = Fixture(tmp_path / "z")
    _choose(monkeypatch, [str(zotero.zotero.folder)])
    for panel in _panel(qtbot, bundle):
        assert panel.add_menu.menuAction() in panel.file_menu_actions()  # File › Add to library ▸ too
        assert panel.act_add_zotero in panel.add_menu.actions()
        assert panel.act_add_zotero in panel.toolbar.actions()
        changed: list[bool] = []
        panel.libraryChanged.connect(lambda c=changed: c.append(True))
        jobs: list[str] = []
        tracker = panel.session.tracker
        tracker.changed.connect(lambda t=tracker, j=jobs: j.extend(t.labels()))
        panel.act_add_zotero.trigger()
        assert panel.busy and panel.progress_row.isVisible() and not panel.act_add_zotero.isEnabled()
        _wait_idle(qtbot, panel)
        assert "Adding from Zotero" in jobs
        summary = panel.summary.text()
        assert summary.startswith("From Zotero: added 5 papers (") and summary.endswith(
            " · 6 without a readable PDF")
        assert panel.details.count() == len(Fixture.UNREADABLE)
        assert any(panel.details.item(i).text().startswith("BOOK2222 “A Book Without Files”: no PDF")
                   for i in range(panel.details.count()))
        assert changed == [True] and panel.act_add_zotero.isEnabled()
        titles = {row[0] for row in panel.rows()}
        assert {"Parsing Scientific Text", "Fast and Simple", "A Group Paper"} <= titles and len(titles) == 5
        panel.act_add_zotero.trigger()
        _wait_idle(qtbot, panel)
        assert panel.summary.text() == "From Zotero: no new papers · 5 unchanged · 6 without a readable PDF"
        assert changed == [True] and len(panel.rows()) == 5


def test_cancel_stops_the_zotero_import(qtbot, bundle, folder, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    zotero = Fixture(tmp_path / "z")
    _choose(monkeypatch, [str(zotero.zotero.folder)])
    gate, started = threading.Event(), threading.Event()
    real = zotero_import.zotero_job

    def held(ctx, *args, **kwargs):  # type: ignore[no-untyped-def]
        started.set()
        gate.wait(30)  # still running when Cancel is pressed
        return real(ctx, *args, **kwargs)

    monkeypatch.setattr(zotero_import, "zotero_job", held)
    for panel in _panel(qtbot, bundle):
        panel.act_add_zotero.trigger()
        qtbot.waitUntil(started.is_set, timeout=TIMEOUT_MS)
        qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
        assert panel.progress_label.text() == "Cancelling…"
        gate.set()
        _wait_idle(qtbot, panel)
        assert panel.summary.text().startswith("Cancelled.") and panel.rows() == []


def test_a_bad_zotero_folder_is_one_line(qtbot, bundle, folder, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "zotero.sqlite").write_bytes(b"not a database" * 300)
    chosen = [str(bad)]
    _choose(monkeypatch, chosen)
    for panel in _panel(qtbot, bundle):
        panel.act_add_zotero.trigger()
        _wait_idle(qtbot, panel)
        text = panel.summary.text()
        assert text.startswith("Failed: ") and "is damaged or not a database" in text and "\n" not in text
        chosen[0] = ""  # the folder dialog cancelled: nothing starts
        panel.act_add_zotero.trigger()
        assert not panel.busy


def test_the_zotero_import_counts_papers_on_one_forward_scale(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """New PDFs are added under "paper 7 of 25 (name.pdf)", as Add folder… does (job_progress.PaperSteps),
    not under the labelling's own counts, which made the bar jump back at each paper."""
    from app.gui.job_progress import PaperSteps
    from core.jobs import JobContext
    from core.library import zotero_sync

    zotero = Fixture(tmp_path / "z")
    seen: list[object] = []
    monkeypatch.setattr(zotero_sync, "apply_sync",
                        lambda library, plan, model, ctx, workers=1: seen.append(ctx) or "report")
    model: object = object()
    report = zotero_import.zotero_job(JobContext(), tmp_path / "lib", zotero.zotero.folder, model)  # type: ignore[arg-type]
    assert report == "report"
    assert isinstance(seen[0], PaperSteps)
