"""Hostile test H: an export outliving what it was started from. Closing the window while an annotated PDF
is written asks "wait for it / quit anyway / cancel" (it used to cancel it silently: no file); an export of
the previous paper that finishes while another opens names that paper, and its line goes once the new
paper is shown."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("pymupdf")

from app.gui import export_actions, file_writes
from core.jobs import JobContext
from tests.gui_helpers import TIMEOUT_MS, open_window, own_user_folder
from tests.pdf_factory import many_pages_pdf, two_column_pdf


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_path_factory.mktemp("export-lifecycle") / "bundle")


@pytest.fixture
def window(qtbot, bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator:  # type: ignore[no-untyped-def]
    own_user_folder(tmp_path, monkeypatch)
    yield from open_window(qtbot, bundle, use_cache=False)


def held(job: Callable[..., Any], gate: threading.Event) -> Callable[..., Any]:
    """``job`` run once ``gate`` is set (stopping, cancelled, while it waits)."""
    def run(ctx: JobContext, *args: Any, **kwargs: Any) -> Any:
        while not gate.wait(0.02):
            ctx.check()
        return job(ctx, *args, **kwargs)
    return run


def open_labelled(qtbot, window, pdf: Path) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.analysisShown, timeout=TIMEOUT_MS):
        assert window.open_path(pdf)


@pytest.mark.parametrize("answer", [file_writes.WAIT, file_writes.CANCEL])
def test_closing_while_an_annotated_pdf_is_written_asks_first(qtbot, window, tmp_path: Path, answer: str,  # type: ignore[no-untyped-def]
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[list[str]] = []
    monkeypatch.setattr(file_writes, "ask_while_writing", lambda _w, labels: asked.append(labels) or answer)
    gate = threading.Event()
    monkeypatch.setattr(export_actions, "annotate_job", held(export_actions.annotate_job, gate))
    open_labelled(qtbot, window, two_column_pdf(tmp_path / "paper.pdf"))
    worker = window.exporter.export_annotated_pdf(tmp_path / "annotated.pdf")
    assert worker is not None
    window.close()
    assert asked == [["Exporting the annotated PDF"]]
    assert window.isVisible() and not worker.is_cancelled  # the export goes on
    gate.set()
    qtbot.waitUntil(lambda: window.exporter.annotating is None, timeout=TIMEOUT_MS)
    assert (tmp_path / "annotated.pdf").is_file()
    if answer == file_writes.WAIT:  # the window closes once the file is written
        qtbot.waitUntil(lambda: not window.isVisible(), timeout=TIMEOUT_MS)
    else:
        assert window.isVisible()
    assert len(asked) == 1


def test_quit_anyway_cancels_the_export(qtbot, window, tmp_path: Path,  # type: ignore[no-untyped-def]
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    monkeypatch.setattr(export_actions, "annotate_job", held(export_actions.annotate_job, gate))
    open_labelled(qtbot, window, two_column_pdf(tmp_path / "paper.pdf"))
    worker = window.exporter.export_annotated_pdf(tmp_path / "annotated.pdf")
    window.close()  # tests/conftest.py answers "Quit anyway"
    assert not window.isVisible() and worker is not None and worker.is_cancelled
    gate.set()


def test_a_line_about_the_previous_paper_goes_when_the_next_is_shown(qtbot, window, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import app.gui.main_window
    import app.gui.session

    monkeypatch.setattr(app.gui.main_window, "STATUS_MS", 600_000)  # no line times out during the test
    first, second = two_column_pdf(tmp_path / "first.pdf"), many_pages_pdf(tmp_path / "second.pdf", 2)
    open_labelled(qtbot, window, first)
    exported, labelled = threading.Event(), threading.Event()
    monkeypatch.setattr(export_actions, "annotate_job", held(export_actions.annotate_job, exported))
    monkeypatch.setattr(app.gui.session, "_analysis_job", held(app.gui.session._analysis_job, labelled))
    assert window.exporter.export_annotated_pdf(tmp_path / "first-annotated.pdf") is not None
    with qtbot.waitSignal(window.session.paperReady, timeout=TIMEOUT_MS):
        window.open_path(second)
    exported.set()  # the first paper's export finishes while the second is being labelled
    qtbot.waitUntil(lambda: window.exporter.annotating is None, timeout=TIMEOUT_MS)
    line = window.statusBar().currentMessage()
    assert line.startswith("Exported ") and " of first.pdf to " in line  # it names the paper it is about
    with qtbot.waitSignal(window.analysisShown, timeout=TIMEOUT_MS):
        labelled.set()
    assert window.statusBar().currentMessage() == ""  # not "Exported … first-annotated.pdf" any more
    window.exporter.export_to(tmp_path / "second.json")  # a line about the paper shown stays
    assert window.statusBar().currentMessage().startswith("Exported ")
