"""Side-by-side Alignment view (issue 13, "In the app"): the open paper (A, left) and the second paper
or the draft (B, right), with a thin canvas between them that links each aligned sentence on screen to
its partner(s).

- A side with a PDF is a :class:`~app.gui.page_view.PageView`; its pages render in the application's
  render process when it is given one (the main view's :class:`~app.gui.render_client.RenderClient`,
  shared: each view's document has its own token there), else here in short banded steps; a side
  without one (the draft, or a paper whose PDF is not open) is a list of its sentences.
- "Scroll in step" (default on): scrolling one side scrolls the other so that the partner of the aligned
  sentence nearest the viewport's vertical centre sits at the same height (:func:`step_target`); a
  guard stops the other side's scroll from coming back.
- Clicking a sentence on either side selects it, its pair's other members and its partner(s) on the
  other side (:func:`partner_rows`), and draws that pair's link thick; hovering does the same, lighter.
- Links are tinted by the pair's role (the shared :class:`~app.gui.palette.RolePalette`); only links
  whose two ends are on screen are drawn.

The geometry is kept apart from the pixels: :func:`partner_rows`, :func:`step_target` and
:meth:`LinkCanvas.links` can be checked without painting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QCloseEvent,
    QColor,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.gui.page_view import PageView
from app.gui.palette import RolePalette
from app.gui.widgets import MUTED
from core.document import Paper
from core.labelling.analysis import PaperAnalysis
from core.taxonomy.labels import NO_FUNCTION, RolePrediction

if TYPE_CHECKING:  # pragma: no cover
    import pymupdf

    from app.gui.render_client import RenderClient
    from core.alignment.align import AlignedPair, Alignment, AlignSide

LINK_WIDTH = 56  # the canvas between the two sides (pixels)


# -- pure geometry ----------------------------------------------------------------------------------
def _other(side: str) -> str:
    if side not in ("a", "b"):
        raise ValueError(f"side must be 'a' or 'b', not {side!r}")
    return "b" if side == "a" else "a"


def pair_of(alignment: Alignment, side: str, index: int) -> AlignedPair | None:
    """The pair sentence ``index`` of ``side`` belongs to (None: unaligned)."""
    _other(side)
    for pair in alignment.pairs:
        if index in (pair.a_indices if side == "a" else pair.b_indices):
            return pair
    return None


def partner_rows(alignment: Alignment, side: str, index: int) -> list[int]:
    """The sentences of the other side aligned with sentence ``index`` of ``side`` ([]: unaligned)."""
    pair = pair_of(alignment, side, index)
    if pair is None:
        return []
    return list(pair.b_indices if side == "a" else pair.a_indices)


def step_target(alignment: Alignment, side: str, positions: Mapping[int, float],
                centre: float) -> tuple[int, int] | None:
    """What scrolling in step brings level: ``positions`` maps sentences of ``side`` on screen to their
    height; of those with a partner, the one nearest ``centre`` and its first partner on the other side,
    as (index on ``side``, partner index). None when no aligned sentence is on screen."""
    partners = alignment.partners(side)
    best: tuple[float, int] | None = None
    for index, y in positions.items():
        if index in partners:
            distance = abs(y - centre)
            if best is None or distance < best[0] or (distance == best[0] and index < best[1]):
                best = (distance, index)
    if best is None:
        return None
    pair = partners[best[1]]
    others = pair.b_indices if side == "a" else pair.a_indices
    return best[1], min(others)


def link_color(palette: RolePalette, role: str, strong: bool) -> QColor:
    """A link's ink: the role colour, darkened when it is pale (the yellow of "method" would vanish on
    the light canvas), opaque for the selected or hovered pair, see-through for the others."""
    color = palette.color(role) if role else QColor("#888888")
    luminance = 0.2126 * color.redF() + 0.7152 * color.greenF() + 0.0722 * color.blueF()
    if luminance > 0.5:
        color = color.darker(round(100 + 150 * (luminance - 0.35)))
    if strong:
        color = color.darker(115)
    color.setAlphaF(1.0 if strong else 0.6)
    return color


def analysis_from_side(paper: Paper, side: AlignSide) -> PaperAnalysis:
    """Role overlays for ``paper`` from the labels the alignment carries (certain, for colouring only)."""
    roles = [RolePrediction(s.role or "other", {s.role or "other": 1.0}) for s in side.sentences]
    return PaperAnalysis(paper.sha256, "alignment", roles)


# -- the two kinds of side --------------------------------------------------------------------------
class SideView(QObject):
    """One side of the view: its widget, where its sentences are, highlighting, scrolling."""

    clicked = Signal(int)  # sentence index
    hovered = Signal(int)  # sentence index under the mouse (-1: none)
    scrolled = Signal()

    widget: QWidget

    def viewport(self) -> QWidget:
        raise NotImplementedError

    def y_of(self, index: int) -> float | None:
        """Height of sentence ``index`` in the viewport (may lie outside it; None: unknown)."""
        raise NotImplementedError

    def positions(self) -> dict[int, float]:
        """Sentences whose height lies inside the viewport → that height."""
        raise NotImplementedError

    def scroll_by(self, dy: float) -> None:
        raise NotImplementedError

    def ensure_visible(self, index: int) -> None:
        """Bring sentence ``index`` to the middle of the viewport."""
        raise NotImplementedError

    def highlight(self, selected: list[int], hinted: list[int]) -> None:
        raise NotImplementedError

    def scroll_value(self) -> int:
        raise NotImplementedError

    def close(self) -> None:
        """Drop what the side holds (documents, items)."""


class PageSide(SideView):
    """A side shown as PDF pages with role overlays."""

    def __init__(self, palette: RolePalette, doc: pymupdf.Document, paper: Paper,
                 analysis: PaperAnalysis | None, path: str | None = None,
                 renderer: RenderClient | None = None) -> None:
        super().__init__()
        from app.gui.pdf_pages import page_sizes

        self.paper = paper
        self.view = PageView(palette, renderer if path is not None else None)
        self.widget = self.view
        self.view.set_document(doc, page_sizes(doc), zoom=0.0, path=path)
        self.view.set_overlays(paper, analysis)
        self._selected: list[int] = []
        self._hinted: list[int] = []
        self._hover = -1
        self._anchors: list[QPointF | None] = []
        self._compute_anchors()
        self.view.sentenceClicked.connect(self.clicked)
        self.view.overlaysBuilt.connect(lambda _n: self._apply())
        self.view.verticalScrollBar().valueChanged.connect(lambda _v: self.scrolled.emit())
        self.view.viewport().installEventFilter(self)

    def _compute_anchors(self) -> None:
        """Each sentence's anchor in scene points: the middle of its first line's left edge."""
        anchors: list[QPointF | None] = []
        for sentence in self.paper.sentences:
            rect = next((r for r in sentence.rects if 0 <= r.page < self.view.page_count), None)
            if rect is None:
                anchors.append(None)
                continue
            origin = self.view.page_origin(rect.page)
            anchors.append(QPointF(origin.x() + rect.x0, origin.y() + (rect.y0 + rect.y1) / 2))
        self._anchors = anchors

    def viewport(self) -> QWidget:
        return self.view.viewport()

    def y_of(self, index: int) -> float | None:
        if not (0 <= index < len(self._anchors)):
            return None
        anchor = self._anchors[index]
        if anchor is None:
            return None
        return self.view.viewportTransform().map(anchor).y()

    def positions(self) -> dict[int, float]:
        transform = self.view.viewportTransform()
        height = self.view.viewport().height()
        found = {}
        for index, anchor in enumerate(self._anchors):
            if anchor is not None:
                y = transform.map(anchor).y()
                if 0 <= y <= height:
                    found[index] = y
        return found

    def scroll_by(self, dy: float) -> None:
        bar = self.view.verticalScrollBar()
        bar.setValue(bar.value() + round(dy))

    def scroll_value(self) -> int:
        return self.view.verticalScrollBar().value()

    def ensure_visible(self, index: int) -> None:
        """Scroll sentence ``index`` to the middle of the viewport (as far as the pages allow)."""
        y = self.y_of(index)
        if y is not None:
            self.scroll_by(y - self.view.viewport().height() / 2)

    def highlight(self, selected: list[int], hinted: list[int]) -> None:
        self._selected, self._hinted = list(selected), list(hinted)
        self._apply()

    def _apply(self) -> None:
        chosen, hinted = set(self._selected), set(self._hinted)
        for item in self.view.overlay_items:
            want_selected = item.index in chosen
            want_hover = item.index in hinted or item.index == self._hover
            if item.selected != want_selected or item.hovered != want_hover:
                item.selected = want_selected
                item.hovered = want_hover
                item.update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.MouseMove and isinstance(event, QMouseEvent):
            index = self.view.sentence_at(event.position().toPoint())
            if index != self._hover:
                self._hover = index
                self.hovered.emit(index)
        elif kind == QEvent.Type.Leave and self._hover != -1:
            self._hover = -1
            self.hovered.emit(-1)
        return False

    def close(self) -> None:
        self.view.viewport().removeEventFilter(self)
        self.view.clear()


class ListSide(SideView):
    """A side shown as a list of its sentences (the draft, or a paper without its PDF)."""

    def __init__(self, palette: RolePalette, side: AlignSide) -> None:
        super().__init__()
        self._palette = palette
        self.side = side
        self.list = QListWidget()
        self.widget = self.list
        self.list.setWordWrap(True)
        self.list.setMouseTracking(True)
        self.list.setSpacing(2)
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.list.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.list.setStyleSheet("QListWidget { background: #fafafa; }")
        for number, sentence in enumerate(side.sentences):
            row = QListWidgetItem(sentence.text)
            tip = f"{number + 1}. {sentence.role or 'no role'}"
            if sentence.function and sentence.function != NO_FUNCTION:
                tip += f" · {sentence.function}"
            row.setToolTip(tip)
            self.list.addItem(row)
        self._selected: list[int] = []
        self._hinted: list[int] = []
        self._apply()
        self.list.itemClicked.connect(lambda item: self.clicked.emit(self.list.row(item)))
        self.list.itemEntered.connect(lambda item: self.hovered.emit(self.list.row(item)))
        self.list.viewport().installEventFilter(self)
        self.list.verticalScrollBar().valueChanged.connect(lambda _v: self.scrolled.emit())

    def viewport(self) -> QWidget:
        return self.list.viewport()

    def y_of(self, index: int) -> float | None:
        item = self.list.item(index)
        if item is None:
            return None
        rect = self.list.visualItemRect(item)
        return rect.top() + min(rect.height() / 2, 10.0)  # the first line of a long sentence

    def positions(self) -> dict[int, float]:
        height = self.list.viewport().height()
        found = {}
        for index in range(self.list.count()):
            rect = self.list.visualItemRect(self.list.item(index))
            if rect.bottom() < 0:
                continue
            if rect.top() > height:
                break
            y = self.y_of(index)
            if y is not None and 0 <= y <= height:
                found[index] = y
        return found

    def scroll_by(self, dy: float) -> None:
        bar = self.list.verticalScrollBar()
        bar.setValue(bar.value() + round(dy))

    def scroll_value(self) -> int:
        return self.list.verticalScrollBar().value()

    def ensure_visible(self, index: int) -> None:
        item = self.list.item(index)
        if item is not None:
            self.list.scrollToItem(item, QAbstractItemView.ScrollHint.PositionAtCenter)

    def highlight(self, selected: list[int], hinted: list[int]) -> None:
        self._selected, self._hinted = list(selected), list(hinted)
        self._apply()

    def _apply(self) -> None:
        chosen, hinted = set(self._selected), set(self._hinted)
        for index, sentence in enumerate(self.side.sentences):
            item = self.list.item(index)
            strength = 0.65 if index in chosen else 0.42 if index in hinted else 0.16
            item.setBackground(QBrush(self._palette.fill(sentence.role, strength) if sentence.role
                                      else QColor(0, 0, 0, 0)))
            font = item.font()
            font.setBold(index in chosen)
            item.setFont(font)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Leave:
            self.hovered.emit(-1)
        return False

    def close(self) -> None:
        self.list.viewport().removeEventFilter(self)


# -- the link canvas --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Link:
    """One line to draw: canvas heights of an A and a B sentence, the pair's role, and its weight."""

    a: int
    b: int
    y_a: float
    y_b: float
    role: str
    strong: bool


