"""Graphical-abstract panel: the open paper's figures ranked as graphical-abstract candidates (issue 14,
``core.figure_rank``).

"Suggest" (and showing the panel, Ctrl+Shift+G, or File › Suggest graphical abstract) runs one
background :class:`~app.gui.workers.Worker` through the session's job tracker (progress and Cancel in
the status bar, and a Cancel button here): the job loads the model's figure scorer
(``models.figure_scorer.load_figure_scorer``), ranks the paper's figures with the bundle's fitted weights
(``context.figures.ranker.weights``) and yields the ranking first, then one thumbnail per candidate
rendered in a child process (``app.gui.pdf_jobs.figure_pngs_isolated``, as the Figures panel does). A
result for another paper, or for the other "Include tables" choice, is dropped, never shown.

Each candidate is a large card: the thumbnail, its rank, "Figure N", the score and the reason; the score
parts are in its tooltip. Selecting a card shows the figure on its page (``Session.jump_to``); "Use as
graphical abstract" (or a double-click) remembers it for this paper (by its sha256, in
:class:`~app.gui.settings.AppSettings`) and marks it "Your choice" whenever the paper is ranked again.
"Export PNG…" writes the chosen figure at 300 dpi with its caption drawn under it, plus the caption in a
sidecar ``.txt`` (:func:`export_figure_png`, in the background).
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QFont,
    QFontMetrics,
    QImage,
    QPainter,
    QPixmap,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDockWidget,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.gui.analysis_wait import WAITING, AnalysisWait
from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.session import Session
from app.gui.settings import AppSettings
from app.gui.widgets import MUTED, panel_layout, status_label
from app.gui.workers import Worker
from core.document import Figure, Paper
from core.jobs import JobContext
from core.model_api import RoleModel

if TYPE_CHECKING:  # pragma: no cover
    from core.analysis import PaperAnalysis
    from core.figure_rank import FigureRanking, RankedFigure

CHOICE = "#b8860b"
THUMB = QSize(320, 190)  # the largest thumbnail box of a card (smaller when the panel is low)
MIN_THUMB_HEIGHT = 120
TEXT_HEIGHT = 104  # rank, label and three lines of reason under the thumbnail (grows with the reasons)
MAX_TEXT_HEIGHT = 190  # the most a card's text may take (rank line and about ten lines of reason)
REASON_CHARS = 420  # the reason's words shown on a card (all of it in the tooltip)
CARD = QSize(THUMB.width() + 16, THUMB.height() + TEXT_HEIGHT + 8)
DOCK_CHROME = 120  # the dock's title, the buttons, the heading, the status line and the list's margins
THUMB_ZOOM = 2.0  # thumbnails rendered at 144 dpi, scaled down to the card
EXPORT_DPI = 300
CAPTION_PT = 9.0  # the caption strip's font size, in points at the export's dpi
SHORTCUT = "Ctrl+Shift+G"
FIGURE_ID = Qt.ItemDataRole.UserRole

NO_PAPER = "Open a paper first: this panel suggests which of its figures makes the best graphical abstract."
NO_FIGURES = "No figures found in this paper: only figures are candidates, tables are not."
NO_FIGURES_TABLES = ("No figures found in this paper: only figures are candidates, tables are not. Tick "
                     "<b>Include tables</b> to rank its {n} table{s}.")
NO_FIGURES_AT_ALL = "No figures or tables found in this paper: there is nothing to suggest."
NO_MODEL = "No model: ranking the figures needs a model bundle (choose one in File › Settings)."
NO_SCORER = "This model cannot score figures: {error}"
START = "Press <b>Suggest</b> to rank this paper's figures as graphical-abstract candidates."
SUGGESTING = "Ranking the figures…"
YOUR_CHOICE = "Your choice"


# -- the background jobs (a worker thread: no widgets here) ------------------------------------------
def bundle_weights(model: Any) -> dict[str, float] | None:
    """The ranker weights fitted for the model's bundle (``context.figures.ranker.weights``), or None."""
    manifest = getattr(model, "manifest", None)
    context = getattr(manifest, "context", None) or {}
    ranker = dict(dict(context.get("figures", {}) or {}).get("ranker", {}) or {})
    weights = {str(k): float(v) for k, v in dict(ranker.get("weights", {}) or {}).items()}
    return weights or None


