"""Draft pane: the author writes here; each sentence gets its rhetorical role inline.

As the author types, labelling is debounced (600 ms) and runs in a background worker: the text
is split into sentences (``core.drafts.draft_sections``: heading lines are not sentences) and the
sentences under each heading are classified as one document by the shared model.  Each sentence
gets a light background and an underline in its role colour, a chip with the role in the left
margin and a tooltip with the probabilities (and, with a model that has a function head, the
sentence's communicative function).  Below the editor, a
checklist shows which moves a section of the chosen kind usually makes and whether the draft makes
them (``core.moves``: "✗ an aim statement"), judged on the sentences with a clear function only, and
says on how many.  The draft is saved (debounced, atomically) to ``user_data_dir()/drafts`` and
restored on the next start.

Draft files (``core.draft_formats``): File › "Open draft…", "Open recent draft" and a file dropped on
the editor open a ``.tex`` (with its ``\\input`` files), ``.md``, ``.docx`` or ``.txt`` draft and show its
readable text (a LaTeX or Word draft as Markdown: ``#`` headings, citations as "[1]", math as text);
"Save draft" writes the edits back to the file where that loses nothing (``.md``, ``.txt``, edits of a
``.tex`` draft's own text: ``core.draft_formats.writeback``) and otherwise asks for a new file ("Save
draft as…", Markdown or text). The text the pane held before a draft was opened is kept in the draft
store as "before-open".

Each sentence is labelled in context: the sentences under one heading are one document with the
heading's section kind.  A role below ``core.labels.UNCERTAIN_BELOW`` is shown as uncertain: a
hatched, greyed background, a grey chip with "?" and a tooltip naming the runner-up ("uncertain:
method (0.41) or result (0.35)"); a function below the bundle's threshold reads "no clear function"
with the top candidate.  The sentence at the cursor is published with its context
(:meth:`DraftPanel.current_context`: heading kind and neighbours) for the Suggestions panel.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QBrush,
    QColor,
    QContextMenuEvent,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QHelpEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QTextEdit,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from app.gui.palette import RolePalette
from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.session import Session
from app.gui.workers import Worker
from core.draft_formats import DRAFT_SUFFIXES, ParsedDraft
from core.drafts import DraftStore, RecentDrafts
from core.functions import default_taxonomy
from core.jobs import JobContext
from core.labels import (
    FunctionPrediction,
    RolePrediction,
    function_is_clear,
    is_confident,
    role_text,
)
from core.model_api import RoleModel
from core.moves import EXPECTED, check_moves, describe_checks

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.corrections import CorrectionController, SentenceTarget
    from core.sentence_context import SentenceContext

LABEL_DELAY_MS = 600
SAVE_DELAY_MS = 800
MARGIN_W = 44
ABBREVIATIONS = {"background": "BKG", "objective": "OBJ", "method": "MTH", "result": "RES",
                 "conclusion": "CON", "other": "OTH"}
LabelledDraft = list[tuple[tuple[int, int], RolePrediction]]  # ((start, end) in the text, its role)
DraftLabels = tuple[LabelledDraft, list[FunctionPrediction] | None]  # and the functions, when known
CHECKLIST_KINDS = tuple(EXPECTED)
UNCERTAIN_CHIP = "#d9d9d9"  # the margin chip of an uncertain role (its border keeps the role colour)
SLOT = re.compile(r"\[[A-Z]+\]")  # a template's slot: [CONTENT], [NUMBER], [CITATION]
PLACEHOLDER = ("Write your draft here (abstract, introduction, …). Each sentence is labelled with its "
               "rhetorical role a moment after you stop typing; hover a sentence to see the label.")


def pane_sentences(text: str, markdown: bool = False) -> list[tuple[int, int, str | None, int, str]]:
    """(start, end, section kind, heading number, text to label) of each sentence of the pane's text.
    ``markdown``: the text is a Markdown draft (an opened ``.md``, or a LaTeX/Word draft's readable
    text): only ``#`` lines are headings and the labelled text is read without the markup."""
    if markdown:
        from core.draft_formats import parse_draft_text

        parsed = parse_draft_text(text, "md")
        return [(s.start, s.end, s.section_kind, h, s.text)
                for s, h in zip(parsed.sentences, parsed.sentence_headings, strict=True)]
    from core.drafts import draft_sections

    return [(start, end, kind, heading, text[start:end])
            for start, end, kind, heading in draft_sections(text)]


