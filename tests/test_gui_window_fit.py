"""A window that fits (issue 26.4): the page keeps a readable width and re-fits when docks change,
panels open at a height that shows their content, remembered layouts are sanitised, and panels are
linked by the capabilities the registry declares."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, Qt, Signal
from PySide6.QtGui import QGuiApplication, QMouseEvent
from PySide6.QtWidgets import QApplication, QLabel

from app.gui.dock_share import MAX_NEEDY_UNDER_SHARE, MAX_UNDER_SHARE, under_page_share
from app.gui.docks import on_some_screen
from app.gui.page_view import PAGE_MIN_WIDTH
from app.gui.panels import PanelSpec, register_panel, unregister_panel
from app.gui.panels import registry as caps
from app.gui.settings import AppSettings
from core.paths import sample_paper_path
from tests.gui_helpers import open_window

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RHETORICA_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _window(qtbot):  # type: ignore[no-untyped-def]
    return open_window(qtbot, None, load_model_at_start=False, use_cache=False)


def _open_pages(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.firstPageShown, timeout=60_000):
        window.open_path(sample_paper_path())


def _page_is_whole(window) -> bool:  # type: ignore[no-untyped-def]
    view = window.page_view
    return view.sceneRect().width() * view.zoom <= view.viewport().width() + 1


def _widen_right_column(qtbot, window, width: int) -> None:  # type: ignore[no-untyped-def]
    inspector = window.docks["inspector"]
    window.resizeDocks([inspector], [width], Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: inspector.width() > 420, timeout=5_000)


# -- the page ------------------------------------------------------------------------------------
def test_the_page_keeps_a_readable_width_and_refits_when_docks_change(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    for window in _window(qtbot):
        _open_pages(qtbot, window)
        view = window.page_view
        assert view.fits_width and _page_is_whole(window)
        before = view.zoom
        _widen_right_column(qtbot, window, 1200)  # a dock asks for far more than there is
        assert view.width() >= PAGE_MIN_WIDTH  # the docks gave way, not the page
        qtbot.waitUntil(lambda v=view, z=before: v.zoom < z - 0.01, timeout=5_000)  # fitted again
        assert _page_is_whole(window) and not view.horizontalScrollBar().isVisible()
        assert AppSettings().zoom == 0.0  # "fit width" is what the next paper gets, not a number


def test_a_whole_page_zoom_stays_whole_and_a_closer_one_keeps_its_scroll_bar(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    for window in _window(qtbot):
        _open_pages(qtbot, window)
        view = window.page_view
        chosen = view.zoom * 0.99
        view.set_zoom(chosen)  # a fixed zoom with the whole width on screen
        assert AppSettings().zoom == pytest.approx(chosen, abs=1e-3)
        _widen_right_column(qtbot, window, 1200)
        qtbot.waitUntil(lambda v=view, z=chosen: v.zoom < z - 0.01, timeout=5_000)
        assert _page_is_whole(window) and not view.horizontalScrollBar().isVisible()
        view.set_zoom(3.0)  # closer than the width: the user wants to pan
        window.resizeDocks([window.docks["inspector"]], [300], Qt.Orientation.Horizontal)
        qtbot.waitUntil(lambda d=window.docks["inspector"]: d.width() < 420, timeout=5_000)
        assert view.zoom == pytest.approx(3.0) and view.horizontalScrollBar().isVisible()


# -- panels open at a size that shows their content ---------------------------------------------------
def test_a_panel_shown_grows_to_the_height_that_shows_its_content(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    for window in _window(qtbot):
        docks = window.dock_panels
        wanted = docks.spec("suggestions").min_height
        assert wanted > 0  # several suggestion cards
        window.resize(1300, 1000)  # room for it beside the inspector's least height
        dock = docks.show_panel("suggestions")
        qtbot.waitUntil(lambda d=dock: not d.visibleRegion().isEmpty(), timeout=5_000)  # in front of its tabs
        window.resizeDocks([dock], [140], Qt.Orientation.Vertical)  # left low, as a layout once was
        qtbot.wait(50)  # (alone, Qt may keep the dock at its minimum instead: the regrow is then a no-op)
        dock.hide()
        docks.show_panel("suggestions")
        least = min(wanted, window.height() * 2 // 3) - 5
        qtbot.waitUntil(lambda d=dock, h=least: d.height() >= h, timeout=5_000)


def test_a_side_panel_does_not_widen_its_column_for_a_long_combo_entry(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    for window in _window(qtbot):
        dock = window.dock_panels.show_panel("suggestions")  # its function filter has long entries
        qtbot.waitUntil(lambda d=dock: not d.visibleRegion().isEmpty(), timeout=5_000)
        window.resizeDocks([dock], [380], Qt.Orientation.Horizontal)
        qtbot.waitUntil(lambda d=dock: d.width() <= 400, timeout=5_000)
        assert window.page_view.width() >= PAGE_MIN_WIDTH


# -- panels under the page leave the page its share of the height -----------------------------------
PAGE_SHARE = 0.40  # the page view's least share of the window's height with panels open under it


def _in_front(window, panel_id: str) -> bool:  # type: ignore[no-untyped-def]
    dock = window.docks[panel_id]
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


def _show_under(qtbot, window, *panel_ids: str) -> None:  # type: ignore[no-untyped-def]
    for panel_id in panel_ids:
        window.dock_panels.show_panel(panel_id)
        qtbot.waitUntil(lambda p=panel_id: _in_front(window, p), timeout=5_000)
        qtbot.wait(100)  # its growth and its tab bar's top-up, a turn of the event loop later


def test_two_panels_under_the_page_leave_the_page_its_share(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    """The reported state: the graphical abstract opened (it asks for a tall row of cards), then the
    library tabbed with it; the tab group kept the tallest height (plus its tab bar) and the page got
    about a third of the window."""
    for window in _window(qtbot):
        window.resize(1280, 800)
        _open_pages(qtbot, window)
        _show_under(qtbot, window, "graphical_abstract", "library")
        page = window.page_view.height()
        assert page >= 0.48 * window.height(), page  # the library asks for its share only (0.446 before)
        assert under_page_share(window) <= MAX_UNDER_SHARE + 0.01
        window.docks["graphical_abstract"].raise_()  # its tab clicked: it grows back for its cards
        qtbot.waitUntil(lambda w=window: under_page_share(w) > MAX_UNDER_SHARE + 0.02, timeout=5_000)
        assert under_page_share(window) <= MAX_NEEDY_UNDER_SHARE + 0.01
        assert window.page_view.height() >= PAGE_SHARE * window.height()


def test_two_panels_shown_at_once_leave_the_one_in_front_its_height(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    """``gui --show-panel library --show-panel graphical_abstract``: both sizes are asked for in one turn
    of the event loop; the panel in front still gets the height it asks for (within its share)."""
    for window in _window(qtbot):
        window.resize(1280, 800)
        _open_pages(qtbot, window)
        window.dock_panels.show_panel("library")
        window.dock_panels.show_panel("graphical_abstract")
        qtbot.waitUntil(lambda w=window: _in_front(w, "graphical_abstract"), timeout=5_000)
        qtbot.waitUntil(lambda w=window: under_page_share(w) >= MAX_NEEDY_UNDER_SHARE - 0.01, timeout=5_000)
        assert under_page_share(window) <= MAX_NEEDY_UNDER_SHARE + 0.01


def test_a_tab_brought_forward_and_back_in_one_turn_does_not_grow_the_group(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    """``gui --show-panel graphical_abstract --show-panel library --screenshot``: both panels are shown
    before the window is, and raised again once the paper is labelled; the graphical abstract's growth,
    asked for while it was in front for a moment, must not happen behind the library."""
    for window in _window(qtbot):
        window.resize(1280, 800)
        _open_pages(qtbot, window)
        _show_under(qtbot, window, "graphical_abstract", "library")
        window.dock_panels.show_panel("graphical_abstract")
        window.dock_panels.show_panel("library")
        qtbot.wait(300)
        assert _in_front(window, "library")
        assert under_page_share(window) <= MAX_UNDER_SHARE + 0.01


def test_a_lower_window_keeps_the_share_of_the_panels_under_the_page(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    for window in _window(qtbot):
        window.resize(1440, 900)
        _open_pages(qtbot, window)
        _show_under(qtbot, window, "library", "graphical_abstract")
        before = under_page_share(window)
        window.resize(1280, 800)  # Qt alone keeps the docks' pixels and takes it all from the page
        qtbot.waitUntil(lambda w=window, b=before: under_page_share(w) <= b + 0.01, timeout=5_000)
        assert window.page_view.height() >= PAGE_SHARE * window.height()


def _drag_page_edge(window, dock, height: int) -> None:  # type: ignore[no-untyped-def]
    """What dragging the separator above ``dock`` does: a press and a release on the window itself with
    the docks resized in between (Qt's separator cannot be dragged on the offscreen platform; the
    events land off the separator, so that Qt's own move does not undo the resize)."""
    spot = QPointF(window.width() / 2, 1)
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    for kind, button, buttons in ((QEvent.Type.MouseButtonPress, left, left),
                                  (QEvent.Type.MouseButtonRelease, left, none)):
        if kind == QEvent.Type.MouseButtonRelease:
            window.resizeDocks([dock], [height], Qt.Orientation.Vertical)
            QApplication.processEvents()
        QApplication.sendEvent(window, QMouseEvent(kind, spot, spot, button, buttons,
                                                   Qt.KeyboardModifier.NoModifier))


def test_the_share_the_user_drags_the_page_edge_to_is_kept(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    for window in _window(qtbot):
        window.resize(1280, 900)
        _open_pages(qtbot, window)
        _show_under(qtbot, window, "library")
        assert under_page_share(window) <= MAX_UNDER_SHARE + 0.01
        _drag_page_edge(window, window.docks["library"], int(window.height() * 0.53))  # (page: its least)
        chosen = under_page_share(window)
        assert chosen > MAX_NEEDY_UNDER_SHARE + 0.03
        _show_under(qtbot, window, "graphical_abstract")  # opened into the user's tall group: kept
        assert under_page_share(window) >= chosen - 0.01
        window.resize(1280, 800)  # a lower window keeps the user's share, not the pixels
        qtbot.waitUntil(lambda w=window, c=chosen: under_page_share(w) <= c + 0.01, timeout=5_000)
        assert under_page_share(window) >= chosen - 0.03


def test_the_graphical_abstract_cards_refit_when_their_panel_is_made_lower(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A panel under the page may now be brought down to its share after its cards were laid out (a
    lower window, a panel opened into its tab group): the cards shrink their thumbnails with it, and the
    first row stays whole, text included (the list caches its uniform item size)."""
    from app.gui.panels.graphical_abstract_cards import MIN_THUMB_HEIGHT, CardList
    from core.figures.figure_rank import FigureRanking, RankedFigure

    figures = [RankedFigure(figure_id=f"fig{n}", number=str(n), kind="figure", page=n, caption="An overview.",
                            rank=n, score=1.0 / n, parts={}, features={}, best_sentence="", words=[],
                            reason="A diagram; pointed to 2 times (the introduction); covers 30% of its page")
               for n in range(1, 7)]  # two rows: the scroll bar shows at both heights
    ranking = FigureRanking(paper="p", source_path="p.pdf", scorer="test", weights={}, weights_source="test",
                            query="abstract", figures=figures)
    cards = CardList()
    qtbot.addWidget(cards)
    cards.resize(1100, 460)  # room for the largest thumbnails
    cards.show()
    qtbot.waitExposed(cards)
    cards.fill(ranking, "")
    qtbot.wait(50)
    cards.resize(1100, 280)

    def first_row_whole() -> bool:
        card = cards.visualItemRect(cards.item(0))
        return cards.viewport().rect().contains(card) and card.height() < 280

    qtbot.waitUntil(first_row_whole, timeout=5_000)
    assert cards.cards["fig1"].image.height() >= MIN_THUMB_HEIGHT


# -- remembered layouts --------------------------------------------------------------------------------
def _remember_all_shown(order: list[str]) -> None:
    settings = AppSettings()
    for spec_id in ("draft", "alignment", "library", "search", "graphical_abstract", "suggestions"):
        settings.set_flag(f"{spec_id}_visible", True)
    settings.panels_shown_order = order
    settings.sync()


def test_panels_remembered_from_earlier_sessions_do_not_pile_up(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    _remember_all_shown(["draft", "search", "alignment", "graphical_abstract", "library", "suggestions"])
    for window in _window(qtbot):
        bottom = [pid for pid, dock in window.docks.items() if dock.isVisible()
                  and window.dockWidgetArea(dock) == Qt.DockWidgetArea.BottomDockWidgetArea]
        assert bottom == ["library"]  # the one shown last; the rest wait in View › Panels
        assert window.docks["suggestions"].isVisible()  # the only remembered one beside the page
        assert all(window.docks[p].toggleViewAction().isChecked() is False
                   for p in ("draft", "alignment", "search", "graphical_abstract"))


def test_floating_docks_come_back_on_screen_and_a_speck_is_docked_again(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    screen = QGuiApplication.primaryScreen().availableGeometry()
    for window in _window(qtbot):
        speck, lost, kept = window.docks["figures"], window.docks["profile"], window.docks["outline"]
        for dock, rect in ((speck, QRect(screen.left() + 30, screen.top() + 30, 40, 40)),
                           (lost, QRect(-20_000, -20_000, 300, 300)),
                           (kept, QRect(screen.left() + 20, screen.top() + 20, 250, 250))):
            dock.setFloating(True)
            dock.setGeometry(rect)
        qtbot.waitUntil(lambda a=speck, b=lost, c=kept: a.isFloating() and b.isFloating() and c.isFloating(),
                        timeout=5_000)
    for window in _window(qtbot):
        figures = window.docks["figures"]
        assert not figures.isFloating()  # too small to use: back in its place
        assert window.dockWidgetArea(figures) == Qt.DockWidgetArea.RightDockWidgetArea
        for panel in ("profile", "outline"):  # still floating, and on a screen
            dock = window.docks[panel]
            assert dock.isFloating() and on_some_screen(dock.frameGeometry()), panel


def test_a_window_remembered_off_every_screen_opens_on_one(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    for window in _window(qtbot):
        window.move(-50_000, -50_000)
        window.resize(300, 200)  # off screen and too small to use
    from app.gui.main_window import MainWindow

    window = MainWindow(load_model_at_start=False, use_cache=False)
    qtbot.addWidget(window)
    try:
        area = QGuiApplication.primaryScreen().availableGeometry()
        frame = window.frameGeometry()
        assert area.contains(frame.topLeft())
        assert frame.width() >= 400 and frame.height() >= 400
        least = window.minimumSizeHint()  # the offscreen screen may be narrower than the window can be
        assert frame.width() <= max(area.width(), least.width()) + 10
    finally:
        window.close()


def test_on_some_screen_refuses_absurd_rectangles(qtbot) -> None:  # type: ignore[no-untyped-def]
    area = QGuiApplication.primaryScreen().availableGeometry()
    assert on_some_screen(QRect(area.topLeft() + QPoint(10, 10), area.size() / 2))
    assert not on_some_screen(QRect(area.topLeft(), area.size() * 3))  # larger than any screen
    assert not on_some_screen(QRect(area.right() + 5_000, area.top(), 300, 300))  # nowhere
    assert not on_some_screen(QRect(area.left() + 10, area.top() + 10, 20, 20))  # a speck


# -- declared capabilities -------------------------------------------------------------------------------
def test_the_built_in_panels_have_the_capabilities_the_window_links(qtbot, home) -> None:  # type: ignore[no-untyped-def]
    for window in _window(qtbot):
        p = window.panels
        assert isinstance(p["draft"], caps.DraftSource) and isinstance(p["draft"], caps.TakesText)
        assert isinstance(p["suggestions"], caps.FollowsDraftSentence)
        assert isinstance(p["suggestions"], caps.TakesDraftContext)
        assert isinstance(p["suggestions"], caps.AsksToInsert)
        assert isinstance(p["alignment"], caps.ComparesPapers)
        assert isinstance(p["alignment"], caps.TakesDraftText)
        assert isinstance(p["library"], caps.ChangesLibrary)
        assert isinstance(p["library"], caps.OffersFileActions)
        assert isinstance(p["search"], caps.FollowsLibrary) and isinstance(p["search"], caps.OpensPapers)
        assert isinstance(p["search"], caps.Searches)
        assert isinstance(p["graphical_abstract"], caps.NeedsHeight)
        assert isinstance(p["graphical_abstract"], caps.OffersToolbarActions)
        assert not isinstance(p["outline"], caps.DraftSource)


class _Listener(QLabel):
    """A panel of the test's own that only declares what it takes: the library's changes."""

    def __init__(self, _session: object) -> None:
        super().__init__("listener")
        self.changes = 0

    def library_changed(self) -> None:
        self.changes += 1


class _Announcer(QLabel):
    statusMessage = Signal(str)

    def __init__(self, _session: object) -> None:
        super().__init__("announcer")


@pytest.fixture
def own_panels():  # type: ignore[no-untyped-def]
    register_panel(PanelSpec(id="listener", title="Listener", factory=_Listener, order=998, visible=False))
    register_panel(PanelSpec(id="announcer", title="Announcer", factory=_Announcer, order=999, visible=False,
                             area=Qt.DockWidgetArea.BottomDockWidgetArea, min_height=333))
    yield
    unregister_panel("listener")
    unregister_panel("announcer")


def test_a_new_panel_is_linked_by_what_it_declares(qtbot, home, own_panels) -> None:  # type: ignore[no-untyped-def]
    for window in _window(qtbot):
        listener, announcer = window.panels["listener"], window.panels["announcer"]
        assert isinstance(listener, caps.FollowsLibrary) and isinstance(announcer, caps.SaysStatus)
        window.panels["library"].libraryChanged.emit()
        assert listener.changes == 1
        announcer.statusMessage.emit("hello from a panel")
        assert window.statusBar().currentMessage() == "hello from a panel"
        dock = window.dock_panels.show_panel("announcer")  # its spec's min_height is honoured
        least = min(333, int(window.height() * MAX_NEEDY_UNDER_SHARE)) - 5
        qtbot.waitUntil(lambda d=dock, h=least: d.height() >= h, timeout=5_000)


def test_the_window_links_panels_without_probing_attribute_names() -> None:
    for name in ("main_window.py", "docks.py", "app.py", "screenshot.py"):
        source = (ROOT / "app" / "gui" / name).read_text(encoding="utf-8")
        assert "getattr(" not in source and "hasattr(" not in source, name


# -- sentence numbers count from 1 everywhere ------------------------------------------------------------
def test_select_counts_sentences_from_one_as_the_window_does(qtbot, home, tmp_path_factory, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from app.gui.screenshot import Screenshot, ScreenshotPlan
    from tests.gui_helpers import model_bundle

    bundle = model_bundle(tmp_path_factory)
    for window in open_window(qtbot, bundle, use_cache=False):
        messages: list[str] = []
        window.statusBar().messageChanged.connect(messages.append)
        shot = Screenshot(window, ScreenshotPlan(tmp_path / "shot.png", select_number=3))
        shot.start()
        with qtbot.waitSignal(window.analysisShown, timeout=240_000):
            window.open_path(sample_paper_path())
        qtbot.waitUntil(lambda s=window.session: s.selected == 2, timeout=10_000)  # the third sentence
        total = len(window.session.paper.sentences)
        assert any(m.startswith(f"Sentence 3 of {total}") for m in messages)
        qtbot.waitUntil((tmp_path / "shot.png").is_file, timeout=240_000)  # after the jobs it started
        assert not shot.error


def test_a_draft_dropped_on_the_window_opens_in_the_draft_pane(qtbot, tmp_path, home) -> None:  # type: ignore[no-untyped-def]
    """A .md/.tex/.docx/.txt file dropped outside the draft editor still goes to the draft pane, not
    to the PDF opener (which would refuse it as "not a PDF")."""
    from app.gui.panels.registry import OpensDrafts

    draft = tmp_path / "notes.md"
    draft.write_text("# Introduction\n\nWe study how authors write. Our aim is to help.\n", encoding="utf-8")
    opened: list[str] = []
    refused: list[str] = []
    for window in _window(qtbot):
        pane = next(p for p in window.panels.values() if isinstance(p, OpensDrafts))
        pane.open_draft = opened.append  # type: ignore[method-assign]
        window.open_path = refused.append  # type: ignore[method-assign]
        assert window._open_dropped_draft(str(draft)) and opened == [str(draft)]
        assert not window._open_dropped_draft(str(tmp_path / "paper.pdf")) and not refused