def suggest_job(ctx: JobContext, paper: Paper, model: RoleModel, include_tables: bool,
                thumbnails: bool = True, analysis: PaperAnalysis | None = None) -> Iterator[tuple[str, Any]]:
    """Yield ``("ranking", FigureRanking)`` and then ``("thumbnail", (figure id, PNG bytes or None))``
    for each candidate, best first. ``analysis``: the paper's embedded analysis (the session's): the
    scorer reads its texts' vectors from it (``core.analysis_vectors``) instead of running the model."""
    from core.figure_rank import rank_figures
    from models.figure_scorer import FigureScorer, load_figure_scorer

    ctx.progress(0, 1, "loading the figure scorer")
    scorer = load_figure_scorer(model)  # type: ignore[arg-type]
    if analysis is not None and analysis.embedded:
        from core.analysis_vectors import AnalysisVectors

        vectors = AnalysisVectors(model, paper, analysis)
        scorer = FigureScorer(vectors, scorer.session, scorer.lexical_weight)  # type: ignore[arg-type]
    ctx.check()
    ctx.progress(0, 1, "ranking the figures")
    weights = bundle_weights(model)
    ranking = rank_figures(paper, scorer, weights=weights,
                           weights_source="fitted (model bundle)" if weights else "",
                           include_tables=include_tables)
    ctx.check()
    yield "ranking", ranking
    if not thumbnails or not ranking.figures or not paper.source_path:
        return
    by_id = {f.id: f for f in paper.figures}
    figures = [by_id[r.figure_id] for r in ranking.figures if r.figure_id in by_id]
    ctx.progress(0, len(figures), "rendering the candidates")
    from app.gui.pdf_jobs import figure_pngs_isolated

    for index, png in figure_pngs_isolated(ctx, paper.source_path, figures, THUMB_ZOOM):
        ctx.progress(index + 1, len(figures), "rendering the candidates")
        yield "thumbnail", (figures[index].id, png)


@dataclass(frozen=True)
class ExportedFigure:
    """What :func:`export_figure_png` wrote: the PNG, the caption's ``.txt`` and the sizes in pixels."""

    png: Path
    text: Path | None
    width: int
    height: int
    figure_height: int  # the rendered figure; the caption strip is the rest
    caption_height: int


def caption_text(caption: str) -> str:
    return " ".join(caption.split())


def export_figure_png(pdf_path: str | Path, page: int, bbox: Sequence[float], caption: str,
                      out_path: str | Path, dpi: int = EXPORT_DPI, caption_strip: bool = True,
                      sidecar: bool = True) -> ExportedFigure:
    """Render ``bbox`` (PDF points) of ``page`` (0-based) at ``dpi`` into the PNG ``out_path``, the caption
    drawn in a white strip under the figure (``caption_strip``), and write the caption to ``out_path``
    with the suffix ``.txt`` (``sidecar``). Only the region is rendered, so this is fast; it touches no
    widget (a worker may run it)."""
    import pymupdf

    from core.fileio import atomic_write_text

    out = Path(out_path)
    doc = pymupdf.open(str(pdf_path))
    try:
        pdf_page = doc.load_page(page)
        clip = pymupdf.Rect(*bbox) & pdf_page.rect
        if clip.is_empty or clip.width < 1 or clip.height < 1:
            clip = pdf_page.rect
        pix = pdf_page.get_pixmap(clip=clip, dpi=dpi, alpha=False)
        image = QImage()
        if not image.loadFromData(pix.tobytes("png"), "PNG"):
            raise OSError(f"cannot render page {page + 1} of {pdf_path}")
    finally:
        doc.close()
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    text = caption_text(caption)
    strip = 0
    if caption_strip and text:
        image, strip = _with_caption(image, text, dpi)
    dots = round(dpi / 0.0254)
    image.setDotsPerMeterX(dots)
    image.setDotsPerMeterY(dots)
    out.parent.mkdir(parents=True, exist_ok=True)
    # PySide6's stub types the format as bytes, but its binding accepts only str here (6.12: bytes
    # raises "called with wrong argument values").
    if not image.save(str(out), cast(bytes, "PNG")):
        raise OSError(f"cannot write {out}")
    sidecar_path: Path | None = None
    if sidecar:
        sidecar_path = out.with_suffix(".txt")
        atomic_write_text(sidecar_path, (caption.strip() or text) + "\n")
    return ExportedFigure(out, sidecar_path, image.width(), image.height(), image.height() - strip, strip)


