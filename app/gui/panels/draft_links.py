"""The file the draft pane's restored text came from (``draft_files``): the draft store remembers which
file its autosaved text is (``DraftStore.save_link``: the path and the digest of the file's readable text
when it was opened or saved). At the next start :func:`relink` reads that file again and, when its text
is still the same, links the restored text to it (edits made before the restart are unsaved changes that
"Save draft" writes back); a file that is gone, unreadable or changed on disk since leaves the text
unlinked, with one line saying so."""

from __future__ import annotations

import os
from functools import partial
from typing import TYPE_CHECKING

from app.gui.panels.draft_reading import as_shown, flat, is_file, read_job
from core.drafts import DraftLink, text_digest
from core.errors import DraftError

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.panels.draft_files import DraftFiles
    from core.draft_formats import ParsedDraft


def remember(files: DraftFiles) -> None:
    """Link the draft store's text to the opened file (or to none), for :func:`relink` at the next
    start. The link is removed before the pane's text is saved and written after, so that a crash at any
    point never leaves another text in the store under this file's link."""
    files._relinking = None
    files.store.forget_link()
    if files.opened is None or files.opened.path is None:
        return
    try:
        files.store.save(files.editor.toPlainText())
        files.store.save_link(files.opened.path, files.opened.plain)
    except OSError:
        pass  # not linked after a restart; the pane's autosave says what fails


def relink(files: DraftFiles) -> None:
    """At start, link the restored text to the file it came from (the store's link): the file is read in
    the background like an open (:func:`_on_relink_read`). A damaged link, or a blank pane, is forgotten;
    a file that is gone leaves the text unlinked, with one line."""
    try:
        link = files.store.load_link()
    except DraftError as error:
        files.store.forget_link()
        files._say(f"{flat(error)}; ignored")
        return
    if link is None or not files.editor.toPlainText().strip():
        files.store.forget_link()
        return
    if not is_file(link.path):
        _unlink(files, link, "it is gone" if not os.path.lexists(link.path) else "it is not a file")
        return
    files._relinking, name = link, link.path.name
    files.op.run(read_job, link.path, label=f"Reading {name}", status=f"Reading {name}…",
                 needs_model=False, on_done=partial(_on_relink_read, files, link),
                 on_error=partial(_on_relink_failed, files, link))
    files._reading = (files.op.generation, name)


def _on_relink_read(files: DraftFiles, link: DraftLink, parsed: ParsedDraft) -> None:
    """The linked file is read: the pane's text becomes its (edited) text, when the file's text is what
    it was when last opened or saved; the pane's text is not replaced."""
    files._reading = None
    if files._relinking != link:
        return  # another file was opened, or the text saved elsewhere, meanwhile
    if text_digest(parsed.plain) != link.digest:
        _unlink(files, link, "it changed on disk since")
        return
    files._relinking, files.opened, files._clean = None, parsed, as_shown(parsed.plain)
    changes = " (unsaved changes)" if files.unsaved else ""
    files._on_opened(f"Draft restored, linked to {link.path.name}{changes}", list(parsed.warnings))
    files.linkFinished.emit(True)


def _on_relink_failed(files: DraftFiles, link: DraftLink, error: Exception) -> None:
    files._reading = None
    if files._relinking == link:
        _unlink(files, link, flat(error))


def _unlink(files: DraftFiles, link: DraftLink, why: str) -> None:
    """The restored text stays linked to no file: the link is forgotten and one line says ``why``."""
    files._relinking = None
    files.store.forget_link()
    files._say(f"the restored text is not linked to {link.path.name}: {why} — Save draft as… or reopen it")
    files.linkFinished.emit(False)
