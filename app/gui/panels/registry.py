"""The panel registry: dock panels declare themselves here instead of being wired into the window.

A panel module calls :func:`register_panel` with a :class:`PanelSpec` at import time; the main
window builds one dock per registered spec (in ``order``), adds its toggle action to the View menu
(with the spec's shortcut) and hands the factory the shared :class:`~app.gui.session.Session`.
Later features (phrasing suggestions, two-paper alignment, graphical abstract, training) add a
module and a ``register_panel`` call; nothing in the main window changes.

What a panel offers the others is declared here too, as the capability protocols below: a panel
has a capability when it has the members the protocol names (no base class, no registration), and
the window links panels by these protocols only (``isinstance(panel, DraftSource)``), never by
probing attribute names.  A new link between panels is a new protocol here, not a ``getattr``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.corrections import CorrectionController
    from app.gui.session import Session
    from core.labelling.sentence_context import SentenceContext

Area = Qt.DockWidgetArea


@dataclass(frozen=True)
class PanelSpec:
    id: str  # stable object name (saved window state uses it)
    title: str
    factory: Callable[[Session], QWidget]
    area: Area = Area.RightDockWidgetArea
    order: int = 100
    shortcut: str = ""  # toggles the panel
    visible: bool = True  # shown on first start
    description: str = ""
    tab_with: str = ""  # id of a panel to tabify with
    in_front: bool = False  # the visible tab when tabified with others
    width: int = 0  # initial width in pixels (left/right areas); 0 = Qt's choice
    height: int = 0  # initial height in pixels, shared out among the area's panels that set one
    remember_visible: bool = False  # shown or hidden as the user left it (overrides ``visible``)
    show_on_selection: bool = False  # shown when the user selects a sentence
    min_height: int = 0  # the height that shows the panel's content: its dock grows to it when shown


_REGISTRY: dict[str, PanelSpec] = {}


def register_panel(spec: PanelSpec) -> PanelSpec:
    """Add (or replace) a panel; returns the spec so it can be used as a module constant."""
    _REGISTRY[spec.id] = spec
    return spec


def unregister_panel(panel_id: str) -> None:
    _REGISTRY.pop(panel_id, None)


def panel_specs() -> list[PanelSpec]:
    return sorted(_REGISTRY.values(), key=lambda s: (s.order, s.id))


# -- capabilities: what a panel offers the window and the other panels ---------------------------
@runtime_checkable
class DraftSource(Protocol):
    """Publishes the sentence being written (the draft): its text, read when asked, the sentence at
    the cursor as it changes, and that sentence's context (heading kind and neighbours)."""

    @property
    def currentSentenceChanged(self) -> SignalInstance: ...

    @property
    def text(self) -> str: ...

    def current_context(self) -> SentenceContext | None: ...


@runtime_checkable
class OpensDrafts(Protocol):
    """Opens a draft file (.tex, .md, .docx, .txt): one dropped on the window (read in the background)."""

    def open_draft(self, path: str) -> None: ...


@runtime_checkable
class RepairsLibrary(Protocol):
    """Repairs a damaged library ("Repair library…"): offered where corrections meet one."""

    def repair_library(self) -> None: ...


@runtime_checkable
class TakesDraftText(Protocol):
    """Reads the draft's whole text when it needs it (the alignment's "compare with my draft")."""

    def set_draft_provider(self, provider: Callable[[], str]) -> None: ...


@runtime_checkable
class TakesDraftContext(Protocol):
    """Reads the context of the sentence being written (the suggestions' "reads as")."""

    def set_draft_context_provider(self, provider: Callable[[], SentenceContext | None]) -> None: ...


@runtime_checkable
class FollowsDraftSentence(Protocol):
    """Follows the sentence being written (the suggestions for it)."""

    def set_draft_sentence(self, text: str) -> None: ...


@runtime_checkable
class AsksToInsert(Protocol):
    """Asks for text to be inserted where the user writes (a suggestion's template)."""

    @property
    def textInsertRequested(self) -> SignalInstance: ...


@runtime_checkable
class TakesText(Protocol):
    """Inserts text at the cursor (the draft); shown and raised first."""

    def insert_text(self, text: str) -> None: ...


@runtime_checkable
class ChangesLibrary(Protocol):
    """Adds papers to or removes them from the library."""

    @property
    def libraryChanged(self) -> SignalInstance: ...


@runtime_checkable
class FollowsLibrary(Protocol):
    """Forgets what it knew of the library when it changes."""

    def library_changed(self) -> None: ...


@runtime_checkable
class OpensPapers(Protocol):
    """Asks the window to open a PDF (``openRequested(path)``), as File › Open does."""

    @property
    def openRequested(self) -> SignalInstance: ...


@runtime_checkable
class SaysStatus(Protocol):
    """Has short messages for the window's status bar (``statusMessage(text)``)."""

    @property
    def statusMessage(self) -> SignalInstance: ...


@runtime_checkable
class TakesCorrections(Protocol):
    """Offers "Correct role/function" through the window's correction controller."""

    def set_corrections(self, corrections: CorrectionController) -> None: ...


@runtime_checkable
class OffersFileActions(Protocol):
    """Has actions for the File menu (e.g. "Add this paper to my library")."""

    def file_menu_actions(self) -> list[QAction]: ...


@runtime_checkable
class OffersToolbarActions(Protocol):
    """Has one-click actions for the main toolbar (e.g. "Graphical abstract")."""

    def toolbar_actions(self) -> list[QAction]: ...


@runtime_checkable
class ComparesPapers(Protocol):
    """Lines the open paper up with a second PDF (``rhetorica gui A.pdf --compare B.pdf``) and shows
    the result in a side-by-side window; ``alignmentShown`` says when an alignment is listed."""

    @property
    def alignmentShown(self) -> SignalInstance: ...

    def compare_with_pdf(self, path: str | None = None) -> bool: ...

    def open_side_by_side(self) -> object: ...


@runtime_checkable
class Searches(Protocol):
    """Shows its results only when asked (the Search panel's "Search" button); ``search()`` asks, as
    ``gui --show-panel search --screenshot`` does, and says whether a search started."""

    def search(self) -> bool: ...


@runtime_checkable
class NeedsHeight(Protocol):
    """Needs a least height to be of use, known only once it has content (the graphical abstract's
    thumbnails and reasons); a fixed need is the spec's ``min_height``."""

    def wanted_height(self) -> int: ...


@runtime_checkable
class Flushable(Protocol):
    """Holds user text that must be saved before the window closes (the draft)."""

    def flush(self) -> None: ...


@runtime_checkable
class AsksBeforeClosing(Protocol):
    """Holds a file's unsaved edits (the draft pane): ``may_close()`` asks the author to save them
    before the window closes; False: the author cancelled, the window stays."""

    def may_close(self) -> bool: ...


@runtime_checkable
class CopiesItem(Protocol):
    """A widget inside a panel (a list) that copies its selected row on Ctrl+C; returns the text."""

    def copy_selected_item(self) -> str: ...
