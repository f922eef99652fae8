"""Which rhetorical moves a piece of writing makes, and which a section of its kind usually makes.

A move is a group of communicative functions (``core.taxonomy.functions``) that do the same job for the
reader: "stating the aim" is done by an aim, a proposal, a research question or a hypothesis. The
draft pane checks a draft against the moves its section usually has, so "your introduction has no
aim statement" becomes visible. The lists follow the genre-analysis view of research articles
(Swales's moves), written for Rhetorica's taxonomy.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Move:
    name: str  # shown to the author, e.g. "an aim statement"
    functions: frozenset[str]


def _move(name: str, *functions: str) -> Move:
    return Move(name, frozenset(functions))


AIM = _move("an aim statement", "aim", "proposal", "research-question", "hypothesis", "scope")
GAP = _move("a gap or problem", "gap-neglected", "gap-prior-shortcoming", "gap-conflict", "problem-challenge",
            "open-question", "need")
TERRITORY = _move("why the topic matters", "topic-importance", "established-knowledge", "recent-progress")
FINDING = _move("a main finding", "main-finding", "outperforming", "statistical-result", "trend", "no-effect",
                "unexpected")
METHOD = _move("how it was done", "approach-idea", "data-source", "participants", "study-design",
               "model-architecture", "training-setup", "lab-procedure", "evaluation-measure",
               "statistics-method", "implementation", "building-on")
OUTLINE = _move("the contributions or an outline", "contributions", "paper-outline")
MEANING = _move("what the findings mean", "interpretation", "implication", "main-conclusion", "generality",
                "recommendation", "work-summary")
LIMITS = _move("limitations or future work", "limitation", "future-work")

EXPECTED: dict[str, tuple[Move, ...]] = {
    "abstract": (GAP, AIM, METHOD, FINDING, MEANING),
    "introduction": (TERRITORY, GAP, AIM, OUTLINE),
    "discussion": (FINDING, MEANING, LIMITS),
    "conclusion": (MEANING, LIMITS),
}


@dataclass(frozen=True)
class MoveCheck:
    move: Move
    present: bool  # a sentence clearly makes the move
    maybe: int = 0  # else: sentences whose best (unclear) guess is this move ("?" in the line)


def check_moves(functions: Iterable[str], section_kind: str) -> list[MoveCheck]:
    """For each move a section of ``section_kind`` usually makes: is one of its functions present?"""
    found = set(functions)
    return [MoveCheck(move, bool(found & move.functions)) for move in EXPECTED.get(section_kind, ())]


def describe_checks(checks: list[MoveCheck], section_kind: str, judged: tuple[int, int] | None = None) -> str:
    """One line: "introduction: ✓ why the topic matters · ✗ an aim statement · …" ("" when no list); a move
    that no sentence clearly makes but some sentence's best guess is gets "?" instead of "✗".
    ``judged`` = (sentences with a clear function, all sentences): the checks count only the
    sentences with a clear function and say so ("… (judged on the 9 of 12 sentences whose function is
    clear)")."""
    if not checks:
        return ""
    line = f"{section_kind}: " + " · ".join(f"{_mark(c)} {c.move.name}" for c in checks)
    if judged is not None:
        from core.taxonomy.labels import judged_on

        line += f" ({judged_on(*judged)})"
    return line


def _mark(check: MoveCheck) -> str:
    return "✓" if check.present else "?" if check.maybe else "✗"
