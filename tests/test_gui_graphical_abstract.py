"""Graphical-abstract panel (issue 14, "In the app"): the suggestion job lists a generated paper's figures
in rank order with previews, tables only when asked; the choice is remembered per paper (sha256); the
300 dpi export with its caption strip and sidecar; the empty states; the panel's registration."""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtGui import QImage

import app.gui.panels.graphical_abstract as ga
import app.gui.panels.graphical_abstract_job as ga_job
from app.gui.panels.graphical_abstract import (
    NO_FIGURES,
    NO_MODEL,
    NO_PAPER,
    YOUR_CHOICE,
    GraphicalAbstractPanel,
    export_figure_png,
)
from app.gui.settings import AppSettings
from core.document import Figure, Paper
from tests.gui_helpers import no_shipped_model, own_user_folder, show_panel
from tests.paper_factory import make_paper

TIMEOUT_MS = 120_000
SIZE_WEIGHTS = {"size": 1.0}  # the tiny bundle scores every caption alike: rank by size instead


def figures_pdf(path: Path) -> Path:
    """Two pages, four grey boxes of growing height with "Figure N:" captions; a ruled table on page 3."""
    doc = pymupdf.open()
    for p in range(2):
        page = doc.new_page(width=612, height=792)
        if p == 0:
            page.insert_text((72, 70), "Parsing Scientific Text", fontsize=18, fontname="hebo")
            page.insert_text((72, 100), "Abstract", fontsize=12, fontname="hebo")
            page.insert_text((72, 120), "We propose a new method for parsing scientific text.", fontsize=10)
            page.insert_text((72, 134), "Results show that it works well. Figure 1 shows the method.",
                             fontsize=10)
        for k in range(2):
            n = 2 * p + k + 1
            y = 160 + 300 * k
            page.draw_rect(pymupdf.Rect(150, y, 450, y + 150 + 20 * n), color=(0, 0, 0),
                           fill=(0.2 * n, 0.5, 0.6))
            page.insert_text((72, y + 180 + 20 * n), f"Figure {n}: A box number {n} for the method.",
                             fontsize=9, fontname="helv")
    page = doc.new_page(width=612, height=792)
    page.insert_text((72, 100), "Table 1: Numbers in a ruled table.", fontsize=9, fontname="helv")
    page.draw_line((120, 110), (480, 110), color=(0, 0, 0))
    for i, line in enumerate(["Name     Value", "alpha     1.0", "beta     2.0"]):
        page.insert_text((130, 124 + 12 * i), line, fontsize=9)
    page.draw_line((120, 160), (480, 160), color=(0, 0, 0))
    page.insert_text((72, 200), "After the table the text goes on with plain body text.", fontsize=10)
    doc.save(path)
    return path


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_path_factory.mktemp("ga-model") / "bundle")


@pytest.fixture(scope="module")
def paper(tmp_path_factory: pytest.TempPathFactory) -> Paper:
    from core.pdf import parse_pdf

    parsed = parse_pdf(figures_pdf(tmp_path_factory.mktemp("ga-pdf") / "figures.pdf"))
    assert [f.kind for f in parsed.figures].count("figure") == 4
    return parsed


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    own_user_folder(tmp_path, monkeypatch)  # settings in tmp_path/home/settings.ini
    monkeypatch.setattr(ga_job, "bundle_weights", lambda _model: dict(SIZE_WEIGHTS))
    return tmp_path / "home"


def make_panel(qtbot, model: Path | str, paper: Paper | None = None) -> Iterator[GraphicalAbstractPanel]:  # type: ignore[no-untyped-def]
    yield from show_panel(qtbot, GraphicalAbstractPanel, model, (1100, 520), paper=paper)


def wait_ranked(qtbot, panel: GraphicalAbstractPanel, previews: bool = True) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: panel.shown is not None, timeout=TIMEOUT_MS)
    if previews:
        qtbot.waitUntil(lambda p=panel: not p.busy, timeout=TIMEOUT_MS)


def expected_order(paper: Paper, bundle: Path, include_tables: bool = False) -> list[str]:
    from core.figures.figure_rank import rank_figures
    from models.encoder import load_model
    from models.figure_scorer import load_figure_scorer

    model = load_model(bundle, device="cpu")
    ranking = rank_figures(paper, load_figure_scorer(model), weights=SIZE_WEIGHTS,
                           include_tables=include_tables)
    return [f.figure_id for f in ranking.figures]


