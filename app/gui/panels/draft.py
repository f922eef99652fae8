"""Draft pane: the author writes here; each sentence gets its rhetorical role inline.

As the author types, labelling is debounced (600 ms) and runs as the pane's
:class:`~app.gui.operation.PanelOperation` (waiting for the model; a newer text supersedes the running
round; a result for a text that changed meanwhile is dropped): the sentences under each heading are
labelled as one document with the heading's section kind (``draft_labelling``). The editor
(``draft_editor``) shows each sentence's role in its colour (hatched and greyed when uncertain, with
the runner-up in the tooltip), chips in the margin and the function in the tooltip; below it, the
draft checklist, one line per section (``core.draft_checklist``, the language server's too: each
heading's section by the kind its title names, subsections by their parent's, text before any heading by
the chosen kind; ``draft_text``). The draft is saved (debounced, atomically) to
``user_data_dir()/drafts`` and restored on the next start (a saved text that cannot be read is set aside,
with one line). Draft files (.tex, .md, .docx, .txt) are opened, saved and dropped through
``draft_files``; what the pane says stays before the next labelling summary (``draft_status``). The
sentence at the cursor is published with its context (:meth:`DraftPanel.current_context`: heading kind
and neighbours) for the Suggestions panel.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.gui.operation import MODEL, ModelUnavailable, PanelOperation
from app.gui.palette import RolePalette
from app.gui.panels.draft_editor import DraftEditor
from app.gui.panels.draft_files import DraftFiles
from app.gui.panels.draft_labelling import DraftLabels, label_draft_outlined
from app.gui.panels.draft_status import DraftStatus, stop_tip
from app.gui.panels.draft_text import ABBREVIATIONS, NO_MODEL, checklist_text
from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.session import Session
from app.gui.status_line import StatusLine
from app.gui.widgets import one_line
from core.draft_checklist import DraftOutline
from core.draft_formats import ParsedDraft
from core.drafts import DraftStore
from core.taxonomy.labels import FunctionPrediction
from core.taxonomy.moves import EXPECTED

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.corrections import CorrectionController, SentenceTarget
    from core.labelling.sentence_context import SentenceContext

LABEL_DELAY_MS = 600
SAVE_DELAY_MS = 800
CHECKLIST_KINDS = tuple(EXPECTED)


def legend_html(palette: RolePalette) -> str:
    """The role chips' key: each abbreviation on its role's colour, then the role's name."""
    return " ".join(f"<span style='background:{palette.color(r).name()};"
                    f"color:{RolePalette.text_color_on(palette.color(r)).name()}'>&nbsp;"
                    f"{ABBREVIATIONS[r]}&nbsp;</span> {r}" for r in ABBREVIATIONS)


