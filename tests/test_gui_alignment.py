"""Alignment panel: the open paper aligned with a draft or a second PDF in the background, the gap list
and the pair table (filters, selection jumping to the page), exports, cancel, the empty states, and its
wiring into the window (View menu, the draft's text), with the tiny test bundle."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

from app.gui.panels import alignment as alignment_module
from app.gui.panels.alignment import (
    NO_DRAFT,
    NO_MODEL,
    NO_PAPER,
    AlignmentPanel,
    align_job,
    gap_target,
    summary_line,
)
from core.errors import Cancelled
from core.jobs import JobContext
from core.paths import sample_paper_path
from tests.gui_helpers import function_bundle, no_shipped_model, open_window, show_panel
from tests.paper_factory import make_paper

TIMEOUT_MS = 180_000  # parsing the sample in a child process on a busy 2-core machine
DRAFT = ("# Abstract\nPrevious work has studied this problem. Our goal is to improve accuracy.\n"
         "We propose a new method for parsing scientific text. Results show that it works well.\n"
         "# Method\nWe propose a simple and fast method.\n"
         "# Conclusion\nIn conclusion the approach is simple and fast.\n")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return function_bundle(tmp_path_factory, "align")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def make_panel(qtbot, model: Path | str, with_paper: bool = True) -> Iterator[AlignmentPanel]:  # type: ignore[no-untyped-def]
    paper = make_paper() if with_paper else None  # the open paper (A), as if parsed
    yield from show_panel(qtbot, AlignmentPanel, model, (900, 600), paper=paper)


def _align_draft(qtbot, panel: AlignmentPanel, text: str = DRAFT) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(panel.alignmentShown, timeout=TIMEOUT_MS):
        assert panel.compare_with_draft(text)
        assert panel.busy and panel.cancel_button.isVisibleTo(panel)
    qtbot.waitUntil(lambda: not panel.busy, timeout=TIMEOUT_MS)


def test_aligning_the_open_paper_with_a_draft_fills_the_summary_gaps_and_pairs(
        qtbot, bundle) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle):
        assert not panel.splitter.isVisibleTo(panel)
        assert not any(b.isEnabled() for b in panel.export_buttons.values())
        _align_draft(qtbot, panel)
        alignment = panel.alignment
        assert alignment is not None and alignment.pairs
        assert len(alignment.a) == len(panel.session.paper.sentences)  # type: ignore[union-attr]
        assert alignment.b.kind == "draft" and len(alignment.b) == 6
        assert summary_line(alignment) in panel.summary.text() and "aligned pair" in panel.summary.text()
        assert panel.table.rowCount() == len(alignment.pairs) and panel.visible_pairs() == alignment.pairs
        first = alignment.pairs[0]
        a_text = " ".join(alignment.a.sentences[i].text for i in first.a_indices)
        b_text = " ".join(alignment.b.sentences[j].text for j in first.b_indices)
        shown_score = f"{first.shown_score:.2f}"
        assert [panel.table.item(0, c).text() for c in range(3)] == [a_text, shown_score, b_text]
        rows = [panel.gap_list.item(i).text() for i in range(panel.gap_list.count())]
        if alignment.gaps.items:  # the most important first; the rest after a "more" row
            shown = [*alignment.gaps.top(), *alignment.gaps.more()]
            gap_rows = [panel.gap_list.item(i) for i in range(panel.gap_list.count())
                        if panel.gap_list.item(i).data(Qt.ItemDataRole.UserRole) is not None]
            assert [r.data(Qt.ItemDataRole.UserRole) for r in gap_rows] == shown
            assert len(rows) == len(shown) + (1 if alignment.gaps.more() else 0)
        else:
            assert rows == ["No gaps: both do the same things per section."]
        assert panel.splitter.isVisibleTo(panel) and all(b.isEnabled() for b in panel.export_buttons.values())
        assert panel.status.text().startswith("Aligned in ") and not panel.cancel_button.isVisibleTo(panel)
        # A second comparison reuses the open paper's side (not analysed again).
        _align_draft(qtbot, panel, "We propose a new method. Results show that it works well.")
        assert panel.alignment is not alignment and panel.alignment.a is alignment.a  # type: ignore[union-attr]
        assert len(panel.alignment.b) == 2  # type: ignore[union-attr]
        # Another function weight aligns the same two sides again.
        second = panel.alignment
        with qtbot.waitSignal(panel.alignmentShown, timeout=TIMEOUT_MS):
            panel.weight.setValue(0.2)
        qtbot.waitUntil(lambda p=panel: not p.busy, timeout=TIMEOUT_MS)
        assert panel.alignment.settings.function_weight == pytest.approx(0.2)  # type: ignore[union-attr]
        assert panel.alignment.a is second.a and panel.alignment.b is second.b  # type: ignore[union-attr]


def test_filters_narrow_the_pairs(qtbot, bundle) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle):
        _align_draft(qtbot, panel)
        pairs = panel.alignment.pairs  # type: ignore[union-attr]
        functions = [panel.function.itemData(i) for i in range(1, panel.function.count())]
        assert functions and set(functions) <= {p.function for p in pairs}
        panel.set_function(functions[0])
        assert panel.visible_pairs() == [p for p in pairs if p.function == functions[0]]
        panel.set_function(None)
        absent = next(r for r in ("background", "objective", "method", "result", "conclusion", "other")
                      if r not in {p.role for p in pairs})
        panel.set_role(absent)
        assert panel.visible_pairs() == [] and all(panel.table.isRowHidden(r) for r in range(len(pairs)))
        assert panel.status.text() == f"0 of {len(pairs)} pairs shown"
        panel.set_role(None)
        assert panel.visible_pairs() == pairs


def test_selecting_a_pair_or_a_gap_jumps_to_the_open_paper_and_back(
        qtbot, bundle) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle):
        _align_draft(qtbot, panel)
        session = panel.session
        alignment = panel.alignment
        assert alignment is not None
        jumps: list[tuple[int, object]] = []
        session.jumpRequested.connect(lambda page, box, j=jumps: j.append((page, box)))
        row = len(alignment.pairs) - 1
        panel.table.selectRow(row)
        target = alignment.pairs[row].a_indices[0]
        assert session.selected == target
        rect = session.paper.sentences[target].rects[0]  # type: ignore[union-attr]
        assert jumps[-1] == (rect.page, (rect.x0, rect.y0, rect.x1, rect.y1))
        # A sentence selected on the page selects its pair.
        panel.table.clearSelection()
        session.select_sentence(alignment.pairs[0].a_indices[-1])
        assert [i.row() for i in panel.table.selectionModel().selectedRows()] == [0]
        # A gap goes to the first sentence of the open paper it concerns.
        for number in range(panel.gap_list.count()):
            row = panel.gap_list.item(number)
            item = row.data(Qt.ItemDataRole.UserRole)
            if item is None:  # the "more" divider
                continue
            expected = gap_target(alignment, item)
            session.select_sentence(-1)
            panel._on_gap_clicked(row)
            assert session.selected == expected
        # Closing the paper forgets the alignment.
        session.documentClosed.emit()
        assert panel.alignment is None and panel.table.rowCount() == 0
        assert not panel.splitter.isVisibleTo(panel)


def test_gap_target_picks_the_first_sentence_concerned(qtbot, bundle) -> None:  # type: ignore[no-untyped-def]
    from core.alignment.align import GapItem

    for panel in make_panel(qtbot, bundle):
        _align_draft(qtbot, panel)
        alignment = panel.alignment
        assert alignment is not None
        sentences = alignment.a.sentences
        function = sentences[3].function
        first = next(i for i, s in enumerate(sentences)
                     if s.function == function and s.section_kind == "method")
        assert gap_target(alignment, GapItem("method", function, "x", "a", 1, (), "")) == first
        assert gap_target(alignment, GapItem("conclusion", "", "", "a", 1, (), "")) == 5
        assert gap_target(alignment, GapItem("method", "no-such", "x", "b", 1, (), "")) == 3
        assert gap_target(alignment, GapItem("method", "no-such", "x", "a", 1, (), "")) == -1
        assert gap_target(alignment, GapItem("results", "no-such", "x", "b", 1, (), "")) == -1


def test_exports_write_json_markdown_and_html(qtbot, bundle, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from core.alignment.align_export import alignment_from_json

    for panel in make_panel(qtbot, bundle):
        assert panel.export("json", tmp_path / "none.json") == ""  # nothing aligned yet
        _align_draft(qtbot, panel)
        written = {fmt: panel.export(fmt, tmp_path / f"alignment.{fmt}") for fmt in ("json", "md", "html")}
        assert all(Path(path).is_file() for path in written.values())
        loaded = alignment_from_json((tmp_path / "alignment.json").read_text(encoding="utf-8"))
        assert len(loaded.pairs) == len(panel.alignment.pairs)  # type: ignore[union-attr]
        assert json.loads((tmp_path / "alignment.json").read_text(encoding="utf-8"))["pairs"]
        assert "|" in (tmp_path / "alignment.md").read_text(encoding="utf-8")
        assert "<html" in (tmp_path / "alignment.html").read_text(encoding="utf-8").lower()
        assert panel.status.text() == "Saved alignment.html."
        assert panel.export("pdf", tmp_path / "x.pdf") == "" and not (tmp_path / "x.pdf").exists()


def test_cancel_stops_the_alignment(qtbot, bundle, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    running = threading.Event()

    def slow_job(ctx: JobContext, *args: object, **kwargs: object) -> None:
        running.set()
        while True:  # until cancelled
            ctx.check()
            threading.Event().wait(0.01)

    monkeypatch.setattr(alignment_module, "align_job", slow_job)
    for panel in make_panel(qtbot, bundle):
        shown: list[object] = []
        panel.alignmentShown.connect(shown.append)
        assert panel.compare_with_draft(DRAFT)
        qtbot.waitUntil(running.is_set, timeout=TIMEOUT_MS)
        assert panel.busy and panel.session.tracker.busy
        panel.cancel_button.click()
        qtbot.waitUntil(lambda p=panel: not p.busy, timeout=TIMEOUT_MS)
        assert panel.status.text() == "Cancelled." and panel.alignment is None and not shown
        assert not panel.cancel_button.isVisibleTo(panel)
    ctx = JobContext()
    ctx.cancel()
    with pytest.raises(Cancelled):  # the real job stops at its first progress report once cancelled
        align_job(ctx, make_paper(), ("draft", DRAFT), None)  # type: ignore[arg-type]


def test_a_second_pdf_is_parsed_in_a_child_and_aligned(qtbot, bundle) -> None:  # type: ignore[no-untyped-def]
    sample = sample_paper_path()
    if not sample.is_file():
        pytest.skip(f"bundled sample paper absent: {sample}")
    for panel in make_panel(qtbot, bundle):
        with qtbot.waitSignal(panel.alignmentShown, timeout=TIMEOUT_MS):
            assert panel.compare_with_pdf(str(sample))
        alignment = panel.alignment
        assert alignment is not None and alignment.b.kind == "pdf" and len(alignment.b) > 50
        assert alignment.b.source == str(sample) and panel.table.rowCount() == len(alignment.pairs) > 0


def test_empty_states_no_paper_empty_draft_and_no_model(qtbot, monkeypatch, bundle, tmp_path) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle, with_paper=False):
        assert not panel.compare_with_draft(DRAFT) and panel.summary.text() == NO_PAPER
        assert not panel.compare_draft.isEnabled()  # no draft pane to read from
        panel.set_draft_provider(lambda: "   ")
        assert panel.compare_draft.isEnabled()
        panel.session.paper = make_paper()
        panel.compare_draft.click()
        assert panel.summary.text() == NO_DRAFT and not panel.busy
    no_shipped_model(monkeypatch, tmp_path)  # no fallback either: no model at all
    for panel in make_panel(qtbot, tmp_path / "no-such-bundle"):
        panel.compare_with_draft(DRAFT)
        qtbot.waitUntil(lambda p=panel: p.summary.text() == NO_MODEL, timeout=TIMEOUT_MS)
        assert panel.status.text().startswith("No model: ") and not panel.busy and panel.alignment is None


def test_the_window_registers_the_panel_and_lends_it_the_draft(
        qtbot, bundle, home) -> None:  # type: ignore[no-untyped-def]
    for window in open_window(qtbot, bundle):
        panel, dock = window.panels["alignment"], window.docks["alignment"]
        assert isinstance(panel, AlignmentPanel) and dock.objectName() == "dock-alignment"
        toggle = dock.toggleViewAction()
        assert toggle.text() == "Alignment panel" and toggle.shortcut().toString() == "Ctrl+Shift+A"
        assert toggle in window.dock_panels.toggle_actions() and not dock.isVisible()
        shortcuts = [a.shortcut().toString() for a in window.findChildren(type(toggle)) if a is not toggle]
        assert "Ctrl+Shift+A" not in shortcuts  # free
        toggle.trigger()
        qtbot.waitUntil(lambda p=panel: p.isVisible())
        window.panels["draft"].set_text(DRAFT)
        assert panel.compare_draft.isEnabled() and panel._draft_provider() == DRAFT
