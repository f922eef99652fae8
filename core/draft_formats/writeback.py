"""Saving an edited draft back to its own format, only where that loses nothing.

A ``.md``/``.txt`` draft is shown as its own text, so the edited text is the new file. A ``.tex``
draft is shown as its readable text: each edit (a difference between the text as parsed and the text
as edited) is written into the source only when it falls inside text copied verbatim from one file
(not inside a citation placeholder, a rendered math span or a heading marker); typed LaTeX specials
(``%``, ``&``, ``$`` …) are escaped. The result is parsed again and must read as the edited text
(whitespace aside), else nothing is written. A ``.docx`` is never rewritten (its formatting would be
lost): the caller offers "Save as…". Refusals are :class:`NotLossless` with one line saying why.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from core.draft_formats.types import ParsedDraft, Span
from core.errors import DraftError

_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
                   "_": r"\_", "%": r"\%", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_SPECIAL = re.compile(r"[\\{}$&#_%~^]")


class NotLossless(DraftError):
    """The edit cannot be written back to the draft's own format without losing something."""


def escape_latex(text: str) -> str:
    """Typed text as LaTeX that prints it (``50%`` → ``50\\%``)."""
    return _SPECIAL.sub(lambda m: _LATEX_SPECIALS[m.group()], text)


def _span_index(spans: list[Span], starts: list[int], index: int) -> Span:
    import bisect

    return spans[bisect.bisect_right(starts, index) - 1]


def latex_edits(draft: ParsedDraft, edited: str) -> dict[str | None, list[tuple[int, int, str]]]:
    """Per source file, the (start, end, new LaTeX) replacements that turn the parsed text into
    ``edited``; :class:`NotLossless` when an edit touches text that is not the source's own."""
    spans = draft.spans
    starts = [s.plain_start for s in spans]
    old = draft.plain

    def place(index: int) -> tuple[str | None, int] | None:
        """(file, source offset) of the plain character at ``index`` when it is verbatim."""
        if not 0 <= index < len(old):
            return None
        span = _span_index(spans, starts, index)
        return (span.file, span.source_start + index - span.plain_start) if span.verbatim else None

    edits: dict[str | None, list[tuple[int, int, str]]] = {}
    matcher = difflib.SequenceMatcher(None, old, edited, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        new = escape_latex(edited[j1:j2])
        if i1 < i2:
            first = place(i1)
            if first is None:
                raise NotLossless(_refusal(old, i1))
            for k in range(i1 + 1, i2):
                here = place(k)
                if here is None or here != (first[0], first[1] + k - i1):
                    raise NotLossless(_refusal(old, k))
            edits.setdefault(first[0], []).append((first[1], first[1] + i2 - i1, new))
            continue
        before, after = place(i1 - 1), place(i1)
        if before is not None:
            edits.setdefault(before[0], []).append((before[1] + 1, before[1] + 1, new))
        elif after is not None:
            edits.setdefault(after[0], []).append((after[1], after[1], new))
        else:
            raise NotLossless(_refusal(old, i1))
    return edits


def _refusal(old: str, index: int) -> str:
    near = " ".join(old[max(0, index - 20):index + 20].split())
    return (f"the edit near “{near}” touches text made from LaTeX markup (a citation, math, a "
            "heading marker); save the draft as a new file instead")


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + new + text[end:]
    return text


def written_back(draft: ParsedDraft, edited: str) -> dict[str | None, str]:
    """The new text of every file the edit changes (None: the main file). Raises
    :class:`NotLossless` when the edit cannot be saved in the draft's own format."""
    if draft.format in ("md", "txt"):
        return {None: edited} if edited != draft.source else {}
    if draft.format != "tex":
        raise NotLossless(f"a .{draft.format} draft cannot be rewritten without losing its formatting; "
                          "save it as a new Markdown or text file")
    edits = latex_edits(draft, edited)
    texts = {key: _apply(draft.source if key is None else draft.files[key], changes)
             for key, changes in edits.items()}
    from core.draft_formats.latex import parse_latex

    included: dict[str, str] = dict(draft.files)
    included.update((key, text) for key, text in texts.items() if key is not None)
    check = parse_latex(texts.get(None, draft.source), name=str(draft.path or "the draft"), path=draft.path,
                        project_root=draft.project_root, overrides=included)
    if check.plain.split() != edited.split():
        raise NotLossless("the edited text does not read back the same from LaTeX (typed markup such as "
                          "`` or --?); save the draft as a new file instead")
    return texts


def save_edits(draft: ParsedDraft, edited: str) -> list[Path]:
    """Write the edit into the draft's file(s) atomically; returns the files written. Raises
    :class:`NotLossless` (nothing written) or an ``OSError`` with one line."""
    from core.fileio import atomic_write_text

    if draft.path is None:
        raise NotLossless("the draft has no file to save to")
    texts = written_back(draft, edited)
    root = draft.project_root or draft.path.parent
    written = []
    for key, text in texts.items():
        target = draft.path if key is None else root / key
        atomic_write_text(target, text, f"the draft {target.name}")
        written.append(target)
    return written
