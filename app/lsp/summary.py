"""The draft checklist per section ("your introduction never makes an aim statement"), as the draft
pane's checklist judges it: ``core.taxonomy.moves.check_moves`` over the functions the model is clear about
(``core.taxonomy.labels.function_is_clear``), saying on how many sentences it was judged.

A section is a run of headings of one kind (subsections inherit their parent's kind) and the
sentences under them; only kinds with a usual list of moves (``core.taxonomy.moves.EXPECTED``) are checked,
and only once they hold a sentence. A draft's sentences before any heading are checked as
``default_kind`` when one is set (a draft pasted without headings), else not at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.taxonomy.labels import function_is_clear
from core.taxonomy.moves import EXPECTED, Move, MoveCheck, check_moves, describe_checks

if TYPE_CHECKING:  # pragma: no cover
    from app.lsp.drafts import Document, Heading
    from app.lsp.labeller import SentenceLabel


@dataclass(frozen=True)
class SectionCheck:
    heading: Heading | None  # the section's first heading (None: the sentences before any heading)
    kind: str
    checks: tuple[MoveCheck, ...]
    judged: tuple[int, int]  # (sentences with a clear function, sentences)

    @property
    def missing(self) -> tuple[Move, ...]:
        return tuple(c.move for c in self.checks if not c.present)

    def headline(self) -> str:
        """"Your introduction never makes these moves: an aim statement, a gap or problem" ("" when
        nothing is missing)."""
        missing = [move.name for move in self.missing]
        if not missing:
            return ""
        moves = "this move" if len(missing) == 1 else "these moves"
        return f"Your {self.kind} never makes {moves}: {', '.join(missing)}"

    def checklist(self) -> str:
        """The draft pane's line: "introduction: ✓ why the topic matters · ✗ an aim statement · … (judged
        on the 9 of 12 sentences whose function is clear)"."""
        return describe_checks(list(self.checks), self.kind, judged=self.judged)


def section_checks(document: Document, labels: tuple[SentenceLabel, ...],
                   default_kind: str | None = None) -> list[SectionCheck]:
    """One check per checked section of ``document`` (labels in sentence order)."""
    if any(label.function is None for label in labels):
        return []  # a model without a function head: nothing to judge moves on
    groups: list[tuple[Heading | None, str, list[int]]] = []
    if default_kind in EXPECTED:
        groups.append((None, str(default_kind), [-1]))
    previous_kind: str | None = None
    for number, found in enumerate(document.headings):
        kind = found.section_kind or "other"
        if groups and groups[-1][0] is not None and kind == previous_kind:
            groups[-1][2].append(number)
        else:
            groups.append((found, kind, [number]))
        previous_kind = kind
    out = []
    for heading, kind, numbers in groups:
        if kind not in EXPECTED:
            continue
        under = set(numbers)
        functions = [labels[n].function for n, s in enumerate(document.sentences) if s.heading in under]
        if not functions:
            continue
        clear = [f.label for f in functions if f is not None and function_is_clear(f)]
        out.append(SectionCheck(heading, kind, tuple(check_moves(clear, kind)), (len(clear), len(functions))))
    return out
