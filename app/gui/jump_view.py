"""Scrolling the pages to what the author asked to see (a selected sentence, a figure): well into the view,
not at its edge, so that the toolbar's page number (the page at the view's centre) is the target's page.

``PageView.show_rect`` only makes a rectangle visible, which may leave it at the bottom edge of the view
while the page in the middle, and so the page number, is the one before.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF

from app.gui.page_view import PageView

EDGE = 0.25  # a target nearer than this fraction of the view's height to its top or bottom is moved in


def target_rect(view: PageView, page: int, bbox: tuple[float, float, float, float]) -> QRectF:
    """``bbox`` (points on ``page``) in scene coordinates."""
    origin = view.page_origin(page)
    return QRectF(origin.x() + bbox[0], origin.y() + bbox[1], bbox[2] - bbox[0], bbox[3] - bbox[1])


def well_in_view(view: PageView, rect: QRectF) -> bool:
    """The scene ``rect`` lies inside the view, away from its top and bottom edges."""
    port = view.viewport().rect()
    shown = view.mapFromScene(rect).boundingRect()
    margin = port.height() * EDGE
    return shown.top() >= margin and shown.bottom() <= port.height() - margin \
        and shown.left() >= port.left() and shown.right() <= port.right()


def show_target(view: PageView, page: int, bbox: tuple[float, float, float, float] | None) -> None:
    """Show ``bbox`` on ``page`` (None: the page's top) well inside the view: a target already there, on
    the page the view's centre shows, stays put; any other is centred vertically (one taller than the
    middle of the view is shown from its top, a quarter of the view below the view's top)."""
    view.show_rect(page, bbox)  # the horizontal place (and the page top when there is no box)
    if bbox is None or not 0 <= page < view.page_count:
        return
    rect = target_rect(view, page, bbox)
    if well_in_view(view, rect) and view.current_page() == page:
        return
    port = view.viewport().rect()
    scale = view.transform().m22() or 1.0
    middle = port.height() * (1 - 2 * EDGE) / scale  # the height, in scene units, of the view's middle
    y = rect.center().y() if rect.height() <= middle else rect.top() + port.height() * (0.5 - EDGE) / scale
    view.centerOn(QPointF(view.mapToScene(port.center()).x(), y))