def card_text(panel: GraphicalAbstractPanel, figure_id: str) -> str:
    return panel._cards[figure_id].text.text()


def test_suggestion_lists_the_candidates_in_rank_order(qtbot, bundle: Path, paper: Paper) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle, paper):  # shown with a paper open: it suggests at once
        wait_ranked(qtbot, panel)
        order = expected_order(paper, bundle)
        assert order == ["fig4", "fig3", "fig2", "fig1"]  # the biggest box first
        assert [row[1] for row in panel.rows()] == order
        assert [row[0] for row in panel.rows()] == [1, 2, 3, 4]
        assert panel.list.count() == 4
        assert panel.stack.currentWidget() is panel.list
        assert all(panel.list.item(i).data(ga.FIGURE_ID) == fid for i, fid in enumerate(order))
        first = card_text(panel, "fig4")
        assert "Figure 4" in first and "score" not in first and "1." in first  # words, not raw scores
        assert "size" in panel.list.item(0).toolTip()  # the parts of the score
        assert all(panel.shown.thumbnails.get(fid) for fid in order)  # type: ignore[union-attr]
        assert all(not panel._cards[fid].image.pixmap().isNull() for fid in order)
        assert YOUR_CHOICE not in first and not panel.export_button.isEnabled()

        panel.include_tables.setChecked(True)  # tables are candidates only when asked for
        qtbot.waitUntil(lambda p=panel: p.shown is not None and p.shown.include_tables, timeout=TIMEOUT_MS)
        assert {row[1] for row in panel.rows()} == {"fig1", "fig2", "fig3", "fig4", "tab1"}
        assert [row[1] for row in panel.rows()] == expected_order(paper, bundle, include_tables=True)
        qtbot.waitUntil(lambda p=panel: not p.busy, timeout=TIMEOUT_MS)


def test_selecting_shows_the_figure_and_the_choice_is_remembered_per_paper(qtbot, bundle: Path,  # type: ignore[no-untyped-def]
                                                                           paper: Paper) -> None:
    for panel in make_panel(qtbot, bundle, paper):
        wait_ranked(qtbot, panel)
        jumps: list[tuple[int, object]] = []
        panel.session.jumpRequested.connect(lambda page, rect, j=jumps: j.append((page, rect)))
        panel.list.setCurrentRow(2)  # fig2: rank 3
        assert panel.selected_id() == "fig2"
        fig2 = next(f for f in paper.figures if f.id == "fig2")
        assert jumps == [(fig2.page, tuple(fig2.bbox))]
        assert panel.use_button.isEnabled()
        with qtbot.waitSignal(panel.choiceChanged) as chosen:
            panel.use_button.click()
        assert chosen.args == ["fig2"]
        assert YOUR_CHOICE in card_text(panel, "fig2")
        assert YOUR_CHOICE not in card_text(panel, "fig4")
        assert panel.export_button.isEnabled()
        remembered = AppSettings().graphical_abstract(paper.sha256)
        assert remembered == {"id": "fig2", "kind": "figure", "number": "2"}

    for panel in make_panel(qtbot, bundle, paper):  # the same paper (same sha256) opened again
        wait_ranked(qtbot, panel, previews=False)
        assert [row[1] for row in panel.rows() if row[3]] == ["fig2"]
        assert YOUR_CHOICE in card_text(panel, "fig2")
        assert panel.selected_id() == "fig2" and panel.export_button.isEnabled()
        qtbot.waitUntil(lambda p=panel: not p.busy, timeout=TIMEOUT_MS)

    other = dataclasses.replace(paper, sha256="cd" * 32)
    for panel in make_panel(qtbot, bundle, other):  # another paper: no choice of its own
        wait_ranked(qtbot, panel, previews=False)
        assert not any(row[3] for row in panel.rows())
        assert YOUR_CHOICE not in card_text(panel, "fig2")
        assert panel.selected_id() == "" and not panel.export_button.isEnabled()
        qtbot.waitUntil(lambda p=panel: not p.busy, timeout=TIMEOUT_MS)


def _png_size(path: Path) -> tuple[int, int]:
    image = QImage(str(path))
    assert not image.isNull()
    return image.width(), image.height()


