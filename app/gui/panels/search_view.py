"""What the Search panel shows: a result card's text and tooltip, the heading naming the query, and the
list of cards (rich text wrapped to the list's width)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QLabel, QListWidget, QListWidgetItem

from app.gui.widgets import accent, clip, list_style, muted

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.panels.search_job import SearchOutcome
    from core.phrasing.search import SearchHit, SearchQuery

FACET_CHOICES = (("Background", "background"), ("Method", "method"), ("Result", "result"),
                 ("Whole paper", "all"))
CHARS = 220  # an evidence sentence longer than this is cut (the tooltip has it all)


def facet_name(facet: str) -> str:
    return next((name for name, value in FACET_CHOICES if value == facet), facet)


def result_html(rank: int, hit: SearchHit, openable: bool) -> str:
    """A result card: rank, score and title; under it the best evidence pair."""
    title = html.escape(hit.title or "(untitled)")
    pdf = (f" <span style='color:{accent()}; font-size:8pt'>PDF</span>" if openable else "")
    lines = [f"<span style='color:{muted()}'>{rank}.</span>&nbsp; <b>{title}</b>{pdf}"
             f"&nbsp;&nbsp;<span style='color:{muted()}'>score {hit.score:.3f}</span>"]
    if hit.evidence:
        best = hit.evidence[0]
        mine = html.escape(clip(best.query_sentence, CHARS))
        lines.append(f"<span style='color:{muted()}'>this paper:</span> {mine}"
                     f"<br><span style='color:{muted()}'>→ {best.similarity:.2f}:</span> "
                     f"<i>{html.escape(clip(best.matched_sentence, CHARS))}</i>")
    return "<br>".join(lines)


def result_tooltip(hit: SearchHit, pdf: str) -> str:
    pairs = "\n\n".join(f"{e.similarity:.2f}  {clip(e.query_sentence, 300)}\n"
                        f"   → {clip(e.matched_sentence, 300)}" for e in hit.evidence)
    where = (f"Double-click to open {Path(pdf).name}" if pdf
             else "No PDF to open (imported, or its file moved)")
    return f"{hit.title}\n{hit.paper_id}\n\n{pairs}\n\n{where}".strip()


def heading_html(query: SearchQuery) -> str:
    """"Papers like TITLE for its method (12 sentences)", and a second line when it fell back to all."""
    facet = html.escape(facet_name(query.facet).lower())
    return (f"<span style='color:{muted()}'>Papers like</span> <b>{html.escape(query.title)}</b> "
            f"<span style='color:{muted()}'>for its {facet} ({len(query.facet_sentences)} sentences)</span>"
            + (f"<br><span style='color:{muted()}'>It has no {facet} sentences: all its sentences were "
               "used.</span>" if query.fallback else ""))


class ResultList(QListWidget):
    """Result cards (rich text, wrapped to the list's width)."""

    def __init__(self) -> None:
        super().__init__()
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setStyleSheet(list_style())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_rows()

    def fit_rows(self) -> None:
        width = max(160, self.viewport().width() - 4)
        for row in range(self.count()):
            item = self.item(row)
            card = self.itemWidget(item)
            if card is not None:
                item.setSizeHint(QSize(width, card.heightForWidth(width) + 2))

    def fill(self, outcome: SearchOutcome) -> None:
        """One card per result, best first."""
        self.clear()
        for rank, hit in enumerate(outcome.result.results, 1):
            pdf = outcome.pdfs.get(hit.paper_id, "")
            item = QListWidgetItem()
            item.setData(Qt.ItemDataRole.UserRole, hit.paper_id)
            item.setToolTip(result_tooltip(hit, pdf))
            card = QLabel(result_html(rank, hit, bool(pdf)))
            card.setTextFormat(Qt.TextFormat.RichText)
            card.setWordWrap(True)
            card.setStyleSheet("padding: 4px 6px; background: transparent;")
            card.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
            self.addItem(item)
            self.setItemWidget(item, card)
        self.fit_rows()
        self.scrollToTop()