def label_draft(ctx: JobContext, text: str, model: RoleModel, markdown: bool = False) -> DraftLabels:
    """Split ``text`` into sentences and label them in context: ([((start, end), role)], functions or
    None when the model has no function head). Heading lines ("# Methods", "2 Results") are not
    labelled; the sentences under one heading are one document with its section kind (as a parsed
    paper's section is: neighbours and heading both count), and the sentences before any heading one
    document of unknown kind (as an abstract). ``markdown``: see :func:`pane_sentences`."""
    found = pane_sentences(text, markdown)
    spans = [(start, end) for start, end, _, _, _ in found]
    ctx.check()
    if not spans:
        return [], None
    ctx.progress(0, 1, f"labelling {len(spans)} draft sentences")
    documents: list[tuple[list[str], str | None]] = []
    last = None
    for _, _, kind, heading, sentence in found:
        if heading != last or not documents:
            documents.append(([], kind))
            last = heading
        documents[-1][0].append(sentence)
    roles: list[RolePrediction] = []
    functions: list[FunctionPrediction] | None = []
    for encoding in model.encode_documents(documents, with_embeddings=False):
        roles.extend(encoding.roles)
        if encoding.functions is None or functions is None:
            functions = None
        else:
            functions.extend(encoding.functions)
    ctx.progress(1, 1, "draft labelled")
    return list(zip(spans, roles, strict=True)), functions