class DraftPanel(QWidget):
    labelled = Signal(int)  # number of sentences labelled (after each labelling round)
    currentSentenceChanged = Signal(str)  # the sentence at the cursor, LABEL_DELAY_MS after typing stops

    def __init__(self, session: Session, store: DraftStore | None = None) -> None:
        super().__init__()
        self.session = session
        self.store = store or DraftStore()
        self.editor = DraftEditor(session.palette)
        self.status = StatusLine("Stop labelling")
        self.op = PanelOperation(self, session, self.status, error_prefix="Labelling failed")
        self.notes = DraftStatus(self.status, lambda: self._label_timer.isActive() or self.op.busy,
                                 self.editor.document())
        self._say = self.notes.say
        self.files = DraftFiles(self, self.editor, self.store, self._say, self.notes.opened,
                                PanelOperation(self, session, self.status, error_prefix="Not opened"))
        self.recent, self.recent_drafts_menu = self.files.recent, self.files.recent_menu
        self.legend = QLabel(legend_html(session.palette))
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        self.moves = QLabel("")
        self.moves.setWordWrap(True)
        self.moves.setStyleSheet("padding: 2px 4px;")
        self.checklist_kind = QComboBox()
        self.checklist_kind.addItems(CHECKLIST_KINDS)
        self.checklist_kind.setCurrentText("introduction")
        self.checklist_kind.setToolTip("The section that text before any heading (or a draft without "
                                       "headings) is: its usual moves are checked below")
        self.checklist_kind.currentTextChanged.connect(lambda _k: self._show_moves())
        self._checked: tuple[DraftOutline, list[FunctionPrediction] | None] | None = None
        self._lay_out()
        self._version = 0
        self._label_timer = self._timer(LABEL_DELAY_MS, self.label_now)
        self._save_timer = self._timer(SAVE_DELAY_MS, self.save_now)
        self._sentence = ""
        self._context: tuple[str, int, SentenceContext | None] | None = None  # (text, cursor, context)
        self._headings: tuple[str, list[tuple[int, int, str]]] | None = None  # (text, its heading lines)
        self._sentence_timer = self._timer(LABEL_DELAY_MS, self._emit_current_sentence)
        self._autosave_failed = ""  # the line the last autosave failed with ("" when it worked)
        self._restore()
        self.files.linkFinished.connect(self._on_linked)
        self.files.relink()  # the restored text is its file's again, when that file has not changed
        self.editor.textChanged.connect(self._on_text_changed)
        self.editor.cursorPositionChanged.connect(self._sentence_timer.start)
        self.editor.fileDropped.connect(self.open_draft)
        self.labelled.connect(self.files.show_reading)
        for op in (self.op, self.files.op):  # queued: after open() has named the file it reads
            op.busyChanged.connect(self._update_stop_tip, Qt.ConnectionType.QueuedConnection)

    def _restore(self) -> None:
        """The text saved when the app last ran; a saved text that could not be read is one line (set
        aside by the store: what could be read of it is shown, linked to no file)."""
        notes: list[str] = []
        saved = self.store.load(notes=notes)
        if saved:
            self.editor.setPlainText(saved)
            self.status.set_text("Draft restored.")
            self._label_timer.start()
        if notes:
            self.store.forget_link()
            self._say(notes[0])

    def _lay_out(self) -> None:
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(QLabel("Text with no heading is a"))
        bottom.addWidget(self.checklist_kind)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.legend)
        layout.addWidget(self.moves)
        layout.addLayout(bottom)

    def _timer(self, interval: int, slot: Callable[[], object]) -> QTimer:
        timer = QTimer(self, singleShot=True, interval=interval)
        timer.timeout.connect(slot)
        return timer

    # -- draft files (draft_files.DraftFiles) -------------------------------------------------------
    def file_menu_actions(self) -> list[QAction]:
        """What the window puts in its File menu."""
        return self.files.menu_actions()

    @property
    def opened(self) -> ParsedDraft | None:
        """The draft file the pane shows (None: typed or pasted text)."""
        return self.files.opened

    def open_draft(self, path: str) -> None:
        """Open the draft file at ``path`` (read in the background: ``files.openFinished`` follows)."""
        self.files.open(path)

    def open_draft_dialog(self) -> bool:
        return self.files.open_dialog()

    def may_close(self) -> bool:
        """The window may close: unsaved edits to an opened draft file are asked about first, and typed
        text whose autosave failed (a pending autosave is tried first)."""
        self.flush()
        return self.files.may_close(self._autosave_failed)

    def save_draft(self) -> bool:
        return self.files.save()

    def save_draft_as(self, path: str | None = None) -> bool:
        return self.files.save_as(path)

    def _update_stop_tip(self, *_busy: object) -> None:
        self.status.cancel_button.setToolTip(stop_tip(self.files, self.op.busy))

    def _on_linked(self, linked: bool) -> None:
        """The restored text is linked to its file again: it is labelled again in the file's format."""
        if linked:
            self._label_timer.start()

    # -- the text ---------------------------------------------------------------------------------
    @property
    def text(self) -> str:
        return self.editor.toPlainText()

    def set_text(self, text: str) -> None:
        self.editor.setPlainText(text)

    def insert_text(self, text: str) -> None:
        """Insert ``text`` at the cursor, spaced from its neighbours; a template's first slot is selected
        so that typing replaces it (``DraftEditor.insert_at_cursor``)."""
        self.editor.insert_at_cursor(text)

    def set_corrections(self, corrections: CorrectionController) -> None:
        """Offer "Correct role/function" in the editor's context menu (the window calls this)."""
        self.editor.corrections = corrections
        corrections.corrected.connect(self._on_corrected)

    def _on_corrected(self, target: SentenceTarget, field: str, label: str) -> None:
        """A correction of a draft sentence shows on the pane at once."""
        from app.gui.corrections import DRAFT_DOC_ID

        if target.doc_id == DRAFT_DOC_ID:
            self.editor.show_correction(target.text, field, label)

    def _on_text_changed(self) -> None:
        self._version += 1
        self._label_timer.start()
        self._save_timer.start()

    def current_sentence(self) -> str:
        """The sentence at the cursor (or the one just before it; "" in an empty draft); heading lines
        are not sentences."""
        context = self.current_context()
        return context.text if context is not None else ""

    def current_context(self) -> SentenceContext | None:
        """The sentence at the cursor with the context it is labelled in: the kind of the heading
        above it and its neighbours under that heading (``core.drafts.context_in_draft``: a stretch around
        the cursor, not the whole draft), read once per text and cursor position (the Suggestions panel asks
        for it after this pane)."""
        from core.drafts import context_in_draft, draft_headings

        text, position = self.text, self.editor.textCursor().position()
        if self._context is None or self._context[:2] != (text, position):
            if self._headings is None or self._headings[0] != text:  # the cursor moved, the text did not
                self._headings = (text, draft_headings(text))
            self._context = (text, position, context_in_draft(text, position, headings=self._headings[1]))
        return self._context[2]

    def _emit_current_sentence(self) -> None:
        sentence = self.current_sentence()
        if sentence != self._sentence:
            self._sentence = sentence
            self.currentSentenceChanged.emit(sentence)

    def save_now(self) -> None:
        self._save_timer.stop()
        try:
            self.store.save(self.text)
        except OSError as error:  # a full disk / read-only folder: core.fileio.StorageError's one line
            from core.fileio import StorageError

            message = str(error) if isinstance(error, StorageError) else f"could not save the draft: {error}"
            self._autosave_failed = one_line(message, 300)
            self._say(message)
            return
        self._autosave_failed = ""
        self.files.forget_stale_link()

    def flush(self) -> None:
        """Save pending changes now (called when the window closes)."""
        if self._save_timer.isActive():
            self.save_now()

    # -- labelling ----------------------------------------------------------------------------------
    def label_now(self) -> None:
        """Label the text now (any running round is superseded; waits for the model)."""
        self._label_timer.stop()
        if not self.text.strip():
            self.op.invalidate()
            self.editor.set_labels([])
            self._checked = None
            self._show_moves()
            self.notes.summary(None)  # nothing to sum up: what was said stays, once
            self.labelled.emit(0)
            return
        markdown = self.opened is not None and self.opened.format != "txt"
        self.op.run(label_draft_outlined, self.text, MODEL, markdown, label="Labelling the draft",
                    status=self.notes.with_note("labelling…"), on_progress=self.notes.progress,
                    on_done=partial(self._on_labelled, self._version), on_error=self._on_failed)

    def _on_labelled(self, version: int, result: tuple[DraftLabels, DraftOutline]) -> None:
        if version != self._version:
            return  # the text changed meanwhile; the debounce timer will label it again
        (labelled, functions), outline = result
        model = self.op.ready.model
        self.editor.model_id = model.model_id if model is not None else ""
        self.editor.set_labels(labelled, functions)
        self._checked = (outline, functions)
        self._show_moves()
        self.notes.summary(labelled)
        self.labelled.emit(len(labelled))

    def _on_failed(self, error: Exception) -> None:
        if isinstance(error, ModelUnavailable):
            self.status.set_text(one_line(f"{NO_MODEL}: {error.cause}"))

    def _show_moves(self) -> None:
        """The draft checklist, a line per section (empty before labelling; a note without functions)."""
        lines, tip = checklist_text(self._checked, self.checklist_kind.currentText())
        self.moves.setText(lines)
        self.moves.setToolTip(tip)


SPEC = register_panel(PanelSpec(
    id="draft", title="Draft", factory=DraftPanel, area=Qt.DockWidgetArea.BottomDockWidgetArea,
    order=50, shortcut="Ctrl+D", description="Write a draft and see each sentence's role",
    visible=False, remember_visible=True, height=230))
