"""The draft checklist per section ("No sentence of your introduction clearly makes this move: an aim
statement"), as the draft pane shows it: both are ``core.draft_checklist.draft_checklist`` (per section,
subsections inheriting their parent's kind, judged on the sentences whose function or move is clear).
Here each section keeps its first :class:`~app.lsp.drafts.Heading`, where the server puts the summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.draft_checklist import BEFORE_ANY_HEADING, DraftOutline, SectionChecklist, draft_checklist

if TYPE_CHECKING:  # pragma: no cover
    from app.lsp.drafts import Document, Heading
    from app.lsp.labeller import SentenceLabel
    from core.taxonomy.moves import Move, MoveCheck


@dataclass(frozen=True)
class SectionCheck:
    heading: Heading | None  # the section's first heading (None: the sentences before any heading)
    section: SectionChecklist

    @property
    def kind(self) -> str:
        return self.section.kind

    @property
    def checks(self) -> tuple[MoveCheck, ...]:
        return self.section.checks

    @property
    def judged(self) -> tuple[int, int]:
        return self.section.judged

    @property
    def missing(self) -> tuple[Move, ...]:
        return self.section.missing

    def headline(self) -> str:
        """"No sentence of your introduction clearly makes these moves: …" ("" when none is missing)."""
        return self.section.headline()

    def checklist(self) -> str:
        """The draft pane's line for this section."""
        return self.section.line()


def outline_of(document: Document) -> DraftOutline:
    return DraftOutline(tuple(h.section_kind for h in document.headings),
                        tuple(s.heading for s in document.sentences))


def section_checks(document: Document, labels: tuple[SentenceLabel, ...],
                   default_kind: str | None = None) -> list[SectionCheck]:
    """One check per checked section of ``document`` (labels in sentence order)."""
    functions = [label.function for label in labels]
    sections = draft_checklist(outline_of(document), functions, default_kind)
    return [SectionCheck(document.headings[s.heading] if s.heading != BEFORE_ANY_HEADING else None, s)
            for s in sections]
