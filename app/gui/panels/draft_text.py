"""The draft pane's words (no Qt): a sentence's tooltip, the summary of a labelling round, the move
checklist, and what opening a draft file said."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from core.draft_checklist import DraftOutline, draft_checklist
from core.taxonomy.functions import default_taxonomy
from core.taxonomy.labels import (
    FunctionPrediction,
    RolePrediction,
    function_is_clear,
    is_confident,
    role_text,
)

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.panels.draft_labelling import LabelledDraft
    from core.draft_formats import ParsedDraft

ABBREVIATIONS = {"background": "BKG", "objective": "OBJ", "method": "MTH", "result": "RES",
                 "conclusion": "CON", "other": "OTH"}
PLACEHOLDER = ("Write your draft here (abstract, introduction, …). Each sentence is labelled with its "
               "rhetorical role a moment after you stop typing; hover a sentence to see the label.")
FORMATS = {"tex": "LaTeX", "md": "Markdown", "docx": "Word", "txt": "text"}
NO_FUNCTION_HEAD = "<span style='color:#777'>Move checklist: needs a model with a function head.</span>"
NO_SECTION_CHECKED = ("Move checklist: no abstract, introduction, discussion or conclusion section to check "
                      "(name one in a heading).")
MARKS = ("✓: a sentence clearly makes the move · ?: no sentence clearly does, but it is some sentence's best "
         "guess · ✗: no sentence clearly makes it")
NO_MODEL = "No model bundle: draft sentences cannot be labelled (see Settings)"


def sentence_tooltip(prediction: RolePrediction, function: FunctionPrediction | None) -> str:
    """Rich text: the role (or "uncertain: A (p) or B (q)"), the function (or "no clear function" with
    the top candidate) and the three most likely roles."""
    top = sorted(prediction.probabilities.items(), key=lambda kv: -kv[1])[:3]
    probs = "<br>".join(f"{r}: {p:.0%}" for r, p in top)
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


def labelled_summary(labelled: LabelledDraft, note: str = "") -> str:
    """"12 sentences: 3 background, 2 objective, 1 uncertain" (after ``note`` and a dash, when given)."""
    counts: dict[str, int] = {}
    for _, prediction in labelled:
        if is_confident(prediction):
            counts[prediction.label] = counts.get(prediction.label, 0) + 1
    uncertain = len(labelled) - sum(counts.values())
    summary = ", ".join([*(f"{n} {r}" for r, n in counts.items()),
                         *([f"{uncertain} uncertain"] if uncertain else [])])
    done = f"{sentences(len(labelled))}: {summary}" if labelled else ""
    return f"{note} — {done}" if note and done else note or done


def checklist_text(checked: tuple[DraftOutline, list[FunctionPrediction] | None] | None,
                   kind: str) -> tuple[str, str]:
    """(the pane's checklist, one line per checked section; its tooltip: each section's headline) for a
    labelled draft's outline and functions (``core.draft_checklist``, as the language server says it;
    ``kind``: what text before any heading is). Empty before labelling; a note when the model has no
    function head."""
    if checked is None or not checked[0].sentence_headings:
        return "", ""
    outline, functions = checked
    if functions is None:
        return NO_FUNCTION_HEAD, ""
    sections = draft_checklist(outline, functions, kind)
    if not sections:
        return NO_SECTION_CHECKED, ""
    tip = "\n".join(s.headline() or f"Every usual move of your {s.kind} is clearly made" for s in sections)
    return "\n".join(s.line() for s in sections), f"{tip}\n{MARKS}"


def opened_text(path: str, parsed: ParsedDraft) -> str:
    """"Opened main.tex (LaTeX): 20 sentences; 2 included files; 1 skipped: …"."""
    parts = [f"Opened {Path(path).name} ({FORMATS[parsed.format]}): {sentences(len(parsed.sentences))}"]
    if parsed.files:
        parts.append(f"{len(parsed.files)} included files")
    if parsed.format == "docx":
        parts.append("Save draft as… to keep edits")
    if parsed.warnings:
        parts.append(f"{len(parsed.warnings)} skipped: {parsed.warnings[0]}")
    return "; ".join(parts)


def sentences(count: int) -> str:
    """"1 sentence", "12 sentences"."""
    return f"{count} sentence{'' if count == 1 else 's'}"


def capitalised(message: str) -> str:
    return message[:1].upper() + message[1:]
