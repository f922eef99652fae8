"""Distant function labels as role supervision (``train roles --function-roles``)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from core.labels import ROLES
from models.training.function_data import NO_ROLE_LABEL, read_function_labels


def _labels(tmp_path):
    rows = [{"text": "Little is known about X.", "function": "gap", "section_kind": "introduction"},
            {"text": "We thank the reviewers.", "function": "thanks", "section_kind": "other"}]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_without_roles_every_role_is_allowed(tmp_path):
    docs, functions = read_function_labels([_labels(tmp_path)], ["gap", "thanks"])
    assert functions == [0, 1]
    assert all(d.labels == [NO_ROLE_LABEL] and d.allowed == [frozenset(ROLES)] for d in docs)


def test_with_roles_each_sentence_gets_its_functions_role_and_section_kind(tmp_path):
    docs, _ = read_function_labels([_labels(tmp_path)], ["gap", "thanks"],
                                   {"gap": "background", "thanks": "not-a-role"})
    assert docs[0].labels == ["background"] and docs[0].allowed == [frozenset({"background"})]
    assert docs[0].section_kinds == ["introduction"]
    # A function whose role is not a role the head knows teaches the function head only.
    assert docs[1].labels == [NO_ROLE_LABEL] and docs[1].allowed == [frozenset(ROLES)]


def test_the_taxonomy_gives_every_function_a_known_role():
    from core.functions import default_taxonomy

    assert {f.role for f in default_taxonomy().functions} <= set(ROLES)
