"""The Suggestions panel's words (no Qt): a suggestion's highlighted sentence, its source and match
lines, what the query reads as, the status line and the messages about a library that cannot be read."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app.gui.widgets import muted, one_line
from core.phrasing.source_titles import source_title
from core.taxonomy.functions import default_taxonomy
from core.taxonomy.labels import NO_FUNCTION

if TYPE_CHECKING:  # pragma: no cover
    from core.phrasing.suggest import Suggestion

HIGHLIGHT = "#fbe7a1"  # background of the formulaic wording
HIGHLIGHT_TEXT = "#1a1a1a"  # its text (set too: in a dark palette the text would be near-white on it)
TITLE_CHARS = 44  # a source's title and section fit one line of a card in a dock of ~440 px
KIND_WORDS = {"corpus": "phrase corpus", "library": "your library"}
NO_SOURCES = ("No phrase corpus or library yet: build the phrase corpus with <code>rhetorica corpus build"
              "</code> or add papers with <code>rhetorica library add PDF…</code>; suggestions come from "
              "them.")
NO_QUERY = ("Select a sentence or type in the draft: sentences from real papers that do the same job "
            "appear here.")
NO_MODEL = "No model: suggestions need a model bundle (choose one in File › Settings)."
ORIGINS = {"page": "the selected sentence", "draft": "the draft"}


def highlighted_html(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` as rich text with each (start, end) span bold, dark, on a light tinted background."""
    parts: list[str] = []
    cursor = 0
    for start, end in sorted(spans):
        start, end = max(start, cursor, 0), min(end, len(text))
        if end <= start:
            continue
        parts.append(html.escape(text[cursor:start]))
        parts.append(f"<span style='background-color:{HIGHLIGHT}; color:{HIGHLIGHT_TEXT}; font-weight:600'>"
                     f"{html.escape(text[start:end])}</span>")
        cursor = end
    parts.append(html.escape(text[cursor:]))
    return "".join(parts)


def source_text(item: Suggestion) -> str:
    """Where the sentence comes from: "Title · Section" (plain text; the title is the source's own or a
    label saying what it is, ``core.phrasing.source_titles``, never a bare id; cut to one line of a card)."""
    source = item.source
    title = source.get("title") or source_title(None, source.get("paper_id", ""), source.get("kind", ""))
    if len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1].rstrip() + "…"
    return f"{title} · {source.get('section') or 'no section'}"


def match_text(item: Suggestion) -> str:
    """"similarity 0.83 · Claiming the topic matters · corpus" (plain text: the score, the stored
    function and whether the sentence is from the phrase corpus or the user's library)."""
    parts = [f"similarity {item.similarity:.2f}"]
    if item.function and item.function != NO_FUNCTION:
        parts.append(default_taxonomy().name_of(item.function))
    parts.append(KIND_WORDS.get(item.source.get("kind", ""), item.source.get("kind", "")))
    return " · ".join(p for p in parts if p)


def source_pdf(item: Suggestion) -> str:
    """The PDF a library suggestion comes from, when it is still there ("" otherwise)."""
    path = item.source.get("path", "")
    if item.source.get("kind") != "library" or not path:
        return ""
    try:
        return path if Path(path).is_file() else ""
    except OSError:
        return ""


def reads_as(query: dict[str, str]) -> str:
    """Rich text: what the model reads the query as, in the context it had: "reads as: Stating the aim
    (objective) · with its heading (introduction) and 2+2 neighbouring sentences"; an uncertain role
    names its runner-up ("uncertain: method (0.41) or result (0.35)"), a function below the threshold
    is "no clear function"."""
    function = query.get("function", "")
    role_shown = query.get("role_text") or query.get("role", "")
    name = default_taxonomy().name_of(function) if function and function != NO_FUNCTION else ""
    if name:
        text = f"reads as: {html.escape(name)} ({html.escape(role_shown)})"
    else:
        text = f"reads as: {html.escape(role_shown)}"
        text += "; no clear function" if function == NO_FUNCTION else ""
    context = query.get("context", "")
    return text + (f" · {html.escape(context)}" if context else "")


def query_html(text: str, where: str, reads: str = "") -> str:
    """The line over the list: "For the selected sentence: “…”" (and what it reads as, muted)."""
    shown = text if len(text) <= 160 else text[:159] + "…"
    doing = f"<br><span style='color:{muted()}'>{reads}</span>" if reads else ""
    return f"<span style='color:{muted()}'>For {where}:</span> “{html.escape(shown)}”{doing}"


def broken_library_note(error: Exception) -> str:
    """The status line for a library left out of a search because it cannot be read."""
    from core.library.store import DamagedLibraryError, MissingDatabaseError

    if isinstance(error, DamagedLibraryError):
        what = "is damaged"
    elif isinstance(error, MissingDatabaseError):
        what = "has lost its database"
    else:
        what = f"cannot be read ({one_line(str(error), 100)})"
    return f"phrase corpus only: your library {what}; repair it in the Library panel"


def failure_message(error: Exception) -> str:
    """Rich text for a search that failed (a library that cannot be read names the repair)."""
    from core.library.store import DamagedLibraryError, MissingDatabaseError

    if isinstance(error, (DamagedLibraryError, MissingDatabaseError)):
        return html.escape(one_line(f"Your library cannot be read: repair it in the Library panel (Repair "
                                    f"library…). {error}", 400))
    return html.escape(one_line(f"Suggestions failed: {error}"))


def no_results_message(filters: Sequence[str]) -> str:
    """Rich text for a search without suggestions (the filters in use, if any, are named)."""
    hint = (f" with the filters ({html.escape(', '.join(filters))}): try “All”" if filters
            else ": add more papers to your library")
    return f"No suggestions for this sentence{hint}."


def result_status(count: int, seconds: float, notes: Sequence[str]) -> str:
    """"3 suggestions · 0.4 s · <a note about the sources>" on one line."""
    counted = f"{count} suggestion{'s' if count != 1 else ''}"
    return one_line(" · ".join([counted, f"{seconds:.1f} s", *notes]))
