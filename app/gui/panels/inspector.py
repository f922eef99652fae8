"""Sentence inspector: the selected sentence's text, section, page, role and probability bars, and its
communicative function (with the taxonomy's description and the two runners-up) when the model has a
function head.

A role below ``core.taxonomy.labels.UNCERTAIN_BELOW`` is shown as uncertain, on a greyed chip with the
runner-up ("uncertain: method 41% or result 35%"); a function below the bundle's threshold as "no
clear function" with the top candidate."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.gui.panels.registry import PanelSpec, register_panel
from app.gui.session import Session
from app.gui.widgets import (
    ProbabilityBars,
    hint_label,
    muted,
    role_chip_style,
    uncertain_chip_style,
    while_alive,
)
from core.taxonomy.functions import default_taxonomy
from core.taxonomy.labels import (
    NO_FUNCTION,
    UNCERTAIN_BELOW,
    FunctionPrediction,
    RolePrediction,
    is_confident,
    role_text,
)

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.corrections import CorrectionController


class InspectorPanel(QWidget):
    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.corrections: CorrectionController | None = None
        self.index = -1
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setMaximumHeight(140)
        self.role = QLabel("—")
        self.role.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.function = QLabel("—")
        self.function.setWordWrap(True)
        self.function.setTextFormat(Qt.TextFormat.RichText)
        self.section = QLabel("—")
        self.section.setWordWrap(True)
        self.where = QLabel("—")
        self.bars = ProbabilityBars(session.palette)
        self.copy_button = QPushButton("Copy")
        self.copy_button.clicked.connect(self.copy)
        self.prev_button = QPushButton("◀ Previous")
        self.prev_button.clicked.connect(lambda: self._step(-1))
        self.next_button = QPushButton("Next ▶")
        self.next_button.clicked.connect(lambda: self._step(1))
        self.correct_button = QPushButton("Correct…")
        self.correct_button.setToolTip(
            "Correct this sentence's role or function (Alt+1…Alt+6 set the role); your corrections "
            "can train the model (Tools › Train on my corrections)")
        self.correct_button.clicked.connect(self._correct_menu)
        self.correct_button.hide()  # until the window hands the panel its corrections

        details = QWidget()
        form = QFormLayout(details)
        form.setContentsMargins(6, 6, 6, 6)
        form.addRow(self.text)
        form.addRow("Role", self.role)
        form.addRow("Function", self.function)
        form.addRow("Section", self.section)
        form.addRow("Where", self.where)
        form.addRow(self.bars)
        buttons = QHBoxLayout()
        buttons.addWidget(self.prev_button)
        buttons.addWidget(self.next_button)
        buttons.addStretch(1)
        buttons.addWidget(self.correct_button)
        buttons.addWidget(self.copy_button)
        form.addRow(buttons)

        self.stack = QStackedWidget()
        self.empty = hint_label("Click a highlighted sentence on the page to inspect its role.")
        self.stack.addWidget(self.empty)
        self.stack.addWidget(details)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.stack)
        session.sentenceSelected.connect(self.show_sentence)
        session.analysisReady.connect(while_alive(self, lambda _a: self.show_sentence(self.index)))
        session.documentClosed.connect(while_alive(self, lambda: self.show_sentence(-1)))
        session.palette.changed.connect(lambda: self.show_sentence(self.index))

    def show_sentence(self, index: int) -> None:
        paper = self.session.paper
        self.index = index
        if paper is None or not (0 <= index < len(paper.sentences)):
            self.index = -1
            self.stack.setCurrentWidget(self.empty)
            return
        sentence = paper.sentences[index]
        section = paper.section_of(sentence)
        self.text.setPlainText(sentence.text)
        heading = " ".join(p for p in (section.number, section.heading) if p) or "(untitled)"
        self.section.setText(f"{heading}  <span style='color:{muted()}'>({section.kind.value})</span>")
        pages = ", ".join(str(p + 1) for p in sentence.pages) or "?"
        self.where.setText(f"sentence {index + 1} of {len(paper.sentences)} · page {pages}")
        prediction = self.session.role_of(index)
        if prediction is None:
            self.role.setText("not labelled yet" if self.session.models.error is None else "no model")
            self.role.setStyleSheet(f"color: {muted()};")
            self.bars.set_prediction(None)
        else:
            corrected = self._corrected(index, "role")
            label = corrected or prediction.label
            said = ("the model agrees" if corrected == prediction.label
                    else f"the model said {prediction.label}")
            uncertain = not corrected and not is_confident(prediction)
            self.role.setText(f"{label}  (your correction; {said})" if corrected
                              else role_label_text(prediction))
            color = self.session.palette.color(label)
            self.role.setStyleSheet(uncertain_chip_style(color) if uncertain else role_chip_style(color))
            unsure = (f"The model is unsure: its best role is below {UNCERTAIN_BELOW:.0%}; the gap report "
                      "and the draft checklist leave it out")
            self.role.setToolTip(unsure if uncertain else "")
            self.bars.set_prediction(prediction.probabilities, prediction.label)
        function = self.session.function_of(index)
        text = function_text(function, prediction is not None)
        corrected_function = self._corrected(index, "function")
        if corrected_function:
            said = default_taxonomy().name_of(function.label) if function is not None else "nothing"
            text = (f"<b>{html.escape(default_taxonomy().name_of(corrected_function))}</b> "
                    f"<span style='color:{muted()}'>(your correction; the model said "
                    f"{html.escape(said)})</span>")
        self.function.setText(text)
        self.correct_button.setEnabled(prediction is not None)
        self.prev_button.setEnabled(index > 0)
        self.next_button.setEnabled(index + 1 < len(paper.sentences))
        self.stack.setCurrentIndex(1)

    def set_corrections(self, corrections: CorrectionController) -> None:
        """Show corrected labels and offer the "Correct…" menu (the window calls this)."""
        self.corrections = corrections
        self.correct_button.show()
        corrections.changed.connect(lambda: self.show_sentence(self.index))

    def _corrected(self, index: int, field: str) -> str | None:
        return self.corrections.corrected_label(index, field) if self.corrections is not None else None

    def _correct_menu(self) -> None:
        if self.corrections is None or self.index < 0:
            return
        menu = self.corrections.menu(self.index, self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(self.correct_button.mapToGlobal(self.correct_button.rect().bottomLeft()))

    def copy(self) -> None:
        if self.index >= 0:
            QGuiApplication.clipboard().setText(self.text.toPlainText())

    def _step(self, delta: int) -> None:
        if self.index >= 0:
            self.session.jump_to_sentence(self.index + delta)


def role_label_text(prediction: RolePrediction) -> str:
    """"method  83%", or below ``UNCERTAIN_BELOW`` "uncertain: method 41% or result 35%"."""
    if is_confident(prediction):
        return f"{prediction.label}  {prediction.confidence:.0%}"
    return role_text(prediction)  # the uncertain wording of the exports, the draft pane and the LSP


def function_text(prediction: FunctionPrediction | None, analysed: bool) -> str:
    """Rich text for the Function row: name and probability, description, runners-up."""
    if prediction is None:
        return (f"<span style='color:{muted()}'>this model has no function head</span>" if analysed
                else f"<span style='color:{muted()}'>not labelled yet</span>")
    taxonomy = default_taxonomy()
    name = taxonomy.name_of
    others = ", ".join(f"{name(f)} {p:.0%}" for f, p in prediction.top[1:3])
    if prediction.label == NO_FUNCTION:
        best = prediction.top[0] if prediction.top else ("", 0.0)
        return (f"<span style='color:{muted()}'><i>no clear function</i> (top candidate: "
                f"{html.escape(name(best[0]))} {best[1]:.0%}; the model reads no function of the taxonomy "
                f"here)</span>")
    try:
        description = taxonomy.get(prediction.label).description
    except KeyError:
        description = ""
    return (f"<b>{html.escape(name(prediction.label))}</b> {prediction.confidence:.0%}"
            f"<br><span style='color:{muted(share=0.75)}'>{html.escape(description)}</span>"
            + (f"<br><span style='color:{muted()}'>also: {html.escape(others)}</span>" if others else ""))


SPEC = register_panel(PanelSpec(
    id="inspector", title="Sentence", factory=InspectorPanel, order=20, shortcut="Ctrl+Shift+I",
    description="The selected sentence, its role probabilities and its function", width=400, height=360,
    show_on_selection=True))