class LinkCanvas(QWidget):
    """The strip between the two sides: one curve per aligned (A, B) sentence pair on screen."""

    def __init__(self, owner: AlignedPagesView) -> None:
        super().__init__()
        self._owner = owner
        self.setFixedWidth(LINK_WIDTH)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, False)
        self.setToolTip("Links between aligned sentences (thick: the selected or hovered pair)")

    def _to_canvas(self, viewport: QWidget, y: float) -> float:
        top = self.window()
        point = viewport.mapTo(top, QPoint(0, round(y)))
        return float(self.mapFrom(top, point).y())

    def links(self) -> list[Link]:
        """The links the canvas draws now: those whose A and B ends are both on screen."""
        owner = self._owner
        alignment = owner.alignment
        on_a, on_b = owner.side_a.positions(), owner.side_b.positions()
        if not on_a or not on_b:
            return []
        strong = {id(p) for p in (owner.selected_pair, owner.hovered_pair) if p is not None}
        found = []
        for pair in alignment.pairs:
            a_here = [i for i in pair.a_indices if i in on_a]
            b_here = [j for j in pair.b_indices if j in on_b]
            for i in a_here:
                for j in b_here:
                    found.append(Link(i, j, self._to_canvas(owner.side_a.viewport(), on_a[i]),
                                      self._to_canvas(owner.side_b.viewport(), on_b[j]), pair.role,
                                      id(pair) in strong))
        return found

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), QColor("#f3f3f3"))
        width = float(self.width())
        links = self.links()
        palette = self._owner.role_palette
        for link in sorted(links, key=lambda k: k.strong):  # the strong ones on top
            color = link_color(palette, link.role, link.strong)
            pen = QPen(color, 3.2 if link.strong else 1.3)
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            painter.setPen(pen)
            path = QPainterPath(QPointF(0, link.y_a))
            middle = width * 0.5
            path.cubicTo(QPointF(middle, link.y_a), QPointF(middle, link.y_b), QPointF(width, link.y_b))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(path)
            if link.strong:
                painter.setBrush(QBrush(color))
                painter.setPen(Qt.PenStyle.NoPen)
                painter.drawEllipse(QRectF(-4, link.y_a - 4, 8, 8))
                painter.drawEllipse(QRectF(width - 4, link.y_b - 4, 8, 8))
        painter.end()


