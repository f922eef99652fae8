"""The Alignment panel's "Side by side": which pages each side shows in the
:class:`~app.gui.align_pages.AlignedPagesWindow` (the open paper's document; the second PDF opened for
rendering only; a draft, or a PDF that cannot be opened, as a list of its sentences).  The page sides
render in the application's render process (:func:`~app.gui.render_client.shared_client`), like the
main view, so heavy pages do not hold up the UI thread."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from app.gui.session import Session
from core.alignment.align import Alignment
from core.errors import RhetoricaError

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.align_pages import AlignedPagesWindow
    from core.document import Paper
    from core.labelling.analysis import PaperAnalysis


def pages_window(parent: QWidget, session: Session, alignment: Alignment, a_is_open_paper: bool,
                 second: tuple[Paper, PaperAnalysis | None] | None) -> tuple[AlignedPagesWindow, str]:
    """A new (not yet shown) side-by-side window for ``alignment`` and a one-line note ("" when both
    sides show what they should). ``second``: the second PDF's parsed paper and analysis, when B is one."""
    from app.gui.align_pages import AlignedPagesWindow, SideSource
    from app.gui.pdf_pages import open_for_view
    from app.gui.render_client import shared_client

    document, paper = session.document, session.paper
    a = SideSource()
    if document is not None and paper is not None and a_is_open_paper:
        a = SideSource(paper, document.doc, session.analysis, document.path)
    b = SideSource()
    note = ""
    if alignment.b.kind == "pdf" and second is not None:
        paper_b, analysis_b = second
        path_b = paper_b.source_path or alignment.b.source
        try:
            doc = open_for_view(path_b)
        except RhetoricaError as error:
            note = f"B shown as a list: {error}"
        else:
            b = SideSource(paper_b, doc, analysis_b, str(path_b), owns_doc=True)
    return AlignedPagesWindow(alignment, session.palette, a, b, parent, shared_client()), note


class SideBySide:
    """The panel's one side-by-side window: opened (again) for an alignment, closed, forgotten when the
    user closes it."""

    def __init__(self, parent: QWidget, session: Session) -> None:
        self._parent = parent
        self._session = session
        self.window: AlignedPagesWindow | None = None

    def open(self, alignment: Alignment, a_is_open_paper: bool,
             second: tuple[Paper, PaperAnalysis | None] | None) -> tuple[AlignedPagesWindow, str]:
        """Close any open window and show a new one for ``alignment``; (the window, a one-line note)."""
        self.close()
        window, note = pages_window(self._parent, self._session, alignment, a_is_open_paper, second)
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        window.destroyed.connect(lambda _o=None, w=window: self._forget(w))
        self.window = window
        window.show()
        window.raise_()
        return window, note

    def close(self) -> None:
        window, self.window = self.window, None
        if window is not None:
            window.close()

    def _forget(self, window: AlignedPagesWindow) -> None:
        if self.window is window:
            self.window = None
