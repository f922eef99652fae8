"""The draft pane's files (issue 27.1; ``core.draft_formats``): "Open draft…", "Open recent draft",
"Save draft" and "Save draft as…" (the File menu's entries), and opening a file dropped on the editor.

A ``.tex`` (with its ``\\input`` files), ``.md``, ``.docx`` or ``.txt`` draft is shown as its readable text
(a LaTeX or Word draft as Markdown). A file is read in the background (the pane's
:class:`~app.gui.operation.PanelOperation`: "Reading notes.docx…" with a moving bar and Stop; the pane
stays editable). When it has been read, and before it replaces the pane's text, a pane holding text no
file has (edits to the opened file, or typed text) asks "Save changes to main.tex before opening
notes.docx?" (Save / Discard / Cancel): asked then, not before reading, so what was typed while the file
was read is covered too. Discarded text is kept in the draft store as "before-open". "Save draft" writes
the edits back where that loses nothing (``core.draft_formats.writeback``) and otherwise asks for a new
Markdown or text file. Closing the window with unsaved edits to an opened file asks the same question
(:meth:`DraftFiles.may_close`). A bad file is one line.

The draft store remembers which file its autosaved text is (``DraftStore.save_link``: the path and the
digest of the file's readable text when it was opened or saved). At the next start :meth:`DraftFiles.relink`
reads that file again and, when its text is still the same, links the restored text to it (edits made
before the restart are unsaved changes that "Save draft" writes back); a file that is gone, unreadable or
changed on disk since leaves the text unlinked, with one line saying so. "Restore the text replaced by the
last open" puts the "before-open" copy back in the pane, as typed text."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QTextDocument
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMenu, QMessageBox, QPlainTextEdit, QWidget

from app.gui.operation import PanelOperation
from app.gui.panels.draft_text import opened_text
from core.draft_formats import ParsedDraft
from core.drafts import DraftLink, DraftStore, RecentDrafts, text_digest
from core.errors import DraftError, RhetoricaError
from core.jobs import JobContext

OPEN_FILTER = "Drafts (*.tex *.ltx *.md *.markdown *.docx *.txt *.text);;All files (*)"
SAVE_FILTER = "Markdown (*.md);;Text (*.txt)"
WRITABLE = (".md", ".markdown", ".txt", ".text")
BEFORE_OPEN = "before-open"  # the draft store's name for the text an opened file replaced
SAVE, DISCARD, CANCEL = "save", "discard", "cancel"  # the answers to "Save changes to X before …?"


def read_job(ctx: JobContext, path: Path) -> ParsedDraft:
    """Read and parse the draft at ``path`` (a worker thread: no Qt). ``core.draft_formats`` has no
    check points: a stopped read runs to its end in the background and its result is dropped."""
    from core.draft_formats import read_draft

    ctx.progress(0, 1, f"reading {path.name}")
    return read_draft(path)


def _flat(error: BaseException) -> str:
    """An error's message on one line (whole: a path in it is not cut)."""
    return " ".join(str(error).split())


def _as_shown(text: str) -> str:
    """``text`` as the editor gives it back (its document turns no-break spaces and paragraph separators
    into spaces and newlines)."""
    document = QTextDocument()
    document.setPlainText(text)
    return document.toPlainText()


