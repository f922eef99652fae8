"""Minor faults a hostile tester found in the GUI's workflows: every export refuses a folder as its target in
one plain line (not "Unknown export format ''"); comparing with a folder says it is a folder (as File › Open
does), not "[Errno 21]"; the annotated PDF's write error says "cannot write" once; a comparison that failed
leaves no earlier alignment on screen; a panel's shortcut puts the keyboard in the panel."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("pymupdf")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QListWidget, QPushButton, QVBoxLayout, QWidget

from app.gui.banner import Banner
from app.gui.docks import focus_target
from app.gui.export_actions import AnalysisExporter
from app.gui.job_tracker import JobTracker
from app.gui.palette import RolePalette
from app.gui.panels import alignment as alignment_module
from app.gui.panels.alignment import AlignmentPanel, align_job
from app.gui.save_text import save_text
from core.errors import CorruptPdfError, NotAPdfError
from core.jobs import JobContext
from tests.gui_helpers import TIMEOUT_MS, function_bundle, open_window, show_panel, wait_released
from tests.paper_factory import make_analysis, make_paper
from tests.pdf_factory import two_column_pdf

FOLDER = "Cannot export to {}: it is a folder; choose a file name."
DRAFT = ("# Abstract\nPrevious work has studied this problem. Our goal is to improve accuracy.\n"
         "We propose a new method for parsing scientific text. Results show that it works well.\n")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return function_bundle(tmp_path_factory, "minor-faults")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _exporter(qtbot, tmp_path: Path, said: list[str] | None = None  # type: ignore[no-untyped-def]
              ) -> tuple[AnalysisExporter, Banner]:
    """The File › Export actions on a paper "open" from a real PDF (its sha256 left out: any PDF will do);
    what they say in the status bar goes to ``said``."""
    parent = QWidget()
    qtbot.addWidget(parent)
    banner = Banner(parent)
    parent.show()  # the banner's text is what it shows
    paper = make_paper(sha="")
    session = SimpleNamespace(paper=paper, analysis=make_analysis(paper), palette=RolePalette(),
                              path=str(two_column_pdf(tmp_path / "paper.pdf")), tracker=JobTracker())
    lines = said if said is not None else []
    return AnalysisExporter(parent, session, None, banner,  # type: ignore[arg-type]
                            lambda line, _paper=None: lines.append(line)), banner


def test_analysis_and_annotated_pdf_exports_refuse_a_folder(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    exporter, banner = _exporter(qtbot, tmp_path)
    for folder in (tmp_path / "exports", tmp_path / "named.json", tmp_path / "named.pdf"):
        folder.mkdir()
        assert exporter.export_to(folder) is None
        assert banner.text == FOLDER.format(folder)
        assert exporter.export_to(folder, "csv") is None and "it is a folder" in banner.text
        banner.dismiss()
        assert exporter.export_annotated_pdf(folder) is None and exporter.annotating is None
        assert banner.text == FOLDER.format(folder)
    (tmp_path / "out.pdf").mkdir()  # "out" gets ".pdf" added: that is a folder too
    assert exporter.export_annotated_pdf(tmp_path / "out") is None
    assert banner.text == FOLDER.format(tmp_path / "out.pdf")


def test_the_annotated_pdf_write_error_says_cannot_write_once(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    exporter, banner = _exporter(qtbot, tmp_path)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder", encoding="utf-8")
    worker = exporter.export_annotated_pdf(blocker / "x.pdf")
    assert worker is not None
    wait_released(qtbot, worker)
    text = banner.text
    assert text.startswith(f"Could not write {blocker / 'x.pdf'}: ") and "\n" not in text
    assert "cannot write" not in text.lower().replace("could not write", "", 1), text


def test_the_analysis_export_never_writes_over_the_pdf_nor_in_another_format(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """File › Export as › JSON… on the open PDF's name wrote JSON over the PDF; a name without a suffix
    got none; a missing folder was made. Now: one line each and nothing written, or the suffix added."""
    exporter, banner = _exporter(qtbot, tmp_path)
    pdf = tmp_path / "paper.pdf"
    original = pdf.read_bytes()
    refused = {
        (pdf, "json"): f"Cannot export to {pdf}: it is the open paper's PDF; choose another file name",
        (pdf, None): f"Cannot export to {pdf}: it is the open paper's PDF; choose another file name",
        (tmp_path / "copy.pdf", "json"): f"Cannot export to {tmp_path / 'copy.pdf'}: give the JSON export a "
                                         "name ending in .json, not .pdf",
        (tmp_path / "roles.csv", "html"): f"Cannot export to {tmp_path / 'roles.csv'}: give the HTML export "
                                          "a name ending in .html, not .csv",
        (tmp_path / "roles.txt", None): f"Unknown export format 'txt' for {tmp_path / 'roles.txt'}: give it "
                                        "a .md, .html, .csv or .json file name",
        (tmp_path / "noext", None): f"Cannot export to {tmp_path / 'noext'}: give it a .md, .html, .csv or "
                                    ".json file name",
        (tmp_path / "nope" / "x.md", None): f"Cannot export to {tmp_path / 'nope' / 'x.md'}: the folder "
                                            f"{tmp_path / 'nope'} does not exist (create it first)",
    }
    for (path, fmt), line in refused.items():
        banner.dismiss()
        assert exporter.export_to(path, fmt) is None
        assert banner.text == line and banner.kind == "error"
    assert pdf.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["paper.pdf"]  # nothing written, no folder made
    assert exporter.export_to(tmp_path / "noext", "html") == tmp_path / "noext.html"
    assert "<html" in (tmp_path / "noext.html").read_text(encoding="utf-8")
    assert exporter.export_to(tmp_path / "roles v1.2", "markdown") == tmp_path / "roles v1.2.md"
    assert exporter.export_to(tmp_path / "notes.txt", "md") == tmp_path / "notes.txt.md"  # no .txt written
    assert exporter.export_to(tmp_path / "Roles.JSON", "json") == tmp_path / "Roles.JSON"


def test_a_failed_export_replaces_the_success_line_and_a_success_the_error(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    said: list[str] = []
    exporter, banner = _exporter(qtbot, tmp_path, said)
    assert exporter.export_to(tmp_path / "a.json") is not None
    assert said[-1].startswith("Exported ") and banner.text == ""
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder", encoding="utf-8")
    worker = exporter.export_annotated_pdf(blocker / "x.pdf")
    assert worker is not None
    wait_released(qtbot, worker)
    assert banner.text.startswith("Could not write ") and said[-1] == banner.text  # not "Exported …"
    assert exporter.export_to(tmp_path / "b.md") is not None
    assert banner.text == "" and said[-1].startswith("Exported ")  # the error is gone with it
    assert exporter.export_to(tmp_path / "nope" / "c.md") is None and said[-1] == banner.text
    banner.show_message("warning", "No usable model bundle")  # not an export's: a success leaves it
    assert exporter.export_to(tmp_path / "c.md") is not None and banner.text == "No usable model bundle"


def test_a_running_export_is_a_file_being_written(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """What closing the window asks about: the annotated PDF and the graphical abstract's PNG."""
    import threading

    from app.gui import export_actions, file_writes
    from app.gui.panels import graphical_abstract_exporter
    from core.document import Figure

    gate = threading.Event()

    def held(ctx: JobContext, *_args: object) -> None:  # runs until cancelled
        while not gate.wait(0.02):
            ctx.check()
        ctx.check()

    monkeypatch.setattr(export_actions, "annotate_job", held)
    monkeypatch.setattr(graphical_abstract_exporter, "export_job", held)
    exporter, _banner = _exporter(qtbot, tmp_path)
    figures, _line = _figure_exporter(qtbot, tmp_path)
    try:
        assert exporter.export_annotated_pdf(tmp_path / "annotated.pdf") is not None
        figure = Figure("fig1", "figure", "1", "Figure 1: a box.", 0, (0.0, 0.0, 100.0, 100.0))
        assert figures.start(str(tmp_path / "paper.pdf"), figure, str(tmp_path / "ga.png"))
        assert file_writes.files_being_written(exporter._session.tracker) == ["Exporting the annotated PDF"]
        assert file_writes.files_being_written(figures.op.session.tracker) == ["Exporting the graphical "
                                                                               "abstract"]
        exporter._session.tracker.cancel_all()
        assert file_writes.files_being_written(exporter._session.tracker) == []  # cancelled: not asked about
    finally:
        figures.op.session.tracker.cancel_all()
        exporter._session.tracker.cancel_all()
        gate.set()
        wait_released(qtbot, figures.op.worker)
        qtbot.waitUntil(lambda: exporter.annotating is None, timeout=TIMEOUT_MS)