def _with_caption(figure: QImage, text: str, dpi: int) -> tuple[QImage, int]:
    """``figure`` with ``text`` wrapped in a white strip under it; returns the image and the strip height."""
    scale = dpi / 72.0
    font = QFont("Helvetica")
    font.setPixelSize(max(8, round(CAPTION_PT * scale)))
    margin = max(4, round(6 * scale))
    width = figure.width()
    inner = max(1, width - 2 * margin)
    flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop) | int(Qt.TextFlag.TextWordWrap)
    bounds = QFontMetrics(font).boundingRect(QRect(0, 0, inner, 100_000), flags, text)
    strip = bounds.height() + 2 * margin
    out = QImage(width, figure.height() + strip, QImage.Format.Format_RGB32)
    out.fill(QColor("white"))
    painter = QPainter(out)
    try:
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        painter.drawImage(0, 0, figure)
        painter.setFont(font)
        painter.setPen(QColor("black"))
        box = QRect(margin, figure.height() + margin, inner, bounds.height() + margin)
        painter.drawText(box, flags, text)
    finally:
        painter.end()
    return out, strip


def export_job(ctx: JobContext, pdf_path: str, page: int, bbox: Sequence[float], caption: str,
               out_path: str) -> ExportedFigure:
    ctx.progress(0, 1, "rendering at 300 dpi")
    exported = export_figure_png(pdf_path, page, bbox, caption, out_path)
    ctx.progress(1, 1, "saved")
    return exported


# -- text --------------------------------------------------------------------------------------------
def _clip(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def figure_label(ranked: RankedFigure | Figure) -> str:
    return f"{'Table' if ranked.kind == 'table' else 'Figure'} {ranked.number}"


def card_html(ranked: RankedFigure, chosen: bool) -> str:
    """Rank, label, page and the ranker's reason in words (no raw scores: they are in the tooltip)."""
    badge = f"&nbsp; <span style='color:{CHOICE}; font-weight:bold'>★ {YOUR_CHOICE}</span>" if chosen else ""
    label = html.escape(figure_label(ranked))
    return (f"<span style='color:{MUTED}'>{ranked.rank}.</span>&nbsp; <b>{label}</b>"
            f" <span style='color:{MUTED}'>p.&nbsp;{ranked.page + 1}</span>"
            f"{badge}"
            f"<br><span style='font-size:9pt'>{html.escape(_clip(ranked.reason, REASON_CHARS))}</span>")


def relative_scores(ranking: FigureRanking) -> dict[str, float]:
    """Each candidate's score on 0–1 within this paper (1 = the best here, 0 = the last)."""
    scores = {r.figure_id: r.score for r in ranking.figures}
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    return {k: (v - low) / span if span > 0 else 1.0 for k, v in scores.items()}


def card_tooltip(ranked: RankedFigure, weights_source: str, relative: float = 1.0, total: int = 0) -> str:
    """The reason in full, the rank and the score on 0–1, and each part's share of the score in %."""
    mass = sum(abs(v) for v in ranked.parts.values()) or 1.0
    parts = "\n".join(f"  {name.replace('_', ' ')}: {100 * abs(value) / mass:.0f}%"
                      f" ({'for' if value >= 0 else 'against'})"
                      for name, value in sorted(ranked.parts.items(), key=lambda kv: -abs(kv[1])))
    words = f"\nShared words: {', '.join(ranked.words)}" if ranked.words else ""
    best = f"\nBest abstract sentence: {_clip(ranked.best_sentence, 240)}" if ranked.best_sentence else ""
    of = f" of {total}" if total else ""
    return (f"{figure_label(ranked)} (page {ranked.page + 1}), rank {ranked.rank}{of}, "
            f"score {relative:.2f} (0–1 within this paper)\n{ranked.reason}\n"
            f"What the score is made of ({weights_source}):\n{parts or '  (none)'}{best}{words}\n\n"
            f"{_clip(ranked.caption, 400)}\n\nDouble-click to use it as the graphical abstract")


class _CardList(QListWidget):
    """The candidates' cards, thumbnails as tall as the panel's height allows (the text always shows)."""

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_cards()

    def text_height(self) -> int:
        """The height the cards' texts need (the tallest of them), bounded by MAX_TEXT_HEIGHT."""
        cards = [self.itemWidget(self.item(row)) for row in range(self.count())]
        needed = [card.text.heightForWidth(THUMB.width()) for card in cards if isinstance(card, _Card)]
        return max(TEXT_HEIGHT, min(MAX_TEXT_HEIGHT, max(needed, default=0) + 4))

    def fit_cards(self) -> None:
        text = self.text_height()
        room = self.viewport().height() - 2 * self.spacing() - text - 12
        height = max(MIN_THUMB_HEIGHT, min(THUMB.height(), room))
        for row in range(self.count()):
            item = self.item(row)
            card = self.itemWidget(item)
            if isinstance(card, _Card):
                card.set_thumb_height(height)
                item.setSizeHint(QSize(CARD.width(), height + text + 8))


class _Card(QFrame):
    """A candidate: its thumbnail and, under it, rank, label, score and reason."""

    def __init__(self, ranked: RankedFigure, chosen: bool) -> None:
        super().__init__()
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setStyleSheet("background: transparent;")
        self._png: bytes | None = None
        self.image = QLabel("rendering…")
        self.image.setFixedSize(THUMB)
        self.image.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.image.setStyleSheet(f"background: white; border: 1px solid #d0d0d0; color: {MUTED};")
        self.text = QLabel()
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setWordWrap(True)
        self.text.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.text.setFixedWidth(THUMB.width())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 4)
        layout.setSpacing(4)
        layout.addWidget(self.image)
        layout.addWidget(self.text, 1)
        self.set_ranked(ranked, chosen)

    def set_ranked(self, ranked: RankedFigure, chosen: bool) -> None:
        self.text.setText(card_html(ranked, chosen))

    def set_thumb_height(self, height: int) -> None:
        if height != self.image.height():
            self.image.setFixedSize(THUMB.width(), height)
            if self._png:
                self.set_thumbnail(self._png)

    def set_thumbnail(self, png: bytes | None) -> None:
        self._png = png
        pixmap = QPixmap()
        if png and pixmap.loadFromData(png, "PNG"):
            box = self.image.size() - QSize(4, 4)
            self.image.setPixmap(pixmap.scaled(box, Qt.AspectRatioMode.KeepAspectRatio,
                                               Qt.TransformationMode.SmoothTransformation))
        else:
            self.image.setText("(no preview)")


