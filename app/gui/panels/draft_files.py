"""The draft pane's files (issue 27.1; ``core.draft_formats``): "Open draft…", "Open recent draft",
"Save draft" and "Save draft as…" (the File menu's entries), and opening a file dropped on the editor.

A ``.tex`` (with its ``\\input`` files), ``.md``, ``.docx`` or ``.txt`` draft is shown as its readable text
(a LaTeX or Word draft as Markdown). A file is read in the background (the pane's
:class:`~app.gui.operation.PanelOperation`: "Reading notes.docx…" with a moving bar and Stop; the pane
stays editable; ``draft_reading``: any but a small .md or .txt in a child process, which Stop ends at once).
When it has been read, and before it replaces the pane's text, a pane holding text no file has (edits to
the opened file, or typed text) asks "Save changes to main.tex before opening notes.docx?" (Save /
Discard / Cancel): asked then, not before reading, so what was typed while the file was read is covered
too. Discarded text is kept in the draft store as "before-open"; "Restore the text replaced by the last
open" puts it back in the pane, as typed text. "Save draft" writes the edits back where that loses
nothing and otherwise asks for a new Markdown or text file (``draft_saving``). Closing the window with
unsaved edits to an opened file, or with typed text whose autosave failed, asks the same question
(:meth:`DraftFiles.may_close`). A bad file is one line. At start the restored text is linked again to the
file it came from when that file is unchanged (``draft_links``). The questions are ``draft_questions``."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMenu, QPlainTextEdit, QWidget

from app.gui.operation import PanelOperation
from app.gui.panels import draft_links, draft_saving
from app.gui.panels.draft_questions import CANCEL, DISCARD, SAVE, DraftQuestions
from app.gui.panels.draft_reading import flat, gone, read_job, short
from app.gui.panels.draft_text import opened_text
from core.draft_formats import ParsedDraft
from core.drafts import DraftLink, DraftStore, RecentDrafts
from core.errors import RhetoricaError

__all__ = ["CANCEL", "DISCARD", "SAVE", "DraftFiles", "read_job"]

BEFORE_OPEN = "before-open"  # the draft store's name for the text an opened file replaced
# The File menu's keys (window-wide; Ctrl+Shift+S is the Suggestions panel's)
SAVE_KEY, SAVE_AS_KEY = "Ctrl+S", "Ctrl+Alt+S"


class DraftFiles(QObject, DraftQuestions):
    """The draft file the pane shows (``opened``; None: typed or pasted text) and the file actions.
    ``say(message)`` puts one line in the pane's status; ``on_opened(message, warnings)`` follows an open;
    ``op`` reads files in the background. ``openFinished(opened)`` ends each read that was not stopped:
    True when the file is shown, False when it is not (a bad file, or the author kept the pane's text).
    ``linkFinished(linked)`` ends :meth:`relink`'s read: True when the restored text is linked to its file."""

    openFinished = Signal(bool)
    linkFinished = Signal(bool)

    def __init__(self, pane: QWidget, editor: QPlainTextEdit, store: DraftStore, say: Callable[[str], None],
                 on_opened: Callable[[str, list[str]], None], op: PanelOperation) -> None:
        super().__init__(pane)
        self.pane, self.editor, self.store, self.op = pane, editor, store, op
        self.recent = RecentDrafts(store.root)
        self.opened: ParsedDraft | None = None
        self._clean = ""  # the pane's text when it last matched the opened file
        self._reading: tuple[int, str] | None = None  # (the operation's generation, the file's name)
        self._relinking: DraftLink | None = None  # the link :meth:`relink` is reading the file of
        self._say, self._on_opened = say, on_opened
        self.act_open = QAction("Open &draft…", pane)
        self.act_open.setToolTip("Open a LaTeX, Markdown, Word or text draft in the draft pane")
        self.act_open.triggered.connect(lambda: self.open_dialog())
        self.recent_menu = QMenu("Open recent dra&ft", pane)
        self.recent_menu.aboutToShow.connect(self.fill_recent)
        self.act_save = QAction("&Save draft", pane)
        self.act_save.setShortcut(QKeySequence(SAVE_KEY))
        self.act_save.setToolTip(f"Write the draft pane back to its file where nothing is lost ({SAVE_KEY})")
        self.act_save.triggered.connect(lambda: self.save())
        self.act_save_as = QAction("Save draft &as…", pane)
        self.act_save_as.setShortcut(QKeySequence(SAVE_AS_KEY))
        self.act_save_as.setToolTip(f"Write the draft pane to a new Markdown or text file ({SAVE_AS_KEY})")
        self.act_save_as.triggered.connect(lambda: self.save_as())
        self.act_restore = QAction("Res&tore the text replaced by the last open", pane)
        self.act_restore.setToolTip("Put back the text that opening a draft file replaced (kept when you "
                                    "chose Discard)")
        self.act_restore.triggered.connect(lambda: self.restore_before_open())
        self.fill_recent()
        self._update_restore()

    def menu_actions(self) -> list[QAction]:
        return [self.act_open, self.recent_menu.menuAction(), self.act_save, self.act_save_as,
                self.act_restore]

    def fill_recent(self) -> None:
        self.recent_menu.clear()
        paths = self.recent.load()
        for number, path in enumerate(paths):
            action = self.recent_menu.addAction(f"&{number + 1}  {Path(path).name}")
            action.setToolTip(path)
            action.triggered.connect(lambda _checked=False, p=path: self.open(p))
        self.recent_menu.menuAction().setEnabled(bool(paths))

    # -- unsaved text -------------------------------------------------------------------------------
    @property
    def unsaved(self) -> bool:
        """The pane holds text no file has: edits to the opened file, or typed text that is not blank."""
        text = self.editor.toPlainText()
        return text != self._clean if self.opened is not None else bool(text.strip())

    def _mark_clean(self) -> None:
        self._clean = self.editor.toPlainText()

    def _held_by(self) -> str:
        """What the pane's text is, for a question: "changes to main.tex" or "the draft in the pane"."""
        if self.opened is not None and self.opened.path is not None:
            return f"changes to {self.opened.path.name}"
        return "the draft in the pane"

    def may_replace(self, name: str) -> bool:
        """The pane's text may be replaced by the file ``name``: when it is unsaved, the author is asked
        to save it first (only a saved text is replaced), discard it (a copy is kept in the draft store
        as "before-open") or cancel."""
        return self._may_replace(f"opening {name}", f"not opened {name}")

    def _may_replace(self, doing: str, refused: str) -> bool:
        """:meth:`may_replace` before ``doing`` ("opening b.md"); ``refused`` starts the line said when
        the pane's text stays ("not opened b.md")."""
        if not self.unsaved:
            return True
        answer = self._ask_unsaved(f"Save {self._held_by()} before {doing}?")
        if answer == SAVE:
            return self.save()
        if answer == DISCARD:
            return self._keep_copy(refused)
        self._say(f"{refused}: the draft in the pane is unchanged")
        return False

    def may_close(self, autosave_failed: str = "") -> bool:
        """The window may close. Edits to an opened file are asked about (Save / Discard / Cancel): the
        autosave restores them on the next start, but as that file's only while the file does not change
        meanwhile (:meth:`relink`). Typed text is asked about only when its autosave failed
        (``autosave_failed``: that failure's line): else the autosave restores it as it was."""
        if not self.unsaved or (self.opened is None and not autosave_failed):
            return True
        failed = f" The autosave failed: {autosave_failed}." if autosave_failed else ""
        question = f"Save {self._held_by()} before closing?{failed}"
        answer = self._ask_unsaved(question)
        return self.save() if answer == SAVE else answer == DISCARD

    def _keep_copy(self, refused: str) -> bool:
        """Keep the pane's text in the draft store as "before-open"; False (and one line starting with
        ``refused``) if it cannot."""
        try:
            self.store.save(self.editor.toPlainText(), BEFORE_OPEN)
        except OSError as error:
            self._say(f"{refused}: the text in the pane could not be kept first ({error})")
            return False
        self._update_restore()
        return True

    # -- the text the last open replaced ("before-open") ----------------------------------------------
    def _update_restore(self) -> None:
        """"Restore the text replaced by the last open" is offered only while there is such a text."""
        self.act_restore.setEnabled(self.store.has(BEFORE_OPEN))

    def restore_before_open(self) -> bool:
        """Put the text the last open replaced (the store's "before-open" copy) back in the pane, as typed
        text (linked to no file). The pane's text is asked about first, as before an open (a Discard
        keeps it as the next "before-open" copy); False when nothing was restored."""
        try:
            text = self.store.load(BEFORE_OPEN)
        except (OSError, ValueError) as error:
            self._say(f"not restored: the replaced text cannot be read ({flat(error)})")
            return False
        if not text or not self._may_replace("restoring the text replaced by the last open", "not restored"):
            self._update_restore()
            return False
        self.opened, self._clean = None, ""
        draft_links.remember(self)
        self.editor.setPlainText(text)
        self._say("restored the text replaced by the last open (linked to no file: Save draft as… keeps it)")
        return True

    # -- the file the restored text came from (draft_links) ---------------------------------------------
    def relink(self) -> None:
        """At start, link the restored text to the file it came from (:func:`draft_links.relink`)."""
        draft_links.relink(self)

    def forget_stale_link(self) -> None:
        """The pane's text was autosaved as typed text (no file opened, none being read): it has no link
        (the pane calls this after each autosave)."""
        if self.opened is None and not self.reading:
            self.store.forget_link()

    # -- opening --------------------------------------------------------------------------------------
    def open_dialog(self) -> bool:
        """Ask for a draft file and open it; False when none was chosen."""
        path = self._ask_open_path()
        if path:
            self.open(path)
        return bool(path)

    @property
    def reading(self) -> str:
        """The name of the draft file being read ("" when none, or when its read was stopped)."""
        reading = self._reading
        if reading is None or reading[0] != self.op.generation or not self.op.busy:
            return ""
        return reading[1]

    def open(self, path: str) -> None:
        """Read the draft at ``path`` in the background, then show it (:meth:`_on_read`); a bad file is
        one line in the status and leaves the pane as it was. ``openFinished`` says how it ended."""
        name = Path(path).name
        self.op.run(read_job, Path(path), label=f"Reading {name}", status=f"Reading {name}…",
                    needs_model=False, on_done=partial(self._on_read, path),
                    on_error=partial(self._on_read_failed, path))
        self._reading = (self.op.generation, name)

    def show_reading(self, *_args: object) -> None:
        """While a file is read, a labelling round's summary does not hide it: "Reading X…" and the
        moving bar come back, before the summary (connected to the pane's ``labelled``)."""
        if self.reading:
            summary = self.op.line.text()
            self.op.set_status(" — ".join(filter(None, [f"Reading {self.reading}…", summary])))
            self.op.line.set_progress(0, 1)

    def _on_read_failed(self, path: str, error: Exception) -> None:
        """One line naming the file (shortened when very long); an entry of the recent list whose file is
        gone is dropped."""
        self._reading = None
        if gone(path):
            self.recent.remove(path)
            self.fill_recent()
        message = flat(error if isinstance(error, RhetoricaError) else f"{path}: cannot be read ({error})")
        self._say(message.replace(str(Path(path)), short(path)))
        self.openFinished.emit(False)

    def _on_read(self, path: str, parsed: ParsedDraft) -> None:
        """The file is read: it replaces the pane's text if the author lets it (:meth:`may_replace`)."""
        self._reading = None
        opened = self.may_replace(Path(path).name)
        if opened:
            self._show(path, parsed)
        self.openFinished.emit(opened)

    def _show(self, path: str, parsed: ParsedDraft) -> None:
        self.opened = parsed
        self.editor.setPlainText(parsed.plain)
        self._mark_clean()
        draft_links.remember(self)
        self.recent.add(path)
        self.fill_recent()
        self._show_dock()
        self._on_opened(opened_text(path, parsed), list(parsed.warnings))

    def _show_dock(self) -> None:
        parent = self.pane.parentWidget()
        while parent is not None and not isinstance(parent, QDockWidget):
            parent = parent.parentWidget()
        if parent is not None:
            parent.show()
            parent.raise_()

    # -- saving (draft_saving) ------------------------------------------------------------------------
    def save(self) -> bool:
        """Write the pane back to the opened draft where that is lossless, else "Save draft as…"."""
        return draft_saving.save(self)

    def save_as(self, path: str | None = None) -> bool:
        """Write the pane's text to a new Markdown or text file (asked for when ``path`` is None) and
        go on editing that file."""
        return draft_saving.save_as(self, path)
