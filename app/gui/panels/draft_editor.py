"""The draft pane's editor: a plain-text editor that shows each sentence's role (a tinted background
and underline, hatched when uncertain), chips in a left margin, a tooltip with the probabilities and
function, "Correct role/function" in its context menu, and draft files dropped on it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
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
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from app.gui.palette import RolePalette
from app.gui.panels.draft_labelling import LabelledDraft
from app.gui.panels.draft_text import ABBREVIATIONS, PLACEHOLDER, sentence_tooltip
from app.gui.widgets import faint_color
from core.draft_formats import DRAFT_SUFFIXES
from core.taxonomy.labels import FunctionPrediction, RolePrediction, is_confident

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.corrections import CorrectionController, SentenceTarget

MARGIN_W = 44
UNCERTAIN_CHIP = "#d9d9d9"  # the margin chip of an uncertain role (its border keeps the role colour)
SLOT = re.compile(r"\[[A-Z]+\]")  # a template's slot: [CONTENT], [NUMBER], [CITATION]


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
        return sentence_tooltip(prediction, self.function_at(position))

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
        painter.fillRect(rect, faint_color(self.palette(), 0.05))  # a dark palette's too
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

    def insert_at_cursor(self, text: str) -> None:
        """Insert ``text`` at the cursor (replacing a selection), with a space between it and the text
        right before it or a word right after it; the editor takes the focus with the first slot of a
        template ("[CONTENT]", "[NUMBER]", …) selected, so typing replaces it."""
        editor = self
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
