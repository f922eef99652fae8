"""The Alignment panel's words (pure functions): the summary line, the gap list's basis and targets, a pair's
cells and tooltip, the function filter's choices, and the export formats."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from app.gui.widgets import muted
from core.taxonomy.labels import NO_FUNCTION

if TYPE_CHECKING:  # pragma: no cover
    from core.alignment.align import AlignedPair, Alignment
    from core.alignment.align_gaps import GapItem

EXPORTS = {"json": ("JSON", "JSON (*.json)"), "md": ("Markdown", "Markdown (*.md)"),
           "html": ("HTML", "HTML page (*.html)")}
CELL_CHARS = 260  # longer sentences are cut in the table (the tooltip has all of it)


def gaps_basis(alignment: Alignment) -> str:
    """Rich text after the gaps' title: " · judged on the 31 of 40 sentences whose function is clear (A),
    52 of 70 (B)"
    (uncertain labels are left out of the gap report; "" for a report that does not say)."""
    judged = alignment.gaps.judged
    if not all(side in judged for side in ("a", "b")):
        return ""
    from core.taxonomy.labels import judged_on

    a, b = judged["a"], judged["b"]
    return (f" <span style='color:{muted()}'>· {html.escape(judged_on(a['functions'], a['sentences']))} (A), "
            f"{b['functions']} of {b['sentences']} (B)</span>")


def summary_line(alignment: Alignment) -> str:
    """"12 aligned pairs · A 40% / B 75% aligned · 3 gaps" (plain text)."""
    cover_a, cover_b = alignment.coverage
    gaps = len(alignment.gaps.items)
    return (f"{len(alignment.pairs)} aligned pair{'s' if len(alignment.pairs) != 1 else ''} · "
            f"A {100 * cover_a:.0f}% / B {100 * cover_b:.0f}% of sentences aligned · "
            f"{gaps} gap{'s' if gaps != 1 else ''}")


def summary_html(alignment: Alignment) -> str:
    """The panel's summary: which text is B, then the summary line in bold."""
    b_title = alignment.b.title or "the second text"
    return (f"<span style='color:{muted()}'>A: this paper · B: {html.escape(b_title)}</span>"
            f"<br><b>{html.escape(summary_line(alignment))}</b>")


def gap_target(alignment: Alignment, item: GapItem) -> int:
    """The first sentence of A a gap concerns: for a gap of B, A's first sentence with that function
    (in that section kind; the report's own list when it has one: a sentence may do it by its heading or
    a figure mention rather than its label); for a gap of A, A's first sentence of that section kind
    (where it lacks the function). -1 when there is none."""
    sentences = alignment.a.sentences
    kind = item.section_kind
    in_kind = [i for i, s in enumerate(sentences) if not kind or s.section_kind == kind]
    if item.present_in == "a" and item.function and item.sentences and item.sentences[0] < len(sentences):
        return max(item.sentences[0], -1)
    if item.present_in == "a" and item.function:
        doing = [i for i in in_kind if sentences[i].function == item.function]
        return doing[0] if doing else -1
    return in_kind[0] if in_kind else -1


def gap_tooltip(target: int) -> str:
    return (f"Go to sentence {target + 1} of the open paper" if target >= 0
            else "No sentence of the open paper to go to")


def pair_texts(alignment: Alignment, pair: AlignedPair) -> tuple[str, str]:
    """The pair's A and B sentences, each side's joined."""
    return (" ".join(alignment.a.sentences[i].text for i in pair.a_indices),
            " ".join(alignment.b.sentences[j].text for j in pair.b_indices))


def pair_tooltip(pair: AlignedPair) -> str:
    """"method · proposal · matched as a block (…)": the pair's role, function and how it was matched."""
    from core.alignment.align import method_text

    doing = pair.function if pair.function and pair.function != NO_FUNCTION else ""
    return (f"{pair.role or 'mixed roles'}" + (f" · {doing}" if doing else "")
            + f" · {method_text(pair.method, explained=True)}")


def function_choices(alignment: Alignment) -> list[tuple[str, str]]:
    """(name, id) of each function the pairs share, in id order (an id the taxonomy lacks names itself)."""
    from core.taxonomy.functions import default_taxonomy

    taxonomy = default_taxonomy()
    present = sorted({p.function for p in alignment.pairs if p.function and p.function != NO_FUNCTION})
    choices = []
    for function in present:
        try:
            name = taxonomy.name_of(function)
        except Exception:  # an id the shipped taxonomy does not know
            name = function
        choices.append((name, function))
    return choices
