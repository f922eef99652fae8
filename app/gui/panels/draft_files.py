"""The draft pane's files (issue 27.1; ``core.draft_formats``): "Open draft…", "Open recent draft",
"Save draft" and "Save draft as…" (the File menu's entries), and opening a file dropped on the editor.

A ``.tex`` (with its ``\\input`` files), ``.md``, ``.docx`` or ``.txt`` draft is shown as its readable text
(a LaTeX or Word draft as Markdown). "Save draft" writes the edits back where that loses nothing
(``core.draft_formats.writeback``) and otherwise asks for a new Markdown or text file. The text the pane
held before a draft was opened is kept in the draft store as "before-open". A bad file is one line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMenu, QPlainTextEdit, QWidget

from app.gui.panels.draft_text import opened_text
from core.draft_formats import ParsedDraft
from core.drafts import DraftStore, RecentDrafts
from core.errors import RhetoricaError

OPEN_FILTER = "Drafts (*.tex *.ltx *.md *.markdown *.docx *.txt *.text);;All files (*)"
SAVE_FILTER = "Markdown (*.md);;Text (*.txt)"
WRITABLE = (".md", ".markdown", ".txt", ".text")


class DraftFiles(QObject):
    """The draft file the pane shows (``opened``; None: typed or pasted text) and the file actions.
    ``say(message)`` puts one line in the pane's status; ``on_opened(message, warnings)`` follows an open."""

    def __init__(self, pane: QWidget, editor: QPlainTextEdit, store: DraftStore, say: Callable[[str], None],
                 on_opened: Callable[[str, list[str]], None]) -> None:
        super().__init__(pane)
        self.pane, self.editor, self.store = pane, editor, store
        self.recent = RecentDrafts(store.root)
        self.opened: ParsedDraft | None = None
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
        self.fill_recent()

    def menu_actions(self) -> list[QAction]:
        return [self.act_open, self.recent_menu.menuAction(), self.act_save, self.act_save_as]

    def fill_recent(self) -> None:
        self.recent_menu.clear()
        paths = self.recent.load()
        for number, path in enumerate(paths):
            action = self.recent_menu.addAction(f"&{number + 1}  {Path(path).name}")
            action.setToolTip(path)
            action.triggered.connect(lambda _checked=False, p=path: self.open(p))
        self.recent_menu.menuAction().setEnabled(bool(paths))

    def _ask_open_path(self) -> str:
        start = str(self.opened.path.parent) if self.opened is not None and self.opened.path else ""
        path, _ = QFileDialog.getOpenFileName(self.pane, "Open a draft", start, OPEN_FILTER)
        return path

    def _ask_save_path(self, suggested: str) -> str:
        path, _ = QFileDialog.getSaveFileName(self.pane, "Save the draft as", suggested, SAVE_FILTER)
        return path

    def open_dialog(self) -> bool:
        path = self._ask_open_path()
        return self.open(path) if path else False

    def open(self, path: str) -> bool:
        """Read the draft at ``path`` and show its readable text; a bad file is one line in the status
        (and leaves the pane as it was)."""
        from core.draft_formats import read_draft

        try:
            parsed = read_draft(Path(path))
        except (RhetoricaError, OSError) as error:
            if not Path(path).exists():
                self.recent.remove(path)
                self.fill_recent()
            self._say(" ".join(str(error).split()))
            return False
        text = self.editor.toPlainText()
        if self.opened is None and text.strip():
            try:  # the typed text is kept, not replaced silently
                self.store.save(text, "before-open")
            except OSError as error:
                self._say(f"not opened: the text in the pane could not be kept first ({error})")
                return False
        self.opened = parsed
        self.editor.setPlainText(parsed.plain)
        self.recent.add(path)
        self.fill_recent()
        self._show_dock()
        self._on_opened(opened_text(path, parsed), list(parsed.warnings))
        return True

    def _show_dock(self) -> None:
        parent = self.pane.parentWidget()
        while parent is not None and not isinstance(parent, QDockWidget):
            parent = parent.parentWidget()
        if parent is not None:
            parent.show()
            parent.raise_()

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
            self._say(f"not saved: {' '.join(str(error).split())}")
            return False
        try:
            self.opened = read_draft(source, self.opened.project_root)
        except (RhetoricaError, OSError) as error:
            self._say(f"saved, but {source.name} cannot be read again: {error}")
            self.opened = None
            return True
        if self.opened.plain != text:  # whitespace the parse does not keep: show what it reads
            self.editor.setPlainText(self.opened.plain)
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
            self._say(f"not saved: {' '.join(str(error).split())}")
            return False
        self.recent.add(target)
        self.fill_recent()
        self._say(f"Saved {target.name}")
        return True
