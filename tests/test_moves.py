"""core.taxonomy.moves: which moves a draft makes, against what its kind of section usually has."""

from __future__ import annotations

from core.taxonomy.functions import default_taxonomy
from core.taxonomy.moves import EXPECTED, check_moves, describe_checks


def test_every_move_is_made_of_taxonomy_functions() -> None:
    ids = set(default_taxonomy().ids)
    for moves in EXPECTED.values():
        for move in moves:
            assert move.functions and move.functions <= ids, move.name


def test_an_introduction_without_an_aim_shows_it_missing() -> None:
    checks = check_moves(["topic-importance", "gap-prior-shortcoming", "paper-outline"], "introduction")
    assert [(c.move.name, c.present) for c in checks] == [
        ("why the topic matters", True), ("a gap or problem", True), ("an aim statement", False),
        ("the contributions or an outline", True)]
    line = describe_checks(checks, "introduction")
    assert line.startswith("introduction: ") and "✗ an aim statement" in line and "✓ a gap or problem" in line


def test_unknown_section_kinds_have_no_checklist() -> None:
    assert check_moves(["aim"], "method") == [] and describe_checks([], "method") == ""
