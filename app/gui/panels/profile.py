"""Rhetorical profile: the share of each role per section, as stacked horizontal bars (QPainter), or,
switched to functions, each section's most frequent communicative functions and the moves its kind
of section usually makes (``core.taxonomy.moves``)."""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import (
    QScrollArea,
    QSizePolicy,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.session import Session
from app.gui.widgets import hint_label, muted, muted_color, view_mode_row
from core.document import Paper
from core.labelling.analysis import PaperAnalysis
from core.taxonomy.labels import NO_FUNCTION, ROLES

ROW_H = 22
LEGEND_H = 26
LABEL_W = 130


class ProfileChart(QWidget):
    """Rows of (section label, stacked bar of role shares, sentence count)."""

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.rows: list[tuple[int, str, dict[str, int]]] = []  # section index, label, counts
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)
        session.palette.changed.connect(self.update)

    def set_data(self, paper: Paper | None, analysis: PaperAnalysis | None) -> None:
        self.rows = []
        if paper is not None and analysis is not None:
            for i, section in enumerate(paper.sections):
                if section.sentence_count == 0:
                    continue
                end = section.first_sentence + section.sentence_count
                labels = Counter(analysis.roles[j].label for j in range(section.first_sentence, end))
                title = " ".join(p for p in (section.number, section.heading) if p) or section.kind.value
                self.rows.append((i, title, {r: labels.get(r, 0) for r in ROLES}))
            overall = Counter(p.label for p in analysis.roles)
            self.rows.append((-1, "Whole paper", {r: overall.get(r, 0) for r in ROLES}))
        self.setFixedHeight(self.sizeHint().height())
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(300, LEGEND_H * 2 + ROW_H * max(1, len(self.rows)) + 8)

    def _row_at(self, y: float) -> int:
        i = int((y - 4) // ROW_H)
        return i if 0 <= i < len(self.rows) else -1

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        i = self._row_at(event.position().y())
        if i < 0:
            self.setToolTip("")
            return
        _, title, counts = self.rows[i]
        total = sum(counts.values()) or 1
        self.setToolTip(f"{title}\n" + "\n".join(f"{r}: {counts[r]} ({counts[r] / total:.0%})"
                                                 for r in ROLES if counts[r]))

    def mousePressEvent(self, event: QMouseEvent) -> None:
        i = self._row_at(event.position().y())
        paper = self.session.paper
        if i >= 0 and paper is not None and self.rows[i][0] >= 0:
            self.session.jump_to_sentence(paper.sections[self.rows[i][0]].first_sentence)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        metrics = painter.fontMetrics()
        count_w = metrics.horizontalAdvance("9999") + 6
        label_w = min(LABEL_W, max(60, self.width() // 3))
        bar_w = max(20, self.width() - label_w - count_w - 12)
        text_color = self.palette().windowText().color()
        for row, (section_index, title, counts) in enumerate(self.rows):
            y = 4 + row * ROW_H
            font = painter.font()
            font.setBold(section_index < 0)
            painter.setFont(font)
            painter.setPen(text_color)
            label = metrics.elidedText(title, Qt.TextElideMode.ElideRight, label_w - 6)
            painter.drawText(QRectF(4, y, label_w - 6, ROW_H), Qt.AlignmentFlag.AlignVCenter, label)
            total = sum(counts.values())
            x = float(label_w)
            bar = QRectF(label_w, y + 4, bar_w, ROW_H - 8)
            for role in ROLES:
                if not counts[role] or not total:
                    continue
                w = bar_w * counts[role] / total
                painter.fillRect(QRectF(x, bar.top(), w, bar.height()), self.session.palette.color(role))
                x += w
            painter.setPen(QPen(muted_color(self.palette()), 0))
            painter.drawRect(bar)
            painter.setPen(text_color)
            painter.drawText(QRectF(label_w + bar_w + 4, y, count_w, ROW_H),
                             Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, str(total))
        # legend, wrapped
        x, y = 4.0, 8 + len(self.rows) * ROW_H
        font = painter.font()
        font.setBold(False)
        painter.setFont(font)
        for role in ROLES:
            w = 14 + metrics.horizontalAdvance(role) + 12
            if x + w > self.width() and x > 4:
                x, y = 4.0, y + LEGEND_H - 6
            painter.fillRect(QRectF(x, y + 5, 10, 10), self.session.palette.color(role))
            painter.setPen(text_color)
            painter.drawText(QRectF(x + 14, y, w, 20), Qt.AlignmentFlag.AlignVCenter, role)
            x += w
        painter.end()


TOP_FUNCTIONS = 5


def functions_html(paper: Paper, analysis: PaperAnalysis, session: Session) -> str:
    """Per section: its most frequent functions (chips in their role's colour) and its move checklist."""
    import html

    from core.taxonomy.functions import default_taxonomy
    from core.taxonomy.moves import check_moves, describe_checks

    functions = analysis.functions
    if functions is None:
        return f"<p style='color:{muted()}'>This model has no function head: only roles can be shown.</p>"
    taxonomy = default_taxonomy()
    parts = []
    for section in paper.sections:
        if section.sentence_count == 0:
            continue
        end = section.first_sentence + section.sentence_count
        found = [functions[j].label for j in range(section.first_sentence, end)]
        counts = Counter(f for f in found if f != NO_FUNCTION).most_common(TOP_FUNCTIONS)
        title = " ".join(p for p in (section.number, section.heading) if p) or section.kind.value
        chips = []
        for function_id, n in counts:
            try:
                info = taxonomy.get(function_id)
                name, color = info.name, session.palette.color(info.role).name()
            except KeyError:
                name, color = function_id, muted()
            chips.append(f"<span style='background:{color}'>&nbsp;&nbsp;</span> {html.escape(name)} ×{n}")
        moves = describe_checks(check_moves(found, section.kind.value), section.kind.value)
        grey, darker = muted(), muted(share=0.75)
        checklist = f"<br><span style='color:{darker}'>{html.escape(moves)}</span>" if moves else ""
        parts.append(f"<p><b>{html.escape(title)}</b> <span style='color:{grey}'>({section.sentence_count} "
                     f"sentences, {found.count(NO_FUNCTION)} without a function)</span><br>"
                     + ("<br>".join(chips) or f"<span style='color:{muted()}'>no function found</span>")
                     + checklist + "</p>")
    return "".join(parts)


class ProfilePanel(QWidget):
    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.chart = ProfileChart(session)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.chart)
        self.functions_view = QTextBrowser()
        self.functions_view.setOpenLinks(False)
        top, self.mode = view_mode_row("Show the share of roles per section, or each section's "
                                       "communicative functions")
        self.mode.currentTextChanged.connect(lambda _m: self._refresh())
        self.stack = QStackedWidget()
        self.empty = hint_label("The share of each role per section appears here once the paper is labelled.")
        self.stack.addWidget(self.empty)
        self.stack.addWidget(scroll)
        self.stack.addWidget(self.functions_view)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.stack)
        session.analysisReady.connect(self._refresh)
        session.documentClosed.connect(self._refresh)
        session.documentOpened.connect(self._refresh)
        self._refresh()

    def _refresh(self, *_: object) -> None:
        paper, analysis = self.session.paper, self.session.analysis
        self.chart.set_data(paper, analysis)
        if not self.chart.rows or paper is None or analysis is None:
            self.stack.setCurrentIndex(0)
        elif self.mode.currentText() == "functions":
            self.functions_view.setHtml(functions_html(paper, analysis, self.session))
            self.stack.setCurrentWidget(self.functions_view)
        else:
            self.stack.setCurrentIndex(1)


SPEC = register_panel(PanelSpec(
    id="profile", title="Rhetorical profile", factory=ProfilePanel, order=30, shortcut="Ctrl+Shift+P",
    description="Share of each role per section, or each section's functions", in_front=True, height=470))