def test_text_exports_refuse_a_folder(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The alignment's and the search's exports (``save_text``)."""
    parent = QWidget()
    qtbot.addWidget(parent)
    saved = save_text(parent, "{}", tmp_path, title="t", suggested="x.json", file_filter="JSON (*.json)")
    assert saved.path == "" and saved.message == FOLDER.format(tmp_path)


def _figure_exporter(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The graphical-abstract panel's PNG exporter on a status line of its own, with no model."""
    from app.gui.model_holder import ModelHolder, ModelOptions
    from app.gui.panels.graphical_abstract_exporter import FigureExporter
    from app.gui.session import Session
    from app.gui.status_line import StatusLine

    tracker = JobTracker()
    session = Session(tracker, ModelHolder(tracker, ModelOptions(path=str(tmp_path / "none"))), RolePalette())
    panel, line = QWidget(), StatusLine()
    qtbot.addWidget(panel)
    qtbot.addWidget(line)
    return FigureExporter(panel, session, line), line


def test_the_graphical_abstract_png_refuses_a_folder(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from core.document import Figure

    exporter, line = _figure_exporter(qtbot, tmp_path)
    figure = Figure("fig1", "figure", "1", "Figure 1: a box.", 0, (0.0, 0.0, 100.0, 100.0))
    folder = tmp_path / "figure.png"
    folder.mkdir()
    assert not exporter.start(str(tmp_path / "paper.pdf"), figure, str(folder)) and not exporter.op.busy
    assert line.label.text() == FOLDER.format(folder)


def test_the_graphical_abstract_png_write_errors_are_plain_and_said_once(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from app.gui.panels.graphical_abstract_export import export_figure_png
    from core.document import Figure

    pdf = str(two_column_pdf(tmp_path / "paper.pdf"))
    long_name = tmp_path / ("x" * 300 + ".png")  # too long a name for the file system: not saved
    with pytest.raises(OSError) as caught:
        export_figure_png(pdf, 0, (0.0, 0.0, 200.0, 200.0), "", long_name, sidecar=False)
    assert str(caught.value) == "the image could not be saved there (check that the folder is writable)"
    exporter, line = _figure_exporter(qtbot, tmp_path)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder", encoding="utf-8")
    figure = Figure("fig1", "figure", "1", "Figure 1: a box.", 0, (0.0, 0.0, 200.0, 200.0))
    assert exporter.start(pdf, figure, str(blocker / "x.png"))
    qtbot.waitUntil(lambda: not exporter.op.busy, timeout=TIMEOUT_MS)
    assert line.label.text() == f"Cannot write {blocker / 'x.png'}: its folder cannot be made (File exists)"


def test_corrections_export_refuses_a_folder(qtbot, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for window in open_window(qtbot, None, load_model_at_start=False):
        assert window.export_corrections(tmp_path) == -1
        assert window.banner.text == FOLDER.format(tmp_path)


# -- the alignment -------------------------------------------------------------------------------------
def _panel(qtbot, model: Path) -> Iterator[AlignmentPanel]:  # type: ignore[no-untyped-def]
    yield from show_panel(qtbot, AlignmentPanel, model, (900, 600), paper=make_paper())


def test_comparing_with_a_folder_says_it_is_a_folder(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "adir.pdf"
    folder.mkdir()
    for panel in _panel(qtbot, tmp_path / "no-model"):
        assert not panel.compare_with_pdf(str(folder)) and not panel.busy
        assert panel.summary.text() == "Cannot compare with adir.pdf: this is a folder, not a PDF file"
        assert "Errno" not in panel.status.text()


def test_the_job_says_a_second_pdf_that_cannot_be_read_in_plain_words(tmp_path: Path) -> None:
    """A path that became a folder after it was chosen: the job's error is one plain line too."""
    with pytest.raises(NotAPdfError) as caught:
        align_job(JobContext(), make_paper(), ("pdf", str(tmp_path)), None, side_a=object())  # type: ignore[arg-type]
    assert str(caught.value) == f"{tmp_path}: cannot be read (Is a directory)"


def test_a_failed_comparison_clears_the_earlier_alignment(qtbot, bundle: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    second = tmp_path / "second.pdf"
    second.write_bytes(b"%PDF-1.4 not much more")

    def broken_job(ctx: JobContext, *args: object, **kwargs: object) -> None:
        raise CorruptPdfError(str(second), "the PDF is damaged and cannot be opened")

    for panel in _panel(qtbot, bundle):
        with qtbot.waitSignal(panel.alignmentShown, timeout=TIMEOUT_MS):
            assert panel.compare_with_draft(DRAFT)
        qtbot.waitUntil(lambda p=panel: not p.busy, timeout=TIMEOUT_MS)
        assert panel.alignment is not None and panel.table.rowCount() > 0
        monkeypatch.setattr(alignment_module, "align_job", broken_job)
        assert panel.compare_with_pdf(str(second))
        qtbot.waitUntil(lambda p=panel: not p.busy, timeout=TIMEOUT_MS)
        assert panel.alignment is None and not panel.results.isVisibleTo(panel)
        assert panel.table.rowCount() == 0 and not any(b.isEnabled() for b in panel.export_buttons.values())
        assert panel.summary.text() == ("Cannot compare with second.pdf: the PDF is damaged and cannot be "
                                        "opened")


# -- panel shortcuts -----------------------------------------------------------------------------------
def test_focus_target_prefers_the_proxy_then_a_text_box_then_a_list() -> None:
    panel = QWidget()
    button, items, box = QPushButton("Go"), QListWidget(), QLineEdit()
    layout = QVBoxLayout(panel)
    for widget in (button, items, box):
        layout.addWidget(widget)
    panel.show()
    assert focus_target(panel) is box
    box.setReadOnly(True)
    assert focus_target(panel) is items
    items.hide()
    assert focus_target(panel) is button
    panel.setFocusProxy(items)  # a hidden proxy is passed over
    assert focus_target(panel) is button
    items.show()
    assert focus_target(panel) is items
    panel.close()


def _press(qtbot, window, key: Qt.Key, shift: bool = False) -> None:  # type: ignore[no-untyped-def]
    modifiers = Qt.KeyboardModifier.ControlModifier
    if shift:
        modifiers |= Qt.KeyboardModifier.ShiftModifier
    qtbot.keyClick(window, key, modifiers)


def test_a_panel_shortcut_shows_raises_and_focuses_the_panel(qtbot, home: Path) -> None:  # type: ignore[no-untyped-def]
    for window in open_window(qtbot, None, load_model_at_start=False):
        window.activateWindow()
        qtbot.waitUntil(lambda w=window: QApplication.activeWindow() is w)
        draft, library = window.panels["draft"], window.panels["library"]
        _press(qtbot, window, Qt.Key.Key_D)  # Ctrl+D: the draft's editor
        qtbot.waitUntil(lambda d=draft: d.isVisible() and d.isAncestorOf(QApplication.focusWidget()))
        assert isinstance(QApplication.focusWidget(), type(focus_target(draft)))
        _press(qtbot, window, Qt.Key.Key_L, shift=True)  # Ctrl+Shift+L: the library's filter box
        qtbot.waitUntil(lambda f=library.filter: QApplication.focusWidget() is f)
        assert window.tabifiedDockWidgets(window.docks["draft"])  # the draft is now behind the library
        _press(qtbot, window, Qt.Key.Key_D)  # Ctrl+D brings the draft back to the front, not hides it
        qtbot.waitUntil(lambda d=draft: d.isAncestorOf(QApplication.focusWidget()))
        dock = window.docks["draft"]
        assert not dock.isHidden() and not dock.visibleRegion().isEmpty()
        _press(qtbot, window, Qt.Key.Key_D)  # in front already: the shortcut hides it, as before
        qtbot.waitUntil(dock.isHidden)