class _Margin(QWidget):
    def __init__(self, editor: DraftEditor) -> None:
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QSize:
        return QSize(MARGIN_W, 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self.editor.paint_margin(self, event.rect())


def dropped_draft(event: QDragEnterEvent | QDragMoveEvent | QDropEvent) -> str | None:
    """The first local draft file (.tex .md .docx .txt …) a drag carries; None for anything else."""
    from pathlib import Path

    mime = event.mimeData()
    if mime is None or not mime.hasUrls():
        return None
    for url in mime.urls():
        if url.isLocalFile() and Path(url.toLocalFile()).suffix.lower() in DRAFT_SUFFIXES:
            return str(url.toLocalFile())
    return None


class DraftEditor(QPlainTextEdit):
    """A plain-text editor that shows role labels per sentence (extra selections + margin chips)."""

    fileDropped = Signal(str)  # a draft file dropped on the editor

    def __init__(self, palette: RolePalette) -> None:
        super().__init__()
        self.palette_ = palette
        self.labels: list[tuple[QTextCursor, RolePrediction]] = []  # cursors track edits
        self.corrections: CorrectionController | None = None  # "Correct role/function" in the context menu
        self.model_id = ""  # the model that labelled the draft (kept with a correction)
        self.margin = _Margin(self)
        self.setViewportMargins(MARGIN_W, 0, 0, 0)
        self.setPlaceholderText(PLACEHOLDER)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.updateRequest.connect(self._on_update_request)
        palette.changed.connect(self.refresh)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if dropped_draft(event) is not None:
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if dropped_draft(event) is not None:
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        path = dropped_draft(event)
        if path is None:
            super().dropEvent(event)
            return
        event.acceptProposedAction()
        self.fileDropped.emit(path)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        rect = self.contentsRect()
        self.margin.setGeometry(QRect(rect.left(), rect.top(), MARGIN_W, rect.height()))

    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self.margin.scroll(0, dy)
        else:
            self.margin.update(0, rect.y(), self.margin.width(), rect.height())

    def set_labels(self, labelled: LabelledDraft, functions: list[FunctionPrediction] | None = None) -> None:
        self.labels = []
        self.functions: list[FunctionPrediction | None] = []
        length = self.document().characterCount() - 1
        for number, ((start, end), prediction) in enumerate(labelled):
            if end > length:
                continue
            cursor = QTextCursor(self.document())
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            self.labels.append((cursor, prediction))
            self.functions.append(functions[number] if functions is not None else None)
        self.refresh()

    def refresh(self) -> None:
        selections = []
        for cursor, prediction in self.labels:
            if cursor.selectionStart() == cursor.selectionEnd():
                continue
            selection = QTextEdit.ExtraSelection()
            selection.cursor = cursor
            fmt = QTextCharFormat()
            if is_confident(prediction):
                fmt.setBackground(self.palette_.fill(prediction.label, 0.22))
                fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
            else:  # uncertain: hatched in the role colour on no fill, a dotted underline
                hatch = QBrush(self.palette_.fill(prediction.label, 0.45), Qt.BrushStyle.BDiagPattern)
                fmt.setBackground(hatch)
                fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DotLine)
            fmt.setUnderlineColor(self.palette_.color(prediction.label).darker(115))
            fmt.setProperty(QTextFormat.Property.FullWidthSelection, False)
            selection.format = fmt
            selections.append(selection)
        self.setExtraSelections(selections)
        self.margin.update()

    def _index_at(self, position: int) -> int:
        for index, (cursor, _) in enumerate(self.labels):
            if cursor.selectionStart() <= position < cursor.selectionEnd():
                return index
        return -1

    def label_at(self, position: int) -> RolePrediction | None:
        index = self._index_at(position)
        return self.labels[index][1] if index >= 0 else None

    def function_at(self, position: int) -> FunctionPrediction | None:
        index = self._index_at(position)
        return self.functions[index] if index >= 0 and index < len(self.functions) else None

    def tooltip_at(self, pos: QPoint) -> str:
        """Tooltip text for a point in viewport coordinates ("" outside labelled sentences)."""
        position = self.cursorForPosition(pos).position()
        prediction = self.label_at(position)
        if prediction is None:
            return ""
        top = sorted(prediction.probabilities.items(), key=lambda kv: -kv[1])[:3]
        probs = "<br>".join(f"{r}: {p:.0%}" for r, p in top)
        function = self.function_at(position)
        move = ""
        if function is not None and function_is_clear(function):
            name = default_taxonomy().name_of(function.label)
            move = f"<br>function: <i>{name}</i> ({function.confidence:.0%})"
        elif function is not None and function.top:
            best, p = function.top[0]
            move = (f"<br><span style='color:#777'>no clear function (top candidate: "
                    f"<i>{default_taxonomy().name_of(best)}</i> {p:.0%})</span>")
        head = (f"<b>{prediction.label}</b> ({prediction.confidence:.0%})" if is_confident(prediction)
                else f"<b>{role_text(prediction)}</b>")
        return f"{head}{move}<br>{probs}"

    def correction_target(self, position: int) -> SentenceTarget | None:
        """The labelled draft sentence at ``position`` as a correction target (None: none there)."""
        from app.gui.corrections import DRAFT_DOC_ID, SentenceTarget

        index = self._index_at(position)
        if index < 0:
            return None

        def text_of(k: int) -> str:
            inside = 0 <= k < len(self.labels)
            return self.labels[k][0].selectedText().replace("\u2029", " ") if inside else ""

        function = self.functions[index] if index < len(self.functions) else None
        return SentenceTarget(doc_id=DRAFT_DOC_ID, text=text_of(index), role=self.labels[index][1].label,
                              function=function.label if function is not None else "",
                              context_before=text_of(index - 1), context_after=text_of(index + 1),
                              title="draft", model_id=self.model_id)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = self.createStandardContextMenu(event.pos())
        target = self.correction_target(self.cursorForPosition(event.pos()).position())
        if self.corrections is not None and target is not None:
            menu.addSeparator()
            self.corrections.add_to_menu(menu, target)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(event.globalPos())

    def show_correction(self, text: str, field: str, label: str) -> None:
        """Show a corrected role on the draft sentence ``text`` at once (until the next labelling)."""
        if field != "role":
            return
        for k, (cursor, prediction) in enumerate(self.labels):
            if cursor.selectedText().replace("\u2029", " ") == text:
                probabilities = {**prediction.probabilities, label: 1.0}
                self.labels[k] = (cursor, RolePrediction(label, probabilities))
        self.refresh()

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            text = self.tooltip_at(event.pos())
            if text:
                QToolTip.showText(event.globalPos(), text, self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    def paint_margin(self, margin: QWidget, rect: QRect) -> None:
        painter = QPainter(margin)
        painter.fillRect(rect, QColor("#f4f4f4"))
        font = painter.font()
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.75))
        font.setBold(True)
        painter.setFont(font)
        lines: dict[int, tuple[int, list[RolePrediction]]] = {}  # line top -> (height, labels starting there)
        for cursor, prediction in self.labels:
            if cursor.selectionStart() == cursor.selectionEnd():
                continue
            start = QTextCursor(self.document())
            start.setPosition(cursor.selectionStart())
            if not start.block().isVisible():
                continue
            line_rect = self.cursorRect(start)
            top = int(line_rect.top())
            if top > rect.bottom() or top + line_rect.height() < rect.top():
                continue
            lines.setdefault(top, (line_rect.height(), []))[1].append(prediction)
        for top, (height, predictions) in lines.items():
            shown = predictions[:3]
            gap = 2
            width = (MARGIN_W - 6 - gap * (len(shown) - 1)) / len(shown)
            for k, prediction in enumerate(shown):
                role = prediction.label
                color = self.palette_.color(role)
                chip = QRect(int(3 + k * (width + gap)), top + 1, int(width), max(12, height - 2))
                text = ABBREVIATIONS.get(role, "?")
                text = text if len(shown) == 1 else text[0]
                if is_confident(prediction):
                    painter.setPen(Qt.PenStyle.NoPen)
                    painter.setBrush(color)
                    painter.drawRoundedRect(chip, 3, 3)
                    painter.setPen(RolePalette.text_color_on(color))
                else:  # uncertain: a grey chip outlined in the role colour, the abbreviation with "?"
                    pen = QPen(color.darker(110), 1.5, Qt.PenStyle.DashLine)
                    painter.setPen(pen)
                    painter.setBrush(QColor(UNCERTAIN_CHIP))
                    painter.drawRoundedRect(chip.adjusted(1, 1, -1, -1), 3, 3)
                    painter.setPen(QColor("#444444"))
                    text = f"{text}?" if len(shown) == 1 else "?"
                painter.drawText(chip, Qt.AlignmentFlag.AlignCenter, text)
        painter.end()


