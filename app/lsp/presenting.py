"""The words the editor shows: a sentence's label as an inlay hint or a hint diagnostic, the hover
(role, function, confidence, the top suggestions with their sources) and the "Insert template"
actions. Pure functions of labels and suggestions; no protocol types."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.taxonomy.functions import default_taxonomy
from core.taxonomy.labels import function_is_clear, is_confident, role_text

if TYPE_CHECKING:  # pragma: no cover
    from app.lsp.labeller import SentenceLabel
    from core.phrasing.suggest import Suggestion, SuggestionResult

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~])")


def markdown_text(text: str, limit: int = 300) -> str:
    """``text`` on one line, clipped, with Markdown's special characters escaped."""
    line = " ".join(str(text).split())
    if len(line) > limit:
        line = line[: limit - 1] + "…"
    return _MARKDOWN_SPECIAL.sub(r"\\\1", line)


def code_span(text: str, limit: int = 300) -> str:
    """``text`` on one line as a Markdown code span (read literally: slots such as [CONTENT] stay)."""
    line = " ".join(str(text).split())[:limit]
    fence = "``" if "`" in line else "`"
    return f"{fence} {line} {fence}" if fence == "``" else f"`{line}`"


def function_name(label: SentenceLabel) -> str:
    """The taxonomy's name of the sentence's function ("" when there is no clear one)."""
    if label.function is None or not function_is_clear(label.function):
        return ""
    return default_taxonomy().name_of(label.function.label)


def inlay_text(label: SentenceLabel) -> str:
    """"method · Describing the approach"; an uncertain role gets a "?" ("method? · …")."""
    role = label.role.label + ("" if is_confident(label.role) else "?")
    name = function_name(label)
    return f"{role} · {name}" if name else role


def hint_message(label: SentenceLabel) -> str:
    """The one-line message of a hint diagnostic: "method (0.83) · Describing the approach (0.64)",
    or "uncertain: method (0.41) or result (0.35) · no clear function (top: Stating the aim, 0.22)"."""
    parts = [role_text(label.role)]
    function = label.function
    if function is not None and function_is_clear(function):
        parts.append(f"{default_taxonomy().name_of(function.label)} ({function.confidence:.2f})")
    elif function is not None and function.top:
        best, p = function.top[0]
        parts.append(f"no clear function (top: {default_taxonomy().name_of(best)}, {p:.2f})")
    return " · ".join(parts)


def probabilities_line(label: SentenceLabel, n: int = 3) -> str:
    top = sorted(label.role.probabilities.items(), key=lambda kv: -kv[1])[:n]
    return " · ".join(f"{role} {p:.0%}" for role, p in top)


def hover_markdown(label: SentenceLabel, context: str, result: SuggestionResult | None,
                   note: str = "") -> str:
    """The hover of one sentence (Markdown): its role and function with confidences, the role
    probabilities, the context it was labelled in, then the top suggestions with their sources and
    templates (or ``note``: why there are none)."""
    role = label.role
    head = (f"**{role.label}** ({role.confidence:.0%})" if is_confident(role)
            else f"**{markdown_text(role_text(role))}**")
    lines = []
    function = label.function
    if function is not None and function_is_clear(function):
        name = default_taxonomy().name_of(function.label)
        lines.append(f"{head} · function: *{markdown_text(name)}* ({function.confidence:.0%}, "
                     f"`{function.label}`)")
    elif function is not None and function.top:
        best, p = function.top[0]
        name = markdown_text(default_taxonomy().name_of(best))
        lines.append(f"{head} · no clear function (top candidate: *{name}* {p:.0%})")
    else:
        lines.append(head)
    lines += ["", f"roles: {probabilities_line(label)} · labelled {markdown_text(context)}"]
    if result is not None and result.suggestions:
        lines += ["", "**Suggestions** (real sentences doing the same job):", ""]
        for number, item in enumerate(result.suggestions, 1):
            lines.append(f"{number}. {markdown_text(item.text)}")
            lines.append(f"   — {source_line(item)}")
            if item.template:
                lines.append(f"   template: {code_span(item.template)}")
    elif note:
        lines += ["", f"*{markdown_text(note)}*"]
    return "\n".join(lines)


def source_line(item: Suggestion) -> str:
    """"*Title* (introduction) · corpus · similarity 0.83 · Stating the aim" (Markdown)."""
    source = item.source
    title = markdown_text(source.get("title") or source.get("paper_id") or "untitled", 90)
    section = markdown_text(source.get("section") or "-", 40)
    parts = [f"*{title}* ({section})", markdown_text(source.get("kind", "")),
             f"similarity {item.similarity:.2f}"]
    if item.function and item.function != "none":
        parts.append(markdown_text(default_taxonomy().name_of(item.function)))
    return " · ".join(part for part in parts if part)


@dataclass(frozen=True)
class TemplateAction:
    title: str  # "Insert template: We propose [CONTENT]. (from: Title)"
    text: str  # what is inserted after the sentence


def template_actions(result: SuggestionResult | None) -> list[TemplateAction]:
    """One "Insert template" action per suggestion whose template leaves the content to the author (a
    [CONTENT] slot: ``core.phrasing.templates.has_slot``), best first, no repeats. A template without
    one is another paper's sentence word for word: no action (the hover still shows it)."""
    from core.phrasing.templates import has_slot

    if result is None:
        return []
    out: list[TemplateAction] = []
    seen: set[str] = set()
    for item in result.suggestions:
        template = " ".join(item.template.split())
        if not template or template in seen or not has_slot(template):
            continue
        seen.add(template)
        title = clipped(" ".join((item.source.get("title") or "").split()), 50)
        source = f" (from: {title})" if title else ""
        out.append(TemplateAction(f"Insert template: {clipped(template, 70)}{source}", " " + template))
    return out


def clipped(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the cut marked with "…"."""
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"