def _is_file(path: Path) -> bool:
    """``path`` is a regular file (not a folder or a device); False, not an error, for any odd path."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


class DraftFiles(QObject):
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
        self.act_save.setToolTip("Write the draft pane back to its file where nothing is lost")
        self.act_save.triggered.connect(lambda: self.save())
        self.act_save_as = QAction("Save draft &as…", pane)
        self.act_save_as.triggered.connect(lambda: self.save_as())
        self.act_restore = QAction("&Restore the text replaced by the last open", pane)
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

    # -- the dialogs (tests replace these) ----------------------------------------------------------
    def _ask_open_path(self) -> str:
        start = str(self.opened.path.parent) if self.opened is not None and self.opened.path else ""
        path, _ = QFileDialog.getOpenFileName(self.pane, "Open a draft", start, OPEN_FILTER)
        return path

    def _ask_save_path(self, suggested: str) -> str:
        path, _ = QFileDialog.getSaveFileName(self.pane, "Save the draft as", suggested, SAVE_FILTER)
        return path

    def _ask_unsaved(self, question: str) -> str:
        """SAVE, DISCARD or CANCEL: the author's answer to ``question`` (Save is the default)."""
        buttons = QMessageBox.StandardButton
        answer = QMessageBox.question(self.pane, "Unsaved draft", question,
                                      buttons.Save | buttons.Discard | buttons.Cancel, buttons.Save)
        return {buttons.Save: SAVE, buttons.Discard: DISCARD}.get(answer, CANCEL)

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

    def may_close(self) -> bool:
        """The window may close. Edits to an opened file are asked about (Save / Discard / Cancel): the
        autosave restores them on the next start, but as that file's only while the file does not change
        meanwhile (:meth:`relink`). Typed text is not asked about: the autosave restores it as it was."""
        if self.opened is None or not self.unsaved:
            return True
        answer = self._ask_unsaved(f"Save {self._held_by()} before closing?")
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
            self._say(f"not restored: the replaced text cannot be read ({_flat(error)})")
            return False
        if not text or not self._may_replace("restoring the text replaced by the last open", "not restored"):
            self._update_restore()
            return False
        self.opened, self._clean = None, ""
        self._remember()
        self.editor.setPlainText(text)
        self._say("restored the text replaced by the last open (linked to no file: Save draft as… keeps it)")
        return True

    # -- the file the restored text came from (the draft store's link) --------------------------------
    def _remember(self) -> None:
        """Link the draft store's text to the opened file (or to none), for :meth:`relink` at the next
        start. The link is removed before the pane's text is saved and written after, so that a crash at
        any point never leaves another text in the store under this file's link."""
        self._relinking = None
        self.store.forget_link()
        if self.opened is None or self.opened.path is None:
            return
        try:
            self.store.save(self.editor.toPlainText())
            self.store.save_link(self.opened.path, self.opened.plain)
        except OSError:
            pass  # not linked after a restart; the pane's autosave says what fails

    def forget_stale_link(self) -> None:
        """The pane's text was autosaved as typed text (no file opened, none being read): it has no link
        (the pane calls this after each autosave)."""
        if self.opened is None and not self.reading:
            self.store.forget_link()

    def relink(self) -> None:
        """At start, link the restored text to the file it came from (the store's link): the file is read
        in the background like an open (:meth:`_on_relink_read`). A damaged link, or a blank pane, is
        forgotten; a file that is gone leaves the text unlinked, with one line."""
        try:
            link = self.store.load_link()
        except DraftError as error:
            self.store.forget_link()
            self._say(f"{_flat(error)}; ignored")
            return
        if link is None or not self.editor.toPlainText().strip():
            self.store.forget_link()
            return
        if not _is_file(link.path):
            self._unlink(link, "it is gone" if not os.path.lexists(link.path) else "it is not a file")
            return
        self._relinking, name = link, link.path.name
        self.op.run(read_job, link.path, label=f"Reading {name}", status=f"Reading {name}…",
                    needs_model=False, on_done=partial(self._on_relink_read, link),
                    on_error=partial(self._on_relink_failed, link))
        self._reading = (self.op.generation, name)

    def _on_relink_read(self, link: DraftLink, parsed: ParsedDraft) -> None:
        """The linked file is read: the pane's text becomes its (edited) text, when the file's text is
        what it was when last opened or saved; the pane's text is not replaced."""
        self._reading = None
        if self._relinking != link:
            return  # another file was opened, or the text saved elsewhere, meanwhile
        if text_digest(parsed.plain) != link.digest:
            self._unlink(link, "it changed on disk since")
            return
        self._relinking, self.opened, self._clean = None, parsed, _as_shown(parsed.plain)
        changes = " (unsaved changes)" if self.unsaved else ""
        self._on_opened(f"Draft restored, linked to {link.path.name}{changes}", list(parsed.warnings))
        self.linkFinished.emit(True)

    def _on_relink_failed(self, link: DraftLink, error: Exception) -> None:
        self._reading = None
        if self._relinking == link:
            self._unlink(link, _flat(error))

    def _unlink(self, link: DraftLink, why: str) -> None:
        """The restored text stays linked to no file: the link is forgotten and one line says ``why``."""
        self._relinking = None
        self.store.forget_link()
        self._say(f"the restored text is not linked to {link.path.name}: {why} — Save draft as… or reopen it")
        self.linkFinished.emit(False)

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
        self._reading = None
        if not Path(path).exists():
            self.recent.remove(path)
            self.fill_recent()
        known = isinstance(error, (RhetoricaError, OSError))
        self._say(_flat(error) if known else f"{path}: cannot be read ({_flat(error)})")
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
        self._remember()
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

    # -- saving ---------------------------------------------------------------------------------------
    def save(self) -> bool:
        """Write the pane back to the opened draft where that is lossless, else "Save draft as…"."""
        from core.draft_formats import read_draft
        from core.draft_formats.writeback import NotLossless, save_edits

        if self.opened is None or self.opened.path is None:
            return self.save_as()
        source, text = self.opened.path, self.editor.toPlainText()
        try:
            written = save_edits(self.opened, text)
        except NotLossless as error:
            self._say(f"{source.name}: {error}")
            return self.save_as()
        except (RhetoricaError, OSError) as error:
            self._say(f"not saved: {_flat(error)}")
            return False
        try:
            self.opened = read_draft(source, self.opened.project_root)
        except (RhetoricaError, OSError) as error:
            self._say(f"saved, but {source.name} cannot be read again: {error}")
            self.opened = None
            self._remember()
            return True
        if self.opened.plain != text:  # whitespace the parse does not keep: show what it reads
            self.editor.setPlainText(self.opened.plain)
        self._mark_clean()
        self._remember()
        self._say(f"Saved {', '.join(p.name for p in written) or 'nothing changed'}")
        return True

    def save_as(self, path: str | None = None) -> bool:
        """Write the pane's text to a new Markdown or text file (asked for when ``path`` is None) and
        go on editing that file."""
        from core.draft_formats import read_draft
        from core.fileio import atomic_write_text

        if path is None:
            suggested = (str(self.opened.path.with_suffix(".md"))
                         if self.opened is not None and self.opened.path is not None else "draft.md")
            path = self._ask_save_path(suggested)
            if not path:
                return False
        target = Path(path)
        if target.suffix.lower() not in WRITABLE:
            target = target.with_suffix(".md")
        try:
            atomic_write_text(target, self.editor.toPlainText(), f"the draft {target.name}")
            self.opened = read_draft(target)
        except (RhetoricaError, OSError) as error:
            self._say(f"not saved: {_flat(error)}")
            return False
        self._mark_clean()
        self._remember()
        self.recent.add(target)
        self.fill_recent()
        self._say(f"Saved {target.name}")
        return True