class DraftPanel(QWidget):
    labelled = Signal(int)  # number of sentences labelled (after each labelling round)
    currentSentenceChanged = Signal(str)  # the sentence at the cursor, LABEL_DELAY_MS after typing stops

    def __init__(self, session: Session, store: DraftStore | None = None) -> None:
        super().__init__()
        self.session = session
        self.store = store or DraftStore()
        self.recent = RecentDrafts(self.store.root)
        self.opened: ParsedDraft | None = None  # the draft file the pane shows (None: typed or pasted text)
        self._note = ""  # what opening a draft said, shown before the next labelling summary
        self.editor = DraftEditor(session.palette)
        self._build_file_actions()
        self.status = QLabel("")
        self.status.setStyleSheet("color: #666; padding: 2px 4px;")
        self.legend = QLabel(" ".join(
            f"<span style='background:{session.palette.color(r).name()};"
            f"color:{RolePalette.text_color_on(session.palette.color(r)).name()}'>&nbsp;"
            f"{ABBREVIATIONS[r]}&nbsp;</span> {r}" for r in ABBREVIATIONS))
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        self.moves = QLabel("")
        self.moves.setWordWrap(True)
        self.moves.setStyleSheet("padding: 2px 4px;")
        self.checklist_kind = QComboBox()
        self.checklist_kind.addItems(CHECKLIST_KINDS)
        self.checklist_kind.setCurrentText("introduction")
        self.checklist_kind.setToolTip("The section this draft is: its usual moves are checked below")
        self.checklist_kind.currentTextChanged.connect(lambda _k: self._show_moves())
        self._functions: list[FunctionPrediction] | None = None
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(QLabel("Moves of a"))
        bottom.addWidget(self.checklist_kind)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.legend)
        layout.addWidget(self.moves)
        layout.addLayout(bottom)
        self._version = 0
        self._labelled_version = -1
        self._worker: Worker | None = None
        self._waiting_for_model = False
        self._label_timer = QTimer(self, singleShot=True, interval=LABEL_DELAY_MS)
        self._label_timer.timeout.connect(self.label_now)
        self._save_timer = QTimer(self, singleShot=True, interval=SAVE_DELAY_MS)
        self._save_timer.timeout.connect(self.save_now)
        self._sentence = ""
        self._sentence_timer = QTimer(self, singleShot=True, interval=LABEL_DELAY_MS)
        self._sentence_timer.timeout.connect(self._emit_current_sentence)
        session.models.ready.connect(self._on_model_ready)
        session.models.failed.connect(self._on_model_failed)
        saved = self.store.load()
        if saved:
            self.editor.setPlainText(saved)
            self.status.setText("Draft restored.")
            self._label_timer.start()
        self.editor.textChanged.connect(self._on_text_changed)
        self.editor.cursorPositionChanged.connect(self._sentence_timer.start)
        self.editor.fileDropped.connect(self.open_draft)

    # -- draft files ------------------------------------------------------------------------------
    def _build_file_actions(self) -> None:
        self.act_open_draft = QAction("Open &draft…", self)
        self.act_open_draft.setToolTip("Open a LaTeX, Markdown, Word or text draft in the draft pane")
        self.act_open_draft.triggered.connect(lambda: self.open_draft_dialog())
        self.recent_drafts_menu = QMenu("Open recent dra&ft", self)
        self.recent_drafts_menu.aboutToShow.connect(self._fill_recent_drafts)
        self.act_save_draft = QAction("&Save draft", self)
        self.act_save_draft.setToolTip("Write the draft pane back to its file where nothing is lost")
        self.act_save_draft.triggered.connect(lambda: self.save_draft())
        self.act_save_draft_as = QAction("Save draft &as…", self)
        self.act_save_draft_as.triggered.connect(lambda: self.save_draft_as())
        self._fill_recent_drafts()

    def file_menu_actions(self) -> list[QAction]:
        """What the window puts in its File menu."""
        return [self.act_open_draft, self.recent_drafts_menu.menuAction(), self.act_save_draft,
                self.act_save_draft_as]

    def _fill_recent_drafts(self) -> None:
        from pathlib import Path

        self.recent_drafts_menu.clear()
        paths = self.recent.load()
        for number, path in enumerate(paths):
            action = self.recent_drafts_menu.addAction(f"&{number + 1}  {Path(path).name}")
            action.setToolTip(path)
            action.triggered.connect(lambda _checked=False, p=path: self.open_draft(p))
        self.recent_drafts_menu.menuAction().setEnabled(bool(paths))

    def _ask_open_path(self) -> str:
        start = str(self.opened.path.parent) if self.opened is not None and self.opened.path else ""
        path, _ = QFileDialog.getOpenFileName(
            self, "Open a draft", start,
            "Drafts (*.tex *.ltx *.md *.markdown *.docx *.txt *.text);;All files (*)")
        return path

    def _ask_save_path(self, suggested: str) -> str:
        path, _ = QFileDialog.getSaveFileName(self, "Save the draft as", suggested,
                                              "Markdown (*.md);;Text (*.txt)")
        return path

    def open_draft_dialog(self) -> bool:
        path = self._ask_open_path()
        return self.open_draft(path) if path else False

    def _say(self, message: str) -> None:
        self.status.setText(message[:1].upper() + message[1:])

    def open_draft(self, path: str) -> bool:
        """Read the draft at ``path`` and show its readable text; a bad file is one line in the status
        bar (and leaves the pane as it was)."""
        from pathlib import Path

        from core.draft_formats import read_draft
        from core.errors import RhetoricaError

        try:
            parsed = read_draft(Path(path))
        except (RhetoricaError, OSError) as error:
            if not Path(path).exists():
                self.recent.remove(path)
                self._fill_recent_drafts()
            self._say(" ".join(str(error).split()))
            return False
        if self.opened is None and self.text.strip():
            try:  # the typed text is kept, not replaced silently
                self.store.save(self.text, "before-open")
            except OSError as error:
                self._say(f"not opened: the text in the pane could not be kept first ({error})")
                return False
        self.opened = parsed
        self.editor.setPlainText(parsed.plain)
        self.recent.add(path)
        self._fill_recent_drafts()
        self._show_dock()
        kind = {"tex": "LaTeX", "md": "Markdown", "docx": "Word", "txt": "text"}[parsed.format]
        parts = [f"Opened {Path(path).name} ({kind}): {len(parsed.sentences)} sentences"]
        if parsed.files:
            parts.append(f"{len(parsed.files)} included files")
        if parsed.format == "docx":
            parts.append("Save draft as… to keep edits")
        if parsed.warnings:
            parts.append(f"{len(parsed.warnings)} skipped: {parsed.warnings[0]}")
        self._say("; ".join(parts))
        self._note = self.status.text()  # kept before the labelling summary
        self.status.setToolTip("\n".join(parsed.warnings))
        return True

    def _show_dock(self) -> None:
        parent = self.parentWidget()
        while parent is not None and not isinstance(parent, QDockWidget):
            parent = parent.parentWidget()
        if parent is not None:
            parent.show()
            parent.raise_()

    def save_draft(self) -> bool:
        """Write the pane back to the opened draft where that is lossless, else "Save draft as…"."""
        from core.draft_formats import read_draft
        from core.draft_formats.writeback import NotLossless, save_edits
        from core.errors import RhetoricaError

        if self.opened is None or self.opened.path is None:
            return self.save_draft_as()
        source = self.opened.path
        try:
            written = save_edits(self.opened, self.text)
        except NotLossless as error:
            self._say(f"{source.name}: {error}")
            return self.save_draft_as()
        except (RhetoricaError, OSError) as error:
            self._say(f"not saved: {' '.join(str(error).split())}")
            return False
        try:
            self.opened = read_draft(source, self.opened.project_root)
        except (RhetoricaError, OSError) as error:
            self._say(f"saved, but {source.name} cannot be read again: {error}")
            self.opened = None
            return True
        if self.opened.plain != self.text:  # whitespace the parse does not keep: show what it reads
            self.editor.setPlainText(self.opened.plain)
        names = ", ".join(p.name for p in written) or "nothing changed"
        self._say(f"Saved {names}")
        return True

    def save_draft_as(self, path: str | None = None) -> bool:
        """Write the pane's text to a new Markdown or text file (asked for when ``path`` is None) and
        go on editing that file."""
        from pathlib import Path

        from core.draft_formats import read_draft
        from core.errors import RhetoricaError
        from core.fileio import atomic_write_text

        if path is None:
            suggested = (str(self.opened.path.with_suffix(".md"))
                         if self.opened is not None and self.opened.path is not None else "draft.md")
            path = self._ask_save_path(suggested)
            if not path:
                return False
        target = Path(path)
        if target.suffix.lower() not in (".md", ".markdown", ".txt", ".text"):
            target = target.with_suffix(".md")
        try:
            atomic_write_text(target, self.text, f"the draft {target.name}")
            self.opened = read_draft(target)
        except (RhetoricaError, OSError) as error:
            self._say(f"not saved: {' '.join(str(error).split())}")
            return False
        self.recent.add(target)
        self._fill_recent_drafts()
        self._say(f"Saved {target.name}")
        return True

    @property
    def text(self) -> str:
        return self.editor.toPlainText()

    def set_text(self, text: str) -> None:
        self.editor.setPlainText(text)

    def insert_text(self, text: str) -> None:
        """Insert ``text`` at the cursor (replacing a selection), with a space between it and the text
        right before it or a word right after it; the editor takes the focus with the first slot of a
        template ("[CONTENT]", "[NUMBER]", …) selected, so typing replaces it."""
        editor = self.editor
        cursor = editor.textCursor()

        def neighbour(position: int, move: QTextCursor.MoveOperation) -> str:
            probe = QTextCursor(editor.document())
            probe.setPosition(position)
            probe.movePosition(move, QTextCursor.MoveMode.KeepAnchor)
            return probe.selectedText()

        before = neighbour(cursor.selectionStart(), QTextCursor.MoveOperation.PreviousCharacter)
        after = neighbour(cursor.selectionEnd(), QTextCursor.MoveOperation.NextCharacter)
        lead = " " if before and not before.isspace() and before not in "([{“‘\"'" else ""
        trail = " " if after and after[0].isalnum() else ""
        cursor.beginEditBlock()
        cursor.insertText(lead)
        start = cursor.position()
        cursor.insertText(text + trail)
        cursor.endEditBlock()
        slot = SLOT.search(text)
        if slot is not None:
            def units(part: str) -> int:  # QTextCursor positions count UTF-16 code units
                return len(part.encode("utf-16-le")) // 2

            cursor.setPosition(start + units(text[:slot.start()]))
            cursor.setPosition(start + units(text[:slot.end()]), QTextCursor.MoveMode.KeepAnchor)
        editor.setTextCursor(cursor)
        editor.setFocus()

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
        above it and its neighbours under that heading (``core.drafts.context_in_draft``)."""
        from core.drafts import context_in_draft

        return context_in_draft(self.text, self.editor.textCursor().position())

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
            self.status.setText(message[:1].upper() + message[1:])

    def flush(self) -> None:
        """Save pending changes now (called when the window closes)."""
        if self._save_timer.isActive():
            self.save_now()

    def label_now(self) -> None:
        self._label_timer.stop()
        text = self.text
        if not text.strip():
            self.editor.set_labels([])
            self._functions = None
            self._show_moves()
            self.status.setText("")
            self._labelled_version = self._version
            self.labelled.emit(0)
            return
        model = self.session.models.request()
        if model is None:
            self._waiting_for_model = True
            state = self.session.models.state
            self.status.setText("No model bundle: draft sentences cannot be labelled (see Settings)."
                                if state == "failed" else "Loading the model…")
            return
        if self._worker is not None:
            self._worker.cancel()
        version = self._version
        markdown = self.opened is not None and self.opened.format != "txt"
        worker = Worker(label_draft, text, model, markdown, name="draft")
        self.editor.model_id = getattr(model, "model_id", "")
        worker.result.connect(lambda r, v=version, w=worker: self._on_labelled(w, v, r))
        worker.error.connect(lambda e: self.status.setText(f"Labelling failed: {e}"))
        self._worker = worker
        self.status.setText("Labelling…")
        self.session.tracker.start(worker, "Labelling the draft")

    def _on_labelled(self, worker: Worker, version: int, result: DraftLabels) -> None:
        if worker is self._worker:
            self._worker = None
        if version != self._version:
            return  # the text changed meanwhile; the debounce timer will label it again
        labelled, functions = result
        self._labelled_version = version
        self.editor.set_labels(labelled, functions)
        self._functions = functions
        self._show_moves()
        counts: dict[str, int] = {}
        for _, prediction in labelled:
            if is_confident(prediction):
                counts[prediction.label] = counts.get(prediction.label, 0) + 1
        uncertain = len(labelled) - sum(counts.values())
        summary = ", ".join([*(f"{n} {r}" for r, n in counts.items()),
                             *([f"{uncertain} uncertain"] if uncertain else [])])
        done = f"{len(labelled)} sentences: {summary}" if labelled else ""
        self.status.setText(f"{self._note} — {done}" if self._note and done else self._note or done)
        self._note = ""
        self.labelled.emit(len(labelled))

    def _show_moves(self) -> None:
        """The move checklist for the chosen section kind (empty without functions)."""
        if self._functions is None:
            self.moves.setText("" if not self.editor.labels else
                               "<span style='color:#777'>Move checklist: needs a model with a function head."
                               "</span>")
            return
        kind = self.checklist_kind.currentText()
        found = [f.label for f in self._functions if function_is_clear(f)]
        judged = (len(found), len(self._functions))
        self.moves.setText(describe_checks(check_moves(found, kind), kind, judged=judged))

    def _on_model_ready(self, _model: RoleModel) -> None:
        if self._waiting_for_model:
            self._waiting_for_model = False
            self.label_now()

    def _on_model_failed(self, error: Exception) -> None:
        if self._waiting_for_model:
            self.status.setText(f"No model: {error}")


SPEC = register_panel(PanelSpec(
    id="draft", title="Draft", factory=DraftPanel, area=Qt.DockWidgetArea.BottomDockWidgetArea,
    order=50, shortcut="Ctrl+D", description="Write a draft and see each sentence's role",
    visible=False, remember_visible=True, height=230))
