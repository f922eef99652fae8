"""The questions the draft pane's files ask (``draft_files``): each is one small method, so that a test
replaces it (a real modal dialog offscreen waits forever; ``tests/conftest.py`` answers each one for
every test: Discard, Cancel, no)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from app.gui.settings import DRAFTS, dialog_folder, remember_dialog_folder
from core.draft_formats import ParsedDraft

OPEN_FILTER = "Drafts (*.tex *.ltx *.md *.markdown *.docx *.txt *.text);;All files (*)"
SAVE_FILTER = "Markdown (*.md);;Text (*.txt)"
SAVE, DISCARD, CANCEL = "save", "discard", "cancel"  # the answers to "Save changes to X before …?"
OVERWRITE, SAVE_AS = "overwrite", "save_as"  # with CANCEL, the answers to "X changed on disk"


class DraftQuestions:
    """The dialogs of :class:`~app.gui.panels.draft_files.DraftFiles` (its ``pane`` is their parent)."""

    pane: QWidget
    opened: ParsedDraft | None

    def _ask_open_path(self) -> str:
        """A draft file to open, asked in the opened draft's folder (else the last one chosen, else the
        documents folder: never the working folder)."""
        start = str(self.opened.path.parent) if self.opened is not None and self.opened.path \
            else dialog_folder(DRAFTS)
        path, _ = QFileDialog.getOpenFileName(self.pane, "Open a draft", start, OPEN_FILTER)
        if path:
            remember_dialog_folder(DRAFTS, path)
        return path

    def _ask_save_path(self, suggested: str) -> str:
        """Where to save; a bare ``suggested`` name is offered in the remembered drafts folder."""
        if not Path(suggested).is_absolute():
            suggested = str(Path(dialog_folder(DRAFTS)) / suggested)
        path, _ = QFileDialog.getSaveFileName(self.pane, "Save the draft as", suggested, SAVE_FILTER)
        if path:
            remember_dialog_folder(DRAFTS, path)
        return path

    def _ask_unsaved(self, question: str) -> str:
        """SAVE, DISCARD or CANCEL: the author's answer to ``question`` (Save is the default)."""
        buttons = QMessageBox.StandardButton
        answer = QMessageBox.question(self.pane, "Unsaved draft", question,
                                      buttons.Save | buttons.Discard | buttons.Cancel, buttons.Save)
        return {buttons.Save: SAVE, buttons.Discard: DISCARD}.get(answer, CANCEL)

    def _ask_changed_on_disk(self, message: str) -> str:
        """OVERWRITE, SAVE_AS or CANCEL (the default): what to do when the draft's file changed on disk
        since it was opened (``message``: ``core.draft_formats.writeback.ChangedOnDisk``'s line)."""
        box = QMessageBox(QMessageBox.Icon.Warning, "Changed on disk", f"{message[:1].upper()}{message[1:]}.",
                          QMessageBox.StandardButton.NoButton, self.pane)
        overwrite = box.addButton("Overwrite", QMessageBox.ButtonRole.DestructiveRole)
        save_as = box.addButton("Save as…", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(box.addButton(QMessageBox.StandardButton.Cancel))
        box.exec()
        clicked = box.clickedButton()
        return OVERWRITE if clicked is overwrite else SAVE_AS if clicked is save_as else CANCEL

    def _ask_replace(self, question: str) -> bool:
        """True when the author lets the draft replace an existing file (No is the default)."""
        buttons = QMessageBox.StandardButton
        return QMessageBox.question(self.pane, "Replace a file", question, buttons.Yes | buttons.No,
                                    buttons.No) == buttons.Yes
