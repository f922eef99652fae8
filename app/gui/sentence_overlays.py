"""Sentence overlays: one :class:`SentenceItem` per sentence, coloured by its rhetorical role.

Items are built a chunk of ``OVERLAY_CHUNK`` per event-loop turn (hundreds of them would stall the
UI), first unlabelled while the analysis runs, then given their roles in place.  This unit also
follows the palette (colours, opacity, hidden roles) and highlights the selected sentence.

A label whose probability is below ``core.taxonomy.labels.UNCERTAIN_BELOW`` is drawn uncertain: a faint
fill hatched in its role colour instead of a solid one, and its tooltip names the runner-up
("uncertain: method (0.41) or result (0.35)").
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QObject, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsScene,
    QGraphicsSceneHoverEvent,
    QStyleOptionGraphicsItem,
    QWidget,
)

from app.gui.page_layout import PageLayout
from app.gui.palette import RolePalette
from core.document import Paper, Sentence
from core.labelling.analysis import PaperAnalysis
from core.taxonomy.labels import UNCERTAIN_BELOW, RolePrediction, is_confident, runner_up

OVERLAY_CHUNK = 100  # sentence items built per event-loop turn
UNCERTAIN_FILL = 0.4  # an uncertain label's flat fill, share of the overlay opacity (the hatch adds more)
HATCH = Qt.BrushStyle.BDiagPattern
HATCH_ALPHA = 0.6  # the hatch lines: the role colour, light enough to read the text through


class SentenceItem(QGraphicsItem):
    """The highlight of one sentence (its line rectangles) in its role colour."""

    def __init__(self, index: int, path: QPainterPath, palette: RolePalette) -> None:
        super().__init__()
        self.index = index
        self.role: str | None = None
        self.confidence = 0.0
        self._path = path
        self._bounds = path.boundingRect().adjusted(-2, -2, 2, 2)
        self._palette = palette
        self.hovered = False
        self.selected = False
        self.setZValue(1)
        self.setAcceptHoverEvents(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)

    def set_role(self, role: str | None, confidence: float, tooltip: str) -> None:
        self.role = role
        self.confidence = confidence
        self.setToolTip(tooltip)
        self.update()

    @property
    def uncertain(self) -> bool:
        """A label below ``core.taxonomy.labels.UNCERTAIN_BELOW`` (drawn hatched)."""
        return self.role is not None and self.confidence < UNCERTAIN_BELOW

    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        return self._path

    def hoverEnterEvent(self, event: QGraphicsSceneHoverEvent) -> None:
        self.hovered = True
        self.update()

    def hoverLeaveEvent(self, event: QGraphicsSceneHoverEvent) -> None:
        self.hovered = False
        self.update()

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        if self.role is None:
            if self.hovered or self.selected:  # not labelled yet: a thin outline shows what a click picks
                pen = QPen(QColor("#555555"), 0)
                pen.setCosmetic(True)
                painter.setPen(pen)
                painter.drawPath(self._path)
            return
        opacity = self._palette.opacity
        if self.hovered or self.selected:
            opacity = min(1.0, opacity + 0.2)
        painter.save()
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Multiply)
        if self.uncertain:  # a faint fill hatched in the role colour: "this might be <role>"
            painter.fillPath(self._path, QBrush(self._palette.fill(self.role, opacity * UNCERTAIN_FILL)))
            painter.fillPath(self._path, QBrush(self._palette.fill(self.role, HATCH_ALPHA), HATCH))
        else:
            painter.fillPath(self._path, QBrush(self._palette.fill(self.role, opacity)))
        painter.restore()
        if self.selected or self.hovered:
            pen = QPen(self._palette.color(self.role).darker(170 if self.selected else 130), 0)
            pen.setWidthF(2.0 if self.selected else 1.0)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(self._path)


def role_line(prediction: RolePrediction) -> str:
    """Rich text for a role label: "<b>method</b> — 83% confident", or below ``UNCERTAIN_BELOW``
    "<b>uncertain</b>: method 41% or result 35%" (the words of ``core.taxonomy.labels.role_text``)."""
    if is_confident(prediction):
        return f"<b>{prediction.label}</b> — {prediction.confidence:.0%} confident"
    second, p = runner_up(prediction)
    other = f" or {second} {p:.0%}" if second else ""
    return f"<b>uncertain</b>: {prediction.label} {prediction.confidence:.0%}{other}"


def role_tooltip(paper: Paper, sentence: Sentence, analysis: PaperAnalysis) -> str:
    """The overlay tooltip: the sentence's role, confidence (or the two candidates when it is
    uncertain) and section."""
    prediction = analysis.roles[sentence.index]
    section = paper.section_of(sentence)
    heading = " ".join(p for p in (section.number, section.heading) if p) or section.kind.value
    return f"{role_line(prediction)}<br><i>{escape(heading, quote=False)}</i>"


class SentenceOverlays(QObject):
    """The sentence items of one paper in ``scene``, placed on ``layout``'s pages."""

    built = Signal(int)  # all items are in the scene: their number

    def __init__(self, scene: QGraphicsScene, layout: PageLayout, palette: RolePalette,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._scene = scene
        self._layout = layout
        self._palette = palette
        self._items: list[SentenceItem] = []
        self._paper: Paper | None = None
        self._pending: tuple[Paper, PaperAnalysis | None, int] | None = None
        self._selected = -1
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._build_chunk)
        palette.changed.connect(self._on_palette_changed)

    @property
    def items(self) -> list[SentenceItem]:
        """The items built so far, by sentence index (a copy)."""
        return list(self._items)

    @property
    def pending(self) -> bool:
        """True while items are still being built or labelled."""
        return self._pending is not None

    def set_overlays(self, paper: Paper, analysis: PaperAnalysis | None) -> None:
        """One item per sentence, a chunk per event-loop turn; ``built`` at the end.

        Items already built for the same paper (unlabelled, while the analysis ran) are reused and
        only get their roles, so labelling never removes and re-adds hundreds of scene items.
        """
        self._timer.stop()
        if self._paper is not paper or len(self._items) > len(paper.sentences):
            for item in self._items:
                self._scene.removeItem(item)
            self._items = []
        self._paper = paper
        self._pending = (paper, analysis, 0)
        self._timer.start()

    def clear(self) -> None:
        """Stop building and forget the items (the owner clears the scene)."""
        self._timer.stop()
        self._pending = None
        self._items = []
        self._paper = None
        self._selected = -1

    def select(self, index: int) -> None:
        """Highlight sentence ``index`` (-1: none) instead of the one highlighted before."""
        if 0 <= self._selected < len(self._items):
            self._items[self._selected].selected = False
            self._items[self._selected].update()
        self._selected = index
        if 0 <= index < len(self._items):
            self._items[index].selected = True
            self._items[index].update()

    def _sentence_path(self, sentence: Sentence) -> QPainterPath:
        path = QPainterPath()
        path.setFillRule(Qt.FillRule.WindingFill)
        for r in sentence.rects:
            if not (0 <= r.page < self._layout.page_count):
                continue
            origin = self._layout.page_origin(r.page)
            path.addRect(QRectF(origin.x() + r.x0 - 0.5, origin.y() + r.y0 - 0.5,
                                (r.x1 - r.x0) + 1.0, (r.y1 - r.y0) + 1.0))
        return path

    def _build_chunk(self) -> None:
        if self._pending is None:
            self._timer.stop()
            return
        paper, analysis, start = self._pending
        sentences = paper.sentences
        end = min(len(sentences), start + OVERLAY_CHUNK)
        for sentence in sentences[start:end]:
            if sentence.index < len(self._items):
                item = self._items[sentence.index]
            else:
                item = SentenceItem(sentence.index, self._sentence_path(sentence), self._palette)
                item.selected = sentence.index == self._selected
                self._scene.addItem(item)
                self._items.append(item)
            if analysis is not None:
                prediction = analysis.roles[sentence.index]
                tip = role_tooltip(paper, sentence, analysis)
                item.set_role(prediction.label, prediction.confidence, tip)
                item.setVisible(self._palette.is_visible(prediction.label))
        if end >= len(sentences):
            self._timer.stop()
            del self._items[len(sentences):]
            self._pending = None
            self.built.emit(len(self._items))
        else:
            self._pending = (paper, analysis, end)

    def _on_palette_changed(self) -> None:
        for item in self._items:
            if item.role is not None:
                item.setVisible(self._palette.is_visible(item.role))
        for view in self._scene.views():
            view.viewport().update()