# -- the view ---------------------------------------------------------------------------------------
@dataclass
class SideSource:
    """What one side shows: a parsed paper with its open PDF (pages), or only the aligned sentences (a list).
    ``doc`` is opened by the caller (``pdf_pages.open_for_view``); ``owns_doc``: the view closes it."""

    paper: Paper | None = None
    doc: pymupdf.Document | None = None
    analysis: PaperAnalysis | None = None
    path: str | None = None
    owns_doc: bool = False


class AlignedPagesView(QWidget):
    """A and B side by side, scrolling in step, with the links between aligned sentences."""

    selectionChanged = Signal(str, int)  # the side and sentence clicked or selected (-1: none)

    def __init__(self, alignment: Alignment, palette: RolePalette, a: SideSource | None = None,
                 b: SideSource | None = None, parent: QWidget | None = None,
                 renderer: RenderClient | None = None) -> None:
        super().__init__(parent)
        self.alignment = alignment
        self.role_palette = palette
        self._renderer = renderer  # the render process the page sides share (None: they render here)
        self._sources = (a or SideSource(), b or SideSource())
        self.side_a = self._make_side(alignment.a, self._sources[0])
        self.side_b = self._make_side(alignment.b, self._sources[1])
        self.selected_pair: AlignedPair | None = None
        self.selected: dict[str, list[int]] = {"a": [], "b": []}
        self.hovered_pair: AlignedPair | None = None
        self._stepping = False
        self._closed = False

        self.in_step = QCheckBox("Scroll in step")
        self.in_step.setChecked(True)
        self.in_step.setToolTip("Scrolling one side brings the partner of the aligned sentence nearest the "
                                "middle of the other to the same height")
        self.in_step.toggled.connect(lambda on: self.step_from("a") if on else None)
        self.detail = QLabel("Click a sentence on either side to see its partner.")
        self.detail.setStyleSheet(f"color: {MUTED};")
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        title_a = QLabel(f"<b>A</b> · {_escape(alignment.a.title or 'this paper')}")
        title_b = QLabel(f"<b>B</b> · {_escape(alignment.b.title or 'the second text')}")
        for label in (title_a, title_b):
            label.setTextFormat(Qt.TextFormat.RichText)
            label.setStyleSheet("padding: 2px 4px;")
        top = QHBoxLayout()
        top.setContentsMargins(6, 4, 6, 0)
        top.addWidget(self.in_step)
        top.addSpacing(12)
        top.addWidget(self.detail, 1)
        titles = QHBoxLayout()
        titles.setContentsMargins(0, 0, 0, 0)
        titles.setSpacing(0)
        titles.addWidget(title_a, 1)
        titles.addSpacing(LINK_WIDTH)
        titles.addWidget(title_b, 1)
        self.canvas = LinkCanvas(self)
        sides = QHBoxLayout()
        sides.setContentsMargins(0, 0, 0, 0)
        sides.setSpacing(0)
        sides.addWidget(self.side_a.widget, 1)
        sides.addWidget(self.canvas)
        sides.addWidget(self.side_b.widget, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addLayout(titles)
        layout.addLayout(sides, 1)

        for name, side in (("a", self.side_a), ("b", self.side_b)):
            side.clicked.connect(lambda i, s=name: self.select(s, i))
            side.hovered.connect(lambda i, s=name: self.hover(s, i))
            side.scrolled.connect(lambda s=name: self._on_scrolled(s))
        palette.changed.connect(self.canvas.update)

    def _make_side(self, aligned: AlignSide, source: SideSource) -> SideView:
        paper, doc = source.paper, source.doc
        if paper is not None and doc is not None and len(paper.sentences) == len(aligned.sentences):
            analysis = source.analysis
            if analysis is None or len(analysis.roles) != len(paper.sentences):
                analysis = analysis_from_side(paper, aligned)
            return PageSide(self.role_palette, doc, paper, analysis, source.path, self._renderer)
        return ListSide(self.role_palette, aligned)

    def side(self, name: str) -> SideView:
        return self.side_a if name == "a" else self.side_b

    # -- selection ----------------------------------------------------------------------
    def select(self, side: str, index: int, *, scroll: bool = True) -> None:
        """Select sentence ``index`` of ``side`` (-1: none) with its pair's other members and its
        partner(s); the partner is brought level with it when scrolling in step."""
        pair = pair_of(self.alignment, side, index) if index >= 0 else None
        self.selected_pair = pair
        if pair is not None:
            self.selected = {"a": list(pair.a_indices), "b": list(pair.b_indices)}
        else:
            self.selected = {"a": [], "b": []}
            if index >= 0:
                self.selected[side] = [index]
        self._highlight()
        self.detail.setText(self._describe(side, index, pair))
        if scroll and index >= 0:
            this = self.side(side)
            y = this.y_of(index)
            if y is None or not (0 <= y <= this.viewport().height()):
                this.ensure_visible(index)
            if pair is not None:
                self._bring_level(side, index, min(pair.b_indices if side == "a" else pair.a_indices))
        self.canvas.update()
        self.selectionChanged.emit(side, index)

    def hover(self, side: str, index: int) -> None:
        """The pair under the mouse: its partners lit and its link drawn thick."""
        pair = pair_of(self.alignment, side, index) if index >= 0 else None
        if pair is self.hovered_pair:
            return
        self.hovered_pair = pair
        self._highlight()
        self.canvas.update()

    def _highlight(self) -> None:
        hover = self.hovered_pair
        self.side_a.highlight(self.selected["a"], list(hover.a_indices) if hover else [])
        self.side_b.highlight(self.selected["b"], list(hover.b_indices) if hover else [])

    def _describe(self, side: str, index: int, pair: AlignedPair | None) -> str:
        if index < 0:
            return ""
        name = side.upper()
        if pair is None:
            return f"{name} sentence {index + 1}: no partner on the other side."
        doing = f" · {pair.function}" if pair.function and pair.function != NO_FUNCTION else ""
        a = ", ".join(str(i + 1) for i in pair.a_indices)
        b = ", ".join(str(j + 1) for j in pair.b_indices)
        from core.alignment.align import method_text

        return (f"A {a} ↔ B {b} · {pair.role or 'mixed roles'}{doing} · similarity {pair.shown_score:.2f}"
                f" · {method_text(pair.method)}")

    # -- scrolling in step --------------------------------------------------------------
    def _bring_level(self, side: str, index: int, partner: int) -> None:
        """Scroll the other side so that ``partner`` sits at the height of ``index`` on ``side``."""
        this, other = self.side(side), self.side(_other(side))
        y, target = this.y_of(index), other.y_of(partner)
        if y is None or target is None or self._stepping:
            return
        self._stepping = True
        try:
            other.scroll_by(target - y)
        finally:
            self._stepping = False

    def step_from(self, side: str) -> tuple[int, int] | None:
        """Bring the other side level with ``side`` (what scrolling ``side`` does when in step)."""
        this = self.side(side)
        found = step_target(self.alignment, side, this.positions(), this.viewport().height() / 2)
        if found is not None:
            self._bring_level(side, *found)
        return found

    def _on_scrolled(self, side: str) -> None:
        if not self._stepping and self.in_step.isChecked():
            self.step_from(side)
        self.canvas.update()

    def link_count(self) -> int:
        """Links the canvas would draw now."""
        return len(self.canvas.links())

    def close_sources(self) -> None:
        """Drop the page views' documents (and close those the view was given to own); once."""
        if self._closed:
            return
        self._closed = True
        self.side_a.close()
        self.side_b.close()
        for source in self._sources:
            if source.owns_doc and source.doc is not None:
                source.doc.close()
                source.doc = None


class AlignedPagesWindow(QDialog):
    """The view in a window of its own (non-modal), made by the Alignment panel's "Side by side"."""

    def __init__(self, alignment: Alignment, palette: RolePalette, a: SideSource | None = None,
                 b: SideSource | None = None, parent: QWidget | None = None,
                 renderer: RenderClient | None = None) -> None:
        super().__init__(parent)
        self.setWindowFlag(Qt.WindowType.Window, True)
        self.setModal(False)
        names = f"{alignment.a.title or 'A'} · {alignment.b.title or 'B'}"
        self.setWindowTitle(f"Alignment side by side — {names}")
        self.view = AlignedPagesView(alignment, palette, a, b, self, renderer)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)
        self.resize(1400, 800)
        self.finished.connect(lambda _r: self.view.close_sources())

    def closeEvent(self, event: QCloseEvent) -> None:
        self.view.close_sources()
        super().closeEvent(event)


def _escape(text: str) -> str:
    import html

    return html.escape(text)


__all__ = ["AlignedPagesView", "AlignedPagesWindow", "LinkCanvas", "SideSource", "partner_rows",
           "step_target"]
