"""The draft checklist: which of its usual moves each section of a draft makes (no Qt, no model).

The one use case behind the draft pane's checklist and the language server's section summary, so that
both say the same of the same draft. A *section* is a run of headings of one kind (a subsection
inherits its parent's kind: the caller's headings carry the kinds ``core.drafts.inherited_kinds`` or
``core.draft_formats`` gave them) and the sentences under them; only kinds with a usual list of moves
(``core.taxonomy.moves.EXPECTED``) are checked, and only once they hold a sentence. The sentences
before any heading are checked as ``default_kind`` when one is given (a draft without headings), else
not at all.

What counts (``core.taxonomy.labels.function_is_clear`` says why 0.5):

- a sentence *clearly makes* a move when the model gave it a function (not "none") and the calibrated
  probabilities of the move's functions among its candidates add up to at least
  ``CLEAR_FUNCTION_FLOOR``: more likely than not, it does that move's job ("participants 50 %, study
  design 37 %" clearly tells how it was done, though neither function is clear alone). A clear function
  always clearly makes its move;
- a move no sentence clearly makes is "?" when it is some sentence's best guess (a function given, not
  clear), else "✗";
- the headline says what is *not known to be there*, never that it is absent: "No sentence of your
  introduction clearly makes these moves: a gap or problem (1 sentence may), …".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.taxonomy.labels import CLEAR_FUNCTION_FLOOR, NO_FUNCTION, FunctionPrediction, function_is_clear
from core.taxonomy.moves import EXPECTED, Move, MoveCheck, describe_checks

BEFORE_ANY_HEADING = -1
ALL_MOVES: tuple[Move, ...] = tuple(dict.fromkeys(move for moves in EXPECTED.values() for move in moves))


@dataclass(frozen=True)
class DraftOutline:
    """Where a draft's sentences sit: the section kind of each heading (None: none known) and, per
    sentence in reading order, the number of the heading above it (:data:`BEFORE_ANY_HEADING`: none)."""

    heading_kinds: tuple[str | None, ...]
    sentence_headings: tuple[int, ...]


def move_probability(prediction: FunctionPrediction, move: Move) -> float:
    """The probability the model puts on ``move``: its functions' share of the candidates."""
    return sum(p for function, p in prediction.top if function in move.functions)


def clearly_makes(prediction: FunctionPrediction | None, move: Move) -> bool:
    """Whether a sentence clearly makes ``move`` (see the module's docstring)."""
    if prediction is None or prediction.label in ("", NO_FUNCTION):
        return False
    if function_is_clear(prediction) and prediction.label in move.functions:
        return True
    return move_probability(prediction, move) >= CLEAR_FUNCTION_FLOOR


def is_judged(prediction: FunctionPrediction | None) -> bool:
    """A sentence the checklist can read: its function is clear, or it clearly makes one of the moves."""
    return function_is_clear(prediction) or any(clearly_makes(prediction, move) for move in ALL_MOVES)


def _best_guess(prediction: FunctionPrediction | None) -> str:
    """The sentence's best candidate when the model gave it a function ("" otherwise)."""
    if prediction is None or prediction.label in ("", NO_FUNCTION) or not prediction.top:
        return ""
    return prediction.top[0][0]


def check_section(functions: Sequence[FunctionPrediction | None], kind: str) -> list[MoveCheck]:
    """For each move a section of ``kind`` usually makes: does a sentence clearly make it, and if not,
    how many sentences' best guess is it."""
    out = []
    for move in EXPECTED.get(kind, ()):
        present = any(clearly_makes(f, move) for f in functions)
        maybe = 0 if present else sum(_best_guess(f) in move.functions for f in functions)
        out.append(MoveCheck(move, present, maybe))
    return out


@dataclass(frozen=True)
class SectionChecklist:
    kind: str
    heading: int  # the section's first heading (BEFORE_ANY_HEADING: the sentences before any heading)
    checks: tuple[MoveCheck, ...]
    judged: tuple[int, int]  # (sentences the checklist can read, sentences)

    @property
    def missing(self) -> tuple[Move, ...]:
        """The moves no sentence clearly makes ("?" and "✗")."""
        return tuple(c.move for c in self.checks if not c.present)

    def headline(self) -> str:
        """"No sentence of your introduction clearly makes these moves: an aim statement, a gap or
        problem (1 sentence may)" ("" when every move is clearly made)."""
        missing = [c.move.name + (f" ({_sentences(c.maybe)} may)" if c.maybe else "")
                   for c in self.checks if not c.present]
        if not missing:
            return ""
        moves = "this move" if len(missing) == 1 else "these moves"
        return f"No sentence of your {self.kind} clearly makes {moves}: {', '.join(missing)}"

    def line(self) -> str:
        """"introduction: ✓ why the topic matters · ? a gap or problem · ✗ an aim statement · … (judged
        on the 9 of 12 sentences whose function or move is clear)"."""
        clear, total = self.judged
        return (f"{describe_checks(list(self.checks), self.kind)} (judged on the {clear} of "
                f"{_sentences(total)} whose function or move is clear)")


def _sentences(count: int) -> str:
    return f"{count} sentence{'' if count == 1 else 's'}"


def _groups(outline: DraftOutline, default_kind: str | None) -> list[tuple[int, str, set[int]]]:
    """(first heading, kind, heading numbers) of each section: consecutive headings of one kind are one."""
    groups: list[tuple[int, str, set[int]]] = []
    if default_kind in EXPECTED:
        groups.append((BEFORE_ANY_HEADING, str(default_kind), {BEFORE_ANY_HEADING}))
    previous: str | None = None
    for number, found in enumerate(outline.heading_kinds):
        kind = found or "other"
        if groups and groups[-1][0] != BEFORE_ANY_HEADING and kind == previous:
            groups[-1][2].add(number)
        else:
            groups.append((number, kind, {number}))
        previous = kind
    return groups


def draft_checklist(outline: DraftOutline, functions: Sequence[FunctionPrediction | None] | None,
                    default_kind: str | None = None) -> list[SectionChecklist]:
    """One checklist per checked section of a draft (``functions``: one per sentence, in the order of
    ``outline.sentence_headings``; None, or a missing function, when the model has no function head:
    then nothing is judged and the list is empty)."""
    if functions is None or any(f is None for f in functions):
        return []
    if len(functions) != len(outline.sentence_headings):
        raise ValueError(f"{len(functions)} functions for {len(outline.sentence_headings)} sentences")
    out = []
    for first, kind, numbers in _groups(outline, default_kind):
        if kind not in EXPECTED:
            continue
        under = [f for f, h in zip(functions, outline.sentence_headings, strict=True) if h in numbers]
        if under:
            judged = (sum(is_judged(f) for f in under), len(under))
            out.append(SectionChecklist(kind, first, tuple(check_section(under, kind)), judged))
    return out