def _button(text: str, tip: str) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    return button


@dataclass
class _Shown:
    ranking: FigureRanking
    include_tables: bool
    thumbnails: dict[str, bytes | None] = field(default_factory=dict)


class GraphicalAbstractPanel(QWidget):
    rankingShown = Signal(object)  # the FigureRanking now listed
    choiceChanged = Signal(str)  # the figure id chosen for the open paper ("" = none)
    exported = Signal(object)  # an ExportedFigure
    statusMessage = Signal(str)  # shown in the window's status bar

    def __init__(self, session: Session, settings: AppSettings | None = None) -> None:
        super().__init__()
        self.session = session
        self._settings = settings
        self.shown: _Shown | None = None
        self._worker: Worker | None = None
        self._export_worker: Worker | None = None
        self._generation = 0
        self._waiting = False  # a suggestion waiting for the model
        self._pending = False  # a suggestion to start when the cancelled one has stopped
        self._started = 0.0
        self._cards: dict[str, _Card] = {}
        self._jump = True  # selecting a card shows the figure on its page
        self._summary = ""  # the status line of the listed ranking

        self.suggest_button = _button("Suggest", "Rank this paper's figures as graphical-abstract "
                                                 f"candidates ({SHORTCUT})")
        self.suggest_button.clicked.connect(lambda: self.suggest())
        self.cancel_button = _button("Cancel", "Stop ranking")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.hide()
        self.include_tables = QCheckBox("Include tables")
        self.include_tables.setToolTip("Rank the tables too (only figures are candidates otherwise)")
        self.include_tables.toggled.connect(lambda _on: self._on_tables_toggled())
        self.use_button = _button("Use as graphical abstract", "Remember the selected figure as this paper's "
                                                               "graphical abstract (or double-click it)")
        self.use_button.clicked.connect(lambda: self.choose_selected())
        self.use_button.setEnabled(False)
        self.export_button = _button("Export PNG…", f"Save the chosen figure as a {EXPORT_DPI} dpi PNG with "
                                                    "its caption (and the caption as .txt)")
        self.export_button.clicked.connect(lambda: self.export())
        self.export_button.setEnabled(False)
        top = QHBoxLayout()
        top.setContentsMargins(6, 4, 6, 0)
        top.setSpacing(4)
        top.addWidget(self.suggest_button)
        top.addWidget(self.cancel_button)
        top.addSpacing(8)
        top.addWidget(self.include_tables)
        top.addStretch(1)
        top.addWidget(self.use_button)
        top.addWidget(self.export_button)

        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.RichText)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setStyleSheet(f"color: {MUTED}; padding: 12px 16px;")
        self.list = _CardList()
        self.list.setViewMode(QListView.ViewMode.IconMode)
        self.list.setFlow(QListView.Flow.LeftToRight)
        self.list.setWrapping(True)
        self.list.setResizeMode(QListView.ResizeMode.Adjust)
        self.list.setMovement(QListView.Movement.Static)
        self.list.setSpacing(4)
        self.list.setUniformItemSizes(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list.setStyleSheet("QListWidget::item { border: 1px solid transparent; border-radius: 4px; }"
                                "QListWidget::item:selected { background: #cfe0f7; border-color: #7fa7d9; }")
        self.list.itemSelectionChanged.connect(self._on_selection)
        self.list.itemActivated.connect(lambda item: self.choose(str(item.data(FIGURE_ID))))
        self.stack = QStackedWidget()
        self.stack.addWidget(self.message)
        self.stack.addWidget(self.list)
        self.heading = QLabel("")
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.heading.setStyleSheet("padding: 2px 6px;")
        self.heading.hide()
        self.status = status_label()
        panel_layout(self, top, self.heading, (self.stack, 1), self.status)

        self.act_suggest = QAction("Suggest &graphical abstract", self)
        self.act_suggest.setStatusTip("Rank this paper's figures as graphical-abstract candidates")
        self.act_suggest.setToolTip(f"Suggest a graphical abstract ({SHORTCUT} shows the panel)")
        self.act_suggest.setIconText("Graphical abstract")
        self.act_suggest.triggered.connect(lambda _checked=False: self.suggest_shown())

        session.documentOpened.connect(lambda _d: self.clear())
        session.documentClosed.connect(self.clear)
        session.paperReady.connect(lambda _p: self._on_paper_ready())
        self._analysis = AnalysisWait(session, self.suggest, self._on_analysis_failed)
        session.models.ready.connect(self._on_model_ready)
        session.models.failed.connect(self._on_model_failed)
        self._show_start()

    # -- what the window offers ---------------------------------------------------------------
    def file_menu_actions(self) -> list[QAction]:
        """What the window puts in its File menu."""
        return [self.act_suggest]

    def toolbar_actions(self) -> list[QAction]:
        """What a window may put in its toolbar."""
        return [self.act_suggest]

    def wanted_height(self) -> int:
        """The dock height that shows a row of cards, thumbnails and reasons, without scrolling (the
        window's docks grow the panel's dock to it when it opens lower; see ``app.gui.docks``)."""
        text = self.list.text_height() if self.list.count() else MAX_TEXT_HEIGHT
        return THUMB.height() + text + 8 + 2 * self.list.spacing() + DOCK_CHROME

    # -- state ------------------------------------------------------------------------------
    @property
    def settings(self) -> AppSettings:
        if self._settings is None:
            self._settings = AppSettings()
        return self._settings

    @property
    def busy(self) -> bool:
        return self._worker is not None or self._waiting or self._analysis.waiting

    @property
    def ranking(self) -> FigureRanking | None:
        return None if self.shown is None else self.shown.ranking

    def chosen_id(self) -> str:
        """The figure remembered for the open paper that is among the listed candidates ("" = none)."""
        paper = self.session.paper
        if paper is None:
            return ""
        choice = self.settings.graphical_abstract(paper.sha256)
        if not choice:
            return ""
        ranked = self.ranking.figures if self.ranking is not None else []
        for figure in ranked:
            if figure.figure_id == choice.get("id"):
                return figure.figure_id
        for figure in ranked:  # the parser numbered them again: the printed label still holds
            if figure.kind == choice.get("kind") and figure.number == choice.get("number"):
                return figure.figure_id
        return ""

    def rows(self) -> list[tuple[int, str, float, bool]]:
        """The listed candidates: (rank, figure id, score, is the remembered choice)."""
        if self.ranking is None:
            return []
        chosen = self.chosen_id()
        return [(r.rank, r.figure_id, r.score, r.figure_id == chosen) for r in self.ranking.figures]

    def selected_id(self) -> str:
        items = self.list.selectedItems()
        return str(items[0].data(FIGURE_ID)) if items else ""

    # -- suggesting ---------------------------------------------------------------------------
    def suggest_shown(self) -> bool:
        """Show this panel (its dock, in front) and suggest."""
        dock = self.parentWidget()
        while dock is not None and not isinstance(dock, QDockWidget):
            dock = dock.parentWidget()
        if dock is not None:
            dock.show()
            dock.raise_()
        return self.suggest()

    def suggest(self) -> bool:
        """Rank the open paper's figures (in the background); False when there is nothing to rank."""
        from core.figure_rank import candidate_figures

        paper = self.session.paper
        self._drop_result()
        if paper is None:
            self._show_message(NO_PAPER)
            return False
        include = self.include_tables.isChecked()
        if not candidate_figures(paper, include_tables=include):
            tables = sum(1 for f in paper.figures if f.kind == "table")
            if include:
                self._show_message(NO_FIGURES_AT_ALL)
            elif tables:
                self._show_message(NO_FIGURES_TABLES.format(n=tables, s="" if tables == 1 else "s"))
            else:
                self._show_message(NO_FIGURES)
            self.status.setText("")
            return False
        if self._worker is not None:  # the running job is stale: start again when it has stopped
            self._worker.cancel()
            self._pending = True
            self._show_busy("Ranking…")
            return True
        model = self.session.models.request()
        if model is None:
            if self.session.models.state == "failed":
                self._no_model(self.session.models.error)
                return False
            self._waiting = True
            self._show_busy("Loading the model…")
            return True
        self._waiting = False
        analysis = self._analysis.request()
        if analysis is None:  # suggest() again when the session's embedded analysis arrives
            self._show_busy(WAITING)
            return True
        generation = self._generation
        worker = Worker(suggest_job, paper, model, include, True, analysis, name="graphical-abstract")
        worker.progress.connect(lambda d, t, m, g=generation: self._on_progress(g, d, t, m))
        worker.yielded.connect(lambda v, g=generation, p=paper, i=include: self._on_yielded(g, p, i, v))
        worker.error.connect(lambda e, g=generation: self._on_error(g, e))
        worker.cancelled.connect(lambda g=generation: self._on_cancelled(g))
        worker.finished.connect(lambda w=worker: self._on_finished(w))
        self._worker = worker
        self._started = time.monotonic()
        self._show_busy("Ranking the figures…")
        self.session.tracker.start(worker, "Suggesting a graphical abstract")
        return True

    def cancel(self) -> None:
        """Stop a running suggestion (its result, if any, is dropped)."""
        self._pending = False
        if self._waiting or self._analysis.waiting:
            self._waiting = False
            self._analysis.cancel()
            self.cancel_button.hide()
            self.status.setText("Cancelled.")
            self._show_start()
        if self._worker is not None:
            self._worker.cancel()

    def clear(self) -> None:
        """Forget the candidates (the open paper changed or closed)."""
        self.cancel()
        self._drop_result()
        self.status.setText("")
        self._show_start()

    def _drop_result(self) -> None:
        self._generation += 1  # what a running job still yields is stale
        self._clear_list()

    def _clear_list(self) -> None:
        self.shown = None
        self._cards.clear()
        self.list.clear()
        self.heading.hide()
        self.use_button.setEnabled(False)
        self.export_button.setEnabled(False)

    def _on_tables_toggled(self) -> None:
        if self.shown is not None or self.busy or self.session.paper is not None:
            self.suggest()

    def _on_paper_ready(self) -> None:
        if self.isVisible():
            self.suggest()
        else:
            self._show_start()

    # -- worker callbacks -----------------------------------------------------------------------
    def _on_progress(self, generation: int, done: int, total: int, message: str) -> None:
        if generation == self._generation and message:
            share = f" {100 * done // total}%" if total > 1 else ""
            if self.shown is not None and self._summary:
                self.status.setText(f"{self._summary} · {message}{share}…")
            else:
                self.status.setText(f"{message[:1].upper()}{message[1:]}{share}…")

    def _on_yielded(self, generation: int, paper: Paper, include: bool, value: tuple[str, Any]) -> None:
        if generation != self._generation or paper is not self.session.paper:
            return  # stale: another paper or choice was asked for since
        kind, payload = value
        if kind == "ranking":
            self.show_ranking(payload, include)
            self._summary = f"{len(payload.figures)} candidates · {time.monotonic() - self._started:.1f} s"
            self.status.setText(f"{self._summary} · rendering the candidates…")
        elif kind == "thumbnail" and self.shown is not None:
            figure_id, png = payload
            self.shown.thumbnails[figure_id] = png
            card = self._cards.get(figure_id)
            if card is not None:
                card.set_thumbnail(png)

    def _on_error(self, generation: int, error: Exception) -> None:
        if generation != self._generation:
            return
        from core.errors import ModelError

        if isinstance(error, ModelError) and self.shown is None:
            self._show_message(html.escape(NO_SCORER.format(error=_clip(str(error), 300))))
        elif self.shown is None:
            self._show_message(html.escape(_clip(f"Ranking the figures failed: {error}", 300)))
        else:  # the ranking is shown; a preview failed
            self.status.setText(_clip(f"Previews failed: {error}", 200))
            return
        self.status.setText("")

    def _on_cancelled(self, generation: int) -> None:
        if generation == self._generation and not self._pending:
            self.status.setText("Cancelled.")
            if self.shown is None:
                self._show_start()

    def _on_finished(self, worker: Worker) -> None:
        if worker is self._worker:
            self._worker = None
            self.cancel_button.hide()
            if self.shown is not None and not worker.is_cancelled and self._summary:
                self.status.setText(self._summary)
        if self._pending and self._worker is None:
            self._pending = False
            self.suggest()
        elif self._worker is None and self.shown is None and self.message.text() == SUGGESTING:
            self._show_start()

    def _on_model_ready(self, _model: RoleModel) -> None:
        if self._waiting:
            self._waiting = False
            self.suggest()

    def _on_model_failed(self, error: Exception) -> None:
        if self._waiting:
            self._waiting = False
            self.cancel_button.hide()
            self._no_model(error)

    def _on_analysis_failed(self, message: str) -> None:
        self.cancel_button.hide()
        self._show_message(html.escape(_clip(message, 200)))

    def _no_model(self, error: object) -> None:
        self._show_message(NO_MODEL)
        self.status.setText(_clip(f"No model: {error}", 200))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.session.paper is not None and self.shown is None and not self.busy \
                and self.message.text() in ("", START):
            self.suggest()

    # -- display --------------------------------------------------------------------------------
    def _show_message(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)
        self.cancel_button.setVisible(self._worker is not None or self._waiting)

    def _show_start(self) -> None:
        if self.busy:
            return
        if self.session.paper is None:
            self._show_message(NO_PAPER)
        elif self.shown is None:
            self._show_message(START)

    def _show_busy(self, text: str) -> None:
        self.status.setText(text)
        self.cancel_button.show()
        self._show_message(SUGGESTING)

    def show_ranking(self, ranking: FigureRanking, include_tables: bool = False) -> None:
        """List the candidates as cards, best first; the remembered choice is marked and selected."""
        self._clear_list()
        self.shown = _Shown(ranking, include_tables)
        kinds = "figures and tables" if include_tables else "figures"
        self.heading.setText(f"<b>{len(ranking.figures)}</b> <span style='color:{MUTED}'>{kinds} ranked "
                             f"against the {html.escape(ranking.query)} · weights: "
                             f"{html.escape(ranking.weights_source)}</span>")
        self.heading.setToolTip(f"Scorer: {ranking.scorer}\nWeights: "
                                + ", ".join(f"{k} {v:+.2f}" for k, v in ranking.weights.items()))
        self.heading.show()
        chosen = self.chosen_id()
        relative = relative_scores(ranking)
        for ranked in ranking.figures:
            item = QListWidgetItem()
            item.setData(FIGURE_ID, ranked.figure_id)
            item.setToolTip(card_tooltip(ranked, ranking.weights_source, relative.get(ranked.figure_id, 1.0),
                                         len(ranking.figures)))
            item.setSizeHint(CARD)
            card = _Card(ranked, ranked.figure_id == chosen)
            self.list.addItem(item)
            self.list.setItemWidget(item, card)
            self._cards[ranked.figure_id] = card
        self.list.fit_cards()
        if not ranking.figures:
            self._show_message(NO_FIGURES)
        else:
            self.stack.setCurrentWidget(self.list)
            if chosen:
                self._select(chosen, jump=False)
            self.list.scrollToTop()
        self.export_button.setEnabled(bool(chosen))
        self.rankingShown.emit(ranking)

    def _select(self, figure_id: str, jump: bool = True) -> None:
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.data(FIGURE_ID) == figure_id:
                self._jump = jump
                try:
                    self.list.setCurrentItem(item)
                finally:
                    self._jump = True
                self.list.scrollToItem(item)
                return

    def _on_selection(self) -> None:
        figure_id = self.selected_id()
        self.use_button.setEnabled(bool(figure_id))
        self.export_button.setEnabled(bool(figure_id or self.chosen_id()))
        if figure_id and self._jump:
            self.show_figure(figure_id)

    def _figure(self, figure_id: str) -> Figure | None:
        paper = self.session.paper
        if paper is None:
            return None
        return next((f for f in paper.figures if f.id == figure_id), None)

    def show_figure(self, figure_id: str) -> bool:
        """Ask the window to show the figure on its page."""
        figure = self._figure(figure_id)
        if figure is None:
            return False
        x0, y0, x1, y1 = figure.bbox
        self.session.jump_to(figure.page, (x0, y0, x1, y1))
        return True

    # -- the choice -----------------------------------------------------------------------------
    def choose_selected(self) -> bool:
        return self.choose(self.selected_id())

    def choose(self, figure_id: str) -> bool:
        """Remember ``figure_id`` as the open paper's graphical abstract (kept by the paper's sha256)."""
        paper = self.session.paper
        ranked = next((r for r in self.ranking.figures if r.figure_id == figure_id), None) \
            if self.ranking is not None else None
        if paper is None or ranked is None:
            return False
        self.settings.set_graphical_abstract(paper.sha256, {"id": ranked.figure_id, "kind": ranked.kind,
                                                            "number": ranked.number})
        self.settings.sync()
        for other in self.ranking.figures if self.ranking is not None else []:
            card = self._cards.get(other.figure_id)
            if card is not None:
                card.set_ranked(other, other.figure_id == figure_id)
        self.export_button.setEnabled(True)
        self.status.setText(f"{figure_label(ranked)} is this paper's graphical abstract.")
        self.statusMessage.emit(f"{figure_label(ranked)} chosen as the graphical abstract")
        self.choiceChanged.emit(figure_id)
        return True

    # -- export ---------------------------------------------------------------------------------
    def export_target(self) -> str:
        """The figure "Export PNG…" writes: the selected one, else the remembered choice."""
        return self.selected_id() or self.chosen_id()

    def default_export_path(self, figure: Figure) -> Path:
        paper = self.session.paper
        source = Path(paper.source_path) if paper is not None and paper.source_path else Path.home() / "paper"
        kind = "table" if figure.kind == "table" else "figure"
        return source.with_name(f"{source.stem}-graphical-abstract-{kind}{figure.number}.png")

    def export(self, path: str | Path | None = None) -> bool:
        """Write the chosen figure (the selected one is chosen first) at 300 dpi to ``path`` (None: ask)
        in the background; ``exported`` says when it is written."""
        from PySide6.QtWidgets import QFileDialog

        paper = self.session.paper
        figure_id = self.export_target()
        figure = self._figure(figure_id) if figure_id else None
        if paper is None or figure is None or not paper.source_path:
            return False
        if figure_id != self.chosen_id():
            self.choose(figure_id)
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export the graphical abstract",
                                                  str(self.default_export_path(figure)), "PNG image (*.png)")
            if not path:
                return False
        target = str(path)
        worker = Worker(export_job, paper.source_path, figure.page, tuple(figure.bbox), figure.caption,
                        target, name="graphical-abstract-export")
        worker.result.connect(self._on_exported)
        worker.error.connect(lambda e, t=target: self.status.setText(_clip(f"Cannot write {t}: {e}", 200)))
        worker.finished.connect(lambda w=worker: self._export_finished(w))
        self._export_worker = worker
        self.export_button.setEnabled(False)
        self.status.setText(f"Exporting {figure_label(figure)} at {EXPORT_DPI} dpi…")
        self.session.tracker.start(worker, "Exporting the graphical abstract")
        return True

    def _on_exported(self, exported: ExportedFigure) -> None:
        size = f"{exported.width}×{exported.height} px, {EXPORT_DPI} dpi"
        text = f" and {exported.text.name}" if exported.text is not None else ""
        self.status.setText(f"Saved {exported.png.name} ({size}){text}.")
        self.statusMessage.emit(f"Graphical abstract saved as {exported.png}")
        self.exported.emit(exported)

    def _export_finished(self, worker: Worker) -> None:
        if worker is self._export_worker:
            self._export_worker = None
            self.export_button.setEnabled(bool(self.export_target()))


SPEC = register_panel(PanelSpec(
    id="graphical_abstract", title="Graphical abstract", factory=GraphicalAbstractPanel,
    area=Qt.DockWidgetArea.BottomDockWidgetArea, order=67, shortcut=SHORTCUT,
    description="Suggest a graphical abstract: the paper's figures ranked, pick one and export it as a "
    "300 dpi PNG", tab_with="draft", visible=False, remember_visible=True, height=380))
