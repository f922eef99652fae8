"""Graphical-abstract panel: the open paper's figures ranked as graphical-abstract candidates (issue 14).
Widgets and wiring only: the job is ``graphical_abstract_job.suggest_job`` (the ranking, then thumbnails
rendered in a child process) run by a :class:`~app.gui.operation.PanelOperation` (a result for another
paper or "Include tables" choice is dropped); the cards are ``graphical_abstract_cards``, their words
``graphical_abstract_text``, "Export PNG…" ``graphical_abstract_exporter``. A card's selection shows the
figure on its page; "Use as graphical abstract" (or double-click) remembers it per paper sha256."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import QWidget

from app.gui.operation import ANALYSIS, MODEL, AnalysisUnavailable, ModelUnavailable, PanelOperation
from app.gui.panels.graphical_abstract_cards import FIGURE_ID, MIN_THUMB_HEIGHT, CardList, ShownRanking
from app.gui.panels.graphical_abstract_choice import RememberedChoice
from app.gui.panels.graphical_abstract_controls import SHORTCUT, GraphicalAbstractControls
from app.gui.panels.graphical_abstract_export import ExportedFigure, export_figure_png
from app.gui.panels.graphical_abstract_exporter import FigureExporter
from app.gui.panels.graphical_abstract_job import suggest_job
from app.gui.panels.graphical_abstract_text import (
    NO_FIGURES,
    NO_MODEL,
    NO_PAPER,
    YOUR_CHOICE,
    failure_message,
    figure_label,
    heading_html,
    heading_tooltip,
    nothing_to_rank,
)
from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.session import Session
from app.gui.settings import AppSettings
from app.gui.widgets import MessageStack, clip, heading_label, panel_layout, show_dock_of, while_alive
from core.document import Figure, Paper

if TYPE_CHECKING:  # pragma: no cover
    from core.figures.figure_rank import FigureRanking

__all__ = ["FIGURE_ID", "MIN_THUMB_HEIGHT", "NO_FIGURES", "NO_MODEL", "NO_PAPER", "YOUR_CHOICE",
           "GraphicalAbstractPanel", "export_figure_png"]

DOCK_CHROME = 120  # the dock's title, the buttons, the heading, the status line and the list's margins
START = "Press <b>Suggest</b> to rank this paper's figures as graphical-abstract candidates."
SUGGESTING = "Ranking the figures…"


class GraphicalAbstractPanel(QWidget):
    rankingShown = Signal(object)  # the FigureRanking now listed
    choiceChanged = Signal(str)  # the figure id chosen for the open paper ("" = none)
    exported = Signal(object)  # an ExportedFigure
    statusMessage = Signal(str)  # shown in the window's status bar

    def __init__(self, session: Session, settings: AppSettings | None = None) -> None:
        super().__init__()
        self.session = session
        self.choice = RememberedChoice(settings)
        self.shown: ShownRanking | None = None
        self._summary = ""  # the status line of the listed ranking
        self.op = PanelOperation(self, session, error_prefix="Ranking the figures failed")
        self.op.line.cancel_button.setToolTip("Stop ranking")
        self.exporter = FigureExporter(self, session, self.op.line)
        self.exporter.exported.connect(self._on_exported)
        self.status, self.cancel_button = self.op.line.label, self.op.line.cancel_button
        self.op.busyChanged.connect(self._on_busy)
        self.controls = controls = GraphicalAbstractControls()
        self.include_tables, self.act_suggest = controls.include_tables, controls.act_suggest
        self.use_button, self.export_button = controls.use_button, controls.export_button
        controls.suggest_button.clicked.connect(lambda: self.suggest())
        self.include_tables.toggled.connect(lambda _on: self.suggest())
        self.use_button.clicked.connect(lambda: self.choose_selected())
        self.export_button.clicked.connect(lambda: self.export())
        self.act_suggest.triggered.connect(lambda _checked=False: self.suggest_shown())
        self.exporter.busyChanged.connect(lambda busy: self.export_button.setEnabled(
            not busy and bool(self.export_target())))
        self.list = CardList()
        self._cards = self.list.cards
        self.list.figureSelected.connect(self._on_selection)
        self.list.itemActivated.connect(lambda item: self.choose(str(item.data(FIGURE_ID))))
        self.stack = MessageStack(self.list)
        self.message = self.stack.message
        self.heading = heading_label()
        panel_layout(self, controls, self.heading, (self.stack, 1), self.op.line)
        session.documentOpened.connect(while_alive(self, lambda _d: self.clear()))
        session.documentClosed.connect(self.clear)
        session.paperReady.connect(while_alive(self, lambda _p: self.suggest(defer_hidden=True)))
        self._show_start()

    # -- what the window offers ---------------------------------------------------------------
    def file_menu_actions(self) -> list[QAction]:
        """What the window puts in its File menu (and, below, its toolbar)."""
        return [self.act_suggest]

    def toolbar_actions(self) -> list[QAction]:
        return [self.act_suggest]

    def wanted_height(self) -> int:
        """The dock height that shows a row of cards, thumbnails and reasons, without scrolling."""
        return self.list.wanted_height(DOCK_CHROME)

    # -- state ------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self.op.busy

    @property
    def ranking(self) -> FigureRanking | None:
        return None if self.shown is None else self.shown.ranking

    def chosen_id(self) -> str:
        """The figure remembered for the open paper that is among the listed candidates ("" = none)."""
        return self.choice.chosen_id(self.session.paper, self.ranking)

    def rows(self) -> list[tuple[int, str, float, bool]]:
        """The listed candidates: (rank, figure id, score, is the remembered choice)."""
        chosen = self.chosen_id()
        ranked = self.ranking.figures if self.ranking is not None else []
        return [(r.rank, r.figure_id, r.score, r.figure_id == chosen) for r in ranked]

    def selected_id(self) -> str:
        return self.list.selected_id()

    # -- suggesting ---------------------------------------------------------------------------
    def suggest_shown(self) -> bool:
        """Show this panel (its dock, in front) and suggest."""
        show_dock_of(self)
        return self.suggest()

    def suggest(self, defer_hidden: bool = False) -> bool:
        """Rank the open paper's figures (in the background); False when there is nothing to rank."""
        paper, include = self.session.paper, self.include_tables.isChecked()
        self._clear_list()
        why = nothing_to_rank(paper, include)
        if why or paper is None:
            self.op.invalidate()
            self.stack.show_message(why)
            self.op.set_status("")
            return False
        self.op.run(suggest_job, paper, MODEL, include, True, ANALYSIS, needs_analysis=True,
                    defer_hidden=defer_hidden, label="Suggesting a graphical abstract",
                    status="Ranking the figures…", on_progress=self._on_progress, on_error=self._on_error,
                    on_yield=partial(self._on_yielded, paper=paper, include=include),
                    on_done=lambda _last: self._on_done())
        if self.op.busy or self.op.deferred:
            self.stack.show_message(SUGGESTING if self.op.busy else START)
        return True

    def cancel(self) -> None:
        """Stop a running suggestion (its result, if any, is dropped)."""
        self.op.cancel()

    def clear(self) -> None:
        """Forget the candidates (the open paper changed or closed)."""
        self.op.invalidate()
        self._clear_list()
        self.op.set_status("")
        self._show_start()

    def _clear_list(self) -> None:
        self.shown = None
        self.list.forget()
        self.heading.hide()
        self.controls.set_choice_actions(False, False)

    # -- what the job sends back ----------------------------------------------------------------
    def _on_progress(self, done: int, total: int, message: str) -> None:
        share = f" {100 * done // total}%" if total > 1 else ""
        if self.ranking is not None and self._summary:
            self.op.set_status(f"{self._summary} · {message}{share}…")
        elif message:
            self.op.set_status(f"{message[:1].upper()}{message[1:]}{share}…")

    def _on_yielded(self, value: tuple[str, Any], *, paper: Paper, include: bool) -> None:
        if paper is not self.session.paper:
            return  # stale: another paper was opened since
        kind, payload = value
        if kind == "ranking":
            self.show_ranking(payload, include)
            self._summary = f"{len(payload.figures)} candidates · {self.op.elapsed():.1f} s"
            self.op.set_status(f"{self._summary} · rendering the candidates…")
        elif kind == "thumbnail" and self.shown is not None:
            self.list.set_thumbnail(self.shown, *payload)

    def _on_done(self) -> None:
        if self.ranking is not None and self._summary:
            self.op.set_status(self._summary)

    def _on_error(self, error: Exception) -> None:
        if self.ranking is not None and not isinstance(error, (ModelUnavailable, AnalysisUnavailable)):
            self.op.set_status(clip(f"Previews failed: {error}", 200))  # the ranking is shown
            return
        self.stack.show_message(failure_message(error))
        if not isinstance(error, (ModelUnavailable, AnalysisUnavailable)):
            self.op.set_status("")  # the message says it

    def _on_busy(self, busy: bool) -> None:
        if busy and self.ranking is None:
            self.stack.show_message(SUGGESTING)
        elif not busy and self.ranking is None and self.message.text() == SUGGESTING:
            self._show_start()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.session.paper is not None and self.ranking is None and not self.busy \
                and self.message.text() in ("", START):
            self.suggest()

    # -- display --------------------------------------------------------------------------------
    def _show_start(self) -> None:
        if not self.busy and self.ranking is None:
            self.stack.show_message(NO_PAPER if self.session.paper is None else START)

    def show_ranking(self, ranking: FigureRanking, include_tables: bool = False) -> None:
        """List the candidates as cards, best first; the remembered choice is marked and selected."""
        self._clear_list()
        self.shown = ShownRanking(ranking, include_tables)
        self.heading.setText(heading_html(ranking, include_tables))
        self.heading.setToolTip(heading_tooltip(ranking))
        self.heading.show()
        chosen = self.chosen_id()
        self.list.fill(ranking, chosen)
        if not ranking.figures:
            self.stack.show_message(NO_FIGURES)
        else:
            self.stack.show_content()
            self.list.scrollToTop()
            if chosen:
                self.list.select(chosen)
        self.export_button.setEnabled(bool(chosen))
        self.rankingShown.emit(ranking)

    def _on_selection(self, figure_id: str, by_user: bool) -> None:
        self.controls.set_choice_actions(bool(figure_id), bool(figure_id or self.chosen_id()))
        if figure_id and by_user:
            self.show_figure(figure_id)

    def _figure(self, figure_id: str) -> Figure | None:
        paper = self.session.paper
        return next((f for f in paper.figures if f.id == figure_id), None) if paper is not None else None

    def show_figure(self, figure_id: str) -> bool:
        """Ask the window to show the figure on its page."""
        figure = self._figure(figure_id)
        if figure is None:
            return False
        x0, y0, x1, y1 = figure.bbox
        self.session.jump_to(figure.page, (x0, y0, x1, y1))
        return True

    # -- the choice and its export ----------------------------------------------------------------
    def choose_selected(self) -> bool:
        return self.choose(self.selected_id())

    def choose(self, figure_id: str) -> bool:
        """Remember ``figure_id`` as the open paper's graphical abstract (kept by the paper's sha256)."""
        paper, ranking = self.session.paper, self.ranking
        ranked = next((r for r in ranking.figures if r.figure_id == figure_id), None) if ranking else None
        if paper is None or ranking is None or ranked is None:
            return False
        self.choice.remember(paper, ranked)
        self.list.mark_choice(ranking, figure_id)
        self.export_button.setEnabled(True)
        self.op.set_status(f"{figure_label(ranked)} is this paper's graphical abstract.")
        self.statusMessage.emit(f"{figure_label(ranked)} chosen as the graphical abstract")
        self.choiceChanged.emit(figure_id)
        return True

    def export_target(self) -> str:
        """The figure "Export PNG…" writes: the selected one, else the remembered choice."""
        return self.selected_id() or self.chosen_id()

    def export(self, path: str | Path | None = None) -> bool:
        """Write the chosen figure (the selected one is chosen first) at 300 dpi to ``path`` (None: ask)
        in the background; ``exported`` says when it is written."""
        paper, figure_id = self.session.paper, self.export_target()
        figure = self._figure(figure_id) if figure_id else None
        if paper is None or figure is None or not paper.source_path:
            return False
        if figure_id != self.chosen_id():
            self.choose(figure_id)
        target = str(path) if path is not None else self.exporter.ask_path(paper, figure)
        return bool(target) and self.exporter.start(paper.source_path, figure, target)

    def _on_exported(self, exported: ExportedFigure) -> None:
        self.statusMessage.emit(f"Graphical abstract saved as {exported.png}")
        self.exported.emit(exported)


SPEC = register_panel(PanelSpec(
    id="graphical_abstract", title="Graphical abstract", factory=GraphicalAbstractPanel,
    area=Qt.DockWidgetArea.BottomDockWidgetArea, order=67, shortcut=SHORTCUT,
    description="Suggest a graphical abstract: the paper's figures ranked, pick one and export it as a "
    "300 dpi PNG", tab_with="draft", visible=False, remember_visible=True, height=380))