def test_export_writes_a_300_dpi_png_with_its_caption(qtbot, tmp_path: Path, paper: Paper) -> None:  # type: ignore[no-untyped-def]
    figure = next(f for f in paper.figures if f.id == "fig3")
    x0, y0, x1, y1 = figure.bbox
    out = tmp_path / "out" / "abstract.png"
    done = export_figure_png(paper.source_path, figure.page, figure.bbox, figure.caption, out)
    width, height = _png_size(out)
    assert abs(width - (x1 - x0) / 72 * 300) <= 3
    assert abs(done.figure_height - (y1 - y0) / 72 * 300) <= 3
    assert done.caption_height > 30  # a strip with at least one line of 9 pt text at 300 dpi
    assert height == done.figure_height + done.caption_height == done.height
    assert (width, height) == (done.width, done.height)
    assert abs(QImage(str(out)).dotsPerMeterX() - 300 / 0.0254) < 2
    assert done.text == out.with_suffix(".txt")
    assert done.text.read_text(encoding="utf-8").strip() == figure.caption.strip()
    image = QImage(str(out))
    strip = [image.pixelColor(x, done.figure_height + done.caption_height // 2).lightness()
             for x in range(0, width, 3)]
    assert min(strip) < 128 < max(strip)  # dark caption text on white
    inside = image.pixelColor(width // 2, done.figure_height // 2)
    assert inside.lightness() < 250  # the figure's grey box, not blank

    bare = export_figure_png(paper.source_path, figure.page, figure.bbox, "", tmp_path / "bare.png")
    assert bare.caption_height == 0
    assert abs(_png_size(tmp_path / "bare.png")[1] - (y1 - y0) / 72 * 300) <= 3


def test_the_panel_exports_in_the_background(qtbot, bundle: Path, paper: Paper, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle, paper):
        wait_ranked(qtbot, panel)
        assert not panel.export(tmp_path / "nothing.png")  # nothing chosen or selected
        panel.list.setCurrentRow(0)
        with qtbot.waitSignal(panel.exported, timeout=TIMEOUT_MS) as written:
            assert panel.export(tmp_path / "ga.png")
        assert written.args[0].png == tmp_path / "ga.png"
        assert (tmp_path / "ga.txt").read_text(encoding="utf-8").startswith("Figure 4:")
        assert AppSettings().graphical_abstract(paper.sha256)["id"] == "fig4"  # exporting chooses it
        assert YOUR_CHOICE in card_text(panel, "fig4")
        assert "Saved ga.png" in panel.status.text()


def test_empty_states(qtbot, monkeypatch, bundle: Path, paper: Paper, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle, None):
        assert panel.message.text() == NO_PAPER
        assert not panel.suggest() and panel.message.text() == NO_PAPER

    no_figures = dataclasses.replace(make_paper(), figures=[])
    for panel in make_panel(qtbot, bundle, no_figures):
        assert panel.message.text() == NO_FIGURES
        assert "only figures are candidates, tables are not" in panel.message.text()
        assert not panel.busy

    table = Figure(id="tab1", kind="table", number="1", caption="Table 1: Numbers.", page=0,
                   bbox=(72.0, 300.0, 500.0, 400.0))
    tables_only = dataclasses.replace(make_paper(), figures=[table])
    for panel in make_panel(qtbot, bundle, tables_only):
        assert "No figures found" in panel.message.text() and "Include tables" in panel.message.text()
        assert not panel.busy

    no_shipped_model(monkeypatch, tmp_path)  # no fallback either: no model at all
    for panel in make_panel(qtbot, tmp_path / "no-such-bundle", paper):  # the model cannot load
        qtbot.waitUntil(lambda p=panel: p.message.text() == NO_MODEL, timeout=TIMEOUT_MS)
        assert "No model" in panel.status.text()
        assert panel.shown is None and not panel.busy


def test_the_panel_is_registered_with_its_own_shortcut() -> None:
    from app.gui.panels import load_builtin_panels

    specs = load_builtin_panels()
    spec = next(s for s in specs if s.id == "graphical_abstract")
    assert spec.title == "Graphical abstract" and spec.shortcut == "Ctrl+Shift+G"
    shortcuts = [s.shortcut for s in specs if s.shortcut]
    assert len(shortcuts) == len(set(shortcuts))
    main_window = (Path(__file__).resolve().parents[1] / "app" / "gui" / "main_window.py").read_text()
    assert "Ctrl+Shift+G" not in main_window


NUMBER = re.compile(r"(?<![\w.])[+-]?\d+(?:[.,]\d+)?")
ALLOWED = re.compile(r"\b(?:Figure|Fig\.|Table|p\.)\s*\d+|^\s*\d+\.|\d+(?:\.\d+)?\s*%|\d+ times?\b")


def raw_numbers(text: str) -> list[float]:
    """The numbers above 1 in ``text`` that are not figure numbers, pages, ranks, counts or percentages."""
    plain = ALLOWED.sub(" ", html.unescape(re.sub(r"<[^>]+>", " ", text)).replace("\xa0", " "))
    return [float(n.replace(",", ".")) for n in NUMBER.findall(plain) if abs(float(n.replace(",", "."))) > 1]


def test_cards_say_the_reason_in_words_without_raw_scores(qtbot, bundle: Path, paper: Paper) -> None:  # type: ignore[no-untyped-def]
    for panel in make_panel(qtbot, bundle, paper):
        wait_ranked(qtbot, panel)
        for ranked in panel.ranking.figures:  # type: ignore[union-attr]
            text = card_text(panel, ranked.figure_id)
            assert "score" not in text and raw_numbers(text) == []
            assert html.escape(ranked.reason[:60]) in text  # the ranker's own words
            assert "pointed to" in ranked.reason.lower() and "% of its page" in ranked.reason
            tip = panel.list.item(ranked.rank - 1).toolTip()
            assert ranked.reason in tip and f"rank {ranked.rank} of 4" in tip
            head = re.sub(r"score \d\.\d\d|\d+%|page \d+|rank \d+ of \d+", " ", tip.split("\n\n")[0])
            assert raw_numbers(head) == []  # the score on 0-1, the parts as shares
        assert raw_numbers(panel.heading.text().split("</b>", 1)[1]) == []
    assert raw_numbers("1. Figure 4 p. 5; pointed to 3 times; covers 40% of its page") == []
    assert raw_numbers("score +2.35") == [2.35]


def test_the_dock_opens_tall_enough_for_the_first_three_cards(qtbot, bundle: Path, paper: Paper,  # type: ignore[no-untyped-def]
                                                             tmp_path: Path) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from tests.gui_helpers import open_window

    for window in open_window(qtbot, bundle):
        window.resize(1500, 900)  # three cards across under the page (the right column runs full height)
        with qtbot.waitSignal(window.analysisShown, timeout=TIMEOUT_MS):
            assert window.open_path(paper.source_path)
        dock = window.docks["graphical_abstract"]
        panel = window.panels["graphical_abstract"]
        dock.show()  # the reported state: a dock left ~130 px low, then hidden
        qtbot.waitUntil(dock.isVisible)
        window.resizeDocks([dock], [130], Qt.Orientation.Vertical)
        QApplication.processEvents()  # (Qt may keep the dock at its minimum instead: then no shrink to undo)
        dock.hide()
        panel.act_suggest.trigger()  # the toolbar's / File menu's action shows the dock and suggests
        wait_ranked(qtbot, panel)
        # grown toward wanted_height (the docks beside the page keep their least heights)
        qtbot.waitUntil(lambda d=dock: d.height() >= 300, timeout=5_000)
        assert dock.height() <= window.height() * 2 // 3
        QApplication.processEvents()
        viewport = panel.list.viewport().rect()
        assert panel.list.count() == 4
        for row in range(3):  # the first three cards, thumbnail and reason, without scrolling
            item = panel.list.item(row)
            assert viewport.contains(panel.list.visualItemRect(item)), (row, viewport)
            card = panel._cards[str(item.data(ga.FIGURE_ID))]
            assert card.image.height() >= ga.MIN_THUMB_HEIGHT
            assert card.text.height() >= card.text.heightForWidth(card.text.width())  # no reason cut off
        assert panel.list.verticalScrollBar().value() == 0
        qtbot.waitUntil(lambda p=panel: not p.busy, timeout=TIMEOUT_MS)


def test_export_never_replaces_a_txt_nobody_confirmed(qtbot, tmp_path: Path, paper: Paper) -> None:  # type: ignore[no-untyped-def]
    """Hostile test C, problem 1: the caption sidecar overwrote an existing ``notes.txt`` unasked, and a
    PNG named ``caption.txt`` was overwritten by its own caption."""
    figure = next(f for f in paper.figures if f.id == "fig3")
    notes = tmp_path / "notes.txt"
    notes.write_text("MY PRECIOUS NOTES", encoding="utf-8")
    with pytest.raises(FileExistsError, match=r"notes\.txt already exists"):
        export_figure_png(paper.source_path, figure.page, figure.bbox, figure.caption, tmp_path / "notes.png")
    assert notes.read_text(encoding="utf-8") == "MY PRECIOUS NOTES"
    assert not (tmp_path / "notes.png").exists()  # nothing written at all
    with pytest.raises(FileExistsError, match=r"choose a name ending in \.png"):
        export_figure_png(paper.source_path, figure.page, figure.bbox, figure.caption,
                          tmp_path / "caption.txt")
    assert not (tmp_path / "caption.txt").exists()
    done = export_figure_png(paper.source_path, figure.page, figure.bbox, figure.caption,
                             tmp_path / "notes.png", replace_sidecar=True)  # confirmed: replaced
    assert done.text == notes and notes.read_text(encoding="utf-8").strip() == figure.caption.strip()


def test_the_panel_asks_before_replacing_the_caption_txt(qtbot, monkeypatch, bundle: Path, paper: Paper,  # type: ignore[no-untyped-def]
                                                          tmp_path: Path) -> None:
    from PySide6.QtWidgets import QMessageBox

    import app.gui.panels.graphical_abstract_exporter as exporter

    asked: list[str] = []
    answer = [QMessageBox.StandardButton.No]
    monkeypatch.setattr(exporter.QMessageBox, "question",
                        lambda _parent, _title, text, *_a: asked.append(text) or answer[0])
    notes = tmp_path / "notes.txt"
    notes.write_text("MY PRECIOUS NOTES", encoding="utf-8")
    for panel in make_panel(qtbot, bundle, paper):
        wait_ranked(qtbot, panel)
        panel.list.setCurrentRow(0)
        assert not panel.export(tmp_path / "notes.png")  # the author keeps the notes
        assert len(asked) == 1 and "notes.txt already exists" in asked[0]
        assert panel.status.text() == ("Not exported: notes.txt already exists and would be replaced by the "
                                       "figure's caption.")
        assert not panel.export(tmp_path / "caption.txt")  # refused without asking
        assert len(asked) == 1 and "choose a name ending in .png" in panel.status.text()
        assert notes.read_text(encoding="utf-8") == "MY PRECIOUS NOTES"
        assert not (tmp_path / "notes.png").exists() and not (tmp_path / "caption.txt").exists()
        answer[0] = QMessageBox.StandardButton.Yes
        with qtbot.waitSignal(panel.exported, timeout=TIMEOUT_MS):
            assert panel.export(tmp_path / "notes.png")
        assert notes.read_text(encoding="utf-8").startswith("Figure 4:")


def test_a_failed_export_replaces_the_saved_line_in_the_status_bar(qtbot, bundle: Path, paper: Paper,  # type: ignore[no-untyped-def]
                                                                   tmp_path: Path) -> None:
    """Hostile test H: the panel said "Cannot write …" while the window's status bar still said "Graphical
    abstract saved as …" from the export before."""
    said: list[str] = []
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder", encoding="utf-8")
    for panel in make_panel(qtbot, bundle, paper):
        panel.statusMessage.connect(said.append)  # what the window's status bar shows
        wait_ranked(qtbot, panel)
        panel.list.setCurrentRow(0)
        with qtbot.waitSignal(panel.exported, timeout=TIMEOUT_MS):
            assert panel.export(tmp_path / "ga.png")
        assert said[-1] == f"Graphical abstract saved as {tmp_path / 'ga.png'}"
        assert panel.export(blocker / "ga.png")
        qtbot.waitUntil(lambda p=panel: not p.exporter.op.busy, timeout=TIMEOUT_MS)
        assert panel.status.text().startswith(f"Cannot write {blocker / 'ga.png'}: ")
        assert said[-1] == panel.status.text()
        folder = tmp_path / "folder.png"
        folder.mkdir()
        assert not panel.export(folder)  # refused before it starts: said there too
        refused = f"Cannot export to {folder}: it is a folder; choose a file name."
        assert said[-1] == panel.status.text() == refused
